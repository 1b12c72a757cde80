#pragma once
/// \file program_plan.hpp
/// The plan of a program: each map runs as its one-map plan (map_plan.hpp, made by the map's
/// program entry, entries/map_model.hpp) on its own grid, and the arrays passed between maps
/// move rank to rank, never through root. Not a template: the maps' types stay behind their
/// entries, and what moves between maps and when is program_runtime.hpp over
/// plan/program.hpp. A program of one map is that map's plan (as wp::distribute(map, grid)
/// builds it: run in place on root where it can, its data-dependent ranges inspected).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../program/program.hpp"
#include "../schedule/schedule.hpp"
#include "map_runtime.hpp"
#include "plan_batch.hpp"
#include "profile.hpp"
#include "program_runtime.hpp"
#include "../config.hpp"

namespace workpart {

namespace detail {
/// The grid of each map of a program from a schedule (schedule/schedule.hpp), checked on every
/// rank alike before anything is planned, and the same on every rank.
WORKPART_DECL std::vector<grid_shape> schedule_grids(const program& p, const schedule& s,
                                                     const boost::mpi::communicator& comm);
/// The same for maps of these names (and origins: wp::backward's, for its messages).
WORKPART_DECL std::vector<grid_shape> schedule_grids(const std::vector<std::string>& names,
                                                     const std::vector<std::string>& origins,
                                                     const schedule& s,
                                                     const boost::mpi::communicator& comm);
}  // namespace detail

/// The plan of a program, built by wp::distribute on every rank alike.
/// \code
///   auto plan = wp::distribute(wp::program(step, copy), s, ctx);
///   plan.scatter();
///   for (int t = 0; t < 10; ++t) plan.execute();
///   plan.gather(x);
/// \endcode
class program_plan : private detail::program_runtime {
 public:
  /// Collective: the maps' plans are built in program order on every rank.
  WORKPART_DECL program_plan(const program& p, const schedule& s,
                             const boost::mpi::communicator& comm, options opt);
  program_plan(program_plan&&) = default;
  program_plan& operator=(program_plan&&) = default;

  /// Scatter the inputs from root, execute, leave every written array on root.
  void run() {
    if (single_) return plans_.front()->run();
    program_runtime::run();
  }
  /// Moves the program's inputs to the ranks (root's values, or generated in place by init()).
  void scatter() {
    if (single_) return plans_.front()->scatter();
    program_runtime::scatter();
  }
  /// Runs the maps in order on the current distributed values; again on each call.
  void execute() {
    if (single_) return plans_.front()->execute();
    program_runtime::execute();
  }
  /// Leaves the final values of every array the program writes on root.
  void gather() {
    if (single_) return plans_.front()->gather();
    program_runtime::gather();
  }
  /// Gathers only the named arrays.
  template <class... A>
  void gather(const A&... arrs) {
    if (single_) return plans_.front()->gather(arrs...);
    require_live("gather");
    gather_written({find_array(&arrs, arrs.name(), "gather")...});
  }

  /// The plan in words; identical on every rank.
  const std::string& explain() const {
    return single_ ? plans_.front()->explain() : program_runtime::explain();
  }
  /// This rank's figures (measured beside predicted); `maps` holds each map's own.
  WORKPART_DECL program_stats stats() const;
  std::string to_json() const {
    return single_ ? plans_.front()->to_json() : program_runtime::to_json();
  }
  /// The whole plan as a self-contained SVG page.
  std::string to_svg() const {
    return single_ ? plans_.front()->to_svg() : program_runtime::to_svg();
  }
  /// explain() in short.
  std::string summary() const {
    return single_ ? plans_.front()->summary() : program_runtime::summary();
  }
  /// Draws how each map that uses `a` holds it (read boxes, write boxes; plan/picture.hpp).
  template <class T, int R>
  std::string draw(const array<T, R>& a) const {
    return single_ ? plans_.front()->draw(a) : draw_array(&a, a.name());
  }
  /// Whether run() works on root's arrays in place (a program of one map where no rank but
  /// root holds any part of its arrays); a program of several maps never does.
  bool runs_in_place() const { return single_ && plans_.front()->runs_in_place(); }
  /// Bytes over all ranks (received) that pass through root (scatter + gather()).
  index_t predicted_root_bytes() const {
    if (single_)
      return plans_.front()->predicted_total(true) + plans_.front()->predicted_total(false);
    return program_runtime::predicted_root_bytes();
  }
  /// Bytes over all ranks that move rank to rank in the first and in each later execute().
  index_t predicted_rank_bytes(bool first) const {
    return single_ ? 0 : program_runtime::predicted_rank_bytes(first);
  }
  /// The number of maps.
  std::size_t map_count() const noexcept { return plans_.size(); }

  /// Collective: where execute() spends its time -- per map and per transfer the median
  /// seconds over the executes so far (the slowest rank's) beside the seconds `model` gives
  /// them (machine_model's defaults unless given), and the last execute()'s timeline on
  /// every rank. The same on every rank; `std::cout << p` prints the table on rank 0.
  WORKPART_DECL plan_profile profile() const;
  WORKPART_DECL plan_profile profile(const machine_model& model) const;

  /// This rank's block of an array, in the last map that writes it (or the first that reads
  /// it). Where that map's partial sums are combined, exactly the part that holds combined
  /// values: after a reduce-scatter the rank's own part, after a Reduce the whole box on the
  /// group's leader and an empty block on the others; never partial sums.
  template <class T, int R>
  local_block<T, R> local(const array<T, R>& a) {
    if (single_) return plans_.front()->local(a);
    require_live("local");
    const std::size_t x = find_array(&a, a.name(), "local");
    local_block<T, R> lb = local_runtime(x).local(a);
    const auto& pa = sol_.arrays()[x];
    if (pa.writers.empty() || lb.empty()) return lb;
    const detail::box held = sol_.held_after(pa.writers.back(), x, false)[std::size_t(rank_)];
    if (held.empty()) return {};
    for (int d = 0; d < R; ++d) {  // the held part lies inside the block: narrow to it
      lb.data += (held.lo[d] - lb.offset[d]) * lb.stride[d];
      lb.offset[d] = held.lo[d];
      lb.extent[d] = held.hi[d] - held.lo[d];
    }
    return lb;
  }

 private:
  std::vector<std::unique_ptr<detail::map_runtime>> plans_;  // [map]: its plan, on the heap
  // arrays the program made (wp::backward's gradients): alive while the plan is
  std::vector<std::shared_ptr<const void>> owned_;
  bool single_ = false;            // a program of one map: that map's plan
  program program_;                // what profile() prices (its maps' entries)
  std::vector<grid_shape> grids_;  // [map]: its grid
};

}  // namespace workpart

#if WORKPART_HEADER_ONLY
#include "impl/program_plan.ipp"
#endif
