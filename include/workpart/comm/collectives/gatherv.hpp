#pragma once
/// \file gatherv.hpp
/// Gatherv of contiguous boxes to root, for writes whose boxes overlap between ranks (root
/// then combines them into its array itself: see runtime/map_plan.hpp).

#include <mpi.h>

#include <boost/mpi/communicator.hpp>
#include <vector>

#include "datatypes.hpp"

namespace workpart::detail {

/// Root receives counts[r] elements from every rank r into `all` at displs[r] (root only);
/// this rank sends its counts[rank] elements at `buf`.
inline moved gatherv_contiguous(const boost::mpi::communicator& comm, char elem, const void* buf,
                                const std::vector<int>& counts, const std::vector<int>& displs,
                                void* all) {
  const int size = comm.size(), rank = comm.rank();
  const MPI_Datatype t = mpi_elem_type(elem);
  WORKPART_MPI_CHECK(MPI_Gatherv,
                     (counts[rank] > 0 ? buf : nullptr, counts[rank], t, rank == 0 ? all : nullptr,
                      counts.data(), displs.data(), t, 0, comm));
  moved m;
  if (rank != 0)
    m.sent = type_bytes(t, counts[rank]);
  else
    for (int r = 1; r < size; ++r) m.received += type_bytes(t, counts[r]);
  return m;
}

}  // namespace workpart::detail
