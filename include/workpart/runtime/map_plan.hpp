#pragma once
/// \file map_plan.hpp
/// The plan of one distributed map: built identically on every rank (all checks happen
/// before any collective), then run as scatter -> execute -> gather. What moves where is
/// decided by the MPI-free solver (plan/solve_array.hpp); the runtime that drives it is
/// map_runtime (map_runtime.hpp, not a template); this file adds what needs the map's type.

#include <boost/mpi/collectives/broadcast.hpp>
#include <memory>
#include <string>
#include <vector>

#include "../exec/run.hpp"
#include "../expr/map.hpp"
#include "../plan/solve_map.hpp"
#include "map_runtime.hpp"
#include "plan_batch.hpp"

namespace workpart {

/// A map distributed over a process grid. Built by wp::distribute on every rank alike.
/// \code
///   auto plan = wp::distribute(mm, wp::grid<2, 2, 1>);
///   plan.run();                  // scatter, execute, gather
///   std::puts(plan.explain().c_str());
/// \endcode
template <class Map>
class map_plan : private detail::map_runtime {
  static constexpr int N = Map::rank;

 public:
  /// inspect: root may evaluate data-dependent range bounds on its values (runtime/inspect.hpp);
  /// a program's maps pass false (an earlier map may write what the bounds read). batch: a
  /// program's maps plan their blocks here and are agreed on and finished together
  /// (plan_batch::finish, which must follow before the plan is used).
  map_plan(const Map& m, const grid_shape& g, const boost::mpi::communicator& comm, options opt,
           bool inspect = true, detail::plan_batch* batch = nullptr)
      : map_runtime(m.name(), N, m.iteration_space().str(), g, comm), map_(m) {
    const detail::log_clock clock;  // WORKPART_LOG=info (runtime/log.hpp)
    std::uint64_t print = 0;
    const detail::failure f = detail::capture([&] {
      map_.require_valid();  // an out-of-bounds access or a race found when the map was built
      // The device backend: refused here (every rank alike, through agree()) when this build
      // has no device system or this rank no device.
      if (opt.backend == workpart::backend::cuda)
        device_ = detail::make_device_context(name_, MPI_Comm(comm_));
      // (plan/solve_map.hpp: the grid, the constraints, every check that can fail)
      cons_ = detail::checked_constraints(
          name_, N, grid_, size_, [&] { return detail::extract_constraints(map_, grid_, size_); });
      block_ = cons_.blocks[std::size_t(rank_)];
      check_alive();
      check_views_disjoint();
      const auto& sp = map_.iteration_space();
      print = fingerprint(sp.lo.data(), sp.hi.data());
      local_text_ = local_text();
      run_reads_data_ = detail::run_reads_data(map_);
    });
    if (batch) {
      batch->defer(*this, f, print, clock.seconds());
      return;
    }
    agree_and_finish(f, print);
    if (inspect) detail::with_comm_errors([&] { inspect_ranges(); });
    finish_plan();
    log_planned(clock.seconds());
    // Buffers are allocated at the first scatter (or local()), not here: building a plan
    // touches no element.
  }
  map_plan(map_plan&&) = default;
  map_plan& operator=(map_plan&&) = default;

  using map_runtime::collectives;
  using map_runtime::draw;
  using map_runtime::execute;
  using map_runtime::explain;
  using map_runtime::gather;
  using map_runtime::grid;
  using map_runtime::local;
  using map_runtime::predicted_bytes;
  using map_runtime::predicted_total;
  using map_runtime::run;
  using map_runtime::runs_in_place;
  using map_runtime::scatter;
  using map_runtime::stats;
  using map_runtime::summary;
  using map_runtime::to_json;
  using map_runtime::to_svg;

  /// Collective: where execute() spends its time -- the map's block in each execute() (the
  /// median over the executes so far, the slowest rank's) beside the seconds `model` gives it
  /// (machine_model's defaults unless given), and the last execute()'s timeline on every
  /// rank (profile.hpp; program_plan::profile()).
  plan_profile profile() const;
  plan_profile profile(const machine_model& model) const;

  /// The plan of `m` as the runtime a program's plan drives (entries/map_model.hpp).
  static std::unique_ptr<detail::map_runtime> make_runtime(const Map& m, const grid_shape& g,
                                                           const boost::mpi::communicator& comm,
                                                           options opt, bool inspect,
                                                           detail::plan_batch* batch) {
    return std::unique_ptr<detail::map_runtime>(new map_plan(m, g, comm, opt, inspect, batch));
  }

  /// The runtime part of this plan (what a program's plan drives).
  detail::map_runtime& runtime() { return *this; }
  const detail::map_runtime& runtime() const { return *this; }

 private:
  /// How each statement runs on a rank's block: the backend's executor.
  std::string local_text() const {
    std::string local;
    map_.for_each_statement([&](const auto& st) {
      std::string how;
      // (a build without a device system has no device_: its strategy is not compiled)
      if constexpr (detail::has_device_system)
        if (device_) how = detail::device_strategy<N>(st);
      if (how.empty()) how = detail::local_strategy<N>(st);
      local += "    " + st.str() + " -> " + how + "\n";
    });
    if (!device_ && Map::statement_count > 1) {  // rank 0's block: the same text everywhere
      const detail::rank_block& b0 = cons_.blocks.front();
      local += "    statements on rank 0's block: " +
               detail::fusion_text(detail::map_fusion_plan<N>(map_, b0.lo, b0.hi), N) + "\n";
    }
    if (device_)
      local += "    (device backend: " + detail::device_system_text() + "; " +
               detail::device_staging_text() + ")\n";
    return local;
  }

  /// Root evaluates the bounds of inner ranges that read data over every rank's block and
  /// broadcasts what it found; the boxes are then cut to it (runtime/inspect.hpp).
  void inspect_ranges() {
    const int ranges = detail::count_data_ranges(map_);
    if (ranges == 0) return;
    std::vector<index_t> flat;
    const detail::failure f = detail::capture([&] {
      if (rank_ == 0) flat = detail::flatten(detail::inspect_data_ranges(map_, cons_, size_));
    });
    detail::agree(comm_, f, 0, detail::name_rank::always);
    std::uint64_t n = flat.size();  // plain MPI datatypes: no serialization archive
    boost::mpi::broadcast(comm_, n, 0);
    flat.resize(std::size_t(n));
    if (n > 0) boost::mpi::broadcast(comm_, flat.data(), int(n), 0);
    detail::range_inspection found = detail::unflatten(flat, ranges, size_);
    if (!detail::any_known(found)) return;
    inspection_ = std::move(found);
    cons_ = detail::extract_constraints(map_, grid_, size_, &inspection_);
    block_ = cons_.blocks[std::size_t(rank_)];
  }
  void check_inspection() override {
    detail::check_inspection_current(name_, inspection_,
                                     detail::inspect_data_ranges(map_, cons_, size_));
  }
  void run_on_root() override { detail::run_on_root(map_); }

  void run_block() override {
    check_alive();
    if (block_.empty(N)) return;
    if constexpr (detail::has_device_system) {
      if (device_) {
        const detail::phase_scope ps(detail::phase_scope::untimed, stats_.execute, device_.get());
        detail::executor<detail::device_backend> ex(*device_);
        run_statements(ex);
        return;
      }
    }
    detail::executor<detail::cpu_backend> ex;
    run_statements(ex);
  }
  /// The backend's executor (exec/backend.hpp) over the statements, on this rank's buffers.
  template <class Executor>
  void run_statements(Executor& ex) {
    bind(ex);
    ex.begin();
    ex.template run_map<N>(name_, map_, block_.lo, block_.hi,
                           [&](const void* id) { return separate_buffers(id); });
    ex.end();
  }

  Map map_;
};

}  // namespace workpart
