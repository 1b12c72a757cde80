#pragma once
/// \file table_reader.hpp
/// Reads and writes cost-table files (the JSON of /work/shared/anchors/pase-tables/README.md):
/// \code
///   {"vertices": [{"name": "Conv_1", "configs": [[1,1],[1,2],[2,1]], "cost": [3.0, 2.0, 2.5]},
///   ...],
///    "edges":    [{"u": 0, "v": 1, "cost": [[0, 1.5], [2, 0], [1e3, 0]]}, ...]}
/// \endcode
/// A hand-written scanner (json_scanner.hpp) over the file in place (mapped with mmap on POSIX,
/// else read: file_bytes.hpp): numbers go through std::from_chars straight on the text (any
/// JSON number, exponents included; about 300-400 MB/s here), whitespace may appear anywhere
/// JSON allows it, keys come in any order and unknown keys are skipped. "name" and
/// "configs" are optional (a vertex without a name is called v<i>); "cost" is required. Errors name
/// the file and the byte offset: `table_error` for malformed JSON, a missing key, an edge to an
/// unknown vertex, a duplicate edge; `shape_error` for a matrix or a configuration list of the
/// wrong size. Running out of memory is a `table_error` naming the file and the byte reached.
///
/// Gzip'd files (.json.gz) are read when the including target defines WORKPART_HAVE_ZLIB=1
/// and links zlib (tools/CMakeLists.txt does); otherwise they are refused with a message
/// that says to gunzip them first. They are inflated as a stream into the scanner's window
/// (256 KiB), so the memory a file takes is what it holds, not its whitespace; byte offsets
/// in messages count the inflated text.
///
/// `write_cost_tables(g)` writes the same format (numbers in shortest round-trip form).
///
/// This header includes no MPI and no Eigen (it includes Boost.Graph, via cost_graph.hpp).

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../optimize/cost_graph.hpp"
#include "file_bytes.hpp"
#include "json_scanner.hpp"

namespace workpart {

namespace detail::tables {

struct raw_vertex {
  std::size_t at = 0;  // byte offsets, for messages
  std::string name;
  bool has_name = false, has_cost = false, has_configs = false;
  std::vector<double> cost;
  std::vector<std::int64_t> configs;
  std::size_t dims = 0, num_configs = 0;
};

struct raw_edge {
  std::size_t at = 0, u_at = 0, v_at = 0;  // byte offsets, for messages
  std::int64_t u = -1, v = -1;
  bool has_u = false, has_v = false, has_cost = false;
  std::vector<double> cost;
  std::size_t rows = 0, cols = 0;
};

/// Marks a key of one object as seen; a second occurrence is an error.
inline void once(scanner& s, bool& seen, std::size_t at, const char* key,
                 const std::string& object) {
  if (seen) s.fail(at, "key \"" + std::string(key) + "\" appears twice in " + object);
  seen = true;
}

inline void parse_vertex(scanner& s, raw_vertex& rv, std::size_t index) {
  const std::string object = "vertex " + std::to_string(index);
  s.ws();
  rv.at = s.pos();
  s.expect('{', ("at the start of " + object).c_str());
  if (s.accept('}')) return;
  do {
    const std::size_t key_at = (s.ws(), s.pos());
    const std::string key = s.string("as a key of a vertex");
    s.expect(':', "after a key");
    if (key == "name") {
      once(s, rv.has_name, key_at, "name", object);
      rv.name = s.string(("as the name of " + object).c_str());
    } else if (key == "cost") {
      once(s, rv.has_cost, key_at, "cost", object);
      s.expect('[', ("to open the cost list of " + object).c_str());
      if (!s.accept(']')) {
        do rv.cost.push_back(s.number("in a vertex cost list"));
        while (s.next(']', "in a vertex cost list"));
      }
    } else if (key == "configs") {
      once(s, rv.has_configs, key_at, "configs", object);
      s.expect('[', ("to open the configuration list of " + object).c_str());
      if (!s.accept(']')) {
        do {
          const std::size_t tuple_at = (s.ws(), s.pos());
          s.expect('[', "to open a configuration tuple");
          std::size_t len = 0;
          if (!s.accept(']')) {
            do {
              rv.configs.push_back(s.integer("in a configuration tuple"));
              ++len;
            } while (s.next(']', "in a configuration tuple"));
          }
          if (rv.num_configs == 0) {
            rv.dims = len;
          } else if (len != rv.dims) {
            s.fail_shape(tuple_at, object + ": configuration " + std::to_string(rv.num_configs) +
                                       " has " + std::to_string(len) +
                                       " factors, configuration 0 has " + std::to_string(rv.dims));
          }
          ++rv.num_configs;
        } while (s.next(']', "in a configuration list"));
      }
    } else {
      s.skip_value();
    }
  } while (s.next('}', ("in " + object).c_str()));
}

/// `vertices`: those read so far, to size the matrix when "u" and "v" come before "cost".
inline void parse_edge(scanner& s, raw_edge& re, std::size_t index,
                       const std::vector<raw_vertex>& vertices) {
  const std::string object = "edge " + std::to_string(index);
  s.ws();
  re.at = s.pos();
  s.expect('{', ("at the start of " + object).c_str());
  if (s.accept('}')) return;
  do {
    const std::size_t key_at = (s.ws(), s.pos());
    const std::string key = s.string("as a key of an edge");
    s.expect(':', "after a key");
    if (key == "u") {
      once(s, re.has_u, key_at, "u", object);
      re.u_at = (s.ws(), s.pos());
      re.u = s.integer(("as the source vertex of " + object).c_str());
    } else if (key == "v") {
      once(s, re.has_v, key_at, "v", object);
      re.v_at = (s.ws(), s.pos());
      re.v = s.integer(("as the target vertex of " + object).c_str());
    } else if (key == "cost") {
      once(s, re.has_cost, key_at, "cost", object);
      s.expect('[', ("to open the cost matrix of " + object).c_str());
      if (re.has_u && re.has_v && re.u >= 0 && re.v >= 0 && std::size_t(re.u) < vertices.size() &&
          std::size_t(re.v) < vertices.size())
        // as much as the sizes claim, but no more than the rest of the file can hold (a
        // number and its comma take two bytes at least; a gzip'd file: what its compressed
        // bytes left can inflate to): a claim is not an allocation
        re.cost.reserve(std::min(
            vertices[std::size_t(re.u)].cost.size() * vertices[std::size_t(re.v)].cost.size(),
            s.remaining() / 2));
      if (!s.accept(']')) {
        do {
          const std::size_t row_at = (s.ws(), s.pos());
          s.expect('[', ("to open a row of the cost matrix of " + object).c_str());
          std::size_t len = 0;
          if (!s.accept(']')) {
            do {
              re.cost.push_back(s.number("in an edge cost matrix"));
              ++len;
            } while (s.next(']', "in a row of an edge cost matrix"));
          }
          if (re.rows == 0) {
            re.cols = len;
          } else if (len != re.cols) {
            s.fail_shape(row_at, object + ": row " + std::to_string(re.rows) +
                                     " of the cost matrix has " + std::to_string(len) +
                                     " entries, row 0 has " + std::to_string(re.cols));
          }
          ++re.rows;
        } while (s.next(']', ("in the cost matrix of " + object).c_str()));
      }
    } else {
      s.skip_value();
    }
  } while (s.next('}', ("in " + object).c_str()));
}

}  // namespace detail::tables

/// Parses the text of a cost-table file; `source` names it in error messages.
namespace detail::tables {
inline cost_graph parse(scanner& s);
}  // namespace detail::tables

inline cost_graph parse_cost_tables(std::string_view text, std::string_view source = "<input>") {
  return detail::tables::scan_text(text, source, "cost tables", detail::tables::parse);
}

inline cost_graph detail::tables::parse(scanner& s) {
  std::vector<raw_vertex> vertices;
  std::vector<raw_edge> edges;
  bool has_vertices = false, has_edges = false;
  const std::size_t top = (s.ws(), s.pos());
  s.expect('{', "at the start of a cost-table file");
  if (!s.accept('}')) {
    do {
      const std::size_t key_at = (s.ws(), s.pos());
      const std::string key = s.string("as a top-level key");
      s.expect(':', "after a key");
      if (key == "vertices") {
        once(s, has_vertices, key_at, "vertices", "the top-level object");
        s.expect('[', "to open the vertex list");
        if (!s.accept(']')) {
          do {
            vertices.emplace_back();
            parse_vertex(s, vertices.back(), vertices.size() - 1);
          } while (s.next(']', "in the vertex list"));
        }
      } else if (key == "edges") {
        once(s, has_edges, key_at, "edges", "the top-level object");
        s.expect('[', "to open the edge list");
        if (!s.accept(']')) {
          do {
            edges.emplace_back();
            parse_edge(s, edges.back(), edges.size() - 1, vertices);
          } while (s.next(']', "in the edge list"));
        }
      } else {
        s.skip_value();
      }
    } while (s.next('}', "in the top-level object"));
  }
  s.at_end();
  if (!has_vertices) s.fail(top, "no \"vertices\" key in the top-level object");

  cost_graph g;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    auto& rv = vertices[i];
    const std::string object =
        "vertex " + std::to_string(i) + (rv.has_name ? " (\"" + rv.name + "\")" : "");
    if (!rv.has_cost) s.fail(rv.at, object + " has no \"cost\" list");
    if (rv.cost.empty())
      s.fail_shape(rv.at, object + " has an empty \"cost\" list; a vertex needs a configuration");
    if (rv.has_configs && rv.num_configs != rv.cost.size())
      s.fail_shape(rv.at, object + " has " + std::to_string(rv.num_configs) +
                              " configurations but " + std::to_string(rv.cost.size()) +
                              " costs; give one cost per configuration");
    if (rv.has_configs && rv.dims == 0)
      s.fail_shape(rv.at, object + " has configuration tuples of length 0");
    g.add_vertex_flat(rv.has_name ? std::move(rv.name) : "v" + std::to_string(i),
                      std::move(rv.cost), std::move(rv.configs), rv.has_configs ? rv.dims : 0);
  }
  const std::size_t n = vertices.size();
  for (std::size_t i = 0; i < edges.size(); ++i) {
    auto& re = edges[i];
    const std::string object = "edge " + std::to_string(i);
    if (!re.has_u || !re.has_v)
      s.fail(re.at, object + " has no \"" + (re.has_u ? "v" : "u") + "\"");
    if (!re.has_cost) s.fail(re.at, object + " has no \"cost\" matrix");
    if (re.u < 0 || std::size_t(re.u) >= n)
      s.fail(re.u_at, object + ": \"u\": " + std::to_string(re.u) + " is not a vertex (there are " +
                          std::to_string(n) + ", numbered from 0)");
    if (re.v < 0 || std::size_t(re.v) >= n)
      s.fail(re.v_at, object + ": \"v\": " + std::to_string(re.v) + " is not a vertex (there are " +
                          std::to_string(n) + ", numbered from 0)");
    const std::size_t u = std::size_t(re.u), v = std::size_t(re.v);
    if (u == v) s.fail(re.at, object + " goes from vertex " + std::to_string(u) + " to itself");
    if (boost::edge(u, v, g.graph()).second)
      s.fail(re.at, object + " (" + std::to_string(u) + " -> " + std::to_string(v) + ", " +
                        g.name(u) + " -> " + g.name(v) + ") duplicates edge " +
                        std::to_string(g.graph()[boost::edge(u, v, g.graph()).first].index) +
                        "; at most one edge per vertex pair");
    if (re.rows != g.num_configs(u) || re.cols != g.num_configs(v))
      s.fail_shape(re.at, object + " (" + g.name(u) + " -> " + g.name(v) + "): cost matrix is " +
                              std::to_string(re.rows) + " x " + std::to_string(re.cols) +
                              ", expected " + std::to_string(g.num_configs(u)) + " x " +
                              std::to_string(g.num_configs(v)) +
                              " (configurations of u x configurations of v)");
    g.add_edge(u, v, std::move(re.cost));
  }
  return g;
}

/// How read_cost_tables reads a file.
struct table_read_options {
  /// The most bytes a gzip'd file may inflate to; 0: half of this machine's memory. A guard
  /// against gzip bombs (it bounds the time inflating and the values a small file can make the
  /// reader parse); the inflated text itself is streamed, never held whole.
  std::size_t max_inflated_bytes = 0;
};

/// Reads a cost-table file (plain JSON, or gzip'd when built with zlib; see the file comment).
/// \code
///   wp::cost_graph g = wp::read_cost_tables("alexnet_p8.json");
///   auto r = wp::pase_search(g);
/// \endcode
inline cost_graph read_cost_tables(const std::string& path, const table_read_options& opt = {}) {
  return detail::tables::scan_file(path, "cost-table file", "cost tables", opt.max_inflated_bytes,
                                   detail::tables::parse);
}

/// The cost-table JSON of g (numbers in shortest round-trip form): what
/// `parse_cost_tables` reads back into an equal graph.
inline std::string write_cost_tables(const cost_graph& g) {
  std::string out;
  char buf[64];
  auto num = [&](double x) {
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, r.ptr);
  };
  auto quoted = [&](const std::string& s) {
    out += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
        out += buf;
      } else {
        out += c;
      }
    }
    out += '"';
  };
  out += "{\"vertices\": [\n";
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    out += "{\"name\": ";
    quoted(g.name(v));
    if (!g.config(v, 0).empty()) {
      out += ", \"configs\": [";
      for (std::size_t k = 0; k < g.num_configs(v); ++k) {
        out += k ? ",[" : "[";
        const auto c = g.config(v, k);
        for (std::size_t i = 0; i < c.size(); ++i) {
          if (i) out += ',';
          out += std::to_string(c[i]);
        }
        out += ']';
      }
      out += ']';
    }
    out += ", \"cost\": [";
    for (std::size_t k = 0; k < g.num_configs(v); ++k) {
      if (k) out += ',';
      num(g.vertex_cost(v, k));
    }
    out += v + 1 < g.num_vertices() ? "]},\n" : "]}\n";
  }
  out += "],\n\"edges\": [\n";
  for (std::size_t e = 0; e < g.num_edges(); ++e) {
    const std::size_t u = g.edge_source(e), v = g.edge_target(e);
    out += "{\"u\": " + std::to_string(u) + ", \"v\": " + std::to_string(v) + ", \"cost\": [";
    for (std::size_t ku = 0; ku < g.num_configs(u); ++ku) {
      out += ku ? ",[" : "[";
      for (std::size_t kv = 0; kv < g.num_configs(v); ++kv) {
        if (kv) out += ',';
        num(g.edge_cost(e, ku, kv));
      }
      out += ']';
    }
    out += e + 1 < g.num_edges() ? "]},\n" : "]}\n";
  }
  out += "]}\n";
  return out;
}

}  // namespace workpart
