#pragma once
/// \file optimize.hpp
/// `wp::optimize(program, nprocs, model)`: the schedule of least modelled cost, found exactly
/// by the PaSE search (optimize/search.hpp) over the program's cost tables
/// (optimize/cost_model.hpp, optimize/pricer.hpp). No MPI: any number of ranks can be priced on one
/// process.

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "../schedule/schedule.hpp"
#include "pricer.hpp"
#include "program_description.hpp"
#include "search.hpp"
#include "tied_search.hpp"

namespace workpart {

struct optimize_options {
  config_options configs{};
  search_options search{};
};

/// What optimize() found: the schedule, its modelled cost, and why.
struct optimized {
  workpart::schedule schedule;
  /// modelled seconds of one run (scatter, execute, gather), or of one execute() with the
  /// scatter and gather shared among config_options::executions of them
  double cost = 0;
  bool proven_optimal = false;  ///< false when a time budget or table limit cut the search short
  int nprocs = 1;
  struct map_choice {
    std::string map;
    grid_shape grid;
    double cost = 0;             ///< the map's own: arithmetic and combines
    bool has_runner_up = false;  ///< false for a map with one candidate grid
    grid_shape runner_up;        ///< the best grid other than `grid` (the others re-optimised)
    double runner_up_delta = 0;  ///< how much more the best schedule with it costs
  };
  std::vector<map_choice> maps;
  struct edge_choice {
    std::string from, to;             ///< map names, or "root (inputs)" / "root (outputs)"
    std::vector<std::string> arrays;  ///< the arrays it carries
    double cost = 0;
  };
  std::vector<edge_choice> edges;
  std::size_t candidates = 0;  ///< grids considered, over all maps
  double search_seconds = 0;
  /// Maps no grid allowed by config_options fits (use_all_ranks, powers_of_two): each keeps
  /// the all-ones grid, said here, and `cost` is the optimum over the grids that remain.
  std::vector<std::string> unmet_constraints;

  /// The choice in words, one line per map and per edge that costs something.
  std::string str() const {
    auto num = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%.3g", x);
      return std::string(b);
    };
    std::string s = "schedule for " + std::to_string(nprocs) + " ranks, modelled cost " +
                    num(cost) + " s" +
                    (proven_optimal ? " (optimal under the model)" : " (not proven optimal)") +
                    ", " + std::to_string(candidates) + " candidate grids:\n";
    for (const auto& m : maps) {
      s += "  map '" + m.map + "': grid " + m.grid.str() + ", own cost " + num(m.cost) + " s";
      if (m.has_runner_up)
        s += "; runner-up " + m.runner_up.str() + " (+" + num(m.runner_up_delta) + " s)";
      s += "\n";
    }
    for (const auto& e : edges) {
      if (e.cost <= 0) continue;
      s += "  " + e.from + " -> " + e.to + " (";
      for (std::size_t x = 0; x < e.arrays.size(); ++x) s += (x ? ", " : "") + e.arrays[x];
      s += "): " + num(e.cost) + " s\n";
    }
    for (const auto& u : unmet_constraints) s += "  constraint not met: " + u + "\n";
    return s;
  }
};

namespace detail {
inline void check_nprocs(index_t nprocs) {
  if (nprocs < 1 || nprocs > index_t(1) << 20)
    throw grid_error("wp::optimize: " + std::to_string(nprocs) + " ranks; give 1 to 2^20");
}
}  // namespace detail

/// The search over priced tables, read back as map choices and edge costs. A template only
/// so that the search (search.hpp) is instantiated where something is optimised, not in
/// every translation unit that includes the one header.
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

/// The schedule of least modelled cost for `nprocs` ranks. Every rank computes the same one.
/// \code
///   wp::machine_model model{.flops = 5e10, .alpha = 2e-6, .beta = 1e-10};
///   wp::optimized r = wp::optimize(prog, 64, model);
///   auto plan = wp::distribute(prog, r.schedule, ctx);   // on 64 ranks
/// \endcode
inline optimized optimize(const program& p, index_t nprocs, const machine_model& model = {},
                          const optimize_options& opt = {}) {
  detail::check_nprocs(nprocs);
  return optimize_tables(program_costs(p, int(nprocs), model, opt.configs), nprocs, opt.search);
}
/// A program given as data (program_description.hpp; workpart-optimize --program).
template <class = void>
optimized optimize(const program_description& p, index_t nprocs, const machine_model& model = {},
                   const optimize_options& opt = {}) {
  detail::check_nprocs(nprocs);
  return optimize_tables(program_costs(p, int(nprocs), model, opt.configs), nprocs, opt.search);
}
/// A single map is a program of one map.
template <int N, class... S>
optimized optimize(const map_t<N, S...>& m, index_t nprocs, const machine_model& model = {},
                   const optimize_options& opt = {}) {
  detail::check_nprocs(nprocs);
  return optimize_tables(program_costs({detail::priced_view(m)}, int(nprocs), model, opt.configs),
                         nprocs, opt.search);
}

/// `wp::distribute(prog, wp::automatic, ctx)`: the optimizer picks the schedule for the
/// context's ranks under `model` (the defaults of machine_model unless given:
/// `wp::automatic_t{.model = wp::machine_model::calibrate(ctx)}`).
///
/// Root searches, and its search's tables are bounded by `max_table_bytes`: a program whose
/// exact search over `configs` would need more (a recurrence's steps all reading one input and
/// one weight keep every step in the search's dependent sets: a 3-step, 2-layer LSTM's training
/// step at 4 ranks filled 7.4 GB and took 33 s) is searched in PaSE's space instead, each
/// backward map on its forward map's grid (`config_options::tie_backward`), exactly there;
/// where that too is over the bound, the search's greedy and local-search strategy. Of what
/// was searched, the schedule of least modelled cost is used. `wp::optimize` is the exact
/// search with every option (`search_options::max_table_bytes`, 16 GiB by default).
struct automatic_t {
  machine_model model{};
  config_options configs{};
  std::size_t max_table_bytes = std::size_t(1) << 30;
};
inline constexpr automatic_t automatic{};

}  // namespace workpart
