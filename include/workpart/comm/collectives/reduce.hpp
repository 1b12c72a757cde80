#pragma once
/// \file reduce.hpp
/// Reduce of partial results onto the group leader (group rank 0), with the op of the write's
/// conflict resolution (sum; max and min propagating NaN, as the local executors do).
///
/// Not MPI_Reduce: with Open MPI 4.1 on a 2-vCPU node, MPI_Reduce of 128 MiB of doubles
/// between 2 ranks takes 0.52-0.58 s under every coll_tuned reduce algorithm, where a Send/Recv
/// of the same bytes takes 30 ms and the sum 9 ms. So the leader receives each member's partial
/// in 4 MiB pieces (the next piece arrives while the last one is combined) and combines them
/// into its own buffer, in rank order; no buffer of the whole box is allocated. Every member
/// sends its partial to the leader once, as the solver predicts.

#include <mpi.h>

#include <algorithm>
#include <boost/mpi/communicator.hpp>
#include <memory>

#include "datatypes.hpp"
#include "../../config.hpp"

namespace workpart::detail {

/// acc[e] = acc[e] (op) in[e] for e < n.
template <class T>
void combine_into(T* WORKPART_RESTRICT acc, const T* WORKPART_RESTRICT in, index_t n,
                  combine kind) {
  switch (kind) {
    case combine::max:
      for (index_t e = 0; e < n; ++e) acc[e] = T(op_max::apply(acc[e], in[e]));
      break;
    case combine::min:
      for (index_t e = 0; e < n; ++e) acc[e] = T(op_min::apply(acc[e], in[e]));
      break;
    default:
      for (index_t e = 0; e < n; ++e) acc[e] = T(acc[e] + in[e]);
      break;
  }
}

/// Elements of each piece the leader receives at a time.
inline index_t reduce_piece(std::size_t elem_size) {
  return std::max<index_t>(1, (index_t(4) << 20) / index_t(elem_size));
}
/// Bytes of receive buffers the leader of a reduce of n elements uses (two pieces).
inline std::size_t reduce_scratch_bytes(std::size_t elem_size, index_t n) {
  return 2 * std::size_t(std::min(reduce_piece(elem_size), n)) * elem_size;
}

/// Combines the group's n-element partials at `buf` into the leader's `buf`. `scratch`: at
/// least reduce_scratch_bytes on the leader, reserved before the phase's first collective
/// (so that no rank runs out of memory inside this one); null: allocated here.
WORKPART_DECL moved reduce_onto_leader(const boost::mpi::communicator& group, char elem,
                                       combine kind, void* buf, index_t n, void* scratch = nullptr);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/reduce.ipp"
#endif
