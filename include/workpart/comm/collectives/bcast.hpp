#pragma once
/// \file bcast.hpp
/// Bcast of a box within a group: the leader (group rank 0) holds it, the others receive it.

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>

#include "datatypes.hpp"

namespace workpart::detail {

/// Broadcasts n elements of type code `elem` at `buf` from group rank 0 over `group`.
inline moved bcast_box(const boost::mpi::communicator& group, char elem, void* buf, index_t n) {
  const int count = to_int(n, "a broadcast box");
  with_elem(elem, [&](auto t) {
    boost::mpi::broadcast(group, static_cast<decltype(t)*>(buf), count, 0);
  });
  moved m;
  const index_t bytes = type_bytes(mpi_elem_type(elem), count);
  if (group.rank() == 0)
    m.sent = bytes * (group.size() - 1);
  else
    m.received = bytes;
  return m;
}

}  // namespace workpart::detail
