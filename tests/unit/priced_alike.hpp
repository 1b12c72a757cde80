#pragma once
/// \file priced_alike.hpp
/// Whether a program description prices as the typed program it describes: every cost table
/// entry equal, the same schedule and cost from wp::optimize (test_program_description.cpp,
/// test_describe.cpp).

#include <catch2/catch.hpp>

#include <workpart/optimize.hpp>

namespace wp = workpart;

/// Every vertex cost, edge matrix, grid and carried array of two table sets, exactly.
inline void require_same_tables(const wp::program_cost_tables& a,
                                const wp::program_cost_tables& b) {
  REQUIRE(a.maps == b.maps);
  REQUIRE(a.grids.size() == b.grids.size());
  for (std::size_t m = 0; m < a.grids.size(); ++m) {
    REQUIRE(a.grids[m].size() == b.grids[m].size());
    for (std::size_t c = 0; c < a.grids[m].size(); ++c) REQUIRE(a.grids[m][c] == b.grids[m][c]);
  }
  REQUIRE(a.graph.num_vertices() == b.graph.num_vertices());
  for (std::size_t v = 0; v < a.graph.num_vertices(); ++v) {
    REQUIRE(a.graph.num_configs(v) == b.graph.num_configs(v));
    for (std::size_t c = 0; c < a.graph.num_configs(v); ++c)
      REQUIRE(a.graph.vertex_cost(v, c) == b.graph.vertex_cost(v, c));
  }
  REQUIRE(a.graph.num_edges() == b.graph.num_edges());
  for (std::size_t e = 0; e < a.graph.num_edges(); ++e) {
    REQUIRE(a.graph.edge_source(e) == b.graph.edge_source(e));
    REQUIRE(a.graph.edge_target(e) == b.graph.edge_target(e));
    REQUIRE(a.edge_arrays[e] == b.edge_arrays[e]);
    const std::size_t ku = a.graph.num_configs(a.graph.edge_source(e)),
                      kv = a.graph.num_configs(a.graph.edge_target(e));
    for (std::size_t x = 0; x < ku; ++x)
      for (std::size_t y = 0; y < kv; ++y)
        REQUIRE(a.graph.edge_cost(e, x, y) == b.graph.edge_cost(e, x, y));
  }
}

template <class Prog>
void require_same_as_typed(const Prog& prog, const wp::program_description& d) {
  const wp::machine_model models[] = {wp::machine_model{}, wp::machine_model{1e6, 1e-4, 1e-8}};
  for (const auto& mm : models)
    for (int P = 1; P <= 6; ++P) {
      INFO(P << " ranks, flops " << mm.flops);
      require_same_tables(wp::program_costs(prog, P, mm), wp::program_costs(d, P, mm));
      const wp::optimized a = wp::optimize(prog, P, mm), b = wp::optimize(d, P, mm);
      REQUIRE(a.cost == b.cost);
      for (std::size_t m = 0; m < a.maps.size(); ++m) REQUIRE(a.maps[m].grid == b.maps[m].grid);
    }
}
