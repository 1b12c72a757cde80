#pragma once
/// \file paper_plan.hpp
/// `wp::plan_on_paper(map, grid, nranks)`: the plan `wp::distribute` would build for a map on
/// `nranks` ranks — every rank's block and, per array, the collectives with the bytes each
/// rank sends and receives — computed on one process, without MPI and without running it, for
/// any communicator size (thousands of ranks: the scaling of a schedule on paper). It runs the
/// plans' own constraint extraction, checks and solver (comm/solve.hpp), so its bytes are the
/// plan's predicted bytes (`plan.stats().predicted_*`; tested at np 1-4), and prices them with
/// the optimizer's alpha-beta model (cost_model.hpp).
/// \code
///   auto p = wp::plan_on_paper(mm, wp::grid_shape{16, 16, 16}, 4096);
///   p.busiest_bytes();   // the most any rank sends or receives, scatter + gather
///   p.seconds({.flops = 5e10, .alpha = 2e-6, .beta = 1e-10});
///   std::puts(p.str().c_str());
/// \endcode

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../comm/solve.hpp"
#include "../schedule/constraints.hpp"
#include "cost_model.hpp"
#include "machine_model.hpp"

namespace workpart {

/// One collective of a plan on paper: which array, what it is, and bytes per rank.
struct paper_step {
  std::string array;
  std::string collective;  ///< Scatterv, Bcast, Reduce(sum), Gatherv, ...
  bool scatter_phase = true;  ///< moves inputs (or old values) out, else results back
  std::vector<index_t> sent, received;  ///< [rank], bytes
};

/// A map's plan for `nranks` ranks, as distribute() would build it (see plan_on_paper).
struct paper_plan {
  std::string map;
  grid_shape grid;
  int nranks = 1;
  index_t largest_block = 0;  ///< points of the largest rank's block
  std::vector<paper_step> steps;

  /// Bytes rank r sends (or receives) in the scatter or the gather phase: what
  /// `plan.stats().predicted_scatter_sent` etc. say on that rank.
  index_t bytes(int r, bool scatter_phase, bool sent) const {
    index_t t = 0;
    for (const auto& s : steps)
      if (s.scatter_phase == scatter_phase) t += (sent ? s.sent : s.received)[std::size_t(r)];
    return t;
  }
  /// Everything rank r sends and receives, both phases.
  index_t rank_bytes(int r) const {
    return bytes(r, true, true) + bytes(r, true, false) + bytes(r, false, true) + bytes(r, false, false);
  }
  /// The most any rank sends plus receives; `skip_root`: the most of any other rank (root
  /// starts with every input and ends with every output).
  index_t busiest_bytes(bool skip_root = false) const {
    index_t m = 0;
    for (int r = skip_root ? 1 : 0; r < nranks; ++r) m = std::max(m, rank_bytes(r));
    return m;
  }
  /// Bytes received over all ranks, both phases (each byte moved counted once).
  index_t total_bytes() const {
    index_t t = 0;
    for (const auto& s : steps)
      for (index_t b : s.received) t += b;
    return t;
  }
  /// The alpha-beta time of the collectives (each the busiest rank's messages and bytes) plus
  /// the largest block's arithmetic at `ops_per_point`: the optimizer's model.
  double seconds(const machine_model& mm, double ops_per_point = 0) const {
    double t = mm.compute_seconds(double(largest_block) * ops_per_point);
    for (const auto& s : steps) {
      detail::comm_step c;
      c.sent = s.sent;
      c.received = s.received;
      t += detail::steps_seconds(mm, {c});
    }
    return t;
  }
  /// One line per collective: bytes of the busiest rank and over all ranks.
  std::string str() const {
    std::string out = "map '" + map + "' on grid " + grid.str() + " over " + std::to_string(nranks) +
                      " ranks: largest block " + std::to_string(largest_block) + " points\n";
    for (const auto& s : steps) {
      index_t most = 0, total = 0;
      for (std::size_t r = 0; r < s.sent.size(); ++r) {
        most = std::max(most, std::max(s.sent[r], s.received[r]));
        total += s.received[r];
      }
      char line[256];
      std::snprintf(line, sizeof line, "  %-8s %-7s %-22s busiest rank %lld B, all ranks %lld B\n", s.array.c_str(),
                    s.scatter_phase ? "scatter" : "gather", s.collective.c_str(), (long long)most, (long long)total);
      out += line;
    }
    return out;
  }
};

/// The plan of map `m` on grid `g` for a communicator of `nranks` ranks, built on this
/// process alone. Raises what distribute() would raise for that grid and size (grid_error,
/// plan_error), before computing anything else.
template <int N, class... S>
paper_plan plan_on_paper(const map_t<N, S...>& m, const grid_shape& g, int nranks) {
  if (nranks < 1) throw grid_error("wp::plan_on_paper: " + std::to_string(nranks) + " ranks; give at least 1");
  m.require_valid();
  detail::check_grid(m.name(), g, N, nranks);
  const detail::map_constraints cons = detail::extract_constraints(m, g, nranks);
  detail::validate(m.name(), cons, g, nranks);
  paper_plan p;
  p.map = m.name();
  p.grid = g;
  p.nranks = nranks;
  for (const auto& b : cons.blocks) {
    index_t pts = b.empty(N) ? 0 : 1;
    for (int d = 0; d < N && pts; ++d) pts *= b.hi[d] - b.lo[d];
    p.largest_block = std::max(p.largest_block, pts);
  }
  for (std::size_t u = 0; u < cons.arrays.size(); ++u) {
    const auto& use = cons.arrays[u];
    const bool generated = use.generated_in_place && use.generated_in_place();
    const detail::array_solution ap = detail::solve_array(use, cons.read[u], cons.write[u], g, nranks, generated);
    auto add = [&](const std::vector<detail::comm_step>& steps, bool scatter) {
      for (const auto& s : steps) p.steps.push_back({use.name, s.collective, scatter, s.sent, s.received});
    };
    add(ap.in_steps, true);
    add(ap.init_steps, true);
    add(ap.out_steps, false);
  }
  return p;
}

}  // namespace workpart
