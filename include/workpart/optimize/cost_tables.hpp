#pragma once
/// \file cost_tables.hpp
/// Explicit cost-table problems for the strategy search (optimize/search.hpp): every vertex
/// (a map, an operation) has K_v candidate configurations with a cost each, every directed
/// edge (u, v) a K_u x K_v matrix of costs; a strategy picks one configuration per vertex and
/// costs the chosen vertex entries plus the chosen matrix entries.
///
/// The search is written against the concept `cost_table_graph`, so it runs on
///  - `workpart::cost_graph` (optimize/cost_graph.hpp): the run-time graph, a
///    `boost::adjacency_list` whose bundled properties hold names, configuration tuples and
///    flat cost tables (what io/table_reader.hpp reads), and
///  - `workpart::static_cost_graph<V, E, K>` (here): std::array data, usable in constant
///    expressions.
///
/// This header is light: no Boost, no MPI, no Eigen.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "../error.hpp"

namespace workpart {

/// A cost-table problem the search can read.
///
/// *Notation*: `g` a `const G&`; `v`, `k`, `e`, `ku`, `kv` values of type `std::size_t`.
///
/// *Valid expressions*:
///  - `g.num_vertices()`, `g.num_edges()`: counts; vertices and edges are numbered from 0.
///  - `g.num_configs(v)`: K_v >= 1, the number of configurations of vertex v.
///  - `g.vertex_cost(v, k)`: the cost of vertex v in configuration k < K_v.
///  - `g.edge_source(e)`, `g.edge_target(e)`: the endpoints u, v of edge e.
///  - `g.edge_cost(e, ku, kv)`: the cost of edge e when u has configuration ku, v has kv.
///
/// Optional, used when present (faster reads): `g.vertex_costs(v)` and `g.edge_costs(e)`
/// returning a contiguous range of doubles (K_v entries; K_u * K_v entries row-major).
template <class G>
concept cost_table_graph = requires(const G& g, std::size_t i) {
  { g.num_vertices() } -> std::convertible_to<std::size_t>;
  { g.num_configs(i) } -> std::convertible_to<std::size_t>;
  { g.vertex_cost(i, i) } -> std::convertible_to<double>;
  { g.num_edges() } -> std::convertible_to<std::size_t>;
  { g.edge_source(i) } -> std::convertible_to<std::size_t>;
  { g.edge_target(i) } -> std::convertible_to<std::size_t>;
  { g.edge_cost(i, i, i) } -> std::convertible_to<double>;
};

/// A small cost-table problem held in std::arrays: V vertices, E edges, at most K
/// configurations per vertex. Usable in constant expressions:
/// \code
///   constexpr auto g = [] {
///     wp::static_cost_graph<3, 2, 2> g;
///     g.configs = {2, 2, 2};
///     g.vertex_costs = {{{1, 2}, {3, 1}, {2, 2}}};
///     g.edges = {{{0, 1}, {1, 2}}};
///     g.edge_costs[0] = {{{{0, 5}}, {{5, 0}}}};
///     g.edge_costs[1] = {{{{0, 5}}, {{5, 0}}}};
///     return g;
///   }();
///   static_assert(wp::pase_search(g).cost == 5);  // configurations (1, 1, 1)
/// \endcode
template <std::size_t V, std::size_t E, std::size_t K>
struct static_cost_graph {
  std::array<std::size_t, V> configs{};                              ///< K_v per vertex (1..K)
  std::array<std::array<double, K>, V> vertex_costs{};               ///< [v][k]
  std::array<std::pair<std::size_t, std::size_t>, E> edges{};        ///< (u, v) per edge
  std::array<std::array<std::array<double, K>, K>, E> edge_costs{};  ///< [e][ku][kv]

  constexpr std::size_t num_vertices() const { return V; }
  constexpr std::size_t num_edges() const { return E; }
  constexpr std::size_t num_configs(std::size_t v) const { return configs[v]; }
  constexpr double vertex_cost(std::size_t v, std::size_t k) const { return vertex_costs[v][k]; }
  constexpr std::size_t edge_source(std::size_t e) const { return edges[e].first; }
  constexpr std::size_t edge_target(std::size_t e) const { return edges[e].second; }
  constexpr double edge_cost(std::size_t e, std::size_t ku, std::size_t kv) const {
    return edge_costs[e][ku][kv];
  }
};

static_assert(cost_table_graph<static_cost_graph<1, 0, 1>>);

}  // namespace workpart
