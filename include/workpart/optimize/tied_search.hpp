#pragma once
/// \file tied_search.hpp
/// The search over a cost-table graph whose vertices come in groups that take one
/// configuration together (config_options::tie_backward: a backward map runs on its forward
/// map's grid, as PaSE gives a layer one configuration for both). Each group becomes one
/// vertex for the search -- the sum of its members' costs, an edge inside the group adding its
/// diagonal, edges to another group summed -- and the result is read back onto every member.
/// The merged graph is what makes a training step searchable: a backward map reads the
/// activations of its forward map and of the maps around it, so with both free the dependent
/// sets span a whole block (a Transformer's: 7 maps of ~30 grids, 2e10 rows); tied, they are
/// the forward graph's (at most 5 vertices, the root's two among them, 9e4 rows).

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "cost_graph.hpp"
#include "search.hpp"

namespace workpart::detail {

/// `g` with each group of `tied` (tied[v]: the vertex whose configuration v takes; v itself
/// when free; every member names its group's representative directly) merged into one
/// vertex, numbered in the order of the representatives; `group[v]` is v's merged vertex.
struct merged_graph {
  cost_graph graph;
  std::vector<std::size_t> group;
  std::vector<std::size_t> representative;  ///< [merged vertex]: its vertex in g
};

inline merged_graph merge_tied(const cost_graph& g, const std::vector<std::size_t>& tied) {
  const std::size_t n = g.num_vertices();
  if (tied.size() != n)
    throw shape_error("merge_tied: " + std::to_string(tied.size()) + " ties for " +
                      std::to_string(n) + " vertices");
  merged_graph out;
  out.group.assign(n, 0);
  std::vector<std::size_t> index(n, std::size_t(-1));
  for (std::size_t v = 0; v < n; ++v)
    if (tied[v] == v) {
      index[v] = out.representative.size();
      out.representative.push_back(v);
    }
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t r = tied[v];
    if (r >= n || tied[r] != r)
      throw shape_error("merge_tied: vertex '" + g.name(v) + "' is tied to a vertex that is " +
                        "not its group's representative");
    if (g.num_configs(r) != g.num_configs(v))
      throw shape_error("merge_tied: '" + g.name(v) + "' has " + std::to_string(g.num_configs(v)) +
                        " configurations, '" + g.name(r) + "' " + std::to_string(g.num_configs(r)) +
                        "; tied vertices need the same");
    out.group[v] = index[r];
  }
  const std::size_t m = out.representative.size();
  std::vector<std::vector<double>> cost(m);
  for (std::size_t i = 0; i < m; ++i) cost[i].assign(g.num_configs(out.representative[i]), 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    auto& c = cost[out.group[v]];
    for (std::size_t k = 0; k < c.size(); ++k) c[k] += g.vertex_cost(v, k);
  }
  // Edges between groups, oriented from the lower merged number: [k_a][k_b].
  std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> edges;
  for (std::size_t e = 0; e < g.num_edges(); ++e) {
    const std::size_t u = g.edge_source(e), v = g.edge_target(e);
    const std::size_t a = out.group[u], b = out.group[v];
    const std::size_t Ku = g.num_configs(u), Kv = g.num_configs(v);
    if (a == b) {  // both ends take one configuration: only the diagonal can be chosen
      for (std::size_t k = 0; k < Ku; ++k) cost[a][k] += g.edge_cost(e, k, k);
      continue;
    }
    const bool flip = a > b;
    auto& mat = edges[flip ? std::pair{b, a} : std::pair{a, b}];
    if (mat.empty()) mat.assign(Ku * Kv, 0.0);
    for (std::size_t x = 0; x < Ku; ++x)
      for (std::size_t y = 0; y < Kv; ++y)
        mat[flip ? y * Ku + x : x * Kv + y] += g.edge_cost(e, x, y);
  }
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t r = out.representative[i];
    std::vector<std::int64_t> tuples;
    for (std::size_t k = 0; k < g.num_configs(r); ++k) {
      const auto t = g.config(r, k);
      tuples.insert(tuples.end(), t.begin(), t.end());
    }
    out.graph.add_vertex_flat(g.name(r), std::move(cost[i]), std::move(tuples), g[r].dims);
  }
  for (auto& [ends, mat] : edges) out.graph.add_edge(ends.first, ends.second, std::move(mat));
  return out;
}

/// pase_search over `g` with the groups of `tied` (see merge_tied) taking one configuration
/// each: optimal over the strategies that respect the ties. The result is over g's vertices
/// and edges (costs, runner-ups: a member's is its group's); the order and the dependent
/// sets are the representatives' (a member other than its group's first has none).
template <class Progress = no_progress>
search_result tied_pase_search(const cost_graph& g, const std::vector<std::size_t>& tied,
                               const search_options& so = {}, Progress&& progress = {}) {
  const merged_graph mg = merge_tied(g, tied);
  search_result r = pase_search(mg.graph, so, progress);
  const std::size_t n = g.num_vertices();
  std::vector<std::size_t> config(n);
  for (std::size_t v = 0; v < n; ++v) config[v] = r.config[mg.group[v]];
  r.vertex_cost.assign(n, 0.0);
  r.edge_cost.assign(g.num_edges(), 0.0);
  double total = 0;
  for (std::size_t v = 0; v < n; ++v) total += r.vertex_cost[v] = g.vertex_cost(v, config[v]);
  for (std::size_t e = 0; e < g.num_edges(); ++e)
    total += r.edge_cost[e] = g.edge_cost(e, config[g.edge_source(e)], config[g.edge_target(e)]);
  r.cost = total;
  if (r.has_runner_ups) {
    std::vector<runner_up> ru(n);
    for (std::size_t v = 0; v < n; ++v) {
      ru[v] = r.runner_ups[mg.group[v]];
      if (ru[v].config != runner_up::npos) ru[v].cost = total + ru[v].delta;
    }
    r.runner_ups = std::move(ru);
  }
  r.config = std::move(config);
  for (auto& v : r.order) v = mg.representative[v];
  std::vector<std::vector<std::size_t>> dependent(n);  // members other than the first: none
  for (std::size_t i = 0; i < r.dependent_set.size(); ++i) {
    auto& d = dependent[mg.representative[i]] = std::move(r.dependent_set[i]);
    for (auto& v : d) v = mg.representative[v];
  }
  r.dependent_set = std::move(dependent);
  return r;
}

}  // namespace workpart::detail
