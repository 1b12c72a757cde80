#pragma once
/// \file plan.hpp
/// A distributed plan for one map on one grid: what each rank executes, which box of each
/// array it holds, and the collectives that move them, with every byte known in advance.
///
/// The solver works from the boxes alone. Ranks whose boxes of an array are equal along some
/// grid dimensions form groups along them: for reads, root sends each group's leader (the rank
/// at coordinate 0 along those dimensions) its box and the leader broadcasts it in the group;
/// for `+=`, `max_into` and `min_into`, the members' partial results are reduced onto the
/// leader. For a grid-mapped access these groups are exactly its BROADCAST dimensions, so this
/// is the grid-mapped solver; halos, strides, reversed and indirect subscripts simply give
/// other boxes (overlapping ones too) and the same machinery serves them.
///
/// Root sends and receives boxes with MPI subarray datatypes, so nothing is packed on root.
/// MPI_Scatterv/Gatherv take one datatype for all ranks, which uneven blocks cannot share, so
/// the Scatterv and Gatherv of this plan are MPI_Alltoallw calls in which only root sends
/// (or receives): one subarray type per rank.

#include <mpi.h>

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../exec/env.hpp"
#include "../exec/local.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "../schedule/tiling.hpp"
#include "collectives/datatypes.hpp"

namespace workpart {

/// Bytes this rank sent and received in one phase (self copies excluded), and its seconds.
struct phase_stats {
  index_t bytes_sent = 0;
  index_t bytes_received = 0;
  double seconds = 0;
};

/// Per-rank figures of a plan: measured (what the calls moved) beside predicted (the plan).
struct plan_stats {
  phase_stats scatter, execute, gather;
  index_t predicted_scatter_sent = 0, predicted_scatter_received = 0;
  index_t predicted_gather_sent = 0, predicted_gather_received = 0;
  int runs = 0;
};

/// This rank's block of an array: global offsets, extents, and a strided view.
template <class T, int N>
struct local_block {
  std::array<index_t, N> offset{};
  std::array<index_t, N> extent{};
  std::array<index_t, N> stride{};
  T* data = nullptr;
  bool empty() const {
    for (int a = 0; a < N; ++a)
      if (extent[a] <= 0) return true;
    return data == nullptr;
  }
  index_t size() const {
    index_t n = 1;
    for (int a = 0; a < N; ++a) n *= extent[a];
    return n;
  }
  /// Element at global coordinates g (g inside the block).
  T& operator()(const std::array<index_t, N>& g) const {
    index_t off = 0;
    for (int a = 0; a < N; ++a) off += (g[a] - offset[a]) * stride[a];
    return data[off];
  }
};

namespace detail {

/// One collective on one array, as planned: its name, where it goes, bytes per rank.
struct comm_step {
  std::string collective;  // Scatterv, Bcast, Reduce(sum), Gatherv, generate, ...
  std::string where;
  std::vector<index_t> sent, received;  // [rank], bytes
  index_t total() const {
    index_t t = 0;
    for (index_t b : received) t += b;
    return t;
  }
};

/// Grid dimensions along which every rank's box equals the box at coordinate 0 there.
inline std::vector<int> group_dims(const grid_shape& g, const std::vector<box>& boxes, int active) {
  std::vector<int> dims;
  for (int d = 0; d < g.rank(); ++d) {
    if (g.dims[d] <= 1) continue;
    bool same = true;
    for (int r = 0; r < active && same; ++r) {
      auto c = grid_coords(g, r);
      c[d] = 0;
      same = boxes[r] == boxes[grid_rank(g, c)];
    }
    if (same) dims.push_back(d);
  }
  return dims;
}

/// Key of a rank's group (its coordinates off `dims`) and its place in it (coordinates on).
inline std::pair<int, int> group_key(const grid_shape& g, int rank, const std::vector<int>& dims) {
  const auto c = grid_coords(g, rank);
  if (c.empty()) return {-1, 0};
  index_t color = 0, key = 0;
  for (int d = 0; d < g.rank(); ++d) {
    const bool in = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (in) key = key * g.dims[d] + c[d];
    else color = color * g.dims[d] + c[d];
  }
  return {int(color), int(key)};
}

inline std::string dims_text(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "g" : ",g") + std::to_string(d);
  return s;
}

inline const char* combine_name(combine k) {
  switch (k) {
    case combine::add: return "sum";
    case combine::max: return "max";
    case combine::min: return "min";
    default: return "assign";
  }
}

/// Everything a plan knows and holds about one array.
struct array_plan {
  array_use use;
  std::string mapping_text;  // e.g. A[PARTITION:0 on g0, REPLICATE:1] g1:BROADCAST
  // reads
  std::vector<box> rbox;       // [rank]
  bool reads_own_writes = false;  // every read is of what this rank wrote earlier in the map
  std::vector<int> rgroup;     // grid dims of the broadcast groups
  std::vector<comm_step> in_steps;
  // writes
  std::vector<box> wbox;
  std::vector<int> wgroup;     // grid dims of the partial-result groups
  bool w_init_old = false;     // leaders' write buffers start from the old values
  bool w_combine_on_root = false;  // leaders' boxes overlap: root combines what it gathers
  std::vector<comm_step> init_steps, out_steps;
  // this rank's buffers
  std::vector<std::max_align_t> rbuf, wbuf;
  boost::mpi::communicator rcomm, wcomm;  // this rank's group communicators
  bool rleader = false, wleader = false;
};

/// true until moved from: a moved-from plan refuses every call (see map_plan::require_live).
struct live_flag {
  bool live = true;
  live_flag() = default;
  live_flag(live_flag&& o) noexcept : live(std::exchange(o.live, false)) {}
  live_flag& operator=(live_flag&& o) noexcept {
    live = std::exchange(o.live, false);
    return *this;
  }
};

inline void* buf_data(std::vector<std::max_align_t>& b) { return b.empty() ? nullptr : b.data(); }
inline void alloc(std::vector<std::max_align_t>& b, index_t elems, std::size_t es) {
  const std::size_t bytes = std::size_t(elems) * es;
  b.assign((bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t), std::max_align_t{});
}

inline raw_view view_of(const array_use& u, const box& b, void* data) {
  raw_view v;
  v.data = data;
  index_t st = 1;
  for (int a = u.rank - 1; a >= 0; --a) {
    v.origin[a] = b.lo[a];
    v.extent[a] = b.empty() ? 0 : b.hi[a] - b.lo[a];
    v.stride[a] = st;
    st *= std::max<index_t>(1, v.extent[a]);
  }
  return v;
}

template <class T>
void fill_identity(void* p, index_t n, combine k) {
  T* t = static_cast<T*>(p);
  T v = k == combine::max ? red_max::identity<T>() : k == combine::min ? red_min::identity<T>() : T(0);
  std::fill(t, t + n, v);
}

}  // namespace detail
}  // namespace workpart
