#pragma once
/// \file root_exchange.ipp
/// The bodies of root_exchange.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../root_exchange.hpp"

namespace workpart::detail {

WORKPART_DECL moved root_exchange(const boost::mpi::communicator& comm, const array_layout& u,
                                  const std::vector<box>& boxes, const std::vector<char>& take,
                                  void* local, void* global, bool to_root) {
  const int size = comm.size(), rank = comm.rank();
  const MPI_Datatype elem = mpi_elem_type(u.elem);
  std::vector<int> scount(size, 0), sdisp(size, 0), rcount(size, 0), rdisp(size, 0);
  std::vector<MPI_Datatype> stype(size, elem), rtype(size, elem);
  std::vector<datatype> keep;  // root's subarray types, freed after the call
  keep.reserve(std::size_t(size));
  moved m;
  for (int r = 0; r < size; ++r) {
    if (!take[r] || boxes[r].empty()) continue;
    if (rank == 0) {
      keep.push_back(box_type(u, u.shape, boxes[r]));
      (to_root ? rcount : scount)[r] = 1;
      (to_root ? rtype : stype)[r] = keep.back().get();
      if (r != 0) (to_root ? m.received : m.sent) += type_bytes(keep.back().get(), 1);
    }
    if (r == rank) {
      const int n = to_int(boxes[r].size(), "a box of array '" + u.name + "'");
      (to_root ? scount : rcount)[0] = n;
      if (r != 0) (to_root ? m.sent : m.received) += type_bytes(elem, n);
    }
  }
  WORKPART_MPI_CHECK(MPI_Alltoallw,
                     (to_root ? local : global, scount.data(), sdisp.data(), stype.data(),
                      to_root ? global : local, rcount.data(), rdisp.data(), rtype.data(), comm));
  return m;
}

WORKPART_DECL moved scatterv_boxes(const boost::mpi::communicator& comm, const array_layout& u,
                                   const std::vector<box>& boxes, const std::vector<char>& take,
                                   void* local, void* global) {
  return root_exchange(comm, u, boxes, take, local, global, false);
}

WORKPART_DECL moved gatherv_boxes(const boost::mpi::communicator& comm, const array_layout& u,
                                  const std::vector<box>& boxes, const std::vector<char>& take,
                                  void* local, void* global) {
  return root_exchange(comm, u, boxes, take, local, global, true);
}
}  // namespace workpart::detail
