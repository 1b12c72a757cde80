#pragma once
/// \file reduce.hpp
/// Reduce of partial results onto the group leader (group rank 0), with the op of the write's
/// conflict resolution. The leader reduces in place (MPI_IN_PLACE): no buffer is ever both
/// the send and the receive buffer.

#include <mpi.h>

#include <boost/mpi/communicator.hpp>

#include "datatypes.hpp"

namespace workpart::detail {

/// Combines the group's n-element partials at `buf` into the leader's `buf`.
inline moved reduce_onto_leader(const boost::mpi::communicator& group, char elem, combine kind,
                                void* buf, index_t n) {
  const int count = to_int(n, "a reduced box");
  const MPI_Datatype t = mpi_elem_type(elem);
  moved m;
  if (group.rank() == 0) {
    WORKPART_MPI_CHECK(MPI_Reduce, (MPI_IN_PLACE, buf, count, t, mpi_op(kind, elem), 0, group));
    m.received = type_bytes(t, count) * (group.size() - 1);
  } else {
    WORKPART_MPI_CHECK(MPI_Reduce, (buf, nullptr, count, t, mpi_op(kind, elem), 0, group));
    m.sent = type_bytes(t, count);
  }
  return m;
}

}  // namespace workpart::detail
