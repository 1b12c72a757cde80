#pragma once
/// \file program_reader.hpp
/// Reads a program description (program_description.hpp) from JSON — what
/// `workpart-optimize --program FILE.json` takes:
/// \code
///   {"arrays": [{"name": "x", "shape": [64, 1024], "type": "float32"},
///               {"name": "w1", "shape": [1024, 4096], "type": "float32"},
///               {"name": "h", "shape": [64, 4096], "type": "float32"}],
///    "maps": [{"name": "fc1", "indices": ["i", "j", "k"], "extents": [64, 4096, 1024],
///              "flops_per_point": 2,
///              "accesses": [{"array": "x", "index": ["i", "k"]},
///                           {"array": "w1", "index": ["k", "j"]},
///                           {"array": "h", "index": ["i", "j"], "mode": "+="}]}, ...],
///    "edges": [{"from": "fc1", "to": "act", "arrays": ["h"]}]}
/// \endcode
///  - "type": float32, float64, int32 or int64 (default float64), or "bytes": element size;
///    "shape": [] is a rank-0 array; "init": true marks an array every rank generates in
///    place (init()): it is never scattered from root;
///  - "maps" may be called "vertices"; "flops_per_point" defaults to 1; "kernel": "gemm" marks
///    a map whose statements run as GEMMs (priced at the machine model's GEMM rate; default
///    "loop"); "slow_per_point" (default 0) counts the calls of slow functions (exp, tanh,
///    ...) among its operations, "row_index" names the index its loop's rows run along
///    (default: none, rows not priced), "packed": [{"index": ["n", "c", ...], "times": t}]
///    lists the copies its GEMMs make (an operand packed as its matrix: t elements per point
///    of the block's extents along those indices), "scalar_rows": true marks a loop whose rows
///    have no vector form (the executor's scalar rows) -- all priced by the machine model where
///    it has them;
///  - an access is a read unless "mode" is "=", "+=", "max_into" or "min_into"; accesses are
///    in the order the statements evaluate them: a statement's reads, then its write (a read
///    listed after a write of the same array reads what the map wrote);
///  - a subscript is an affine expression of the map's indices ("i", "2*k + 1", "i - j", "3",
///    or a JSON integer), or "*" (also ":" or "all") for the whole axis;
///  - a read inside inner reductions (wp::sum(wp::range(k, from, to), ...)) lists them,
///    outermost first: "ranges": [{"index": "k", "from": "0", "to": "K"}] — [from, to), affine
///    in the map's indices and the ranges outside — or {"index": "jj", "data_dependent": true}
///    where the bounds are read from arrays; its subscripts may use the ranges' indices;
///  - "padded": true marks a read that is a fill outside its array (wp::padded): its
///    subscripts may leave the array, and the boxes are clipped to it;
///  - wp::describe(prog) writes this form of a typed program (io/program_writer.hpp: to_json);
///  - "edges" (optional) lists the arrays passed between maps; they follow from the accesses
///    (an array passes from the last earlier map that writes it to a map that reads it before
///    writing it, or combines into it), so given edges are checked against that and a
///    difference is an error.
/// Errors name the file and the byte offset (table_error, shape_error); running out of memory
/// while reading is a table_error naming the file, not a bare std::bad_alloc.

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../optimize/program_description.hpp"
#include "file_bytes.hpp"
#include "json_scanner.hpp"

namespace workpart {

namespace detail::program_json {

using tables::scanner;

/// An affine subscript: "2*i - k + 1" over `indices`; "*", ":" or "all": the whole axis.
inline subscript parse_subscript(scanner& s, std::size_t at, const std::string& text,
                                 const std::vector<std::string>& indices) {
  subscript f;
  f.coef.assign(indices.size(), 0);
  if (text == "*" || text == ":" || text == "all") {
    f.whole_axis = true;
    return f;
  }
  auto bad = [&](const std::string& why) -> void {
    s.fail(
        at,
        "subscript \"" + text + "\": " + why +
            " (write an affine expression of the map's indices, like \"2*i - k + 1\", or \"*\")");
  };
  std::size_t p = 0;
  auto skip = [&] {
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
  };
  auto integer = [&](index_t& out) {
    const std::size_t b = p;
    index_t v = 0;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
      if (v > (index_t(1) << 50)) bad("a number is too large");
      v = v * 10 + (text[p++] - '0');
    }
    if (p > b) out = v;
    return p > b;
  };
  auto name = [&](int& d) {
    const std::size_t b = p;
    while (p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || text[p] == '_'))
      ++p;
    if (p == b) return false;
    const std::string n = text.substr(b, p - b);
    d = -1;
    for (std::size_t x = 0; x < indices.size(); ++x)
      if (indices[x] == n) d = int(x);
    if (d < 0) bad("'" + n + "' is not an index of the map or of an inner range outside it");
    return true;
  };
  skip();
  if (p == text.size()) bad("it is empty");
  bool first = true;
  while (p < text.size()) {
    index_t sign = 1;
    skip();
    if (p < text.size() && (text[p] == '+' || text[p] == '-')) {
      sign = text[p++] == '-' ? -1 : 1;
      skip();
    } else if (!first) {
      bad("expected '+' or '-' between terms");
    }
    first = false;
    index_t c = 1;
    int d = -1;
    if (integer(c)) {
      skip();
      if (p < text.size() && text[p] == '*') {
        ++p;
        skip();
        if (!name(d)) bad("expected an index after '*'");
      }
    } else if (name(d)) {
      skip();
      if (p < text.size() && text[p] == '*') {
        ++p;
        skip();
        if (!integer(c)) bad("expected a number after '*'");
      }
    } else {
      bad("expected a number or an index");
    }
    index_t& term = d < 0 ? f.offset : f.coef[std::size_t(d)];
    term += sign * c;  // each number is below 2^50: the sum stays far from overflow
    if (term > (index_t(1) << 50) || term < -(index_t(1) << 50))
      bad("a coefficient or offset is too large");
    skip();
  }
  return f;
}

inline void once(scanner& s, std::set<std::string>& seen, std::size_t at, const std::string& key,
                 const std::string& object) {
  if (!seen.insert(key).second) s.fail(at, "key \"" + key + "\" appears twice in " + object);
}

template <class F>
void object(scanner& s, const std::string& what, F&& on_key) {
  std::set<std::string> seen;
  s.expect('{', ("at the start of " + what).c_str());
  if (s.accept('}')) return;
  do {
    const std::size_t key_at = (s.ws(), s.pos());
    const std::string key = s.string(("as a key of " + what).c_str());
    s.expect(':', "after a key");
    once(s, seen, key_at, key, what);
    on_key(key, key_at);
  } while (s.next('}', ("in " + what).c_str()));
}
template <class F>
void list(scanner& s, const std::string& what, F&& on_item) {
  s.expect('[', ("to open " + what).c_str());
  if (s.accept(']')) return;
  std::size_t i = 0;
  do on_item(i++);
  while (s.next(']', ("in " + what).c_str()));
}

struct edge_claim {
  std::size_t at;
  std::string from, to;
  std::vector<std::string> arrays;
};

/// The program description `s` scans (positions are byte offsets, for messages).
inline program_description parse(scanner& s) {
  program_description p;
  std::vector<std::size_t> array_at, map_at;
  std::vector<std::vector<std::size_t>> access_at;
  std::vector<edge_claim> claims;
  bool has_maps = false;
  const std::size_t top = (s.ws(), s.pos());
  object(s, "the top-level object", [&](const std::string& key, std::size_t key_at) {
    if (key == "arrays") {
      list(s, "the array list", [&](std::size_t i) {
        array_description a;
        bool named = false, shaped = false, typed = false;
        array_at.push_back((s.ws(), s.pos()));
        const std::string what = "array " + std::to_string(i);
        object(s, what, [&](const std::string& k, std::size_t at) {
          if (k == "name") {
            a.name = s.string(("as the name of " + what).c_str());
            named = true;
          } else if (k == "shape") {
            list(s, "the shape of " + what,
                 [&](std::size_t) { a.shape.push_back(s.integer("in a shape")); });
            shaped = true;
          } else if (k == "type") {
            if (typed) s.fail(at, what + " gives both \"type\" and \"bytes\"");
            const std::string t = s.string(("as the type of " + what).c_str());
            if (t == "float32" || t == "int32")
              a.elem_size = 4;
            else if (t == "float64" || t == "int64")
              a.elem_size = 8;
            else
              s.fail(at, what + ": type \"" + t + "\"; give float32, float64, int32 or int64");
            a.type = t;
            typed = true;
          } else if (k == "init") {
            a.init = s.boolean(("as \"init\" of " + what).c_str());
          } else if (k == "bytes") {
            if (typed) s.fail(at, what + " gives both \"type\" and \"bytes\"");
            const std::int64_t b = s.integer(("as the element size of " + what).c_str());
            if (b < 1 || b > 1024)
              s.fail(at, what + ": \"bytes\": " + std::to_string(b) + "; give 1 to 1024");
            a.elem_size = std::size_t(b);
            typed = true;
          } else {
            s.skip_value();
          }
        });
        if (!named) s.fail(array_at.back(), what + " has no \"name\"");
        if (!shaped) s.fail(array_at.back(), what + " (\"" + a.name + "\") has no \"shape\"");
        p.arrays.push_back(std::move(a));
      });
    } else if (key == "maps" || key == "vertices") {
      if (has_maps) s.fail(key_at, "both \"maps\" and \"vertices\" are given; give one");
      has_maps = true;
      list(s, "the map list", [&](std::size_t i) {
        map_description m;
        bool named = false, has_extents = false, has_indices = false;
        map_at.push_back((s.ws(), s.pos()));
        access_at.emplace_back();
        const std::string what = "map " + std::to_string(i);
        // accesses need the indices: keep their text and parse the subscripts at the end
        using raw_subscript = std::pair<std::size_t, std::string>;  // where, text
        struct raw_range {
          std::size_t at;
          std::string index;
          raw_subscript from{scanner::npos, {}}, to{scanner::npos, {}};
          bool data = false;
        };
        struct raw_access {
          std::size_t at;
          std::string array, mode;
          std::vector<raw_subscript> index;
          std::vector<raw_range> ranges;
          bool padded = false;
        };
        auto raw_sub = [&](const char* context) -> raw_subscript {
          const std::size_t at = (s.ws(), s.pos());
          if (s.peek() == '"') return {at, s.string(context)};
          return {at, std::to_string(s.integer(context))};
        };
        std::vector<raw_access> raws;
        std::string row_index;
        std::size_t row_at = 0;
        struct raw_packed {
          std::size_t at;
          std::vector<std::string> index;
          double times = 1;
        };
        std::vector<raw_packed> packed;
        object(s, what, [&](const std::string& k, std::size_t) {
          if (k == "name") {
            m.name = s.string(("as the name of " + what).c_str());
            named = true;
          } else if (k == "indices") {
            list(s, "the indices of " + what,
                 [&](std::size_t) { m.indices.push_back(s.string("as an index name")); });
            has_indices = true;
          } else if (k == "extents") {
            list(s, "the extents of " + what,
                 [&](std::size_t) { m.extents.push_back(s.integer("in the extents")); });
            has_extents = true;
          } else if (k == "flops_per_point") {
            m.ops_per_point = s.number(("as the operations per point of " + what).c_str());
          } else if (k == "slow_per_point") {
            const std::size_t at = (s.ws(), s.pos());
            m.slow_ops_per_point = s.number(("as the slow functions per point of " + what).c_str());
            if (!(m.slow_ops_per_point >= 0) || !std::isfinite(m.slow_ops_per_point))
              s.fail(at, "the slow functions per point of " + what + " must be finite and >= 0");
          } else if (k == "row_index") {
            row_at = (s.ws(), s.pos());
            row_index = s.string(("as the row index of " + what).c_str());
          } else if (k == "scalar_rows") {
            m.scalar_rows = s.boolean(("as whether the rows of " + what + " are scalar").c_str());
          } else if (k == "packed") {
            list(s, "the packed copies of " + what, [&](std::size_t j) {
              raw_packed c;
              c.at = (s.ws(), s.pos());
              const std::string cw = what + ", packed copy " + std::to_string(j);
              object(s, cw, [&](const std::string& ck, std::size_t) {
                if (ck == "index") {
                  list(s, "the indices of " + cw,
                       [&](std::size_t) { c.index.push_back(s.string("as an index name")); });
                } else if (ck == "times") {
                  const std::size_t at = (s.ws(), s.pos());
                  c.times = s.number(("as the times of " + cw).c_str());
                  if (!(c.times > 0) || !std::isfinite(c.times))
                    s.fail(at, "the times of " + cw + " must be finite and > 0");
                } else {
                  s.skip_value();
                }
              });
              if (packed.size() == 3) s.fail(c.at, what + " has more than 3 packed copies");
              packed.push_back(std::move(c));
            });
          } else if (k == "kernel") {
            const std::size_t at = (s.ws(), s.pos());
            const std::string kind = s.string(("as the kernel of " + what).c_str());
            if (kind != "gemm" && kind != "loop")
              s.fail(at, "the kernel of " + what + " is \"" + kind +
                             "\"; give \"gemm\" (its statements run as GEMMs) or \"loop\"");
            m.gemm = kind == "gemm";
          } else if (k == "accesses") {
            list(s, "the accesses of " + what, [&](std::size_t j) {
              raw_access r;
              r.at = (s.ws(), s.pos());
              const std::string aw = what + ", access " + std::to_string(j);
              bool has_index = false;
              object(s, aw, [&](const std::string& ak, std::size_t) {
                if (ak == "array") {
                  r.array = s.string(("as the array of " + aw).c_str());
                } else if (ak == "mode") {
                  r.mode = s.string(("as the mode of " + aw).c_str());
                } else if (ak == "index") {
                  has_index = true;
                  list(s, "the subscripts of " + aw,
                       [&](std::size_t) { r.index.push_back(raw_sub("as a subscript")); });
                } else if (ak == "padded") {
                  r.padded = s.boolean(("as \"padded\" of " + aw).c_str());
                } else if (ak == "ranges") {
                  list(s, "the inner ranges of " + aw, [&](std::size_t q) {
                    raw_range g{(s.ws(), s.pos()), {}};
                    const std::string rw = aw + ", range " + std::to_string(q);
                    object(s, rw, [&](const std::string& rk, std::size_t) {
                      if (rk == "index")
                        g.index = s.string(("as the index of " + rw).c_str());
                      else if (rk == "from")
                        g.from = raw_sub("as a range's lower bound");
                      else if (rk == "to")
                        g.to = raw_sub("as a range's upper bound");
                      else if (rk == "data_dependent")
                        g.data = s.boolean(("as \"data_dependent\" of " + rw).c_str());
                      else
                        s.fail(g.at, rw + ": unknown key \"" + rk +
                                         "\" (a range has \"index\", \"from\" and \"to\", or "
                                         "\"index\" and \"data_dependent\": true)");
                    });
                    if (g.index.empty()) s.fail(g.at, rw + " has no \"index\"");
                    const bool from = g.from.first != scanner::npos,
                               to = g.to.first != scanner::npos;
                    if (g.data == (from || to) || (!g.data && (!from || !to)))
                      s.fail(g.at, rw + ": give \"from\" and \"to\" (the range [from, to)), or "
                                        "\"data_dependent\": true where the bounds are read "
                                        "from arrays");
                    r.ranges.push_back(std::move(g));
                  });
                } else {  // a misspelt "mode" would silently make a write a read
                  s.fail(r.at, aw + ": unknown key \"" + ak +
                                   "\" (an access has \"array\", \"index\", \"mode\", "
                                   "\"ranges\" and \"padded\")");
                }
              });
              if (r.array.empty()) s.fail(r.at, aw + " has no \"array\"");
              if (!has_index) s.fail(r.at, aw + " has no \"index\"");
              raws.push_back(std::move(r));
            });
          } else {
            s.skip_value();
          }
        });
        if (!named) s.fail(map_at.back(), what + " has no \"name\"");
        if (!has_extents) s.fail(map_at.back(), what + " (\"" + m.name + "\") has no \"extents\"");
        if (!has_indices) {  // default names: i0, i1, ...
          for (std::size_t d = 0; d < m.extents.size(); ++d)
            m.indices.push_back("i" + std::to_string(d));
        }
        if (!row_index.empty()) {
          const auto it = std::find(m.indices.begin(), m.indices.end(), row_index);
          if (it == m.indices.end())
            s.fail(row_at, "the row index of " + what + " is \"" + row_index +
                               "\", not one of its indices");
          m.row_dim = int(it - m.indices.begin());
        }
        for (const auto& c : packed) {
          packed_copy pc;
          pc.times = c.times;
          for (const auto& name : c.index) {
            const auto it = std::find(m.indices.begin(), m.indices.end(), name);
            if (it == m.indices.end() || it - m.indices.begin() >= 32)
              s.fail(c.at, "a packed copy of " + what + " names \"" + name +
                               "\", not one of its indices");
            pc.dims |= std::uint32_t(1) << (it - m.indices.begin());
          }
          m.packed.push_back(pc);
        }
        for (const auto& r : raws) {
          access_description a;
          a.array = r.array;
          a.padded = r.padded;
          if (r.mode.empty() || r.mode == "read")
            a.mode = access_mode::read;
          else if (r.mode == "=")
            a.mode = access_mode::assign;
          else if (r.mode == "+=")
            a.mode = access_mode::add;
          else if (r.mode == "max_into")
            a.mode = access_mode::max;
          else if (r.mode == "min_into")
            a.mode = access_mode::min;
          else
            s.fail(r.at, "map \"" + m.name + "\", access of \"" + r.array + "\": mode \"" + r.mode +
                             "\"; give \"read\", \"=\", \"+=\", \"max_into\" or \"min_into\"");
          // each range's bounds see the map's indices and the ranges outside it; the
          // subscripts see them all
          std::vector<std::string> names = m.indices;
          for (const auto& g : r.ranges) {
            range_description rd;
            rd.index = g.index;
            rd.data_dependent = g.data;
            if (!g.data) {
              rd.from = parse_subscript(s, g.from.first, g.from.second, names);
              rd.to = parse_subscript(s, g.to.first, g.to.second, names);
              if (rd.from.whole_axis || rd.to.whole_axis)
                s.fail(g.at, "range \"" + g.index +
                                 "\": a bound is '*'; give \"data_dependent\": true where the "
                                 "bounds are read from arrays");
            }
            names.push_back(g.index);
            a.ranges.push_back(std::move(rd));
          }
          a.text = r.array + "(";
          for (std::size_t x = 0; x < r.index.size(); ++x) {
            a.index.push_back(parse_subscript(s, r.index[x].first, r.index[x].second, names));
            a.text += (x ? ", " : "") + r.index[x].second;
          }
          a.text += ")";
          access_at.back().push_back(r.at);
          m.accesses.push_back(std::move(a));
        }
        p.maps.push_back(std::move(m));
      });
    } else if (key == "edges") {
      list(s, "the edge list", [&](std::size_t i) {
        edge_claim e{(s.ws(), s.pos()), {}, {}, {}};
        const std::string what = "edge " + std::to_string(i);
        object(s, what, [&](const std::string& k, std::size_t) {
          if (k == "from")
            e.from = s.string("as the map an edge leaves");
          else if (k == "to")
            e.to = s.string("as the map an edge enters");
          else if (k == "arrays")
            list(s, "the arrays of " + what,
                 [&](std::size_t) { e.arrays.push_back(s.string("as an array name")); });
          else
            s.skip_value();
        });
        if (e.from.empty() || e.to.empty())
          s.fail(e.at, what + " needs \"from\" and \"to\" (map names)");
        claims.push_back(std::move(e));
      });
    } else {
      s.skip_value();
    }
  });
  s.at_end();
  if (!has_maps) s.fail(top, "no \"maps\" key in the top-level object");
  try {
    p.check_structure();
  } catch (const shape_error& e) {  // the message names the map, access or array at fault
    throw shape_error(std::string(s.source()) + ": " + e.what());
  }
  // every access as wp::map checks it (bounds, a plain '=' one-to-one), at its byte offset
  for (std::size_t m = 0; m < p.maps.size(); ++m)
    for (std::size_t k = 0; k < p.maps[m].accesses.size(); ++k) {
      try {
        p.check_access(p.maps[m], k);
      } catch (const shape_error& e) {
        const std::string what = e.what();
        s.fail_shape(access_at[m][k], what.substr(what.find("] ") + 2));
      }
    }
  // Given edges against the ones the accesses imply: map -> map, the arrays each carries.
  if (!claims.empty()) {
    std::map<std::pair<std::string, std::string>, std::set<std::string>> implied;
    std::vector<std::vector<detail::array_use>> uses;
    for (const auto& m : p.maps) uses.push_back(detail::described_uses(p, m));
    for (std::size_t v = 0; v < p.maps.size(); ++v)
      for (const auto& use : uses[v]) {
        if (!detail::needs_values(use)) continue;
        for (std::size_t u = v; u-- > 0;) {
          bool writes = false;
          for (const auto& w : uses[u]) writes = writes || (w.id == use.id && w.written);
          if (writes) {
            implied[{p.maps[u].name, p.maps[v].name}].insert(use.name);
            break;
          }
        }
      }
    std::map<std::pair<std::string, std::string>, std::set<std::string>> given;
    for (const auto& e : claims) {
      auto& g = given[{e.from, e.to}];
      g.insert(e.arrays.begin(), e.arrays.end());
      const auto it = implied.find({e.from, e.to});
      if (it == implied.end())
        s.fail(e.at, "edge \"" + e.from + "\" -> \"" + e.to + "\": no array written by \"" +
                         e.from + "\" passes to \"" + e.to +
                         "\" (an array passes from the last earlier map that writes "
                         "it to a map that reads it before writing it or combines into it)");
      for (const auto& a : e.arrays)
        if (!it->second.count(a))
          s.fail(e.at, "edge \"" + e.from + "\" -> \"" + e.to + "\": array \"" + a +
                           "\" does not pass from \"" + e.from + "\" to \"" + e.to + "\"");
    }
    for (const auto& [uv, arrays] : implied) {
      const auto it = given.find(uv);
      for (const auto& a : arrays)
        if (it == given.end() || (!it->second.empty() && !it->second.count(a)))
          s.fail(top, "the accesses pass array \"" + a + "\" from \"" + uv.first + "\" to \"" +
                          uv.second + "\", but \"edges\" does not list it");
    }
  }
  return p;
}

}  // namespace detail::program_json

/// Parses the text of a program description; `source` names it in error messages.
inline program_description parse_program_description(std::string_view text,
                                                     std::string_view source = "<input>") {
  return detail::tables::scan_text(text, source, "program description",
                                   detail::program_json::parse);
}

/// Reads a program description file (plain JSON, or .json.gz where zlib is linked: inflated as
/// a stream, see file_bytes.hpp). Running out of memory is a table_error naming the file.
inline program_description read_program_description(const std::string& path) {
  return detail::tables::scan_file(path, "program description file", "program description", 0,
                                   detail::program_json::parse);
}

}  // namespace workpart
