#pragma once
/// \file paper_plan.hpp
/// `wp::plan_on_paper(map, grid, nranks)` and `wp::plan_on_paper(program, schedule, nranks)`:
/// the plan `wp::distribute` would build for a map (or a program) on `nranks` ranks — every
/// rank's block and, per array, the collectives with the bytes each rank sends and receives;
/// for a program also the redistributions and partial combines between its maps — computed on
/// one process, without MPI and without running it, for any communicator size (thousands of
/// ranks: the scaling of a schedule on paper). It runs the plans' own constraint extraction,
/// checks and solvers (plan/solve_map.hpp, plan/program.hpp), so its bytes are the plan's
/// predicted bytes (`plan.stats().predicted_*`; tested at np 1-4), and prices them with the
/// optimizer's alpha-beta model (cost_model.hpp).
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

#include "../exec/local_kind.hpp"
#include "../plan/explain.hpp"
#include "../plan/program.hpp"
#include "../plan/solve_map.hpp"
#include "../schedule/schedule.hpp"
#include "../schedule/constraints.hpp"
#include "../program/program.hpp"
#include "cost_model.hpp"
#include "machine_model.hpp"

namespace workpart {

/// One collective of a plan on paper: which array, what it is, and bytes per rank.
struct paper_step {
  std::string array;
  std::string collective;               ///< Scatterv, Bcast, Reduce(sum), Gatherv, ...
  bool scatter_phase = true;            ///< moves inputs (or old values) out, else results back
  std::vector<index_t> sent, received;  ///< [rank], bytes
};

/// A map's plan for `nranks` ranks, as distribute() would build it (see plan_on_paper).
struct paper_plan {
  std::string map;
  grid_shape grid;
  int nranks = 1;
  index_t largest_block = 0;  ///< points of the largest rank's block
  index_t largest_bytes = 0;  ///< bytes the busiest rank's block streams (its boxes)
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
    return bytes(r, true, true) + bytes(r, true, false) + bytes(r, false, true) +
           bytes(r, false, false);
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
  /// the largest block's at `ops_per_point` (machine_model::block_seconds, at the GEMM rate
  /// where the map runs as GEMMs): the optimizer's model.
  double seconds(const machine_model& mm, double ops_per_point = 0,
                 bool runs_as_gemm = false) const {
    double t = block_seconds(mm, ops_per_point, runs_as_gemm);
    for (const auto& s : steps) {
      detail::comm_step c;
      c.sent = s.sent;
      c.received = s.received;
      t += detail::steps_seconds(mm, {c});
    }
    return t;
  }
  /// The largest block's seconds alone (as the optimizer prices a map on its grid).
  double block_seconds(const machine_model& mm, double ops_per_point,
                       bool runs_as_gemm = false) const {
    return mm.block_seconds(double(largest_block) * ops_per_point, double(largest_bytes),
                            runs_as_gemm);
  }
  /// The same for a block that does `work` per point in a space of `extents` (its rows and
  /// slow functions priced too, as the optimizer prices them).
  double block_seconds(const machine_model& mm, const detail::local_work& work,
                       const std::vector<index_t>& extents) const {
    const double points = double(largest_block);
    return mm.block_seconds(
        {.points = points,
         .ops_per_point = work.ops,
         .slow_per_point = work.slow,
         .rows = detail::block_rows(points, extents, grid, work.row_dim),
         .bytes = double(largest_bytes),
         .gemm = work.gemm,
         .elem_bytes = double(work.elem_bytes),
         .packed_bytes = double(work.elem_bytes) * detail::block_packed(work, extents, grid),
         .vector_rows = work.vector_rows});
  }
  /// One line per collective: bytes of the busiest rank and over all ranks.
  std::string str() const {
    std::string out = "map '" + map + "' on grid " + grid.str() + " over " +
                      std::to_string(nranks) + " ranks: largest block " +
                      std::to_string(largest_block) + " points\n";
    for (const auto& s : steps) {
      index_t most = 0, total = 0;
      for (std::size_t r = 0; r < s.sent.size(); ++r) {
        most = std::max(most, std::max(s.sent[r], s.received[r]));
        total += s.received[r];
      }
      char line[256];
      std::snprintf(line, sizeof line, "  %-8s %-7s %-22s busiest rank %lld B, all ranks %lld B\n",
                    s.array.c_str(), s.scatter_phase ? "scatter" : "gather", s.collective.c_str(),
                    (long long)most, (long long)total);
      out += line;
    }
    return out;
  }
};

namespace detail {
/// The steps of a solved map as paper steps (the map's own, or as set inside a program).
inline void add_paper_steps(paper_plan& p, const array_solution& ap) {
  auto add = [&](const std::vector<comm_step>& steps, bool scatter) {
    for (const auto& s : steps)
      p.steps.push_back({ap.use.name, s.collective, scatter, s.sent, s.received});
  };
  add(ap.in_steps, true);
  add(ap.init_steps, true);
  add(ap.out_steps, false);
}
inline paper_plan paper_of(const map_solution& ms) {
  paper_plan p;
  p.map = ms.name;
  p.grid = ms.grid;
  p.nranks = ms.nranks;
  p.largest_block = ms.largest_block;
  p.largest_bytes = largest_block_bytes(ms);
  for (const auto& ap : ms.arrays) add_paper_steps(p, ap);
  return p;
}
template <int N, class... S>
map_solution solve_map_on_paper(const map_t<N, S...>& m, const grid_shape& g, int nranks) {
  m.require_valid();
  map_constraints cons = checked_constraints(m.name(), N, g, nranks,
                                             [&] { return extract_constraints(m, g, nranks); });
  const std::vector<char> gen = generated_flags(cons);
  map_solution s = solve_map(m.name(), N, std::move(cons), g, nranks, gen);
  s.space = m.iteration_space().str();
  return s;
}
/// The same for a program's map, through its entry.
inline map_solution solve_map_on_paper(const map_interface& m, const grid_shape& g, int nranks) {
  m.require_valid();
  map_constraints cons =
      checked_constraints(m.name(), m.rank(), g, nranks, [&] { return m.constraints(g, nranks); });
  const std::vector<char> gen = generated_flags(cons);
  map_solution s = solve_map(m.name(), m.rank(), std::move(cons), g, nranks, gen);
  s.space = m.space_text();
  return s;
}
}  // namespace detail

/// The plan of map `m` on grid `g` for a communicator of `nranks` ranks, built on this
/// process alone. Raises what distribute() would raise for that grid and size (grid_error,
/// plan_error), before computing anything else.
template <int N, class... S>
paper_plan plan_on_paper(const map_t<N, S...>& m, const grid_shape& g, int nranks) {
  if (nranks < 1)
    throw grid_error("wp::plan_on_paper: " + std::to_string(nranks) + " ranks; give at least 1");
  return detail::paper_of(detail::solve_map_on_paper(m, g, nranks));
}

/// A program's plan for `nranks` ranks, as distribute(program, schedule) would build it:
/// each map's own steps inside the program (root sends only what no earlier map provides),
/// the redistributions between the maps and the partial combines, and root's gathers, with
/// every rank's bytes (plan/program.hpp: solve_program, the code the program plan runs).
struct paper_program {
  int nranks = 1;
  std::vector<paper_plan> maps;  ///< each map's own steps inside the program
  struct redistribution {
    std::string array, from, to, kind;  ///< as program_stats::redistributions names them
    std::vector<index_t> first_received, received;  ///< [rank]: first execute(), each later one
    std::vector<index_t> first_sent, sent;
  };
  std::vector<redistribution> redistributions;  ///< the ones stats() lists, gathers included
  std::vector<detail::program_bytes> ranks;     ///< [rank]: bytes per phase
  index_t rank_to_rank_first = 0, rank_to_rank_later = 0;  ///< over all ranks, received
  index_t root_scatter = 0, root_gather = 0;               ///< over all ranks, received
  std::string explain;  ///< what plan.explain() says, less each map's local-execution lines

  /// Bytes rank r sends plus receives in one scatter, first execute() and gather.
  index_t rank_bytes(int r) const {
    const auto& b = ranks[std::size_t(r)];
    return b.scatter_sent + b.scatter_received + b.first_sent + b.first_received + b.gather_sent +
           b.gather_received;
  }
  /// The most any rank sends plus receives (scatter, first execute(), gather).
  index_t busiest_bytes() const {
    index_t m = 0;
    for (int r = 0; r < nranks; ++r) m = std::max(m, rank_bytes(r));
    return m;
  }
};

namespace detail {
/// The program plan of solved maps on paper (no MPI).
inline paper_program program_on_paper(std::vector<map_solution> maps, int nranks) {
  program_solution sol = solve_program(program_maps_of(maps, nranks));
  paper_program p;
  p.nranks = nranks;
  std::vector<std::string> texts;
  for (int m = 0; m < int(maps.size()); ++m) {
    auto& ms = maps[std::size_t(m)];
    for (std::size_t u = 0; u < ms.arrays.size(); ++u) {
      const array_solution fresh = ms.arrays[u];
      auto& ap = ms.arrays[u];
      sol.program_steps(m, fresh, ap.in_steps, ap.init_steps, ap.out_steps);
    }
    p.maps.push_back(paper_of(ms));
    std::vector<rank_block> no_blocks;
    std::vector<const array_solution*> arrs;
    for (const auto& a : ms.arrays) arrs.push_back(&a);
    texts.push_back(explain_text(ms.name, ms.grid, nranks, ms.space, ms.grid.space_rank(),
                                 ms.blocks, std::string(), arrs, false));
  }
  for (std::size_t x = 0; x < sol.redists().size(); ++x) {
    const auto& r = sol.redists()[x];
    if (!sol.shown(r)) continue;
    paper_program::redistribution d{
        sol.arrays()[r.array].name, r.from, r.to, r.kind, {}, {}, {}, {}};
    for (int k = 0; k < nranks; ++k) {
      d.first_received.push_back(sol.redist_bytes(x, k, true, false));
      d.received.push_back(sol.redist_bytes(x, k, false, false));
      d.first_sent.push_back(sol.redist_bytes(x, k, true, true));
      d.sent.push_back(sol.redist_bytes(x, k, false, true));
    }
    p.redistributions.push_back(std::move(d));
  }
  for (int k = 0; k < nranks; ++k) p.ranks.push_back(sol.bytes_of(k));
  p.rank_to_rank_first = sol.rank_to_rank_total(true);
  p.rank_to_rank_later = sol.rank_to_rank_total(false);
  p.root_scatter = sol.root_scatter_total();
  p.root_gather = sol.root_gather_total();
  p.explain = sol.explain(texts);
  return p;
}
}  // namespace detail

/// The plan of program `p` under schedule `s` for `nranks` ranks, built on this process alone
/// (no MPI, nothing run): what `wp::distribute(p, s, ctx)` on that many ranks would predict,
/// rank by rank (`ranks[r]` equals that rank's `plan.stats()` predictions and its
/// redistributions' predicted bytes). Raises what distribute() would raise.
inline paper_program plan_on_paper(const program& p, const schedule& s, int nranks) {
  if (nranks < 1)
    throw grid_error("wp::plan_on_paper: " + std::to_string(nranks) + " ranks; give at least 1");
  std::vector<std::string> names;
  std::vector<std::string> origins;
  detail::require_maps(p, "wp::plan_on_paper");
  p.for_each_map([&](const detail::map_interface& m) {
    names.push_back(m.name());
    origins.push_back(m.origin());
  });
  const std::vector<grid_shape> grids =
      detail::schedule_grids(names, s, "wp::plan_on_paper", origins);
  std::vector<detail::map_solution> maps;
  p.for_each_map([&](const detail::map_interface& m) {
    maps.push_back(detail::solve_map_on_paper(m, grids[maps.size()], nranks));
  });
  if (p.size() == 1) {
    // a program of one map is that map's plan (as distribute() builds it)
    paper_program one;
    one.nranks = nranks;
    one.maps.push_back(detail::paper_of(maps.front()));
    for (int r = 0; r < nranks; ++r) {
      detail::program_bytes b;
      const auto& pp = one.maps.front();
      b.scatter_sent = pp.bytes(r, true, true);
      b.scatter_received = pp.bytes(r, true, false);
      b.gather_sent = pp.bytes(r, false, true);
      b.gather_received = pp.bytes(r, false, false);
      one.ranks.push_back(b);
      one.root_scatter += b.scatter_received;
      one.root_gather += b.gather_received;
    }
    return one;
  } else {
    return detail::program_on_paper(std::move(maps), nranks);
  }
}

}  // namespace workpart
