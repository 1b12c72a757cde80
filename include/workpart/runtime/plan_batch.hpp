#pragma once
/// \file plan_batch.hpp
/// A program's maps planned together (program_plan): each map plans its block locally and
/// defers its agreements here; finish() agrees on all of them at once.

#include <boost/mpi/communicator.hpp>
#include <cstdint>
#include <map>
#include <vector>

#include "../comm/agreement.hpp"
#include "map_runtime.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// The maps of one program planned together (program_plan): each map plans its block locally
/// and defers its agreement here; finish() then agrees once for all of them -- which map
/// failed first, on which rank, and whether every rank planned the same maps -- and agrees on
/// every map's generated arrays in one all_reduce, where one map at a time took two
/// collectives per map whose early ranks wait for the last (a 1408-map training step: 2816).
/// The errors are the same as one map at a time: the earliest map's, on every rank.
class plan_batch {
 public:
  /// Map `m`'s local planning ended with `f` (none: it succeeded) and fingerprint `print`,
  /// after `local_seconds`.
  void defer(map_runtime& m, failure f, std::uint64_t print, double local_seconds);
  /// Collective over `comm`: the agreements, then every deferred map's finish_plan(), in order.
  void finish(const boost::mpi::communicator& comm);

 private:
  std::vector<map_runtime*> maps_;
  std::vector<std::uint64_t> prints_;
  std::vector<double> local_seconds_;
  std::map<std::vector<index_t>, boost::mpi::communicator> splits_;
  failure first_;  ///< this rank's earliest failure (when: the map's place in the batch)
};

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/plan_batch.ipp"
#endif
