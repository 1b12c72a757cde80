#pragma once
/// \file all_reduce.hpp
/// Allreduce of partial results within a group, in parts: the box's elements (row-major) are
/// cut into G near-equal runs, member i combines run i of every member's partial (a
/// reduce-scatter), then sends it to every other member (an allgather). Each member sends and
/// receives 2 (G - 1) / G of the box, as a ring Allreduce does, where a Reduce onto the leader
/// and a Bcast back make the leader move G - 1 boxes each way. The program plan picks this
/// form for large boxes (`all_reduce_uses_parts`, plan/program.hpp) and prices exactly what it
/// sends.
///
/// Not MPI_Allreduce: the ops are the write's conflict resolution (max and min propagating
/// NaN, as the local executors do), the bytes must be the plan's to the byte, and Open MPI
/// 4.1's reductions are slow on these nodes (reduce.hpp). Every run is exchanged point to
/// point straight from and into the member's buffer; the combine goes in group-rank order
/// after the member's own partial (as reduce_scatter_boxes), and every member ends with the
/// same values: each run is combined by one member only.

#include <mpi.h>

#include <boost/mpi/communicator.hpp>

#include "datatypes.hpp"
#include "reduce.hpp"
#include "../../schedule/tiling.hpp"
#include "../../config.hpp"

namespace workpart::detail {

/// Bytes of receive buffer member `me` of a group of G uses: the others' partials of its run.
inline std::size_t all_reduce_parts_scratch_bytes(std::size_t elem_size, index_t n, int G, int me) {
  return std::size_t(all_reduce_part(n, G, me).size()) * std::size_t(G > 1 ? G - 1 : 0) * elem_size;
}

/// Combines the group's n-element partials at `buf` so that every member holds the combined
/// box. `scratch`: at least all_reduce_parts_scratch_bytes, reserved before the phase's first
/// collective (so that no rank runs out of memory inside this one); null: allocated here.
WORKPART_DECL moved all_reduce_in_parts(const boost::mpi::communicator& group, char elem,
                                        combine kind, void* buf, index_t n,
                                        void* scratch = nullptr);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/all_reduce.ipp"
#endif
