#pragma once
/// \file profile.hpp
/// `plan.profile()`'s modelled seconds: the runtime measures (runtime/profile.hpp), and here,
/// above it and the optimizer, each row gets the seconds the machine model gives it, as a plan
/// on paper of the same maps and grids prices it (optimize/paper_plan.hpp): a map's block, its
/// largest block's arithmetic at the map's operations per point; a transfer, the busiest rank's
/// bytes of a later execute() and a message per rank that receives (alpha-beta). At the top,
/// beside distribute.hpp: it joins runtime/ and optimize/, which know nothing of each other.

#include <string>
#include <vector>

#include "config.hpp"
#include "exec/local_kind.hpp"
#include "expr/operation_count.hpp"
#include "optimize/machine_model.hpp"
#include "optimize/paper_plan.hpp"
#include "runtime/map_plan.hpp"
#include "runtime/profile.hpp"
#include "runtime/program_plan.hpp"

namespace workpart {

namespace detail {
/// The model in words, for the profile's heading.
WORKPART_DECL std::string model_text(const machine_model& m);
/// The modelled seconds of a program plan's rows and step, from its plan on paper.
WORKPART_DECL void add_modelled(plan_profile& p, const program& prog,
                                const std::vector<grid_shape>& grids, const machine_model& m);
}  // namespace detail

template <class Map>
plan_profile map_plan<Map>::profile() const {
  return profile(machine_model{});
}

template <class Map>
plan_profile map_plan<Map>::profile(const machine_model& model) const {
  plan_profile p = measured_profile();
  const paper_plan paper = detail::paper_of(detail::solve_map_on_paper(map_, grid_, size_));
  std::vector<index_t> extents;
  for (int d = 0; d < Map::rank; ++d) extents.push_back(map_.iteration_space().extent(d));
  p.rows.front().modelled = paper.block_seconds(model, detail::local_work_of(map_), extents);
  p.step_modelled = p.rows.front().modelled;
  p.model = detail::model_text(model);
  return p;
}

}  // namespace workpart

#if WORKPART_HEADER_ONLY
#include "impl/profile.ipp"
#endif
