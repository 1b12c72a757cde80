#pragma once
/// \file map_runtime.hpp
/// The runtime of one map's plan, apart from the map's type: this rank's buffers (one
/// array_buffers per array), the phases (scatter -> execute -> gather) and their collectives,
/// timing and byte counts. map_plan<Map> (map_plan.hpp) adds what needs the map's statements
/// (extracting its constraints, running the executor over them, root's range inspection), so
/// every map type of a program shares one compiled copy of all the rest.
///
/// Every phase runs in two steps: first the work that can fail on some ranks only (planning
/// from values that may differ by rank, root's allocation, init() generators, the local
/// block), then one small collective in which the ranks agree whether any failed (agree);
/// only when none did do the collectives that move data start. So a failure anywhere is the
/// same wp::error on every rank, and no rank waits in a collective alone.

#include <mpi.h>

#include <boost/mpi/communicator.hpp>
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../exec/options.hpp"
#include "../plan/picture.hpp"
#include "../comm/agreement.hpp"
#include "array_buffers.hpp"
#include "../comm/collectives/bcast.hpp"
#include "../comm/collectives/gatherv.hpp"
#include "../comm/collectives/reduce.hpp"
#include "../comm/collectives/root_exchange.hpp"
#include "device_staging.hpp"
#include "phase_scope.hpp"
#include "profile.hpp"
#include "inspect.hpp"
#include "log.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// A map's plan less what needs the map's type: built by map_plan<Map>, which extracts the
/// constraints and provides run_block(), run_on_root() and check_inspection() (its state is
/// protected: map_plan plans into it); driven phase by phase by a program's runtime
/// (program_runtime) and agreed on in batches (plan_batch) through the narrow interface below,
/// each call one step of a phase. Users see map_plan's API only.
class map_runtime {
 public:
  /// Checks that this rank belongs to the communicator (the typed plan then plans the map).
  map_runtime(std::string name, int space_rank, std::string space_text, const grid_shape& g,
              const boost::mpi::communicator& comm);
  map_runtime(map_runtime&&) = default;
  map_runtime& operator=(map_runtime&&) = default;
  virtual ~map_runtime() = default;

  /// Scatter inputs from root, execute, leave outputs on root. When no rank but root holds
  /// any part of any array (one rank, or a grid of one), root runs the map on its arrays in
  /// place, as wp::run does: nothing is copied.
  void run();

  /// Moves every input to the ranks (root's values, or generated in place by init()).
  void scatter() {
    require_live("scatter");
    refresh_generated_timed();
    scatter_agreed();
  }

  /// refresh_generated() (one Allreduce), counted in the scatter phase.
  void refresh_generated_timed();

  /// Whether run() works on root's arrays in place (no rank but root holds any part of them).
  /// (As of the last scatter or run: an init() input that root holds no copy of is generated
  /// on the ranks instead.)
  bool runs_in_place() const {
    return root_only_ &&
           std::none_of(generated_.begin(), generated_.end(), [](char g) { return g; });
  }

  /// Runs the map on this rank's block (again on the current values if called again).
  void execute();

  /// Leaves the final values of every written array on root.
  void gather();
  /// Gathers only the named arrays.
  template <class... A>
  void gather(const A&... arrs) {
    require_live("gather");
    // find(): an error for an array the map does not use, before anything moves
    const std::vector<array_buffers*> which{&find(arrs, "gather")...};
    gather_these(which);
  }
  /// The gather of these arrays (those the map writes), when the blocks hold results.
  void gather_these(const std::vector<array_buffers*>& which);

  /// Whether the ranks' blocks hold results to gather. Nothing executed yet, or an in-place
  /// run() left the values on root already: nothing to do. After a failed execute() the
  /// blocks hold partial results: refused (the same on every rank: failures are agreed).
  bool ready_to_gather() const;

  /// This rank's block of an array (its written box if the map writes it, else its read box).
  /// Buffers are made at the first scatter (or here) and not zeroed: before the first
  /// scatter() the block's values are unspecified.
  template <class T, int R>
  local_block<T, R> local(const array<T, R>& a) {
    require_live("local");
    check_alive();
    auto& ap = find(a, "local");
    // The device backend: the view shows the current values, and from now on the blocks
    // follow every run both ways (the caller may read or write through it at any time).
    if (device_) device_->make_eager();
    const bool w = ap.use.written;
    const box& b = w ? ap.wbox[rank_] : ap.rbox[rank_];
    local_block<T, R> lb;
    if (b.empty()) return lb;
    if (buffers_behind_) {
      // After an in-place run() the block is root's (only root holds any): a view of root's array.
      index_t st = 1;
      for (int x = R - 1; x >= 0; --x) {
        lb.stride[x] = st;
        st *= ap.use.shape[x];
      }
      index_t off = 0;
      for (int x = 0; x < R; ++x) {
        lb.offset[x] = b.lo[x];
        lb.extent[x] = b.hi[x] - b.lo[x];
        off += b.lo[x] * lb.stride[x];
      }
      lb.data = static_cast<T*>(ap.use.root_data()) + off;
      return lb;
    }
    if (!allocated_) allocate();
    const raw_view v = view_of(ap.use, b, w ? buf_data(ap.wbuf) : read_data(ap));
    for (int x = 0; x < R; ++x) {
      lb.offset[x] = v.origin[x];
      lb.extent[x] = v.extent[x];
      lb.stride[x] = v.stride[x];
    }
    lb.data = static_cast<T*>(v.data);
    return lb;
  }

  /// The plan in words; identical on every rank.
  const std::string& explain() const { return explain_; }
  /// The arrays at `id` (nullptr: every array) as pictures: read boxes and write boxes.
  std::vector<picture_array> pictures_of(const void* id) const;
  /// The whole plan as one map's picture.
  picture_map picture() const { return {name_, grid_.str(), pictures_of(nullptr)}; }
  /// A terminal block map of each way the map holds the array (plan/picture.hpp).
  std::string draw_array(const void* id, const std::string& name) const;
  /// The plan as a self-contained SVG page: each array's boxes per rank, root's transfers.
  std::string to_svg() const;
  /// One line per array: how the map uses it, its collectives and their bytes (all ranks).
  std::string summary_arrays() const;
  /// explain() in short: the map, its grid, one line per array, the bytes per phase.
  std::string summary() const;
  /// Draws how the map holds `a` (its read boxes and its write boxes, each rank's box
  /// labelled); the same text on every rank.
  template <class T, int R>
  std::string draw(const array<T, R>& a) const {
    return draw_array(&a, a.name());
  }
  /// This rank's measured bytes and seconds per phase beside the predicted bytes.
  const plan_stats& stats() const { return stats_; }
  /// explain() and stats() as JSON (stats of this rank).
  std::string to_json() const {
    return plan_json(name_, grid_, rank_, size_, solution_views(), stats_, explain_);
  }

  const grid_shape& grid() const { return grid_; }
  /// Predicted bytes rank r sends/receives per scatter and per gather.
  index_t predicted_bytes(int r, bool scatter_phase, bool sent) const {
    return workpart::detail::predicted_bytes(solution_views(), r, scatter_phase, sent);
  }
  /// Predicted bytes over all ranks (received) for the scatter and the gather phase.
  index_t predicted_total(bool scatter_phase) const {
    return workpart::detail::predicted_total(solution_views(), size_, scatter_phase);
  }
  /// The planned collectives of an array (in: scatter side, out: gather side), for tests.
  template <class T, int R>
  std::vector<std::string> collectives(const array<T, R>& a) const {
    std::vector<std::string> v;
    for (const auto& ap : arrays_)
      if (ap.use.id == static_cast<const void*>(&a)) {
        for (const auto* steps : {&ap.in_steps, &ap.init_steps, &ap.out_steps})
          for (const auto& s : *steps) v.push_back(s.collective);
      }
    return v;
  }

  // ---------- what a program's runtime (program_runtime) and plan_batch drive ----------
  // Each call is one step of a phase that the program runs over all its maps, in its order.

  const std::string& name() const { return name_; }
  /// The arrays must outlive the plan's use of them: a destroyed array is refused, not read.
  void check_alive() const;
  /// The map's array slots: the program's solver (plan/program.hpp) reads them, moves values
  /// between them and plans their steps (replan_steps).
  std::vector<array_buffers>& slots() { return arrays_; }
  /// Every array's steps re-planned by `steps(u, slot u as this map alone plans it, slot u)`;
  /// then the predicted bytes and the text.
  template <class F>
  void replan_steps(F&& steps) {
    for (std::size_t u = 0; u < arrays_.size(); ++u) steps(u, plan_array(u), arrays_[u]);
    update_predictions();
    explain_ = make_explain();
  }
  /// refresh_generated(); whether it changed which arrays are generated in place.
  bool refresh_generated_changed() {
    const auto before = generated_;
    refresh_generated();
    return before != generated_;
  }
  /// Root holds array u's values now (the program gathered it): they are scattered from now
  /// on, not generated in place. Whether that changed anything.
  bool stop_generating(std::size_t u) {
    if (!generated_[u]) return false;
    generated_[u] = 0;
    return true;
  }
  /// The scatter's local steps: this rank's buffers (made once), then root's copies of the
  /// arrays it sends and the boxes generated in place or filled with an identity.
  void make_buffers() {
    if (!allocated_) allocate();
  }
  void prepare_inputs() {
    materialize_on_root(true);
    generate_local();
  }
  /// The scatter's collectives of this map's arrays (timed in its stats).
  void scatter_arrays();
  /// This map's scatter figures, which the program's moves from root into its blocks add to.
  phase_stats& scatter_stats() { return stats_.scatter; }
  /// The map on this rank's block (timed in its stats and in its profile's samples); when it
  /// started and ended (MPI_Wtime).
  std::pair<double, double> run_block_timed();
  /// One more execute() of the program (whether this block ran or an earlier map failed).
  void count_run() { ++stats_.runs; }
  /// Whether a failure of run_block() on some ranks must be agreed on right after it: the
  /// block reads data (indirect subscripts, data-dependent ranges) or runs on a device.
  bool agree_after_run() const { return run_reads_data_ || device_ != nullptr; }
  /// Gathers slot `ap` (an array this map writes) to root now; `phase` counts its bytes too.
  void gather_slot(array_buffers& ap, phase_stats& phase);
  /// backend::cuda: the device context, which a program's maps share (one mirror per block).
  const std::shared_ptr<device_context>& device() const { return device_; }
  void share_device(std::shared_ptr<device_context> d) { device_ = std::move(d); }

  /// This rank's seconds of the block in each recent execute(), for plan.profile().
  const sample_window& block_samples() const { return block_samples_; }
  /// Collective: the profile of this map's plan alone (its block in each execute(), the
  /// execute() with its agreement, the last one's timeline); the modelled seconds left at 0.
  plan_profile measured_profile() const;

  /// plan_batch: agree_generated() in two halves, for plans agreed together: this rank's votes
  /// per array (and root's WORKPART_LOG, last), and the decision from the minima over the
  /// ranks (throws alike everywhere).
  std::vector<int> generated_votes() const;
  void set_generated_from(const int* minima);
  /// Whether gather() logs the profile (WORKPART_LOG=info on root, agreed by every rank with
  /// the plan, so that the collective profile is never asked of some ranks only).
  bool logs_profile() const { return log_profile_; }
  /// The message of ranks that planned this map differently (root's, raised everywhere).
  std::string mismatch_text() const;
  /// finish_plan() with the group communicators of the batch's maps shared (split()).
  void finish_plan_sharing(std::map<std::vector<index_t>, boost::mpi::communicator>& splits);
  /// WORKPART_LOG=info: the line saying the plan was built in `seconds`.
  void log_planned(double seconds) const;

 protected:
  // ---------- what the typed plan (map_plan<Map>) plans with and provides ----------
  /// Two views of overlapping root memory in one map, one of them written: what the other
  /// reads would depend on the grid. Only root knows the buffers; agree() tells every rank.
  void check_views_disjoint() const;
  /// What this rank planned, for the check that every rank planned the same (the space's
  /// bounds per dimension).
  std::uint64_t fingerprint(const index_t* lo, const index_t* hi) const;
  /// The first collective: every rank raises the same error (f), or the ranks built the same
  /// plan; then the groups, the arrays' solutions and the text.
  void agree_and_finish(const failure& f, std::uint64_t print);
  void finish_plan();
  /// The map on this rank's block, on its buffers (no communication).
  virtual void run_block() = 0;
  /// Root runs the map on its global arrays (an in-place run()).
  virtual void run_on_root() = 0;
  /// Root: the data-dependent ranges the plan was cut to still fit root's values.
  virtual void check_inspection() {}

  /// Binds this rank's buffers to a backend's executor (exec/backend.hpp).
  template <class Executor>
  void bind(Executor& ex) {
    for (auto& ap : arrays_) {
      const std::size_t es = ap.use.elem_size;
      const auto& rb = ap.rbox[rank_];
      const auto& wb = ap.wbox[rank_];
      if (ap.use.read && !ap.reads_own_writes)
        ex.add_read(ap.use.id, view_of(ap.use, rb, read_data(ap)), rb.size() * es);
      if (ap.use.written)
        ex.add_write(ap.use.id, view_of(ap.use, wb, buf_data(ap.wbuf)), wb.size() * es);
      // a left side's array read nowhere (the right side never binds it), or read from what
      // this rank wrote before: reads see the write buffer
      if (!ap.use.read || ap.reads_own_writes)
        ex.add_read(ap.use.id, view_of(ap.use, wb, buf_data(ap.wbuf)), wb.size() * es);
    }
  }
  /// Whether a statement writing `lhs` reads the other buffers (else it reads its own write
  /// buffer and needs the one-process snapshot semantics).
  bool separate_buffers(const void* lhs) const {
    for (const auto& ap : arrays_)
      if (ap.reads_own_writes && ap.use.id == lhs) return false;
    return true;
  }

 private:
  /// A moved-from plan holds nothing to run.
  void require_live(const char* what) const { live_.require(what); }
  /// Runs the local part of a phase (f), then agrees with every rank on whether it failed.
  template <class F>
  void local_then_agree(F&& f) {
    workpart::detail::local_then_agree(comm_, f);
  }
  /// Root's copy of every array a phase exchanges with root, made before the phase's
  /// collectives (allocating it, or generating it from init(), may fail on root alone).
  void materialize_on_root(bool for_scatter);
  /// Root's whole array (made on first use), nullptr on the other ranks.
  void* root_data(const array_use& u) const { return rank_ == 0 ? u.root_data() : nullptr; }
  static bool from_root(step_op op) {
    return op == step_op::scatterv || op == step_op::scatterv_part;
  }
  static index_t elements(const array_use& u) {
    index_t n = 1;
    for (int a = 0; a < u.rank; ++a) n *= u.shape[a];
    return n;
  }
  /// Fills this rank's boxes from init() where the plan generates them in place, and the
  /// write buffers of +=, max_into and min_into with the identity.
  void generate_local();

  /// Root may have gathered an init() array since the plan was built (another plan's
  /// gather()), or made its copy by asking for data(): from then on its values are scattered.
  void refresh_generated();
  void scatter_agreed();

  /// run() of a root-only plan: root runs the map on its global arrays; every rank learns of
  /// a failure (a data-dependent subscript) as in execute().
  void run_in_place();
  /// plan.profile()'s figures of an execute() (or in-place run()) of this plan alone: its
  /// block from `start` to `block_end`, then its agreement until `end` (MPI_Wtime).
  void note_execute(double start, double block_end, double end);

  // ---------- planning (no communication) ----------

  /// Per array: 1 when every rank generates its boxes from init() in place (root holds no copy
  /// of the array), 0 when root's values are sent. Root decides; one Allreduce tells every rank
  /// alike, and also whether every rank holds the generator, so that an init() called on some
  /// ranks only is an error on all of them before any data moves.
  std::vector<char> agree_generated() const { return generated_from(agreed_votes().data()); }
  std::vector<int> agreed_votes() const;
  std::vector<char> generated_from(const int* minima) const;

  void build_arrays() {
    for (std::size_t u = 0; u < cons_.arrays.size(); ++u) arrays_.push_back(plan_array(u));
    update_predictions();
  }

  void update_predictions();

  /// The solver's view of this plan's arrays.
  solutions solution_views() const;
  /// Array u as the solver plans it (no communication).
  array_buffers plan_array(std::size_t u) const;
  std::string make_explain() const;

  // ---------- first collectives: group communicators ----------
  void make_groups();
  /// The group communicators of ranks that hold the same part (MPI_Comm_split; collective).
  /// With `splits_` set (a program's maps planned together, plan_batch), a split of the same
  /// grid, dimensions and holders as an earlier map's shares that map's communicator: the
  /// same members, and every use of it completes inside one call, in program order.
  void split(const std::vector<int>& dims, const std::vector<box>& boxes,
             boost::mpi::communicator& out, bool& leader);

  /// Whether no rank but root executes or holds any part of any array.
  bool only_root_works() const;

  void allocate();

  template <class A>
  array_buffers& find(const A& a, const char* what) {
    for (auto& ap : arrays_)
      if (ap.use.id == static_cast<const void*>(&a)) return ap;
    throw plan_error(std::string("plan.") + what + "(" + a.name() + "): map '" + name_ +
                     "' does not use array '" + a.name() + "'");
  }

  // ---------- the collectives (comm/collectives/*.hpp) ----------
  static void count(phase_stats& ps, const moved& m) {
    ps.bytes_sent += m.sent;
    ps.bytes_received += m.received;
  }
  /// The group leaders of an array's boxes along `group` dims: the ranks root exchanges with.
  std::vector<char> leaders(const std::vector<int>& group) const {
    std::vector<char> take(size_, 0);
    for (int r = 0; r < int(grid_.product()); ++r) take[r] = group_key(grid_, r, group).second == 0;
    return take;
  }

  void scatter_reads(array_buffers& ap);

  /// Old values of an output onto the ranks that combine into them (the identity fill and
  /// generated old values were done by generate_local()).
  void init_writes(array_buffers& ap);

  /// Before a repeated execute(): a map that reads an array it writes must read the current
  /// values. Where each rank's own writes cover its reads and hold whole values, a local copy
  /// does it; otherwise the array goes to root and back (counted in the phases' bytes).
  void refresh_own_inputs();
  /// Copies box b from this rank's write buffer into its read buffer.
  void copy_box(array_buffers& ap, const box& b);

  void gather_writes(array_buffers& ap);
  /// Array u's collectives again, after what root holds of it changed (no communication).
  void replan_transfers(std::size_t u);
  void gather_writes_now(array_buffers& ap);

  template <class T>
  static void combine_box(T* g, const T* src, const box& b, const array_use& u) {
    index_t st[max_rank];
    index_t s = 1;
    for (int a = u.rank - 1; a >= 0; --a) {
      st[a] = s;
      s *= u.shape[a];
    }
    index_t c[max_rank];
    for (int a = 0; a < u.rank; ++a) c[a] = b.lo[a];
    const index_t n = b.size();
    for (index_t e = 0; e < n; ++e) {
      index_t off = 0;
      for (int a = 0; a < u.rank; ++a) off += c[a] * st[a];
      switch (u.write_kind) {
        case combine::max:
          g[off] = op_max::apply(g[off], src[e]);
          break;
        case combine::min:
          g[off] = op_min::apply(g[off], src[e]);
          break;
        default:
          g[off] = T(g[off] + src[e]);
          break;
      }
      for (int a = u.rank - 1; a >= 0; --a) {
        if (++c[a] < b.hi[a]) break;
        c[a] = b.lo[a];
      }
    }
  }

  // ---------- state ----------
 protected:           // what map_plan plans into and runs with
  std::string name_;  // the map's
  grid_shape grid_;
  boost::mpi::communicator comm_;
  int rank_ = 0, size_ = 1;
  map_constraints cons_;
  range_inspection inspection_;  // data-dependent ranges as root found them
  rank_block block_;
  plan_stats stats_;
  // Whether run_block() can fail on some ranks only from the values it reads (indirect
  // subscripts, data-dependent ranges) or on a device: a program agrees right after such a map.
  bool run_reads_data_ = true;
  std::shared_ptr<device_context> device_;  // backend::cuda only (a program's maps share one)
  std::string local_text_;  // explain(): how each rank runs its block (set by the typed plan)

 private:
  std::string space_text_;  // its space in words
  int n_ = 0;               // its space's rank
  std::vector<array_buffers> arrays_;
  std::string explain_;
  std::vector<char> generated_;
  /// The splits made so far by the maps planned with this one (plan_batch::finish), by their
  /// grid, dimensions and holders; null: every split is made anew.
  std::map<std::vector<index_t>, boost::mpi::communicator>* splits_ = nullptr;
  bool stale_reads_ = false;
  bool root_only_ = false;       // run() works in place on root's arrays
  bool buffers_behind_ = false;  // an in-place run() left root's arrays ahead of the buffers
  std::string failed_;           // the phase that failed last ("execute() failed"), until scatter
  live_flag live_;               // false in a moved-from plan
  bool allocated_ = false;
  scratch_buffer scratch_;       // the gather's reduce onto this rank (reserved with the buffers)
  bool scattered_ = false;       // execute() before any scatter() scatters first
  bool log_profile_ = false;     // gather() logs the profile (set_generated_from)
  sample_window block_samples_;  // plan.profile(): the block's seconds per execute()
  sample_window step_samples_;   // an execute()'s, its agreement included (alone)
  std::vector<timeline_mark> marks_;  // the last execute() (alone): the block, the wait
};

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/map_runtime.ipp"
#include "impl/map_pictures.ipp"
#endif
