#pragma once
/// \file root_exchange.hpp
/// The plan's Scatterv and Gatherv: root's global array <-> one box per rank.
///
/// Root sends (or receives) every box straight from (into) its global array through an MPI
/// subarray datatype, so nothing is packed on root; each rank holds its box contiguously.
/// MPI_Scatterv and MPI_Gatherv take one datatype for all ranks, which boxes of uneven sizes
/// cannot share, so both are MPI_Alltoallw calls in which only root sends (or receives).

#include <mpi.h>

#include <boost/mpi/communicator.hpp>
#include <vector>

#include "datatypes.hpp"
#include "../../config.hpp"

namespace workpart::detail {

/// Root <-> every rank r with take[r] and a non-empty boxes[r]; `local` is this rank's box,
/// `global` root's whole array (nullptr elsewhere).
WORKPART_DECL moved root_exchange(const boost::mpi::communicator& comm, const array_layout& u,
                                  const std::vector<box>& boxes, const std::vector<char>& take,
                                  void* local, void* global, bool to_root);

/// Scatterv: root sends each rank in `take` its box of root's array (`global`), into `local`.
WORKPART_DECL moved scatterv_boxes(const boost::mpi::communicator& comm, const array_layout& u,
                                   const std::vector<box>& boxes, const std::vector<char>& take,
                                   void* local, void* global);

/// Gatherv: each rank in `take` sends its box from `local` into root's array (`global`).
WORKPART_DECL moved gatherv_boxes(const boost::mpi::communicator& comm, const array_layout& u,
                                  const std::vector<box>& boxes, const std::vector<char>& take,
                                  void* local, void* global);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/root_exchange.ipp"
#endif
