#pragma once
/// \file validate.hpp
/// Every check of a map's constraints that can fail, made before any collective: a grid that
/// does not fit, statements of one map that read what other ranks wrote, writes of different
/// kinds, '=' writes that overlap, boxes too big for an MPI count. No MPI: every rank (and the
/// optimizer, for a virtual communicator) finds the same.

#include <climits>
#include <limits>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "solve_array.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// The grid fits the space (one extent per dimension, each >= 1) and the communicator.
WORKPART_DECL void check_grid(const std::string& map, const grid_shape& g, int N, int nranks);

/// A map that reads what its earlier statements wrote runs without an exchange between the
/// statements when every rank reads only inside the box it wrote and holds the whole value
/// there (no partial sums on other ranks); otherwise the statements must be separate maps.
WORKPART_DECL void check_reads_own_writes(const std::string& map, const grid_shape& g,
                                          const array_use& use, const std::vector<box>& rb,
                                          const std::vector<box>& wb, int nranks, int active);

/// Every check of a map's constraints that can fail, before any collective (identical on
/// every rank that planned the same map).
WORKPART_DECL void validate(const std::string& map, const map_constraints& cons,
                            const grid_shape& g, int nranks);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/validate.ipp"
#endif
