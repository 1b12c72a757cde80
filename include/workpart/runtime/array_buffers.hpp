#pragma once
/// \file array_buffers.hpp
/// The runtime record of one array in a map's plan: what the solver decided for it
/// (plan/solve_array.hpp, no MPI) and this rank's buffers and group communicators; and
/// this rank's view of a block (local_block).
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
#include "../exec/host_memory.hpp"
#include "../exec/local.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "../schedule/tiling.hpp"
#include "../comm/collectives/datatypes.hpp"
#include "../plan/explain.hpp"
#include "../plan/solve_array.hpp"
#include "../plan/validate.hpp"
#include "stats.hpp"

namespace workpart {

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

/// A rank's buffer of one box (aligned for any element type).
using buffer = std::unique_ptr<std::max_align_t[], detail::buffer_free>;

/// Everything a plan knows and holds about one array: what the solver decided, and this
/// rank's buffers and group communicators.
struct array_buffers : array_solution {
  buffer rbuf, wbuf;
  // A program's map that reads an input no map writes, in the same box as an earlier map of
  // the program, reads that map's buffer rather than a copy: set before allocation, the
  // buffer after (see program_plan::alias_inputs).
  bool shares_reads = false;
  void* shared_rdata = nullptr;
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
  /// `what` (e.g. "execute") is refused on a moved-from plan.
  void require(const char* what) const {
    if (!live)
      throw error("plan." + std::string(what) +
                  "(): this plan was moved from; "
                  "use the plan it was moved into");
  }
};

inline void* buf_data(buffer& b) { return b.get(); }

/// This rank's buffer of the array's read box (its own, or the one it shares).
inline void* read_data(array_buffers& ap) {
  return ap.shares_reads ? ap.shared_rdata : ap.rbuf.get();
}
/// Room for `elems` elements of `es` bytes, uninitialised: every element is written (scattered,
/// generated, filled with the identity, or computed) before it is read, so nothing is zeroed.
inline void alloc(buffer& b, index_t elems, std::size_t es, const host_memory& mem = {}) {
  const std::size_t bytes = std::size_t(elems) * es;
  const std::size_t n = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  if (n == 0) {
    b = buffer();
  } else if (mem.allocate) {
    b = buffer(static_cast<std::max_align_t*>(mem.allocate(n * sizeof(std::max_align_t))),
               buffer_free{mem.release});
  } else {
    b = buffer(std::make_unique_for_overwrite<std::max_align_t[]>(n).release());
  }
}

/// Memory a phase's collectives use inside them (a reduction's receive buffers), reserved
/// before the phase's first collective, where failures are agreed: no rank runs out of memory
/// inside a collective while the others wait in it.
struct scratch_buffer {
  buffer b;
  std::size_t bytes = 0;
  void reserve(std::size_t n, const std::string& what) {
    if (n <= bytes) return;
    try {
      alloc(b, index_t(n), 1);
    } catch (const std::bad_alloc&) {
      throw error("out of memory while reserving " + std::to_string(n) + " bytes for " + what);
    }
    bytes = n;
  }
  void* data() { return bytes ? b.get() : nullptr; }
};

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
  T v = k == combine::max   ? red_max::identity<T>()
        : k == combine::min ? red_min::identity<T>()
                            : T(0);
  std::fill(t, t + n, v);
}

}  // namespace detail
}  // namespace workpart
