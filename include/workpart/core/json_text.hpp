#pragma once
/// \file json_text.hpp
/// Writing JSON text: a string's body escaped, a number that reads back to the same double.

#include <cstdio>
#include <cstdlib>
#include <string>

namespace workpart::detail {

/// s as the body of a JSON string: quotes, backslashes and control characters escaped.
inline std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (c == '\n') {
      o += "\\n";
    } else if (c == '\t') {
      o += "\\t";
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(u));
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}

/// A finite double as the shortest %.17g text that reads back to it exactly.
inline std::string json_number(double v) {
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace workpart::detail
