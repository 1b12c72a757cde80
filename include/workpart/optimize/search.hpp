#pragma once
/// \file search.hpp
/// The exact strategy search (PaSE, seeds/001 Algorithms 1-3) over an explicit cost-table
/// problem (optimize/cost_tables.hpp): one configuration per vertex, minimising the sum of
/// the chosen vertex costs and the chosen edge-matrix entries.
///
/// How it works (the paper's algorithm as variable elimination on flat tables):
///  1. *Ordering.* Repeatedly take the unprocessed vertex with the fewest unprocessed
///     neighbours (ties: the less work rows x K_v, then the smaller number). Its unprocessed
///     neighbours at that moment are its *dependent set* D(v). Processing v makes the members
///     of D(v) neighbours of one another (Algorithm 1, line 30: their tables are restricted
///     jointly through v's table), so later dependent sets see that link.
///  2. *Elimination.* v's table has one row per configuration of D(v) (mixed radix, the
///     earliest-processed member fastest; see `plan` for one exception) and keeps, per row, the
///     best configuration of v and its cost: v's vertex cost, the edges between v and D(v), and the
///     tables of the vertices processed earlier whose dependent set held v (Algorithm 1, lines
///     20-25). Rows that differ only in their first digit form one min-plus matrix-vector product
///     (optimize/min_plus.hpp, vectorised); sums over the other digits are kept per digit.
///  3. *Assembly.* In reverse order each vertex reads its configuration from its table at
///     the row its dependent set has already fixed (Algorithm 3).
/// The result equals brute force (the paper's proof; tests/unit/test_search.cpp checks it).
/// The work is the sum over vertices of rows(D(v)) x K_v.
///
/// Runner-ups (best total cost with one vertex forced off its chosen configuration) come
/// from a second, top-down pass over the same tables (min-marginals of the junction tree
/// the elimination builds), exact up to floating-point rounding; about 1-3x the first pass.
///
/// The core is constexpr: a small `static_cost_graph` is optimised inside a static_assert.
/// This header is light (no Boost, no MPI, no Eigen); the run-time graph `cost_graph` is in

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cost_tables.hpp"
#include "search/elimination.hpp"
#include "search/engine.hpp"
#include "search/fallback.hpp"
#include "search/ordering.hpp"
#include "search/result.hpp"
#include "search/runner_ups.hpp"

namespace workpart {

namespace detail::pase {

template <class Arg, class G, class Progress>
constexpr search_result run(const G& g, const search_options& opt, Progress& progress) {
  engine<Arg, G, Progress> e(g, opt, progress);
  e.load();
  const bool planned = e.plan();
  const double t_setup = e.seconds();
  const std::size_t n = g.num_vertices();
  search_result r;
  r.config.assign(n, 0);
  bool done = false;
  if (!planned) {
    r.stop = search_stop::time_budget;
  } else if (!e.fits()) {
    r.stop = search_stop::table_limit;
  } else if (e.eliminate()) {
    done = true;
  } else {
    r.stop = search_stop::time_budget;
  }
  if (done) {
    e.assemble(r.config);
    r.proven_optimal = true;
  } else {
    r.config = e.fallback();
  }
  r.eliminated = e.done();

  r.cost = e.costs(r.config, r.vertex_cost, r.edge_cost);

  const double t_eliminate = e.seconds();
  if (done && opt.runner_ups) {
    std::vector<std::vector<double>> best;
    if (e.min_marginals(best)) {
      r.has_runner_ups = true;
      r.runner_ups.resize(n);
      for (std::size_t v = 0; v < n; ++v) {
        const auto& mm = best[v];
        const std::size_t k0 = r.config[v];
        auto& ru = r.runner_ups[v];
        for (std::size_t k = 0; k < mm.size(); ++k)
          if (k != k0 && (ru.config == runner_up::npos || mm[k] < mm[ru.config])) ru.config = k;
        if (ru.config != runner_up::npos) {
          const double d = mm[ru.config] - mm[k0];
          ru.delta = d > 0 ? d : 0.0;
          ru.cost = r.cost + ru.delta;
        }
      }
    }
  }

  r.order = e.take_order();
  r.dependent_set = e.take_dependent_sets();
  for (std::size_t v = 0; v < n; ++v) {
    r.max_dependent_set = std::max(r.max_dependent_set, r.dependent_set[v].size());
    r.largest_table_rows = std::max(r.largest_table_rows, e.rows()[v]);
    r.table_rows += e.rows()[v];
  }
  r.work = e.work_total();
  r.seconds = e.seconds();
  r.setup_seconds = t_setup;
  r.eliminate_seconds = t_eliminate - t_setup;
  r.runner_up_seconds = r.seconds - t_eliminate;
  return r;
}

}  // namespace detail::pase

/// The optimal strategy of a cost-table problem (PaSE, exact), its cost, per-vertex and
/// per-edge costs and, unless `opt.runner_ups` is false, each vertex's runner-up.
/// `progress` (optional) is called with a `search_progress` after each vertex and every
/// ~10^6 table entries (never in constant evaluation).
/// \code
///   wp::cost_graph g = wp::read_cost_tables("alexnet_p8.json");
///   wp::search_result r = wp::pase_search(g, {.time_budget_seconds = 10});
///   if (r.proven_optimal) std::printf("%.17g\n", r.cost);
/// \endcode
/// Throws `shape_error` for a vertex without configurations, `table_error` for an edge to a
/// vertex that does not exist or a NaN cost.
template <cost_table_graph G, class Progress = no_progress>
constexpr search_result pase_search(const G& g, const search_options& opt = {},
                                    Progress&& progress = {}) {
  std::size_t max_k = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    max_k = std::max<std::size_t>(max_k, g.num_configs(v));
  if (max_k <= 0xFFFF) return detail::pase::run<std::uint16_t>(g, opt, progress);
  return detail::pase::run<std::uint32_t>(g, opt, progress);
}

}  // namespace workpart
