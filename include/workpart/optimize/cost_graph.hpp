#pragma once
/// \file cost_graph.hpp
/// The run-time cost-table graph (`workpart::cost_graph`) over Boost.Graph: what
/// io/table_reader.hpp reads and optimize/search.hpp searches.
///
/// This header includes no MPI and no Eigen.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "../error.hpp"
#include "cost_tables.hpp"

namespace workpart {

/// The run-time cost-table graph: a `boost::adjacency_list` (vecS, vecS, bidirectionalS)
/// whose vertices carry a name, the configuration tuples and their costs, and whose edges
/// carry their number; edge e's K_u x K_v cost matrix (row-major: row = configuration of the
/// source) is `edge_costs(e)`. Edges are numbered in the order they were added. Copies and
/// moves are plain (no descriptor into another graph's storage is kept).
/// \code
///   wp::cost_graph g;
///   auto a = g.add_vertex("matmul", {4.0, 2.5}, {{1, 1}, {2, 1}});
///   auto b = g.add_vertex("relu", {1.0, 0.5});
///   g.add_edge(a, b, {0.0, 3.0, 3.0, 0.0});
///   auto r = wp::pase_search(g);
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
  using graph_type = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                           vertex_data, edge_data>;
  using edge_descriptor = graph_type::edge_descriptor;

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
    const auto v = boost::add_vertex(g_);
    g_[v] = vertex_data{std::move(name), std::move(cost), std::move(configs), dims};
    return v;
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
    if (boost::edge(u, v, g_).second)
      throw table_error("cost_graph::add_edge(" + std::to_string(u) + ", " + std::to_string(v) +
                        "): a second edge " + name(u) + " -> " + name(v) +
                        "; at most one edge per ordered vertex pair (sum the matrices)");
    if (cost.size() != num_configs(u) * num_configs(v))
      throw shape_error("cost_graph::add_edge(" + name(u) + " -> " + name(v) + "): matrix has " +
                        std::to_string(cost.size()) + " entries, expected " +
                        std::to_string(num_configs(u)) + " x " + std::to_string(num_configs(v)));
    const std::size_t index = ends_.size();
    boost::add_edge(u, v, edge_data{index}, g_);
    ends_.emplace_back(u, v);
    edge_cost_.push_back(std::move(cost));
    return index;
  }

  // ---- cost_table_graph
  std::size_t num_vertices() const { return boost::num_vertices(g_); }
  std::size_t num_edges() const { return ends_.size(); }
  std::size_t num_configs(std::size_t v) const { return g_[v].cost.size(); }
  double vertex_cost(std::size_t v, std::size_t k) const { return g_[v].cost[k]; }
  std::size_t edge_source(std::size_t e) const { return ends_[e].first; }
  std::size_t edge_target(std::size_t e) const { return ends_[e].second; }
  double edge_cost(std::size_t e, std::size_t ku, std::size_t kv) const {
    return edge_cost_[e][ku * num_configs(ends_[e].second) + kv];
  }
  std::span<const double> vertex_costs(std::size_t v) const { return g_[v].cost; }
  std::span<const double> edge_costs(std::size_t e) const { return edge_cost_[e]; }

  // ---- names and tuples
  const std::string& name(std::size_t v) const { return g_[v].name; }
  /// The tuple of configuration k of vertex v (empty when the vertex has none).
  std::span<const std::int64_t> config(std::size_t v, std::size_t k) const {
    const auto& d = g_[v];
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

  /// The Boost.Graph itself (vertex descriptor = vertex number).
  const graph_type& graph() const { return g_; }
  edge_descriptor edge_at(std::size_t e) const {
    return boost::edge(ends_[e].first, ends_[e].second, g_).first;
  }

 private:
  graph_type g_;
  std::vector<std::pair<std::size_t, std::size_t>> ends_;  ///< (u, v) per edge
  std::vector<std::vector<double>> edge_cost_;             ///< matrix per edge
};

static_assert(cost_table_graph<cost_graph>);

}  // namespace workpart
