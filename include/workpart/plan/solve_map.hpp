#pragma once
/// \file solve_map.hpp
/// One map on one grid for any number of ranks, solved without MPI: every check that can
/// fail (validate.hpp), then each array's boxes, groups and collectives (solve_array.hpp).
/// The optimizer's cost model and `wp::plan_on_paper` solve maps through this; a map's plan
/// (runtime/map_plan.hpp) makes the same calls on its communicator's size.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "solve_array.hpp"
#include "validate.hpp"

namespace workpart::detail {

/// A map on one grid as the plans see it for `nranks` ranks.
struct map_solution {
  std::string name;
  std::string space;  ///< the space in words (explain())
  grid_shape grid;
  int nranks = 1;
  std::vector<rank_block> blocks;      ///< [rank]
  index_t largest_block = 0;           ///< points of the largest rank's block
  std::vector<array_solution> arrays;  ///< as the map's constraints list them
};

/// Points of the largest block of a tiling of an N-dimensional space.
inline index_t largest_block(const std::vector<rank_block>& blocks, int N) {
  index_t most = 0;
  for (const auto& b : blocks) {
    index_t pts = b.empty(N) ? 0 : 1;
    for (int d = 0; d < N && pts; ++d) pts *= b.hi[d] - b.lo[d];
    most = std::max(most, pts);
  }
  return most;
}

/// Bytes the busiest rank's block streams: per rank, what its read and write boxes of every
/// array hold (each read once and written once; a write that combines into the old values,
/// `+=`, `max_into`, `min_into`, reads its box too), the most of any rank. The machine model
/// prices it at its streaming bandwidth (machine_model::block_seconds).
inline index_t largest_block_bytes(const map_solution& s) {
  index_t most = 0;
  for (int r = 0; r < s.nranks; ++r) {
    index_t b = 0;
    for (const auto& ap : s.arrays) {
      const index_t es = index_t(ap.use.elem_size);
      if (std::size_t(r) < ap.rbox.size()) b += ap.rbox[std::size_t(r)].size() * es;
      if (std::size_t(r) < ap.wbox.size())
        b += ap.wbox[std::size_t(r)].size() * es *
             (ap.use.written && ap.use.write_kind != combine::assign ? 2 : 1);
    }
    most = std::max(most, b);
  }
  return most;
}

/// Which arrays every rank generates from init() in place (root holds no copy of them).
inline std::vector<char> generated_flags(const map_constraints& cons) {
  std::vector<char> g;
  for (const auto& use : cons.arrays)
    g.push_back(use.generated_in_place && use.generated_in_place());
  return g;
}

/// The planning sequence of map `name` (space rank N) on grid g for `nranks` ranks, up to its
/// arrays, written once for every plan of a map -- a distributed plan on its communicator
/// (runtime/map_plan.hpp), plans on paper and the cost model on any size: the grid checked
/// (check_grid), the constraints made (`extract()`: from the map's type or its program
/// entry), then every check that can fail (validate), so each raises what distribute() would.
template <class Extract>
map_constraints checked_constraints(const std::string& name, int N, const grid_shape& g, int nranks,
                                    Extract&& extract) {
  check_grid(name, g, N, nranks);
  map_constraints cons = extract();
  validate(name, cons, g, nranks);
  return cons;
}

/// Solves constraints made by checked_constraints on grid g: each array's boxes, groups and
/// collectives; `generated` (per array, may be empty): which arrays every rank generates from
/// init() in place.
inline map_solution solve_map(const std::string& name, int N, map_constraints cons,
                              const grid_shape& g, int nranks,
                              const std::vector<char>& generated = {}) {
  map_solution s;
  s.name = name;
  s.grid = g;
  s.nranks = nranks;
  s.largest_block = largest_block(cons.blocks, N);
  s.blocks = std::move(cons.blocks);
  s.arrays.reserve(cons.arrays.size());
  for (std::size_t u = 0; u < cons.arrays.size(); ++u)
    s.arrays.push_back(solve_array(cons.arrays[u], std::move(cons.read[u]),
                                   std::move(cons.write[u]), g, nranks,
                                   u < generated.size() && generated[u]));
  return s;
}

}  // namespace workpart::detail
