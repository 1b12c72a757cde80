#pragma once
/// \file program_runtime.hpp
/// The run-time part of a program's plan (program_plan.hpp), which depends on no map type:
/// compiled once per translation unit, not once per program. It drives the maps' runtimes
/// (map_runtime.hpp) through the decisions of plan/program.hpp (solve_program: no MPI): root
/// sends only what no earlier map wrote, the redistributions bring each map what it reads
/// from the maps that wrote it last, partial results of split reductions are combined right
/// after their map (Allreduce, reduce-scatter or Reduce), and gather() takes the final values
/// from the last writers. Buffers, collectives, timing (phase_scope.hpp) and byte counts.

#include <mpi.h>

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../plan/program.hpp"
#include "../comm/collectives/all_reduce.hpp"
#include "../comm/collectives/exchange.hpp"
#include "../comm/collectives/reduce_scatter.hpp"
#include "map_runtime.hpp"
#include "phase_scope.hpp"
#include "profile.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// Tests only: a map whose local run throws on one rank in a program's execute(), as running
/// out of memory there would (no data-dependent failure can be arranged in an affine map), to
/// check that the agreement deferred past it raises it on every rank.
struct injected_run_failure {
  std::string map;
  int rank = -1;
};
inline injected_run_failure& injected_run_failure_for_tests() {
  static injected_run_failure f;
  return f;
}

class program_runtime {
 public:
  /// Scatter the inputs from root, execute, leave every written array on root.
  void run() {
    scatter();
    execute();
    gather();
  }

  /// Moves the program's inputs to the ranks: root's values, or generated in place by init().
  /// What an earlier map of the program writes is not sent.
  void scatter();

  /// Runs the program's maps in order on the current distributed values (scattering first if
  /// nothing was scattered); call it again to run the program again (iterative methods).
  void execute();

  /// Leaves the final values of every array the program writes on root.
  void gather();

  /// The plan in words; identical on every rank.
  const std::string& explain() const {
    if (explain_stale_) {
      std::vector<std::string> texts;
      for_each_plan([&](int, const map_runtime& mp) { texts.push_back(mp.explain()); });
      explain_ = sol_.explain(texts);
      explain_stale_ = false;
    }
    return explain_;
  }
  /// This rank's figures (measured beside predicted).
  program_stats stats() const;
  std::string to_json() const;
  /// The program as a self-contained SVG page: each map's arrays with their boxes per rank,
  /// and what moves into each map (and back to root) with its bytes over all ranks.
  std::string to_svg() const;
  /// explain() in short: per map its grid, one line per array, and what moves into it.
  std::string summary() const;
  /// Terminal block maps of the array in every map that uses it.
  std::string draw_array(const void* id, const std::string& name) const;

  /// Collective: the program's profile (each map's block and each transfer in execute(), the
  /// step, the last execute()'s timeline); the modelled seconds left at 0.
  plan_profile measured_profile() const;

  /// A program plan never runs in place on root's arrays (its intermediates live on the ranks).
  bool runs_in_place() const { return false; }

  /// Bytes over all ranks (received) that pass through root (scatter + gather()) and that
  /// move rank to rank in the first and in each later execute().
  index_t predicted_root_bytes() const {
    return sol_.root_scatter_total() + sol_.root_gather_total();
  }
  index_t predicted_rank_bytes(bool first) const { return sol_.rank_to_rank_total(first); }

 protected:
  explicit program_runtime(const boost::mpi::communicator& comm) : comm_(comm) {
    rank_ = comm_.rank();
    size_ = comm_.size();
  }
  program_runtime(program_runtime&&) = default;
  program_runtime& operator=(program_runtime&&) = default;

  /// Once the maps' plans exist (built in program order on every rank): one device context
  /// for all maps, the program's solution (agreed on every rank), this rank's figures.
  void init(std::vector<map_runtime*> runtimes, std::vector<std::string> names,
            const std::vector<grid_shape>& grids);

  detail::array_buffers& slot(int m, std::size_t a) {
    return *slot_ptr_[std::size_t(m)][std::size_t(sol_.arrays()[a].slot[std::size_t(m)])];
  }

  /// Two arrays of the program that are views of overlapping root memory, one of them written
  /// by some map: a later map would read the other from root's values before the write (each
  /// map plan checks this within the map). Only root knows the buffers; agree() tells all.
  void check_views_disjoint() const;

  /// Each map's own steps inside the program (plan/program.hpp: program_steps), its
  /// predictions and its text; the program's text is made again when next asked for.
  /// `only`: the maps whose generated inputs changed (an empty list: every map) -- a gather
  /// changes one array's, and a training step gathers every parameter, one at a time.
  void apply_program_steps(const std::vector<int>& only = {});

  /// A read buffer that is another map's buffer (plan/program.hpp: shared_reads): marked
  /// before allocation, linked after.
  void mark_shared_reads();
  /// After allocation: the shared buffers (a shared input's source comes earlier in program
  /// order, so a chain of sharers resolves to the first reader's buffer).
  void link_shared_reads() {
    for (auto& sh : shared_from_)
      sh.reader->shared_rdata =
          sh.write ? detail::buf_data(sh.owner->wbuf) : detail::read_data(*sh.owner);
  }

  // ---------- running ----------
  /// Root's values of what no layer of redistribution x holds, into the reader's buffer.
  void scatter_part(std::size_t x);

  /// Redistribution x into the map about to run (the first or a later execute()'s pieces).
  void move_into(std::size_t x);
  /// Moves x's pieces (of the first or of a later execute()) from the buffers of its source
  /// layers into `target`, counting them in x's figures and in `phase`.
  void move_pieces(std::size_t x, bool first, const detail::held_buffer& target,
                   phase_stats& phase);

  /// Members of a split reduction start each run from the identity (their partials were
  /// combined after the last run, or passed on to the next writer; after an Allreduce or a
  /// reduce-scatter they held the whole value or their part of it until now; a leader takes
  /// the old values first; a map that partial results are passed to starts from those).
  void refill_identity(int m);

  void combine_partials(std::size_t c);

  void gather_arrays(const std::vector<std::size_t>& which);

  /// plan.profile()'s rows (their names, kinds and bytes) in the order execute() runs them.
  void make_profile_rows();

  /// Root now holds array a: later scatters send root's values instead of init()'s.
  void note_gathered(std::size_t a);

  // ---------- helpers ----------
  /// f(m, runtime of map m) for every map in program order.
  template <class F>
  void for_each_plan(F&& f) {
    for (std::size_t m = 0; m < runtimes_.size(); ++m) f(int(m), *runtimes_[m]);
  }
  template <class F>
  void for_each_plan(F&& f) const {
    for (std::size_t m = 0; m < runtimes_.size(); ++m)
      f(int(m), static_cast<const map_runtime&>(*runtimes_[m]));
  }
  /// The runtime of map m.
  map_runtime& runtime(int m) { return *runtimes_[std::size_t(m)]; }
  /// Bytes redistribution x moves over all ranks (received; a gather's every time, another's
  /// in the first execute() after a scatter).
  index_t redist_total(std::size_t x) const {
    const bool first = !sol_.redists()[x].gather;
    index_t bytes = 0;
    for (int k = 0; k < size_; ++k) bytes += sol_.redist_bytes(x, k, first, false);
    return bytes;
  }
  /// The program's number of the array at `id` (its address), or a plan_error naming it.
  std::size_t find_array(const void* id, const std::string& name, const char* what) const;
  /// Reserves the receive buffers this rank's combines use in execute() (under scatter()'s
  /// failure agreement: no rank runs out of memory inside a combine).
  void reserve_combine_scratch();
  /// Gathers the written ones among arrays `which` (the program's numbers).
  void gather_written(const std::vector<std::size_t>& which);
  /// The runtime of the map whose block of array a local() shows: the last that writes it
  /// (or the first that reads it).
  map_runtime& local_runtime(std::size_t a) {
    const auto& pa = sol_.arrays()[a];
    return runtime(pa.writers.empty() ? pa.first_user : pa.writers.back());
  }
  template <class F>
  void local_then_agree(F&& f) {
    detail::local_then_agree(comm_, f);
  }
  void require_live(const char* what) const { live_.require(what); }

  std::vector<map_runtime*> runtimes_;  // [map]: the map plans' runtimes, in program order
  boost::mpi::communicator comm_;
  int rank_ = 0, size_ = 1;
  detail::program_solution sol_;                               // what moves (plan/program.hpp)
  std::vector<std::vector<detail::array_buffers*>> slot_ptr_;  // [map][u]: the map plans' records
  std::vector<redistribution_stats> rstats_;  // [redistribution]: this rank's figures
  /// [redistribution]: the exchange datatypes of root's part, the first run's pieces and a
  /// later run's pieces, kept from one call to the next (detail::exchange_pieces).
  std::vector<std::array<detail::exchange_types, 3>> xtypes_;
  std::vector<std::vector<detail::box>>
      parts_;                       // [combine]: this rank's group's reduce-scatter parts
  detail::scratch_buffer scratch_;  // the combines' receive buffers (reserved at scatter)
  struct shared_buffer {
    detail::array_buffers* reader;
    detail::array_buffers* owner;
    bool write;  // the owner's write buffer (else its read buffer)
  };
  std::vector<shared_buffer> shared_from_;
  mutable std::string explain_;  // made from the maps' texts when asked for (explain())
  mutable bool explain_stale_ = true;
  program_stats stats_;
  std::string failed_;
  bool scattered_ = false, first_ = true, executed_ = false;
  std::shared_ptr<detail::device_context> device_;  // backend::cuda: the maps' one context
  detail::live_flag live_;
  // plan.profile(): the rows, each map's and redistribution's row (-2: none; a redistribution
  // stats() does not list, or a gather), each redistribution's seconds per execute(), the
  // step's, and the last execute()'s intervals on this rank
  std::vector<plan_profile::row> profile_rows_;
  std::vector<int> profile_row_of_map_, profile_row_of_redist_;
  std::vector<detail::sample_window> redist_samples_;
  detail::sample_window step_samples_;
  std::vector<detail::timeline_mark> marks_;
};

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/program_runtime.ipp"
#endif
