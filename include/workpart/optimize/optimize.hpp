#pragma once
/// \file optimize.hpp
/// `wp::optimize(program, nprocs, model)`: the schedule of least modelled cost, found exactly
/// by the PaSE search (optimize/search.hpp) over the program's cost tables
/// (optimize/cost_model.hpp, optimize/pricer.hpp). No MPI: any number of ranks can be priced on one
/// process. This header declares; the search and the pricer are in impl/optimize.ipp (compiled
/// once in workpart::compiled), so a file that includes the one header does not parse them.

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../program/program.hpp"
#include "../schedule/schedule.hpp"
#include "cost_model.hpp"
#include "machine_model.hpp"
#include "priced_map.hpp"
#include "program_cost_tables.hpp"
#include "search.hpp"

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
  std::string str() const;
};

/// One array passed between two maps under a schedule, as the model prices it.
struct modelled_transfer {
  std::string array, from, to;  // map names
  index_t bytes = 0;            // received, over all ranks (reads and old values)
  double seconds = 0;
};

/// The arrays passed between the maps of `p` under schedule `s` on `nranks` ranks, with the
/// bytes the model prices (what the program plan of `s` predicts for its first execute():
/// the redistribution, and the combine of partial results where the reader is the first map
/// that needs them).
WORKPART_DECL std::vector<modelled_transfer> modelled_transfers(
    const std::vector<detail::priced_map>& maps, const schedule& s, int nranks,
    const machine_model& mm = {});
WORKPART_DECL std::vector<modelled_transfer> modelled_transfers(const program& p, const schedule& s,
                                                                int nranks,
                                                                const machine_model& mm = {});

/// What schedule `s` costs under the model, as wp::optimize prices it (`optimized::cost`):
/// modelled seconds of one run, or of one execute() with the scatter and gather shared among
/// config_options::executions of them. For baselines beside an optimum: the optimum found by
/// wp::optimize with the same model and options costs no more than any schedule whose grids
/// those options allow. Raises grid_error where a map has no grid in `s`, plan_error where a
/// grid cannot be planned.
WORKPART_DECL double modelled_cost(const std::vector<detail::priced_map>& maps, const schedule& s,
                                   int nranks, const machine_model& mm = {},
                                   const config_options& opt = {});
WORKPART_DECL double modelled_cost(const program& p, const schedule& s, int nranks,
                                   const machine_model& mm = {}, const config_options& opt = {});

/// The cost tables of a program on `nranks` ranks (no MPI; any rank count).
WORKPART_DECL program_cost_tables program_costs(const std::vector<detail::priced_map>& maps,
                                                int nranks, const machine_model& mm = {},
                                                const config_options& opt = {});
WORKPART_DECL program_cost_tables program_costs(const program& p, int nranks,
                                                const machine_model& mm = {},
                                                const config_options& opt = {});

namespace detail {
/// nprocs in [1, 2^20], else a grid_error.
WORKPART_DECL void check_nprocs(index_t nprocs);
/// wp::optimize over maps as the pricer sees them (a typed map's, a program's).
WORKPART_DECL optimized optimize_priced(const std::vector<priced_map>& maps, index_t nprocs,
                                        const machine_model& model, const optimize_options& opt);
}  // namespace detail

/// The schedule of least modelled cost for `nprocs` ranks. Every rank computes the same one.
/// \code
///   wp::machine_model model{.flops = 5e10, .alpha = 2e-6, .beta = 1e-10};
///   wp::optimized r = wp::optimize(prog, 64, model);
///   auto plan = wp::distribute(prog, r.schedule, ctx);   // on 64 ranks
/// \endcode
WORKPART_DECL optimized optimize(const program& p, index_t nprocs, const machine_model& model = {},
                                 const optimize_options& opt = {});
/// A single map is a program of one map.
template <int N, class... S>
optimized optimize(const map_t<N, S...>& m, index_t nprocs, const machine_model& model = {},
                   const optimize_options& opt = {}) {
  return detail::optimize_priced({detail::priced_view(m)}, nprocs, model, opt);
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

#if WORKPART_HEADER_ONLY
#include "impl/optimize.ipp"
#endif
