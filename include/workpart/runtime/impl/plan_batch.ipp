#pragma once
/// \file plan_batch.ipp
/// plan_batch's agreements for a program's maps at once, and their finishing in order.

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/operations.hpp>
#include <string>
#include <vector>

#include "../plan_batch.hpp"

namespace workpart::detail {

WORKPART_DECL void plan_batch::defer(map_runtime& m, failure f, std::uint64_t print,
                                     double local_seconds) {
  if (f && !first_) {
    f.when = std::uint32_t(maps_.size());
    first_ = std::move(f);
  }
  maps_.push_back(&m);
  prints_.push_back(print);
  local_seconds_.push_back(local_seconds);
}

WORKPART_DECL void plan_batch::finish(const boost::mpi::communicator& comm) {
  if (maps_.empty()) return;
  // One agreement for every map: the earliest failure (then the lowest rank's) everywhere,
  // as one map at a time raised it. Where the fingerprints differ, the maps are agreed on one
  // at a time to name the first that differs (every rank sees the same difference).
  fingerprint_hash all;
  for (std::uint64_t p : prints_) all.add(p);
  static const std::string differs = "\x01the maps' fingerprints differ";
  bool mismatch = false;
  with_comm_errors([&] {
    try {
      agree(comm, first_, all.h, name_rank::when_partial, differs);
    } catch (const plan_error& e) {
      if (std::string(e.what()).find(differs) == std::string::npos) throw;
      mismatch = true;
    }
    if (mismatch) {
      for (std::size_t m = 0; m < maps_.size(); ++m)
        agree(comm, failure{}, prints_[m], name_rank::when_partial, maps_[m]->mismatch_text());
      throw plan_error(
          "the ranks did not build the same program; build every map and plan "
          "alike on every rank");  // (the loop names the map that differs)
    }
    // every map's generated arrays in one all_reduce
    std::vector<int> mine;
    std::vector<std::size_t> at;
    for (map_runtime* m : maps_) {
      at.push_back(mine.size());
      const std::vector<int> v = m->generated_votes();
      mine.insert(mine.end(), v.begin(), v.end());
    }
    std::vector<int> minima(mine.size());
    if (!mine.empty())
      boost::mpi::all_reduce(comm, mine.data(), int(mine.size()), minima.data(),
                             boost::mpi::minimum<int>());
    for (std::size_t m = 0; m < maps_.size(); ++m)
      maps_[m]->set_generated_from(minima.data() + at[m]);
  });
  for (std::size_t m = 0; m < maps_.size(); ++m) {
    map_runtime& r = *maps_[m];
    const log_clock clock;
    r.finish_plan_sharing(splits_);
    r.log_planned(local_seconds_[m] + clock.seconds());
  }
}

}  // namespace workpart::detail
