#pragma once
/// \file result.hpp
/// What the PaSE search (../search.hpp) takes and returns: its options, its progress
/// reports and its result. Public: `wp::search_options`, `wp::search_result`, ...

#include <cstddef>
#include <limits>
#include <vector>

namespace workpart {

/// Why a search stopped before it proved its result optimal.
enum class search_stop {
  none,         ///< it did not stop: the result is optimal
  time_budget,  ///< `search_options::time_budget_seconds` ran out
  table_limit   ///< the tables would exceed `search_options::max_table_bytes`
};

/// The phases a progress callback hears about.
enum class search_phase { eliminate, runner_ups };

/// What a progress callback receives: after each vertex, and every ~10^6 table entries.
struct search_progress {
  search_phase phase = search_phase::eliminate;
  std::size_t vertices_done = 0, vertices_total = 0;
  double work_done = 0, work_total = 0;  ///< table entries (rows x configurations) visited
  double seconds = 0;                    ///< since the search began
};

struct search_options {
  /// Wall-clock budget for the whole search. When it runs out, the search returns the best
  /// strategy it can assemble at once, with `proven_optimal = false`: the vertices processed
  /// so far take their optimal configuration given the others, which come from a greedy pass
  /// improved by local search (one vertex at a time, until no single change lowers the cost).
  /// If it runs out during the runner-up pass, the optimum stands and `has_runner_ups` is
  /// false. It covers the whole search, the result included: every phase (the ordering too)
  /// stops early enough to leave time for the greedy pass, one use of the tables built so far
  /// and the result, which always run (a few passes over the edges: the floor below which no
  /// budget is met). Ignored in constant evaluation.
  double time_budget_seconds = std::numeric_limits<double>::infinity();
  /// Compute each vertex's runner-up configuration (a second pass; keeps the tables' costs
  /// alive until then, where without it each is freed once used).
  bool runner_ups = true;
  /// Largest total size of the tables (rows x (8 + 2 or 4) bytes, summed over vertices).
  /// Beyond it the search does not start; it returns the greedy + local-search strategy
  /// with `stop = table_limit`. The runner-up pass needs up to about as much again.
  std::size_t max_table_bytes = std::size_t(16) << 30;
};

/// The best strategy with one vertex forced off its chosen configuration.
struct runner_up {
  static constexpr std::size_t npos = std::size_t(-1);
  std::size_t config = npos;  ///< npos: the vertex has one configuration
  double cost = std::numeric_limits<double>::infinity();   ///< total cost of that strategy
  double delta = std::numeric_limits<double>::infinity();  ///< cost minus the optimum, >= 0
};

struct search_result {
  std::vector<std::size_t> config;  ///< chosen configuration per vertex
  double cost = 0;                  ///< objective of `config` (vertex costs, then edges, in order)
  std::vector<double> vertex_cost;  ///< per vertex, of the chosen configuration
  std::vector<double> edge_cost;    ///< per edge, of the chosen configurations of its ends
  bool proven_optimal = false;
  search_stop stop = search_stop::none;
  bool has_runner_ups = false;
  std::vector<runner_up> runner_ups;  ///< per vertex, when has_runner_ups

  // What the search did.
  /// Processing (elimination) order; when the budget ran out while it was being found
  /// (`eliminated == 0`, fewer than n entries), the vertices ordered by then.
  std::vector<std::size_t> order;
  std::vector<std::vector<std::size_t>> dependent_set;  ///< D(v), earliest processed first
  std::size_t eliminated = 0;                           ///< vertices whose table was completed
  std::size_t max_dependent_set = 0;                    ///< largest |D(v)|
  double largest_table_rows = 0;                        ///< largest rows(D(v))
  double table_rows = 0;                                ///< sum of rows(D(v))
  double work = 0;                                      ///< sum of rows(D(v)) x K_v
  double seconds = 0;            ///< wall clock (0 in constant evaluation), of which:
  double setup_seconds = 0;      ///<   reading the graph and the ordering
  double eliminate_seconds = 0;  ///<   the tables, assembly and any fallback
  double runner_up_seconds = 0;  ///<   the runner-up pass
};

/// A progress callback that does nothing.
struct no_progress {
  constexpr void operator()(const search_progress&) const noexcept {}
};

}  // namespace workpart
