#pragma once
/// \file program_writer.hpp
/// Writes a program description (optimize/program_description.hpp) as the JSON
/// io/program_reader.hpp reads and `workpart-optimize --program FILE.json` takes:
/// `wp::to_json(wp::describe(prog))`. Reading the text back gives the same description.

#include <cstdint>
#include <string>
#include <vector>

#include "../optimize/program_description.hpp"
#include "../core/json_text.hpp"

namespace workpart {

namespace detail::program_json {

inline std::string quoted(const std::string& s) { return "\"" + json_escape(s) + "\""; }

}  // namespace detail::program_json

/// The description as JSON: one line per array and per access, keys in the reader's terms.
/// A wp::error (shape_error) where the description breaks a rule (program_description::check).
inline std::string to_json(const program_description& p) {
  using namespace detail::program_json;
  using detail::json_number;
  using detail::subscript_text;
  p.check();
  std::string o = "{\"arrays\": [";
  for (std::size_t a = 0; a < p.arrays.size(); ++a) {
    const array_description& arr = p.arrays[a];
    o += a ? ",\n  " : "\n  ";
    o += "{\"name\": " + quoted(arr.name) + ", \"shape\": [";
    for (std::size_t x = 0; x < arr.shape.size(); ++x)
      o += (x ? ", " : "") + std::to_string(arr.shape[x]);
    o += "], ";
    o += arr.type.empty() ? "\"bytes\": " + std::to_string(arr.elem_size)
                          : "\"type\": " + quoted(arr.type);
    if (arr.init) o += ", \"init\": true";
    o += "}";
  }
  o += "],\n \"maps\": [";
  static const char* const modes[] = {"read", "=", "+=", "max_into", "min_into"};
  for (std::size_t m = 0; m < p.maps.size(); ++m) {
    const map_description& mp = p.maps[m];
    o += m ? ",\n  " : "\n  ";
    o += "{\"name\": " + quoted(mp.name) + ", \"indices\": [";
    for (std::size_t d = 0; d < mp.indices.size(); ++d)
      o += (d ? ", " : "") + quoted(mp.indices[d]);
    o += "], \"extents\": [";
    for (std::size_t d = 0; d < mp.extents.size(); ++d)
      o += (d ? ", " : "") + std::to_string(mp.extents[d]);
    o += "], \"flops_per_point\": " + json_number(mp.ops_per_point) +
         (mp.gemm ? ", \"kernel\": \"gemm\"" : "");
    if (mp.slow_ops_per_point > 0)
      o += ", \"slow_per_point\": " + json_number(mp.slow_ops_per_point);
    if (mp.row_dim >= 0 && std::size_t(mp.row_dim) < mp.indices.size())
      o += ", \"row_index\": " + quoted(mp.indices[std::size_t(mp.row_dim)]);
    if (mp.scalar_rows) o += ", \"scalar_rows\": true";
    if (!mp.packed.empty()) {
      o += ", \"packed\": [";
      for (std::size_t c = 0; c < mp.packed.size(); ++c) {
        o += std::string(c ? ", " : "") + "{\"index\": [";
        bool first = true;
        for (std::size_t d = 0; d < mp.indices.size() && d < 32; ++d)
          if (mp.packed[c].dims & (std::uint32_t(1) << d)) {
            o += (first ? "" : ", ") + quoted(mp.indices[d]);
            first = false;
          }
        o += "], \"times\": " + json_number(mp.packed[c].times) + "}";
      }
      o += "]";
    }
    o += ",\n   \"accesses\": [";
    for (std::size_t k = 0; k < mp.accesses.size(); ++k) {
      const access_description& ac = mp.accesses[k];
      std::vector<std::string> names = mp.indices;
      o += k ? ",\n    " : "\n    ";
      o += "{\"array\": " + quoted(ac.array);
      if (!ac.ranges.empty()) {
        o += ", \"ranges\": [";
        for (std::size_t r = 0; r < ac.ranges.size(); ++r) {
          const range_description& g = ac.ranges[r];
          o += (r ? ", " : "") + std::string("{\"index\": ") + quoted(g.index);
          o += g.data_dependent ? ", \"data_dependent\": true}"
                                : ", \"from\": " + quoted(subscript_text(g.from, names)) +
                                      ", \"to\": " + quoted(subscript_text(g.to, names)) + "}";
          names.push_back(g.index);
        }
        o += "]";
      }
      o += ", \"index\": [";
      for (std::size_t x = 0; x < ac.index.size(); ++x)
        o += (x ? ", " : "") + quoted(subscript_text(ac.index[x], names));
      o += "], \"mode\": " + quoted(modes[int(ac.mode)]);
      o += ac.padded ? ", \"padded\": true}" : "}";
    }
    o += "]}";
  }
  return o + "]}\n";
}

}  // namespace workpart
