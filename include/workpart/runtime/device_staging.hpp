#pragma once
/// \file device_staging.hpp
/// Where a plan's phases meet the device backend's blocks (exec/device/context.hpp keeps which
/// copy of each block is newest): the host blocks MPI works on are brought current before a
/// phase reads them and marked newer after it writes them, a rank's own pieces move device to
/// device, and every copy is counted in the phase that caused it. Both plans (map_plan.hpp,
/// program_plan.hpp) call these; with the CPU backend (no context) they do nothing.

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../exec/device/executor.hpp"
#include "../comm/collectives/exchange.hpp"
#include "array_buffers.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

namespace workpart::detail {

/// Whether the MPI library passes device buffers itself, asked at run time (Open MPI's
/// MPIX_Query_cuda_support where the library has it; otherwise no).
inline bool mpi_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// How device blocks meet MPI, for explain().
inline std::string device_staging_text() {
  // appended in place: GCC 12's -Warray-bounds misreads a chain of temporaries' operator+
  std::string s = "MPI ";
  s += mpi_cuda_aware() ? "reports CUDA support, but collectives are given host blocks: "
                        : "is not CUDA-aware: collectives are given host blocks: ";
  s += "a block crosses to the device when the host copy is newer (a scatter, a "
       "redistribution, a refill) and back only before a collective or a gather reads it";
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  s += "; host blocks are page-locked";
#endif
  return s;
}

/// This rank's rank among the ranks of comm on its node (which GPU it takes), 0 when MPI
/// cannot tell.
inline int node_rank(MPI_Comm comm) {
  MPI_Comm node;
  int local = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
  }
  return local;
}

/// The device context of a plan on comm (refused with wp::backend_error where this build has
/// no device system or this rank no device).
inline std::shared_ptr<device_context> make_device_context(const std::string& map, MPI_Comm comm) {
  return std::make_shared<device_context>(map, node_rank(comm));
}

/// The context's copy counters at a point, to count what a phase copied.
struct device_marks {
  std::size_t up = 0, down = 0;
};
inline device_marks device_now(const device_context* dev) {
  return dev ? device_marks{dev->bytes_up(), dev->bytes_down()} : device_marks{};
}
inline void count_device(phase_stats& ph, const device_context* dev, const device_marks& before) {
  if (!dev) return;
  ph.bytes_to_device += index_t(dev->bytes_up() - before.up);
  ph.bytes_from_device += index_t(dev->bytes_down() - before.down);
}

/// Before a phase through root (scatter, gather, an array refreshed through root): every block
/// the device holds newer comes down (counted in `ph`), and every mirror is stale from then on
/// (the phase writes host blocks).
inline void blocks_to_host(device_context* dev, phase_stats& ph) {
  if (!dev) return;
  const device_marks m = device_now(dev);
  dev->all_to_host();
  dev->host_wrote_all();
  count_device(ph, dev, m);
}

/// Copies box b of an array (`u`) from block `from` into block `to` where both have device
/// mirrors: on the device (true); otherwise brings both current on the host and marks `to`
/// written there (false: the caller copies on the host).
inline bool copy_box_on_device(device_context& dev, const array_use& u, const held_buffer& to,
                               const held_buffer& from, const box& b) {
  void* const tdev = dev.device_data(to.data);
  void* const fdev = dev.device_data(from.data);
  if (tdev && fdev) {
    if (to.data == from.data) return true;
    dev.to_device(from.data);
    dev.to_device(to.data);  // the box may cover part of the target block
    dev.device_writes(to.data);
    device_copy_box(u.rank, u.elem_size, tdev, to.held.lo, to.held.hi, fdev, from.held.lo,
                    from.held.hi, b.lo, b.hi);
    return true;
  }
  dev.to_host(from.data);
  dev.to_host(to.data);
  dev.host_wrote(to.data);
  return false;
}

/// The device side of a redistribution on this rank (`rank`), into one target block: a piece
/// that stays on the rank, from a block on its device into a target on its device that
/// receives nothing from other ranks, is copied there; for the others, the blocks this rank
/// sends from come down first, and the target comes down before the host writes into it (its
/// mirror is then stale). Returns the pieces left to the host (in `rest`).
template <class Source>
const std::vector<piece>& stage_pieces(device_context& dev, int rank, const std::vector<piece>& all,
                                       const array_use& u, Source& source,
                                       const held_buffer& target, std::vector<piece>& rest) {
  bool from_others = false;
  for (const auto& p : all) from_others = from_others || (p.to == rank && p.from != rank);
  const bool target_on_device = !from_others && dev.device_data(target.data) != nullptr;
  bool receives = false;
  for (const auto& p : all) {
    if (target_on_device && p.from == rank && p.to == rank) {
      const held_buffer s = source(p);
      if (dev.device_data(s.data) && copy_box_on_device(dev, u, target, s, p.b)) continue;
    }
    if (p.from == rank) dev.to_host(source(p).data);
    receives = receives || p.to == rank;
    rest.push_back(p);
  }
  if (receives) {  // a piece may cover only part of the target's block
    dev.to_host(target.data);
    dev.host_wrote(target.data);
  }
  return rest;
}

}  // namespace workpart::detail
