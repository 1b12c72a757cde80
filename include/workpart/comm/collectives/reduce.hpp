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

/// Combines the group's n-element partials at `buf` into the leader's `buf`.
WORKPART_DECL moved reduce_onto_leader(const boost::mpi::communicator& group, char elem,
                                       combine kind, void* buf, index_t n);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/reduce.ipp"
#endif
