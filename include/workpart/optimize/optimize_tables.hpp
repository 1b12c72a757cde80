#pragma once
/// \file optimize_tables.hpp
/// The search over a program's priced tables, read back as map choices and edge costs
/// (`optimized`): what wp::optimize and wp::automatic run. Not part of the one header: the
/// search is parsed where something is optimised (impl/optimize.ipp and
/// impl/distribute_automatic.ipp, compiled once in workpart::compiled).

#include <cstddef>
#include <utility>

#include "optimize.hpp"
#include "program_cost_tables.hpp"
#include "search.hpp"
#include "tied_search.hpp"

namespace workpart {

/// The search over priced tables, read back as map choices and edge costs (a template: run on
/// the pricer's tables and on the tool's, which carry no names of arrays or ties).
template <class Tables = program_cost_tables>
optimized optimize_tables(const Tables& t, index_t nprocs, const search_options& so = {}) {
  search_result r;
  if constexpr (requires { t.tied; })
    r = t.tied.empty() ? pase_search(t.graph, so) : detail::tied_pase_search(t.graph, t.tied, so);
  else
    r = pase_search(t.graph, so);
  optimized o;
  o.cost = r.cost;
  o.proven_optimal = r.proven_optimal;
  o.nprocs = int(nprocs);
  o.search_seconds = r.seconds;
  if constexpr (requires { t.unmet; }) o.unmet_constraints = t.unmet;
  for (std::size_t m = 0; m < t.maps.size(); ++m) {
    const std::size_t v = m + 1;
    optimized::map_choice c;
    c.map = t.maps[m];
    c.grid = t.grids[m][r.config[v]];
    c.cost = r.vertex_cost[v];
    o.candidates += t.grids[m].size();
    if (r.has_runner_ups && r.runner_ups[v].config != runner_up::npos) {
      c.has_runner_up = true;
      c.runner_up = t.grids[m][r.runner_ups[v].config];
      c.runner_up_delta = r.runner_ups[v].delta;
    }
    o.schedule.set(c.map, c.grid);
    o.maps.push_back(std::move(c));
  }
  for (std::size_t e = 0; e < t.graph.num_edges(); ++e) {
    optimized::edge_choice c;
    c.from = t.graph.name(t.graph.edge_source(e));
    c.to = t.graph.name(t.graph.edge_target(e));
    c.arrays = t.edge_arrays[e];
    c.cost = r.edge_cost[e];
    o.edges.push_back(std::move(c));
  }
  return o;
}

}  // namespace workpart
