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

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/operations.hpp>
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../exec/options.hpp"
#include "agreement.hpp"
#include "array_buffers.hpp"
#include "collectives/bcast.hpp"
#include "collectives/gatherv.hpp"
#include "collectives/reduce.hpp"
#include "collectives/root_exchange.hpp"
#include "device_staging.hpp"
#include "phase_scope.hpp"
#include "inspect.hpp"

namespace workpart::detail {

/// A map's plan less what needs the map's type: built by map_plan<Map>, which extracts the
/// constraints and provides run_block(), run_on_root() and check_inspection(); driven phase by
/// phase by program_plan through map_plan::runtime(). Members are public: this is the
/// library's own interface between the two plans (users see map_plan's API only).
class map_runtime {
 public:
  /// Checks that this rank belongs to the communicator (the typed plan then plans the map).
  map_runtime(std::string name, int space_rank, std::string space_text, const grid_shape& g,
              const boost::mpi::communicator& comm)
      : name_(std::move(name)),
        space_text_(std::move(space_text)),
        n_(space_rank),
        grid_(g),
        comm_(comm) {
    if (!comm_)
      throw plan_error(
          "wp::distribute: this rank is not in the context's communicator; build "
          "the plan only on the ranks of the communicator given to wp::context");
    rank_ = comm_.rank();
    size_ = comm_.size();
  }
  map_runtime(map_runtime&&) = default;
  map_runtime& operator=(map_runtime&&) = default;
  virtual ~map_runtime() = default;

  /// Scatter inputs from root, execute, leave outputs on root. When no rank but root holds
  /// any part of any array (one rank, or a grid of one), root runs the map on its arrays in
  /// place, as wp::run does: nothing is copied.
  void run() {
    require_live("run");
    refresh_generated_timed();
    if (runs_in_place()) {
      run_in_place();
      return;
    }
    scatter_agreed();
    execute();
    gather();
  }

  /// Moves every input to the ranks (root's values, or generated in place by init()).
  void scatter() {
    require_live("scatter");
    refresh_generated_timed();
    scatter_agreed();
  }

  /// refresh_generated() (one Allreduce), counted in the scatter phase.
  void refresh_generated_timed() {
    with_comm_errors([&] {
      const phase_scope ps(stats_.scatter);
      refresh_generated();
    });
  }

  /// Whether run() works on root's arrays in place (no rank but root holds any part of them).
  /// (As of the last scatter or run: an init() input that root holds no copy of is generated
  /// on the ranks instead.)
  bool runs_in_place() const {
    return root_only_ &&
           std::none_of(generated_.begin(), generated_.end(), [](char g) { return g; });
  }

  /// A moved-from plan holds nothing to run.
  void require_live(const char* what) const { live_.require(what); }
  /// The arrays must outlive the plan's use of them: a destroyed array is refused, not read.
  void check_alive() const {
    for (const auto& use : cons_.arrays)
      if (use.alive && !*use.alive)
        throw plan_error("map '" + name_ + "': array '" + use.name +
                         "' was destroyed "
                         "while a plan of the map still uses it; keep every array alive as long "
                         "as the maps and plans that use it");
  }
  /// Two views of overlapping root memory in one map, one of them written: what the other
  /// reads would depend on the grid. Only root knows the buffers; agree() tells every rank.
  void check_views_disjoint() const {
    const auto& a = cons_.arrays;
    for (std::size_t x = 0; x < a.size(); ++x)
      for (std::size_t y = x + 1; y < a.size(); ++y) {
        if (!a[x].view_begin || !a[y].view_begin || !(a[x].written || a[y].written)) continue;
        const char* bx = static_cast<const char*>(a[x].view_begin);
        const char* by = static_cast<const char*>(a[y].view_begin);
        if (bx < by + a[y].view_bytes && by < bx + a[x].view_bytes)
          throw plan_error("map '" + name_ + "': arrays '" + a[x].name + "' and '" + a[y].name +
                           "' are views of overlapping memory on root, and the map "
                           "writes " +
                           (a[x].written ? "'" + a[x].name + "'" : "'" + a[y].name + "'") +
                           "; what the other reads would depend on the grid. Use one array for "
                           "both, or copy one of them first");
      }
  }
  /// Runs the local part of a phase (f), then agrees with every rank on whether it failed.
  template <class F>
  void local_then_agree(F&& f) {
    workpart::detail::local_then_agree(comm_, f);
  }
  /// Root's copy of every array a phase exchanges with root, made before the phase's
  /// collectives (allocating it, or generating it from init(), may fail on root alone).
  void materialize_on_root(bool for_scatter) {
    check_alive();
    if (rank_ != 0) return;
    for (std::size_t u = 0; u < arrays_.size(); ++u) {
      const auto& ap = arrays_[u];
      // what the scatter sends from root (a program leaves out what earlier maps provide)
      const bool needed =
          for_scatter
              ? ((ap.use.read && !ap.in_steps.empty() && from_root(ap.in_steps.front().op)) ||
                 (ap.use.written && ap.w_init_old && !ap.init_steps.empty() &&
                  from_root(ap.init_steps.front().op)))
              : ap.use.written;
      if (!needed) continue;
      try {
        ap.use.root_data();
      } catch (const error&) {
        throw;
      } catch (const std::exception& e) {
        throw error("map '" + name_ +
                    "': root could not make its copy of "
                    "array '" +
                    ap.use.name + "' (" + std::to_string(elements(ap.use)) +
                    " elements): " + e.what());
      }
    }
  }
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
  void generate_local() {
    for (std::size_t u = 0; u < arrays_.size(); ++u) {
      auto& ap = arrays_[u];
      try {
        if (ap.use.read && !ap.in_steps.empty() && ap.in_steps.front().op == step_op::generate &&
            !ap.rbox[rank_].empty())
          ap.use.generate(read_data(ap), ap.rbox[rank_]);
        if (!ap.use.written) continue;
        const auto& b = ap.wbox[rank_];
        void* buf = buf_data(ap.wbuf);
        if (ap.use.write_kind != combine::assign && b.size() > 0)
          with_elem(ap.use.elem,
                    [&](auto t) { fill_identity<decltype(t)>(buf, b.size(), ap.use.write_kind); });
        if (ap.w_init_old && !ap.init_steps.empty() &&
            ap.init_steps.front().op == step_op::generate && b.size() > 0 && ap.wleader)
          ap.use.generate(buf, b);
      } catch (const error&) {
        throw;
      } catch (const std::exception& e) {
        throw error("map '" + name_ + "': init() of array '" + ap.use.name +
                    "' failed while generating this rank's part: " + e.what());
      }
    }
  }

  /// Root may have gathered an init() array since the plan was built (another plan's
  /// gather()), or made its copy by asking for data(): from then on its values are scattered.
  void refresh_generated() {
    const std::vector<char> now = agree_generated();
    for (std::size_t u = 0; u < now.size(); ++u)
      if (now[u] != generated_[u]) {
        generated_[u] = now[u];
        replan_transfers(u);
      }
  }
  void scatter_agreed() {
    const phase_scope ps(stats_.scatter);  // (blocks_to_host counts its device copies itself)
    // Until this scatter completes the ranks' buffers hold nothing to gather.
    scattered_ = false;
    failed_ = "scatter() failed";
    local_then_agree([&] {
      check_alive();
      blocks_to_host(device_.get(),
                     stats_.scatter);  // what the scatter leaves unwritten stays current
      if (rank_ == 0 && !inspection_.empty()) check_inspection();  // the values still fit the plan
      if (!allocated_) allocate();
      materialize_on_root(true);
      generate_local();
    });
    with_comm_errors([&] {
      for (auto& ap : arrays_) {
        if (ap.use.read) scatter_reads(ap);
        if (ap.use.written) init_writes(ap);
      }
    });
    stale_reads_ = false;
    buffers_behind_ = false;
    failed_.clear();
    scattered_ = true;
  }

  /// run() of a root-only plan: root runs the map on its global arrays; every rank learns of
  /// a failure (a data-dependent subscript) as in execute().
  void run_in_place() {
    failure f;
    {
      const phase_scope ps(stats_.execute);
      if (rank_ == 0)
        f = capture([&] {
          materialize_on_root(true);
          materialize_on_root(false);
          run_on_root();
        });
    }
    // Root's arrays are ahead of the buffers even after a failure: what the statements wrote
    // before it stays written, as with wp::run (the distributed path leaves root untouched).
    buffers_behind_ = true;
    ++stats_.runs;
    with_comm_errors([&] { agree(comm_, f, 0, name_rank::always); });
  }

  /// Runs the map on this rank's block (again on the current values if called again).
  void execute() {
    require_live("execute");
    // Before any scatter, after an in-place run(), or after a failed phase: the current
    // values are root's.
    if (buffers_behind_ || !scattered_) scatter();
    if (stale_reads_) refresh_own_inputs();
    failure f;
    {
      const phase_scope ps(stats_.execute);  // (run_block counts its device copies itself)
      f = capture([&] { run_block(); });
    }
    ++stats_.runs;
    // A failure (on any rank) leaves partial results in the blocks: nothing to gather, and
    // the next execute() starts from root's values again.
    failed_ = "execute() failed";
    scattered_ = false;
    with_comm_errors([&] { agree(comm_, f, 0, name_rank::always); });
    failed_.clear();
    scattered_ = true;
    for (const auto& ap : arrays_)
      if (ap.use.read && ap.use.written) stale_reads_ = true;
  }

  /// Leaves the final values of every written array on root.
  void gather() {
    require_live("gather");
    std::vector<array_buffers*> all;
    for (auto& ap : arrays_)
      if (ap.use.written) all.push_back(&ap);
    gather_these(all);
  }
  /// Gathers only the named arrays.
  template <class... A>
  void gather(const A&... arrs) {
    require_live("gather");
    // find(): an error for an array the map does not use, before anything moves
    const std::vector<array_buffers*> which{&find(arrs, "gather")...};
    gather_these(which);
  }
  /// The gather of these arrays (those the map writes), when the blocks hold results.
  void gather_these(const std::vector<array_buffers*>& which) {
    if (!ready_to_gather()) return;
    const phase_scope ps(stats_.gather);
    local_then_agree([&] {
      check_alive();
      blocks_to_host(device_.get(), stats_.gather);  // combining partials writes host blocks
      materialize_on_root(false);
    });
    with_comm_errors([&] {
      for (array_buffers* ap : which)
        if (ap->use.written) gather_writes(*ap);
    });
  }

  /// Whether the ranks' blocks hold results to gather. Nothing executed yet, or an in-place
  /// run() left the values on root already: nothing to do. After a failed execute() the
  /// blocks hold partial results: refused (the same on every rank: failures are agreed).
  bool ready_to_gather() const {
    if (!failed_.empty())
      throw plan_error("plan for map '" + name_ + "': the last " + failed_ +
                       ", so the "
                       "ranks' blocks hold partial results; gather() copies nothing of them to "
                       "root (root's arrays are unchanged). Call scatter() or run() to start "
                       "again");
    return !(buffers_behind_ || !scattered_);
  }

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

  // ---------- planning (no communication) ----------

  /// Per array: 1 when every rank generates its boxes from init() in place (root holds no copy
  /// of the array), 0 when root's values are sent. Root decides; one Allreduce tells every rank
  /// alike, and also whether every rank holds the generator, so that an init() called on some
  /// ranks only is an error on all of them before any data moves.
  std::vector<char> agree_generated() const {
    // Per array, minima over the ranks of: root's decision; whether every rank holding a box
    // can generate it; the init() call count and its negation (min == max: all called alike).
    // The fifth: whether the array still exists on every rank (its hooks are not called
    // otherwise): a destroyed array is the same plan_error everywhere, not a use after free.
    constexpr int K = 5;
    constexpr int none = std::numeric_limits<int>::max();
    const std::size_t n = cons_.arrays.size();
    std::vector<int> mine(K * n), all(K * n);
    for (std::size_t u = 0; u < n; ++u) {
      const auto& use = cons_.arrays[u];
      const bool alive = !use.alive || *use.alive;
      const bool gen = alive && use.generated_in_place();  // elsewhere than root: has init()
      const bool holds = !cons_.read[u][rank_].empty() || !cons_.write[u][rank_].empty();
      const int calls = alive ? use.init_calls() : 0;
      mine[K * u] = rank_ == 0 ? gen : 1;
      mine[K * u + 1] = rank_ == 0 || !holds ? 1 : gen;
      mine[K * u + 2] = holds || rank_ == 0 ? calls : none;
      mine[K * u + 3] = holds || rank_ == 0 ? -calls : none;
      mine[K * u + 4] = alive;
    }
    if (n > 0)
      boost::mpi::all_reduce(comm_, mine.data(), int(K * n), all.data(),
                             boost::mpi::minimum<int>());
    for (std::size_t u = 0; u < n; ++u)
      if (!all[K * u + 4])
        throw plan_error("map '" + name_ + "': array '" + cons_.arrays[u].name +
                         "' was "
                         "destroyed while a plan of the map still uses it; keep every array "
                         "alive as long as the maps and plans that use it");
    std::vector<char> out(n);
    for (std::size_t u = 0; u < n; ++u) {
      const int* a = &all[K * u];
      out[u] = char(a[0]);
      if (!a[0]) continue;
      const std::string head = "map '" + name_ + "': array '" + cons_.arrays[u].name + "' ";
      if (!a[1])
        throw plan_error(head +
                         "has init() on root but not on every rank, and root holds no "
                         "copy of it; call init() on every rank (the same generator), or fill "
                         "root's data() instead");
      if (a[2] != -a[3])
        throw plan_error(head + "had init() called " + std::to_string(-a[3]) +
                         " time(s) on "
                         "some ranks and " +
                         std::to_string(a[2]) +
                         " on others; call init() "
                         "on every rank alike (the ranks generate their parts in place)");
    }
    return out;
  }

  void build_arrays() {
    for (std::size_t u = 0; u < cons_.arrays.size(); ++u) arrays_.push_back(plan_array(u));
    update_predictions();
  }

  void update_predictions() {
    stats_.predicted_scatter_sent = predicted_bytes(rank_, true, true);
    stats_.predicted_scatter_received = predicted_bytes(rank_, true, false);
    stats_.predicted_gather_sent = predicted_bytes(rank_, false, true);
    stats_.predicted_gather_received = predicted_bytes(rank_, false, false);
  }

  /// The solver's view of this plan's arrays.
  solutions solution_views() const {
    solutions v;
    v.reserve(arrays_.size());
    for (const auto& ap : arrays_) v.push_back(&ap);
    return v;
  }
  /// Array u as the solver plans it (no communication).
  array_buffers plan_array(std::size_t u) const {
    array_buffers ap;
    static_cast<array_solution&>(ap) = solve_array(cons_.arrays[u], cons_.read[u], cons_.write[u],
                                                   grid_, size_, generated_[u] != 0);
    return ap;
  }
  // ---------- what the typed plan (map_plan<Map>) provides ----------
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

  /// What this rank planned, for the check that every rank planned the same (the space's
  /// bounds per dimension).
  std::uint64_t fingerprint(const index_t* lo, const index_t* hi) const {
    fingerprint_hash h;
    h.add(name_).add(n_).add(size_).add(grid_.rank());
    for (index_t g : grid_.dims) h.add(g);
    for (int d = 0; d < n_; ++d) h.add(lo[d]).add(hi[d]);
    for (const auto& u : cons_.arrays) {
      h.add(u.name)
          .add(u.rank)
          .add(u.elem)
          .add(int(u.read))
          .add(int(u.written))
          .add(int(u.write_kind));
      for (int a = 0; a < u.rank; ++a) h.add(u.shape[a]);
      for (const auto& t : u.read_texts) h.add(t);
      for (const auto& t : u.write_texts) h.add(t);
    }
    return h.h;
  }
  /// The first collective: every rank raises the same error (f), or the ranks built the same
  /// plan; then the groups, the arrays' solutions and the text.
  void agree_and_finish(const failure& f, std::uint64_t print) {
    with_comm_errors([&] {
      agree(
          comm_, f, print, name_rank::when_partial,
          "map '" + name_ +
              "': the ranks did not build the same map and grid (the space, the "
              "statements, the arrays' shapes or element types, or the grid differ between ranks; "
              "rank 0 has space " +
              space_text_ + " and grid " + grid_.str() +
              "); build every map "
              "and plan alike on every rank");
      generated_ = agree_generated();
    });
  }
  void finish_plan() {
    with_comm_errors([&] {
      build_arrays();
      root_only_ = !device_ && only_root_works();  // the device backend always runs on the device
      explain_ = make_explain();
      make_groups();
    });
  }
  std::string make_explain() const {
    std::string text = explain_text(name_, grid_, size_, space_text_, n_, cons_.blocks, local_text_,
                                    solution_views(), runs_in_place());
    for (std::size_t k = 0; k < inspection_.size(); ++k) {
      text += "  data-dependent range " + std::to_string(k) + ", inspected on root:";
      for (std::size_t r = 0; r < inspection_[k].size(); ++r) {
        const auto& ir = inspection_[k][r];
        text +=
            " r" + std::to_string(r) + " " +
            (!ir.known        ? std::string("whole")
             : ir.hi <= ir.lo ? std::string("[]")
                              : "[" + std::to_string(ir.lo) + ", " + std::to_string(ir.hi) + ")");
      }
      text += "\n";
    }
    return text;
  }

  // ---------- first collectives: group communicators ----------
  void make_groups() {
    for (auto& ap : arrays_) {
      if (ap.use.read && !ap.rgroup.empty())
        split(ap.rgroup, ap.rbox, ap.rcomm, ap.rleader);
      else
        ap.rleader = true;
      if (ap.use.written && !ap.wgroup.empty())
        split(ap.wgroup, ap.wbox, ap.wcomm, ap.wleader);
      else
        ap.wleader = true;
    }
  }
  void split(const std::vector<int>& dims, const std::vector<box>& boxes,
             boost::mpi::communicator& out, bool& leader) {
    int color = MPI_UNDEFINED, key = 0;
    if (rank_ < int(grid_.product()) && !boxes[rank_].empty()) {
      auto ck = group_key(grid_, rank_, dims);
      color = ck.first;
      key = ck.second;
    }
    leader = key == 0;
    MPI_Comm c;
    WORKPART_MPI_CHECK(MPI_Comm_split, (comm_, color, key, &c));
    if (c != MPI_COMM_NULL) out = boost::mpi::communicator(c, boost::mpi::comm_take_ownership);
  }

  /// Whether no rank but root executes or holds any part of any array.
  bool only_root_works() const {
    for (int r = 1; r < size_; ++r) {
      if (!cons_.blocks[r].empty(n_)) return false;
      for (const auto& ap : arrays_)
        if (!ap.rbox[r].empty() || !ap.wbox[r].empty()) return false;
    }
    return true;
  }

  void allocate() {
    allocated_ = true;
    const host_memory mem = device_ ? device_->host_allocator() : host_memory{};
    for (auto& ap : arrays_) {
      if (ap.use.read && !ap.reads_own_writes && !ap.shares_reads)
        alloc(ap.rbuf, ap.rbox[rank_].size(), ap.use.elem_size, mem);
      if (ap.use.written) alloc(ap.wbuf, ap.wbox[rank_].size(), ap.use.elem_size, mem);
    }
  }

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

  void scatter_reads(array_buffers& ap) {
    // only what root sends: not what the map's own earlier statements fill (none), what
    // generate_local() made (generate), or what a program's earlier maps provide (none)
    if (ap.in_steps.empty() || ap.in_steps.front().op != step_op::scatterv) return;
    const auto& b = ap.rbox[rank_];
    count(stats_.scatter, scatterv_boxes(comm_, ap.use, ap.rbox, leaders(ap.rgroup), read_data(ap),
                                         root_data(ap.use)));
    if (!ap.rgroup.empty() && ap.rcomm && !b.empty())
      count(stats_.scatter, bcast_box(ap.rcomm, ap.use.elem, read_data(ap), b.size()));
  }

  /// Old values of an output onto the ranks that combine into them (the identity fill and
  /// generated old values were done by generate_local()).
  void init_writes(array_buffers& ap) {
    void* buf = buf_data(ap.wbuf);
    if (!ap.w_init_old || ap.init_steps.empty() || ap.init_steps.front().op != step_op::scatterv)
      return;
    count(stats_.scatter,
          scatterv_boxes(comm_, ap.use, ap.wbox, leaders(ap.wgroup), buf, root_data(ap.use)));
  }

  /// Before a repeated execute(): a map that reads an array it writes must read the current
  /// values. Where each rank's own writes cover its reads and hold whole values, a local copy
  /// does it; otherwise the array goes to root and back (counted in the phases' bytes).
  void refresh_own_inputs() {
    // Per array: this rank's own writes cover its reads (a local copy), or through root. The
    // same on every rank (it depends on every rank's boxes).
    std::vector<char> via_root(arrays_.size(), 0);
    bool any_via_root = false;
    for (std::size_t u = 0; u < arrays_.size(); ++u) {
      const auto& ap = arrays_[u];
      if (!(ap.use.read && ap.use.written) || ap.reads_own_writes) continue;
      bool local = ap.wgroup.empty() && !ap.w_combine_on_root;
      for (int r = 0; r < size_ && local; ++r)
        local = ap.rbox[r].empty() || box::intersect(ap.rbox[r], ap.wbox[r]) == ap.rbox[r];
      via_root[u] = !local;
      any_via_root = any_via_root || !local;
    }
    local_then_agree([&] {
      if (any_via_root) {  // the device backend: what goes through root comes down first
        blocks_to_host(device_.get(), stats_.execute);
      }
      materialize_on_root(false);  // arrays that go through root
    });
    stale_reads_ = false;
    for (std::size_t u = 0; u < arrays_.size(); ++u) {
      auto& ap = arrays_[u];
      if (!(ap.use.read && ap.use.written) || ap.reads_own_writes) continue;
      if (!via_root[u]) {
        copy_box(ap, ap.rbox[rank_]);
        continue;
      }
      {
        const phase_scope ps(stats_.gather);
        gather_writes(ap);
      }
      const phase_scope ps(stats_.scatter);
      scatter_reads(ap);
    }
  }
  /// Copies box b from this rank's write buffer into its read buffer.
  void copy_box(array_buffers& ap, const box& b) {
    if (b.empty()) return;
    const auto& rb = ap.rbox[rank_];
    const auto& wb = ap.wbox[rank_];
    if (device_) {  // on the device where both blocks live there, else on the host
      bool done = false;
      {
        const phase_scope ps(phase_scope::untimed, stats_.execute, device_.get());
        done =
            copy_box_on_device(*device_, ap.use, {read_data(ap), rb}, {buf_data(ap.wbuf), wb}, b);
      }
      if (done) return;
    }
    const raw_view rv = view_of(ap.use, rb, read_data(ap));
    const raw_view wv = view_of(ap.use, wb, buf_data(ap.wbuf));
    const std::size_t es = ap.use.elem_size;
    index_t c[max_rank];
    for (int a = 0; a < ap.use.rank; ++a) c[a] = b.lo[a];
    for (index_t e = 0, n = b.size(); e < n; ++e) {
      index_t ro = 0, wo = 0;
      for (int a = 0; a < ap.use.rank; ++a) {
        ro += (c[a] - rv.origin[a]) * rv.stride[a];
        wo += (c[a] - wv.origin[a]) * wv.stride[a];
      }
      std::memcpy(static_cast<char*>(rv.data) + ro * es,
                  static_cast<const char*>(wv.data) + wo * es, es);
      for (int a = ap.use.rank - 1; a >= 0; --a) {
        if (++c[a] < b.hi[a]) break;
        c[a] = b.lo[a];
      }
    }
  }

  void gather_writes(array_buffers& ap) {
    if (!ap.use.written) return;
    gather_writes_now(ap);
    // Root now holds this array: later scatters send root's values instead of init()'s.
    const std::size_t u = std::size_t(&ap - arrays_.data());
    if (generated_[u]) {
      generated_[u] = 0;
      replan_transfers(u);
    }
  }
  /// Array u's collectives again, after what root holds of it changed (no communication).
  void replan_transfers(std::size_t u) {
    array_buffers fresh = plan_array(u);
    auto& ap = arrays_[u];
    ap.in_steps = std::move(fresh.in_steps);
    ap.init_steps = std::move(fresh.init_steps);
    ap.out_steps = std::move(fresh.out_steps);
    explain_ = make_explain();
    update_predictions();
  }
  void gather_writes_now(array_buffers& ap) {
    const auto& u = ap.use;
    const index_t n = ap.wbox[rank_].size();
    void* buf = buf_data(ap.wbuf);
    auto restart = [&] {  // this partial is now in the leader's total: the next execute()
      with_elem(u.elem, [&](auto t) {  // starts from the identity
        fill_identity<decltype(t)>(buf, n, u.write_kind);
      });
    };
    if (!ap.wgroup.empty() && ap.wcomm && n > 0) {
      count(stats_.gather, reduce_onto_leader(ap.wcomm, u.elem, u.write_kind, buf, n));
      if (ap.wcomm.rank() != 0) restart();
    }
    const std::vector<char> take = leaders(ap.wgroup);
    if (!ap.w_combine_on_root) {
      count(stats_.gather, gatherv_boxes(comm_, u, ap.wbox, take, buf, root_data(u)));
      return;
    }
    // Leaders' boxes overlap: gather them contiguously, root combines into its values.
    std::vector<int> counts(size_, 0), displs(size_, 0);
    index_t total = 0;
    for (int r = 0; r < size_; ++r) {
      if (take[r]) counts[r] = int(ap.wbox[r].size());  // validate(): every box fits an int
      displs[r] = to_int(total, "the gathered boxes of array '" + u.name + "'");
      total += counts[r];
    }
    to_int(total, "the gathered boxes of array '" + u.name + "'");
    buffer all;
    // root's receive buffer may not fit: agreed before the gather starts
    local_then_agree([&] {
      if (rank_ == 0) alloc(all, total, u.elem_size);
    });
    count(stats_.gather, gatherv_contiguous(comm_, u.elem, buf, counts, displs, buf_data(all)));
    if (rank_ == 0) {
      with_elem(u.elem, [&](auto t) {
        using T = decltype(t);
        T* g = static_cast<T*>(u.root_data());
        const T* src = static_cast<const T*>(buf_data(all));
        for (int r = 0; r < size_; ++r)
          if (counts[r] > 0) combine_box<T>(g, src + displs[r], ap.wbox[r], u);
      });
    }
    if (take[rank_] && n > 0) restart();
  }

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

  std::string name_;        // the map's
  std::string space_text_;  // its space in words
  int n_ = 0;               // its space's rank
  grid_shape grid_;
  boost::mpi::communicator comm_;
  int rank_ = 0, size_ = 1;
  map_constraints cons_;
  range_inspection inspection_;  // data-dependent ranges as root found them
  rank_block block_;
  std::vector<array_buffers> arrays_;
  std::string explain_;
  plan_stats stats_;
  std::vector<char> generated_;
  bool stale_reads_ = false;
  bool root_only_ = false;       // run() works in place on root's arrays
  bool buffers_behind_ = false;  // an in-place run() left root's arrays ahead of the buffers
  std::string failed_;           // the phase that failed last ("execute() failed"), until scatter
  live_flag live_;               // false in a moved-from plan
  bool allocated_ = false;
  bool scattered_ = false;                  // execute() before any scatter() scatters first
  std::shared_ptr<device_context> device_;  // backend::cuda only (a program's maps share one)
  std::string local_text_;  // explain(): how each rank runs its block (set by the typed plan)
};

}  // namespace workpart::detail
