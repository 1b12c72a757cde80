#pragma once
/// \file tiling.hpp
/// Rank tiling: a grid extent g splits a dimension of extent n into g balanced blocks, the
/// first n mod g one larger (sizes differ by at most one; extents need not divide, and a
/// grid extent above n leaves empty blocks). Rank coordinates are row-major over the grid.

#include <algorithm>
#include <array>
#include <vector>

#include "../config.hpp"
#include "../core/space.hpp"
#include "grid.hpp"

namespace workpart::detail {

/// Block b of g over [lo, hi): [start, end).
struct block_range {
  index_t start = 0, end = 0;
  index_t size() const { return end > start ? end - start : 0; }
};
inline block_range balanced_block(index_t lo, index_t hi, index_t g, index_t b) {
  const index_t n = std::max<index_t>(0, hi - lo);
  const index_t q = n / g, r = n % g;
  const index_t start = lo + b * q + std::min(b, r);
  return {start, start + q + (b < r ? 1 : 0)};
}

/// Run x of the elements (row-major) of an n-element box cut into G near-equal parts: what
/// member x of an Allreduce in parts combines (comm/collectives/all_reduce.hpp).
inline block_range all_reduce_part(index_t n, int G, int x) {
  return balanced_block(0, n, index_t(G), index_t(x));
}

/// Grid coordinates of a rank (row-major, last dimension fastest); empty if the rank idles,
/// and for every rank of a grid of rank 0 (whose one block rank 0 runs): test idleness with
/// `rank >= g.product()`, not with empty().
inline std::vector<index_t> grid_coords(const grid_shape& g, int rank) {
  if (rank >= g.product()) return {};
  std::vector<index_t> c(g.dims.size());
  index_t r = rank;
  for (int d = g.rank() - 1; d >= 0; --d) {
    c[d] = r % g.dims[d];
    r /= g.dims[d];
  }
  return c;
}
inline int grid_rank(const grid_shape& g, const std::vector<index_t>& c) {
  index_t r = 0;
  for (int d = 0; d < g.rank(); ++d) r = r * g.dims[d] + c[d];
  return int(r);
}

/// The box of the space a rank executes (lo/hi per space dimension); empty for idle ranks.
struct rank_block {
  bool active = false;
  index_t lo[max_dims] = {}, hi[max_dims] = {};
  bool empty(int n) const {
    if (!active) return true;
    for (int d = 0; d < n; ++d)
      if (hi[d] <= lo[d]) return true;
    return false;
  }
};
template <int N>
rank_block tile(const space<N>& sp, const grid_shape& g, int rank) {
  rank_block b;
  if (rank >= g.product()) return b;  // idle (a grid of rank 0 has one block, rank 0's)
  const auto c = grid_coords(g, rank);
  b.active = true;
  for (int d = 0; d < N; ++d) {
    const auto r = balanced_block(sp.lo[d], sp.hi[d], g.dims[d], c[d]);
    b.lo[d] = r.start;
    b.hi[d] = r.end;
  }
  return b;
}

}  // namespace workpart::detail
