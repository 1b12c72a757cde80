#pragma once
/// \file cost_graph.hpp
/// The run-time cost-table graph (`workpart::cost_graph`): what io/table_reader.hpp reads and
/// optimize/search.hpp searches. It is a Boost.Graph by adaptation, as BGL's own adaptors of
/// foreign graphs are: `boost::graph_traits<cost_graph>` and the free functions below make it
/// a VertexListGraph, EdgeListGraph and BidirectionalGraph, so BGL's algorithms run on it
/// directly. It stores its vertices, edges and incidence lists itself so that the one header
/// (`workpart.hpp`) needs only <boost/graph/graph_traits.hpp>, not adjacency_list (which
/// costs every translation unit about a second).
///
/// This header includes no MPI and no Eigen.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/graph_traits.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <boost/iterator/transform_iterator.hpp>

#include "../error.hpp"
#include "cost_tables.hpp"

namespace workpart {

/// The run-time cost-table graph: vertices carry a name, the configuration tuples and their
/// costs; edge e (numbered in the order added) carries its K_u x K_v cost matrix (row-major:
/// row = configuration of the source), `edge_costs(e)`. Copies and moves are plain.
/// As a Boost.Graph: vertex descriptor = vertex number, edge descriptor = `edge_descriptor`
/// (the edge's number), `g[v]` the `vertex_data`, `g[e]` the `edge_data`.
/// \code
///   wp::cost_graph g;
///   auto a = g.add_vertex("matmul", {4.0, 2.5}, {{1, 1}, {2, 1}});
///   auto b = g.add_vertex("relu", {1.0, 0.5});
///   g.add_edge(a, b, {0.0, 3.0, 3.0, 0.0});
///   auto r = wp::pase_search(g);
///   for (auto e : boost::make_iterator_range(boost::out_edges(a, g))) boost::target(e, g);
/// \endcode
class cost_graph {
 public:
  struct vertex_data {
    std::string name;
    std::vector<double> cost;           ///< K entries
    std::vector<std::int64_t> configs;  ///< K * dims entries: tuple k is [k*dims, (k+1)*dims)
    std::size_t dims = 0;               ///< tuple length (0: no tuples given)
  };
  struct edge_data {
    std::size_t index = 0;  ///< the edge's number: `edge_costs(index)`, `edge_source(index)`
  };
  /// An edge as Boost.Graph sees it: its number.
  struct edge_descriptor {
    std::size_t index = static_cast<std::size_t>(-1);
    friend bool operator==(edge_descriptor, edge_descriptor) = default;
  };

  /// Adds a vertex with K = cost.size() configurations (K >= 1). `configs`, when not empty,
  /// holds one tuple per configuration, all of one length. Returns its number.
  std::size_t add_vertex(std::string name, std::vector<double> cost,
                         const std::vector<std::vector<std::int64_t>>& configs = {}) {
    std::vector<std::int64_t> flat;
    std::size_t dims = 0;
    if (!configs.empty()) {
      dims = configs.front().size();
      for (const auto& c : configs) {
        if (c.size() != dims)
          throw shape_error("cost_graph::add_vertex(\"" + name +
                            "\"): configuration tuples of different lengths (" +
                            std::to_string(dims) + " and " + std::to_string(c.size()) + ")");
        flat.insert(flat.end(), c.begin(), c.end());
      }
    }
    return add_vertex_flat(std::move(name), std::move(cost), std::move(flat), dims);
  }

  /// The same with the tuples flattened (K * dims entries; dims = 0 for none).
  std::size_t add_vertex_flat(std::string name, std::vector<double> cost,
                              std::vector<std::int64_t> configs, std::size_t dims) {
    if (cost.empty())
      throw shape_error("cost_graph::add_vertex(\"" + name +
                        "\"): a vertex needs at least one configuration (cost is empty)");
    if (dims != 0 && configs.size() != cost.size() * dims)
      throw shape_error("cost_graph::add_vertex(\"" + name +
                        "\"): " + std::to_string(configs.size() / dims) + " configurations but " +
                        std::to_string(cost.size()) + " costs; give one cost per configuration");
    if (dims == 0 && !configs.empty())
      throw shape_error("cost_graph::add_vertex(\"" + name + "\"): tuples of length 0");
    vertices_.push_back(vertex_data{std::move(name), std::move(cost), std::move(configs), dims});
    out_.emplace_back();
    in_.emplace_back();
    return vertices_.size() - 1;
  }

  /// Adds the edge u -> v with its K_u x K_v matrix, row-major. Throws `table_error` for an
  /// unknown vertex, a self-loop or a second edge u -> v, `shape_error` for a wrong size.
  std::size_t add_edge(std::size_t u, std::size_t v, std::vector<double> cost) {
    const std::size_t n = num_vertices();
    if (u >= n || v >= n)
      throw table_error("cost_graph::add_edge(" + std::to_string(u) + ", " + std::to_string(v) +
                        "): vertex " + std::to_string(u >= n ? u : v) + " does not exist (" +
                        std::to_string(n) + " vertices)");
    if (u == v)
      throw table_error("cost_graph::add_edge(" + std::to_string(u) + ", " + std::to_string(v) +
                        "): an edge from a vertex to itself; put its cost into the vertex");
    if (find_edge(u, v).second)
      throw table_error("cost_graph::add_edge(" + std::to_string(u) + ", " + std::to_string(v) +
                        "): a second edge " + name(u) + " -> " + name(v) +
                        "; at most one edge per ordered vertex pair (sum the matrices)");
    if (cost.size() != num_configs(u) * num_configs(v))
      throw shape_error("cost_graph::add_edge(" + name(u) + " -> " + name(v) + "): matrix has " +
                        std::to_string(cost.size()) + " entries, expected " +
                        std::to_string(num_configs(u)) + " x " + std::to_string(num_configs(v)));
    const edge_descriptor e{ends_.size()};
    ends_.emplace_back(u, v);
    edge_cost_.push_back(std::move(cost));
    out_[u].push_back(e);
    in_[v].push_back(e);
    return e.index;
  }

  // ---- cost_table_graph
  std::size_t num_vertices() const { return vertices_.size(); }
  std::size_t num_edges() const { return ends_.size(); }
  std::size_t num_configs(std::size_t v) const { return vertices_[v].cost.size(); }
  double vertex_cost(std::size_t v, std::size_t k) const { return vertices_[v].cost[k]; }
  std::size_t edge_source(std::size_t e) const { return ends_[e].first; }
  std::size_t edge_target(std::size_t e) const { return ends_[e].second; }
  double edge_cost(std::size_t e, std::size_t ku, std::size_t kv) const {
    return edge_cost_[e][ku * num_configs(ends_[e].second) + kv];
  }
  std::span<const double> vertex_costs(std::size_t v) const { return vertices_[v].cost; }
  std::span<const double> edge_costs(std::size_t e) const { return edge_cost_[e]; }

  // ---- names and tuples
  const std::string& name(std::size_t v) const { return vertices_[v].name; }
  /// The tuple of configuration k of vertex v (empty when the vertex has none).
  std::span<const std::int64_t> config(std::size_t v, std::size_t k) const {
    const auto& d = vertices_[v];
    if (d.dims == 0) return {};
    return std::span<const std::int64_t>(d.configs).subspan(k * d.dims, d.dims);
  }
  /// "(1,2,4)" for a tuple, "#k" for a vertex without tuples.
  std::string config_string(std::size_t v, std::size_t k) const {
    const auto c = config(v, k);
    if (c.empty()) return "#" + std::to_string(k);
    std::string s = "(";
    for (std::size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
    return s + ")";
  }
  /// The number of configurations summed over the vertices.
  std::size_t total_configs() const {
    std::size_t t = 0;
    for (std::size_t v = 0; v < num_vertices(); ++v) t += num_configs(v);
    return t;
  }

  // ---- Boost.Graph
  /// The Boost.Graph: this graph itself (kept for code written against the adjacency_list
  /// this class once wrapped).
  const cost_graph& graph() const { return *this; }
  edge_descriptor edge_at(std::size_t e) const { return edge_descriptor{e}; }
  const vertex_data& operator[](std::size_t v) const { return vertices_[v]; }
  edge_data operator[](edge_descriptor e) const { return edge_data{e.index}; }
  /// The edge u -> v and whether there is one (`boost::edge(u, v, g)`); searches the
  /// shorter of u's out-edges and v's in-edges.
  std::pair<edge_descriptor, bool> find_edge(std::size_t u, std::size_t v) const {
    const bool from_u = out_[u].size() <= in_[v].size();
    for (const edge_descriptor e : from_u ? out_[u] : in_[v])
      if ((from_u ? ends_[e.index].second : ends_[e.index].first) == (from_u ? v : u))
        return {e, true};
    return {edge_descriptor{}, false};
  }
  const std::vector<edge_descriptor>& out_edge_list(std::size_t v) const { return out_[v]; }
  const std::vector<edge_descriptor>& in_edge_list(std::size_t v) const { return in_[v]; }

 private:
  std::vector<vertex_data> vertices_;
  std::vector<std::pair<std::size_t, std::size_t>> ends_;  ///< (u, v) per edge
  std::vector<std::vector<double>> edge_cost_;             ///< matrix per edge
  std::vector<std::vector<edge_descriptor>> out_, in_;     ///< incidence lists per vertex
};

static_assert(cost_table_graph<cost_graph>);

}  // namespace workpart

// Boost.Graph's interface for cost_graph: in namespace boost, as BGL's adaptors of other
// graph types (vector_as_graph.hpp, leda_graph.hpp) define theirs, so both boost::f(g) and
// unqualified calls find them.
namespace boost {

namespace workpart_detail {
/// Edge number -> edge descriptor, for the edge iterator.
struct make_cost_edge {
  workpart::cost_graph::edge_descriptor operator()(std::size_t e) const { return {e}; }
};
}  // namespace workpart_detail

template <>
struct graph_traits<workpart::cost_graph> {
  struct traversal_category : vertex_list_graph_tag,
                              edge_list_graph_tag,
                              bidirectional_graph_tag {};
  using directed_category = bidirectional_tag;
  using edge_parallel_category = disallow_parallel_edge_tag;
  using vertex_descriptor = std::size_t;
  using edge_descriptor = workpart::cost_graph::edge_descriptor;
  using vertex_iterator = counting_iterator<std::size_t>;
  using edge_iterator =
      transform_iterator<workpart_detail::make_cost_edge, counting_iterator<std::size_t>,
                         edge_descriptor, edge_descriptor>;
  using out_edge_iterator = std::vector<edge_descriptor>::const_iterator;
  using in_edge_iterator = std::vector<edge_descriptor>::const_iterator;
  using adjacency_iterator = void;
  using vertices_size_type = std::size_t;
  using edges_size_type = std::size_t;
  using degree_size_type = std::size_t;
  static vertex_descriptor null_vertex() { return static_cast<std::size_t>(-1); }
};

using cost_graph_traits = graph_traits<workpart::cost_graph>;

inline std::pair<cost_graph_traits::vertex_iterator, cost_graph_traits::vertex_iterator> vertices(
    const workpart::cost_graph& g) {
  return {cost_graph_traits::vertex_iterator(0),
          cost_graph_traits::vertex_iterator(g.num_vertices())};
}
inline std::size_t num_vertices(const workpart::cost_graph& g) { return g.num_vertices(); }
inline std::pair<cost_graph_traits::edge_iterator, cost_graph_traits::edge_iterator> edges(
    const workpart::cost_graph& g) {
  using it = cost_graph_traits::edge_iterator;
  return {it(counting_iterator<std::size_t>(0)), it(counting_iterator<std::size_t>(g.num_edges()))};
}
inline std::size_t num_edges(const workpart::cost_graph& g) { return g.num_edges(); }
inline std::size_t source(workpart::cost_graph::edge_descriptor e, const workpart::cost_graph& g) {
  return g.edge_source(e.index);
}
inline std::size_t target(workpart::cost_graph::edge_descriptor e, const workpart::cost_graph& g) {
  return g.edge_target(e.index);
}
inline std::pair<cost_graph_traits::out_edge_iterator, cost_graph_traits::out_edge_iterator>
out_edges(std::size_t v, const workpart::cost_graph& g) {
  const auto& l = g.out_edge_list(v);
  return {l.begin(), l.end()};
}
inline std::size_t out_degree(std::size_t v, const workpart::cost_graph& g) {
  return g.out_edge_list(v).size();
}
inline std::pair<cost_graph_traits::in_edge_iterator, cost_graph_traits::in_edge_iterator> in_edges(
    std::size_t v, const workpart::cost_graph& g) {
  const auto& l = g.in_edge_list(v);
  return {l.begin(), l.end()};
}
inline std::size_t in_degree(std::size_t v, const workpart::cost_graph& g) {
  return g.in_edge_list(v).size();
}
inline std::pair<workpart::cost_graph::edge_descriptor, bool> edge(std::size_t u, std::size_t v,
                                                                   const workpart::cost_graph& g) {
  return g.find_edge(u, v);
}
inline std::size_t degree(std::size_t v, const workpart::cost_graph& g) {
  return in_degree(v, g) + out_degree(v, g);
}

}  // namespace boost
