#pragma once
/// \file profile.ipp
/// program_plan::profile() and the profile's modelled seconds: included by profile.hpp
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp), after profile.hpp in both (src/workpart.cpp
/// includes workpart.hpp first), so the folder is not included back from impl/.

#include <cstdio>

namespace workpart {

namespace detail {

WORKPART_DECL std::string model_text(const machine_model& m) {
  return m.str() +
         " (operations per second, seconds per message, seconds per byte; GEMM rates by a "
         "block's operations, streamed bytes per second, seconds per map, ranks per core, "
         "seconds per loop row, slow functions per second)";
}

WORKPART_DECL void add_modelled(plan_profile& p, const program& prog,
                                const std::vector<grid_shape>& grids, const machine_model& m) {
  schedule s;
  std::size_t k = 0;
  prog.for_each_map([&](const map_interface& mi) { s.set(mi.name(), grids[k++]); });
  const paper_program paper = plan_on_paper(prog, s, p.ranks);
  std::vector<local_work> work;
  std::vector<std::vector<index_t>> extents;
  prog.for_each_map([&](const map_interface& mi) {
    work.push_back(mi.work_per_point());
    extents.push_back(mi.extents());
  });
  p.step_modelled = 0;
  for (auto& r : p.rows) {
    if (r.map >= 0) {
      const auto& pm = paper.maps[std::size_t(r.map)];
      r.modelled = pm.block_seconds(m, work[std::size_t(r.map)], extents[std::size_t(r.map)]);
    } else if (r.transfer >= 0 && std::size_t(r.transfer) < paper.redistributions.size()) {
      const auto& d = paper.redistributions[std::size_t(r.transfer)];
      comm_step c;
      c.sent = d.sent;
      c.received = d.received;
      r.modelled = steps_seconds(m, {c});
    }
    p.step_modelled += r.modelled;
  }
  p.model = model_text(m);
}

}  // namespace detail

WORKPART_DECL plan_profile program_plan::profile() const { return profile(machine_model{}); }

WORKPART_DECL plan_profile program_plan::profile(const machine_model& model) const {
  require_live("profile");
  if (single_) {
    plan_profile p = plans_.front()->measured_profile();
    detail::add_modelled(p, program_, grids_, model);
    return p;
  }
  plan_profile p = measured_profile();
  detail::add_modelled(p, program_, grids_, model);
  return p;
}

}  // namespace workpart
