/// \file program_plan.ipp
/// program_plan's construction (each map's plan from its program entry, in program order) and
/// the schedule's grids, agreed on every rank.

#include <memory>
#include <string>
#include <vector>

namespace workpart {

namespace detail {
WORKPART_DECL std::vector<grid_shape> schedule_grids(const program& p, const schedule& s,
                                                     const boost::mpi::communicator& comm) {
  std::vector<std::string> names;
  std::vector<std::string> origins;
  p.for_each_map([&](const map_interface& m) {
    names.push_back(m.name());
    origins.push_back(m.origin());
  });
  return schedule_grids(names, origins, s, comm);
}

WORKPART_DECL std::vector<grid_shape> schedule_grids(const std::vector<std::string>& names,
                                                     const std::vector<std::string>& origins,
                                                     const schedule& s,
                                                     const boost::mpi::communicator& comm) {
  if (!comm)
    throw plan_error(
        "wp::distribute: this rank is not in the context's communicator; build "
        "the plan only on the ranks of the communicator given to wp::context");
  std::vector<grid_shape> grids;
  std::uint64_t print = 0;
  const detail::failure f = detail::capture([&] {
    if (names.empty())
      throw plan_error(
          "wp::distribute: the program has no maps; add maps with wp::program(m1, m2, ...) or "
          "prog.add(map)");
    grids = detail::schedule_grids(names, s, "wp::distribute", origins);
    detail::fingerprint_hash h;
    for (std::size_t m = 0; m < names.size(); ++m) {
      h.add(names[m]).add(grids[m].rank()).add(index_t(grids[m].replica_axis));
      for (index_t d : grids[m].dims) h.add(d);
    }
    print = h.h;
  });
  detail::with_comm_errors([&] {
    detail::agree(comm, f, print, detail::name_rank::when_partial,
                  "wp::distribute: the ranks did not give the same schedule " + s.str() +
                      " (rank 0's); build the program and its schedule alike on every rank");
  });
  return grids;
}
}  // namespace detail

WORKPART_DECL program_plan::program_plan(const program& p, const schedule& s,
                                         const boost::mpi::communicator& comm, options opt)
    : program_runtime(comm), owned_(p.owned_arrays()), single_(p.size() == 1), program_(p) {
  const std::vector<grid_shape> grids = detail::schedule_grids(p, s, comm);
  grids_ = grids;
  const detail::log_clock clock;  // (the maps' plans log their own times)
  if (single_) {                  // a program of one map is that map's plan (collective)
    plans_.push_back(p.map(0).plan(grids[0], comm, opt, true));
    return;
  }
  // each map planned locally, then agreed on and finished together, in program order
  detail::plan_batch batch;
  for (std::size_t m = 0; m < p.size(); ++m)
    plans_.push_back(p.map(m).plan(grids[m], comm, opt, false, &batch));
  batch.finish(comm);
  std::vector<detail::map_runtime*> runtimes;
  for (auto& pl : plans_) runtimes.push_back(pl.get());
  init(std::move(runtimes), p.names(), grids);
  if (detail::log_on())
    detail::log_line(comm.rank(), "program plan of " + std::to_string(p.size()) +
                                      " maps: what moves between them solved in " +
                                      detail::log_seconds(clock.seconds()));
}

WORKPART_DECL program_stats program_plan::stats() const {
  if (!single_) return program_runtime::stats();
  program_stats s;
  static_cast<plan_stats&>(s) = plans_.front()->stats();
  s.maps.push_back(plans_.front()->stats());
  return s;
}

}  // namespace workpart
