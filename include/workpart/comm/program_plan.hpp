#pragma once
/// \file program_plan.hpp
/// The plan of a program of several maps: each map runs as its one-map plan (map_plan.hpp)
/// on its own grid, and the arrays passed between maps move rank to rank, never through root.
///
/// This file holds only what depends on the maps' types: building each map's plan in program
/// order, and the calls that name arrays by type. Everything else, what moves between maps
/// and when, is the non-template program_runtime.hpp over plan/program.hpp.

#include <mpi.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../schedule/schedule.hpp"
#include "map_plan.hpp"
#include "program_runtime.hpp"

namespace workpart {

namespace detail {
/// The grid of each map of a program from a schedule (schedule/schedule.hpp), checked on every
/// rank alike before anything is planned, and the same on every rank.
template <class... Maps>
std::vector<grid_shape> schedule_grids(const program_t<Maps...>& p, const schedule& s,
                                       const boost::mpi::communicator& comm) {
  if (!comm)
    throw plan_error(
        "wp::distribute: this rank is not in the context's communicator; build "
        "the plan only on the ranks of the communicator given to wp::context");
  std::vector<grid_shape> grids;
  std::uint64_t print = 0;
  const detail::failure f = detail::capture([&] {
    std::vector<std::string> names;
    std::vector<std::string> origins;
    p.for_each_map([&](const auto& m) {
      names.push_back(m.name());
      origins.push_back(m.origin());
    });
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

/// The plan of a program of several maps, built by wp::distribute on every rank alike.
/// \code
///   auto plan = wp::distribute(wp::program(step, copy), s, ctx);
///   plan.scatter();
///   for (int t = 0; t < 10; ++t) plan.execute();
///   plan.gather(x);
/// \endcode
template <class... Maps>
class program_plan : private detail::program_runtime {
  using plans_type = detail::flat_tuple<map_plan<Maps>...>;

 public:
  program_plan(const program_t<Maps...>& p, const schedule& s, const boost::mpi::communicator& comm,
               options opt)
      : program_plan(p, detail::schedule_grids(p, s, comm), comm, opt,
                     std::index_sequence_for<Maps...>{}) {}
  program_plan(program_plan&&) = default;
  program_plan& operator=(program_plan&&) = default;

  using program_runtime::execute;
  using program_runtime::explain;
  using program_runtime::gather;
  using program_runtime::predicted_rank_bytes;
  using program_runtime::predicted_root_bytes;
  using program_runtime::run;
  using program_runtime::runs_in_place;
  using program_runtime::scatter;
  using program_runtime::stats;
  using program_runtime::summary;
  using program_runtime::to_json;
  using program_runtime::to_svg;

  /// Draws how each map that uses `a` holds it (read boxes, write boxes; plan/picture.hpp).
  template <class T, int R>
  std::string draw(const array<T, R>& a) const {
    return draw_array(&a, a.name());
  }

  /// Gathers only the named arrays.
  template <class... A>
  void gather(const A&... arrs) {
    require_live("gather");
    gather_written({find_array(&arrs, arrs.name(), "gather")...});
  }

  /// This rank's block of an array, in the last map that writes it (or the first that reads
  /// it). Where that map's partial sums are combined, exactly the part that holds combined
  /// values: after a reduce-scatter the rank's own part, after a Reduce the whole box on the
  /// group's leader and an empty block on the others; never partial sums.
  template <class T, int R>
  local_block<T, R> local(const array<T, R>& a) {
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
  template <std::size_t... I>
  program_plan(const program_t<Maps...>& p, const std::vector<grid_shape>& grids,
               const boost::mpi::communicator& comm, options opt, std::index_sequence<I...>)
      : program_runtime(comm),
        // braces: the plans (each a collective) are built in program order on every rank; on
        // the heap, so that the runtimes keep their addresses when the plan moves
        plans_(p.maps().unpack([&](const Maps&... m) {
          return new plans_type{map_plan<Maps>(m, grids[I], comm, opt, false)...};
        })),
        owned_(p.owned_arrays()) {
    const detail::log_clock clock;  // (the maps' plans log their own times)
    init(plans_->unpack(
             [](auto&... pl) { return std::vector<detail::map_runtime*>{&pl.runtime()...}; }),
         p.maps().unpack([](const Maps&... m) { return std::vector<std::string>{m.name()...}; }),
         grids);
    if (detail::log_on())
      detail::log_line(comm.rank(), "program plan of " + std::to_string(sizeof...(Maps)) +
                                        " maps: what moves between them solved in " +
                                        detail::log_seconds(clock.seconds()));
  }

  std::unique_ptr<plans_type> plans_;
  // arrays the program made (wp::backward's gradients): alive while the plan is
  std::vector<std::shared_ptr<const void>> owned_;
};

}  // namespace workpart
