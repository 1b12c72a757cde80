#pragma once
/// \file block_names.hpp
/// Names of a network's repeated blocks: a stem followed by the block's number ("enc2.attn",
/// "dlstm1.t17.recur"), as wp::repeat_blocks renumbers them and config_options::tie_blocks
/// groups them.

#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

namespace workpart::detail {

/// A stem followed by a number, inside a name.
struct block_token {
  std::size_t pos, len;  ///< where the token starts and how long it is (stem and number)
  long number;
};

inline std::vector<block_token> block_tokens(const std::string& s, const std::string& stem) {
  std::vector<block_token> out;
  std::size_t p = s.find(stem);
  while (p != std::string::npos) {
    const std::size_t q = p + stem.size();
    std::size_t e = q;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])) && e - q < 9) ++e;
    if (e > q) {
      out.push_back({p, e - p, std::stol(s.substr(q, e - q))});
      p = s.find(stem, e);
    } else {
      p = s.find(stem, p + 1);
    }
  }
  return out;
}

/// `s` with each token's number k replaced by renumber(k).
template <class F>
std::string renumber_blocks(const std::string& s, const std::string& stem, F renumber) {
  std::string out;
  std::size_t at = 0;
  for (const block_token& t : block_tokens(s, stem)) {
    out.append(s, at, t.pos - at);
    out += stem + std::to_string(renumber(t.number));
    at = t.pos + t.len;
  }
  out.append(s, at, std::string::npos);
  return out;
}

}  // namespace workpart::detail
