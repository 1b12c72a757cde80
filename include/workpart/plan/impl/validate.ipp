#pragma once
/// \file validate.ipp
/// The bodies of validate.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../validate.hpp"

namespace workpart::detail {

WORKPART_DECL void check_grid(const std::string& map, const grid_shape& g, int N, int nranks) {
  if (g.space_rank() != N)
    throw grid_error("map '" + map + "': grid " + g.str() + " has rank " +
                     std::to_string(g.space_rank()) + " but the space has rank " +
                     std::to_string(N) +
                     "; give one grid extent per space dimension (pad with 1s)");
  for (int d = 0; d < N; ++d)
    if (g.dims[d] < 1)
      throw grid_error("map '" + map + "': grid " + g.str() + " has extent " +
                       std::to_string(g.dims[d]) + " in dimension " + std::to_string(d) +
                       "; grid extents are >= 1");
  if (g.replica_axis && g.dims.back() < 1)  // a hand-made replica axis (replicated() checks)
    throw grid_error("map '" + map + "': grid " + g.str() + " has " +
                     std::to_string(g.dims.back()) + " replicas; the replica count is >= 1");
  if (g.product() == std::numeric_limits<index_t>::max())  // saturated: no wrap-around
    throw grid_error("map '" + map + "': grid " + g.str() +
                     " needs more than "
                     "2^63 - 1 ranks, communicator has " +
                     std::to_string(nranks) + "; use a grid whose product is at most " +
                     std::to_string(nranks));
  if (g.product() > nranks)
    throw grid_error("map '" + map + "': grid " + g.str() + " needs " +
                     std::to_string(g.product()) + " ranks, communicator has " +
                     std::to_string(nranks) + "; run mpirun -n " + std::to_string(g.product()) +
                     " or use a grid whose product is at most " + std::to_string(nranks));
}

WORKPART_DECL void check_reads_own_writes(const std::string& map, const grid_shape& g,
                                          const array_use& use, const std::vector<box>& rb,
                                          const std::vector<box>& wb, int nranks, int active) {
  if (!reads_own_writes(use)) return;
  const std::string head = "map '" + map + "': a statement reads array '" + use.name +
                           "' after an earlier statement of the same map wrote it, and ";
  for (int r = 0; r < nranks; ++r)
    if (!rb[r].empty() && !(box::intersect(rb[r], wb[r]) == rb[r]))
      throw plan_error(head + "under grid " + g.str() + " rank " + std::to_string(r) + " reads " +
                       rb[r].str() + " but writes only " + wb[r].str() +
                       ": the values would come from other ranks between the statements; "
                       "write them as separate maps (or choose a grid that keeps them local)");
  if (use.write_kind == combine::assign) return;
  // (a replicated grid's replicas write the same boxes: each its own copy, not partials)
  bool partial = !partial_dims(g, wb, active).empty();
  for (int x = 0; x < active && !partial; ++x)
    for (int y = x + 1; y < active && !partial; ++y)
      partial =
          g.replica_of(x) == 0 && g.replica_of(y) == 0 && !box::intersect(wb[x], wb[y]).empty();
  if (partial)
    throw plan_error(head + "under grid " + g.str() +
                     " several ranks hold partial results "
                     "of it ('" +
                     std::string(combine_name(use.write_kind)) +
                     "' over a split reduction): they are combined only when gathered; write "
                     "the statements as separate maps (or choose a grid that does not split "
                     "the reduction)");
}

WORKPART_DECL void validate(const std::string& map, const map_constraints& cons,
                            const grid_shape& g, int nranks) {
  const int active = int(g.product());
  for (const auto& use : cons.arrays) {
    if (use.mixed_writes)
      throw plan_error("map '" + map + "': array '" + use.name +
                       "' is written by statements of different kinds (=, +=, max_into, "
                       "min_into); split them into separate maps");
    if (use.read_after_write && use.read_before_write)
      throw plan_error("map '" + map + "': array '" + use.name +
                       "' is read both "
                       "before and after a statement of the same map writes it; distributing "
                       "that needs two versions of it on the ranks: write separate maps");
    for (int a = 0; a < use.rank; ++a)
      to_int(use.shape[a], "map '" + map + "': array '" + use.name + "'");
  }
  // MPI counts are ints: every box a rank receives must hold fewer than 2^31 elements.
  for (std::size_t u = 0; u < cons.arrays.size(); ++u)
    for (int r = 0; r < nranks; ++r)
      for (const box* b : {&cons.read[u][r], &cons.write[u][r]})
        if (b->size() > index_t(std::numeric_limits<int>::max()))
          throw plan_error("map '" + map + "': rank " + std::to_string(r) + " would hold " +
                           std::to_string(b->size()) + " elements of array '" +
                           cons.arrays[u].name + "' (box " + b->str() +
                           "), more than an MPI "
                           "count can carry (2^31 - 1); use a grid with more ranks along its axes");
  for (std::size_t u = 0; u < cons.arrays.size(); ++u)
    check_reads_own_writes(map, g, cons.arrays[u], cons.read[u], cons.write[u], nranks, active);
  for (std::size_t u = 0; u < cons.arrays.size(); ++u) {
    const auto& use = cons.arrays[u];
    if (!use.written || use.write_kind != combine::assign) continue;
    // among replica 0's ranks (a block's replicas write the same box, each its own copy;
    // idle ranks write nothing)
    for (int x = 0; x < nranks; ++x)
      for (int y = x + 1; y < nranks; ++y)
        if (g.replica_of(x) == 0 && g.replica_of(y) == 0 &&
            !box::intersect(cons.write[u][x], cons.write[u][y]).empty())
          throw plan_error("map '" + map + "': ranks " + std::to_string(x) + " and " +
                           std::to_string(y) + " write overlapping parts of '" + use.name +
                           "' under grid " + g.str() +
                           " (a plain '=' whose left side is "
                           "not one-to-one); use +=, max_into or min_into, or another grid");
  }
}
}  // namespace workpart::detail
