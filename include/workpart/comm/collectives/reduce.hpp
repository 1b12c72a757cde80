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
inline moved reduce_onto_leader(const boost::mpi::communicator& group, char elem, combine kind,
                                void* buf, index_t n) {
  const int count = to_int(n, "a reduced box");
  const MPI_Datatype t = mpi_elem_type(elem);
  constexpr int tag = 7301;  // the group communicator is the plan's own: no other traffic
  moved m;
  with_elem(elem, [&](auto zero) {
    using T = decltype(zero);
    const index_t piece = std::max<index_t>(1, (index_t(4) << 20) / index_t(sizeof(T)));
    T* acc = static_cast<T*>(buf);
    if (group.rank() != 0) {
      for (index_t off = 0; off < n; off += piece)
        WORKPART_MPI_CHECK(MPI_Send, (acc + off, int(std::min(piece, n - off)), t, 0, tag, group));
      m.sent = type_bytes(t, count);
      return;
    }
    const index_t first = std::min(piece, n);
    std::unique_ptr<T[]> in[2] = {std::make_unique_for_overwrite<T[]>(std::size_t(first)),
                                  std::make_unique_for_overwrite<T[]>(std::size_t(first))};
    for (int src = 1; src < group.size(); ++src) {
      MPI_Request req;
      WORKPART_MPI_CHECK(MPI_Irecv, (in[0].get(), int(first), t, src, tag, group, &req));
      int cur = 0;
      for (index_t off = 0; off < n; off += piece) {
        WORKPART_MPI_CHECK(MPI_Wait, (&req, MPI_STATUS_IGNORE));
        if (off + piece < n)  // the next piece arrives while this one is combined
          WORKPART_MPI_CHECK(MPI_Irecv, (in[1 - cur].get(), int(std::min(piece, n - off - piece)),
                                         t, src, tag, group, &req));
        combine_into(acc + off, in[cur].get(), std::min(piece, n - off), kind);
        cur = 1 - cur;
      }
    }
    m.received = type_bytes(t, count) * (group.size() - 1);
  });
  return m;
}

}  // namespace workpart::detail
