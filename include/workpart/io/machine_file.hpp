#pragma once
/// \file machine_file.hpp
/// A machine model (optimize/machine_model.hpp) as JSON: what `workpart-calibrate` writes and
/// `workpart-optimize --machine FILE` or a program (`wp::read_machine_model`) reads:
/// \code
///   {"flops": 2.1e9, "alpha": 3.1e-7, "beta": 2.0e-10,
///    "gemm": [[8192, 1.9e9], [524288, 8.7e9], [33554432, 1.4e10]],
///    "stream": 5.8e9, "map_seconds": 4.2e-6, "core_share": 1, "row_seconds": 2.1e-8,
///    "slow_flops": 4.5e8,
///    "float_flops": 4.0e9, "float_gemm": [[8192, 3.5e9], [33554432, 2.7e10]],
///    "float_slow_flops": 9.1e8, "packing": 4.1e9, "scalar_flops": 1.1e9}
/// \endcode
/// Every key is optional (machine_model's default where absent); "gemm" and "float_gemm" list
/// [operations of a block's GEMMs, operations per second] in ascending operations. A rate or
/// bandwidth that is not positive, a time that is negative, a core share below 1, GEMM points not
/// ascending or an unknown key: a table_error naming the file and the byte. `to_json` writes every
/// field, each number so that it reads back exactly.

#include <cmath>
#include <string>
#include <string_view>

#include "../core/json_text.hpp"
#include "../optimize/machine_model.hpp"
#include "file_bytes.hpp"
#include "json_scanner.hpp"
#include "program_reader.hpp"

namespace workpart {

/// The model as JSON (machine_file.hpp's form).
inline std::string to_json(const machine_model& m) {
  const auto num = detail::json_number;
  auto table = [&](const std::vector<machine_model::rate_point>& t) {
    std::string s = "[";
    for (std::size_t k = 0; k < t.size(); ++k)
      s += std::string(k ? ", " : "") + "[" + num(t[k].ops) + ", " + num(t[k].rate) + "]";
    return s + "]";
  };
  return "{\"flops\": " + num(m.flops) + ", \"alpha\": " + num(m.alpha) +
         ", \"beta\": " + num(m.beta) + ",\n \"gemm\": " + table(m.gemm) +
         ",\n \"stream\": " + num(m.stream) + ", \"map_seconds\": " + num(m.map_seconds) +
         ", \"core_share\": " + num(m.core_share) + ", \"row_seconds\": " + num(m.row_seconds) +
         ", \"slow_flops\": " + num(m.slow_flops) + ",\n \"float_flops\": " + num(m.float_flops) +
         ", \"float_gemm\": " + table(m.float_gemm) +
         ", \"float_slow_flops\": " + num(m.float_slow_flops) + ", \"packing\": " + num(m.packing) +
         ", \"scalar_flops\": " + num(m.scalar_flops) + "}\n";
}

namespace detail::machine_json {

using tables::scanner;

/// The model's numbers that are rates or times: the key, the field, whether 0 is allowed
/// (a term the model leaves out).
struct number_key {
  const char* key;
  double machine_model::*field;
  bool zero_ok;
};
inline constexpr number_key number_keys[] = {
    {"flops", &machine_model::flops, false},
    {"alpha", &machine_model::alpha, true},
    {"beta", &machine_model::beta, true},
    {"stream", &machine_model::stream, true},
    {"map_seconds", &machine_model::map_seconds, true},
    {"row_seconds", &machine_model::row_seconds, true},
    {"slow_flops", &machine_model::slow_flops, true},
    {"float_flops", &machine_model::float_flops, true},
    {"float_slow_flops", &machine_model::float_slow_flops, true},
    {"packing", &machine_model::packing, true},
    {"scalar_flops", &machine_model::scalar_flops, true}};

inline machine_model parse(scanner& s) {
  machine_model m;
  program_json::object(s, "the machine model", [&](const std::string& k, std::size_t) {
    const std::size_t at = (s.ws(), s.pos());
    const std::string what = "as \"" + k + "\"";
    const number_key* nk = nullptr;
    for (const auto& n : number_keys)
      if (k == n.key) nk = &n;
    if (nk) {
      const double v = s.number(what.c_str());
      if (!std::isfinite(v) || v < 0 || (v == 0 && !nk->zero_ok))
        s.fail(at, "\"" + k + "\" is " + json_number(v) + "; give a " +
                       (nk->zero_ok ? "number >= 0" : "positive number"));
      m.*(nk->field) = v;
    } else if (k == "core_share") {
      m.core_share = s.number(what.c_str());
      if (!(m.core_share >= 1) || !std::isfinite(m.core_share))
        s.fail(at, "\"core_share\" is " + json_number(m.core_share) +
                       "; give the ranks per core, at least 1");
    } else if (k == "gemm" || k == "float_gemm") {
      auto& table = k == "gemm" ? m.gemm : m.float_gemm;
      const std::string key = "\"" + k + "\"", point = "a point of " + key;
      program_json::list(s, key.c_str(), [&](std::size_t j) {
        const std::size_t pat = (s.ws(), s.pos());
        machine_model::rate_point p;
        int n = 0;
        program_json::list(s, point.c_str(), [&](std::size_t) {
          const double v = s.number(("in " + point).c_str());
          (n == 0 ? p.ops : p.rate) = v;
          if (++n > 2) s.fail(pat, point + " has more than [operations, rate]");
        });
        if (n != 2) s.fail(pat, point + " is [operations, operations per second]");
        if (!(p.ops > 0) || !(p.rate > 0) || !std::isfinite(p.ops) || !std::isfinite(p.rate))
          s.fail(pat, point + " needs positive operations and rate");
        if (j > 0 && !(p.ops > table.back().ops))
          s.fail(pat, "the points of " + key + " are not in ascending operations");
        table.push_back(p);
      });
    } else {
      s.fail(at, "unknown key \"" + k +
                     "\" in the machine model (flops, alpha, beta, gemm, stream, map_seconds, "
                     "core_share, row_seconds, slow_flops, float_flops, float_gemm, "
                     "float_slow_flops, packing, scalar_flops)");
    }
  });
  s.at_end();
  return m;
}

}  // namespace detail::machine_json

/// Parses a machine model's JSON; `source` names it in error messages.
inline machine_model parse_machine_model(std::string_view text,
                                         std::string_view source = "<input>") {
  return detail::tables::scan_text(text, source, "machine model", detail::machine_json::parse);
}

/// Reads a machine model file (what workpart-calibrate writes).
inline machine_model read_machine_model(const std::string& path) {
  return detail::tables::scan_file(path, "machine model file", "machine model", 0,
                                   detail::machine_json::parse);
}

}  // namespace workpart
