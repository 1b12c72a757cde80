#pragma once
/// \file map_runtime.ipp
/// The bodies of map_runtime.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/operations.hpp>

#include "../map_runtime.hpp"

namespace workpart::detail {

WORKPART_DECL void map_runtime::run() {
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

WORKPART_DECL void map_runtime::refresh_generated_timed() {
  with_comm_errors([&] {
    const phase_scope ps(stats_.scatter);
    refresh_generated();
  });
}

WORKPART_DECL void map_runtime::check_alive() const {
  for (const auto& use : cons_.arrays)
    if (use.alive && !*use.alive)
      throw plan_error("map '" + name_ + "': array '" + use.name +
                       "' was destroyed "
                       "while a plan of the map still uses it; keep every array alive as long "
                       "as the maps and plans that use it");
}

WORKPART_DECL void map_runtime::check_views_disjoint() const {
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

WORKPART_DECL void map_runtime::materialize_on_root(bool for_scatter) {
  check_alive();
  if (rank_ != 0) return;
  for (std::size_t u = 0; u < arrays_.size(); ++u) {
    const auto& ap = arrays_[u];
    // what the scatter sends from root (a program leaves out what earlier maps provide)
    const bool needed =
        for_scatter ? ((ap.use.read && !ap.in_steps.empty() && from_root(ap.in_steps.front().op)) ||
                       (ap.use.written && !ap.init_steps.empty() &&
                        (ap.w_init_old ? from_root(ap.init_steps.front().op)
                                       : ap.init_steps.front().op == step_op::scatterv_part)))
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

WORKPART_DECL void map_runtime::generate_local() {
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

WORKPART_DECL void map_runtime::refresh_generated() {
  const std::vector<char> now = agree_generated();
  for (std::size_t u = 0; u < now.size(); ++u)
    if (now[u] != generated_[u]) {
      generated_[u] = now[u];
      replan_transfers(u);
    }
}

WORKPART_DECL void map_runtime::scatter_agreed() {
  std::optional<log_scope> log;  // WORKPART_LOG=info (runtime/log.hpp)
  if (log_on()) log.emplace(rank_, "map '" + name_ + "': scatter (rank 0)");
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

WORKPART_DECL void map_runtime::run_in_place() {
  failure f;
  const double t0 = MPI_Wtime();
  {
    const phase_scope ps(stats_.execute);
    if (rank_ == 0)
      f = capture([&] {
        materialize_on_root(true);
        materialize_on_root(false);
        run_on_root();
      });
  }
  const double t1 = MPI_Wtime();
  // Root's arrays are ahead of the buffers even after a failure: what the statements wrote
  // before it stays written, as with wp::run (the distributed path leaves root untouched).
  buffers_behind_ = true;
  ++stats_.runs;
  with_comm_errors([&] { agree(comm_, f, 0, name_rank::always); });
  note_execute(t0, t1, MPI_Wtime());
}

WORKPART_DECL void map_runtime::note_execute(double start, double block_end, double end) {
  block_samples_.add(block_end - start);
  step_samples_.add(end - start);
  marks_ = {{0, 0.0, block_end - start}, {-1, block_end - start, end - start}};
}

WORKPART_DECL void map_runtime::execute() {
  require_live("execute");
  // Before any scatter, after an in-place run(), or after a failed phase: the current
  // values are root's.
  if (buffers_behind_ || !scattered_) scatter();
  if (stale_reads_) refresh_own_inputs();
  std::optional<log_scope> log;
  if (log_on()) log.emplace(rank_, "map '" + name_ + "': execute (rank 0's block)");
  failure f;
  const double t0 = MPI_Wtime();
  {
    const phase_scope ps(stats_.execute);  // (run_block counts its device copies itself)
    f = capture([&] { run_block(); });
  }
  const double t1 = MPI_Wtime();
  ++stats_.runs;
  // A failure (on any rank) leaves partial results in the blocks: nothing to gather, and
  // the next execute() starts from root's values again.
  failed_ = "execute() failed";
  scattered_ = false;
  with_comm_errors([&] { agree(comm_, f, 0, name_rank::always); });
  note_execute(t0, t1, MPI_Wtime());
  failed_.clear();
  scattered_ = true;
  for (const auto& ap : arrays_)
    if (ap.use.read && ap.use.written) stale_reads_ = true;
}

WORKPART_DECL void map_runtime::gather() {
  require_live("gather");
  std::vector<array_buffers*> all;
  for (auto& ap : arrays_)
    if (ap.use.written) all.push_back(&ap);
  gather_these(all);
}

WORKPART_DECL void map_runtime::gather_these(const std::vector<array_buffers*>& which) {
  if (!ready_to_gather()) return;
  std::optional<log_scope> log;
  if (log_on()) log.emplace(rank_, "map '" + name_ + "': gather (rank 0)");
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
  log.reset();
  // WORKPART_LOG=info: where the executes' time went (collective; every rank agreed on it)
  if (log_profile_ && step_samples_.added() > 0) detail::log_profile(measured_profile());
}

WORKPART_DECL bool map_runtime::ready_to_gather() const {
  if (!failed_.empty())
    throw plan_error("plan for map '" + name_ + "': the last " + failed_ +
                     ", so the "
                     "ranks' blocks hold partial results; gather() copies nothing of them to "
                     "root (root's arrays are unchanged). Call scatter() or run() to start "
                     "again");
  return !(buffers_behind_ || !scattered_);
}

// Per array, minima over the ranks of: root's decision; whether every rank holding a box can
// generate it; the init() call count and its negation (min == max: all called alike). The
// fifth: whether the array still exists on every rank (its hooks are not called otherwise): a
// destroyed array is the same plan_error everywhere, not a use after free.
constexpr int generated_votes_per_array = 5;

WORKPART_DECL std::vector<int> map_runtime::agreed_votes() const {
  std::vector<int> mine = generated_votes(), all(mine.size());
  boost::mpi::all_reduce(comm_, mine.data(), int(mine.size()), all.data(),
                         boost::mpi::minimum<int>());
  return all;
}

WORKPART_DECL void map_runtime::set_generated_from(const int* minima) {
  generated_ = generated_from(minima);
  log_profile_ = minima[generated_votes_per_array * cons_.arrays.size()] != 0;
}

WORKPART_DECL std::vector<int> map_runtime::generated_votes() const {
  constexpr int K = generated_votes_per_array;
  constexpr int none = std::numeric_limits<int>::max();
  const std::size_t n = cons_.arrays.size();
  std::vector<int> mine(K * n);
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
  mine.push_back(rank_ == 0 ? int(log_on()) : 1);  // root's WORKPART_LOG decides
  return mine;
}

WORKPART_DECL std::vector<char> map_runtime::generated_from(const int* all) const {
  constexpr int K = generated_votes_per_array;
  const std::size_t n = cons_.arrays.size();
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

WORKPART_DECL void map_runtime::update_predictions() {
  stats_.predicted_scatter_sent = predicted_bytes(rank_, true, true);
  stats_.predicted_scatter_received = predicted_bytes(rank_, true, false);
  stats_.predicted_gather_sent = predicted_bytes(rank_, false, true);
  stats_.predicted_gather_received = predicted_bytes(rank_, false, false);
}

WORKPART_DECL solutions map_runtime::solution_views() const {
  solutions v;
  v.reserve(arrays_.size());
  for (const auto& ap : arrays_) v.push_back(&ap);
  return v;
}

WORKPART_DECL array_buffers map_runtime::plan_array(std::size_t u) const {
  array_buffers ap;
  static_cast<array_solution&>(ap) =
      solve_array(cons_.arrays[u], cons_.read[u], cons_.write[u], grid_, size_, generated_[u] != 0);
  return ap;
}

WORKPART_DECL std::uint64_t map_runtime::fingerprint(const index_t* lo, const index_t* hi) const {
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

WORKPART_DECL std::string map_runtime::mismatch_text() const {
  return "map '" + name_ +
         "': the ranks did not build the same map and grid (the space, the statements, the "
         "arrays' shapes or element types, or the grid differ between ranks; rank 0 has space " +
         space_text_ + " and grid " + grid_.str() +
         "); build every map and plan alike on every rank";
}

WORKPART_DECL void map_runtime::agree_and_finish(const failure& f, std::uint64_t print) {
  with_comm_errors([&] {
    agree(comm_, f, print, name_rank::when_partial, mismatch_text());
    set_generated_from(agreed_votes().data());
  });
}

WORKPART_DECL void map_runtime::log_planned(double seconds) const {
  if (log_on())
    log_line(rank_, "plan for map '" + name_ + "' on grid " + grid_.str() + ", " +
                        std::to_string(size_) + " ranks: built in " + log_seconds(seconds));
}

WORKPART_DECL void map_runtime::finish_plan() {
  with_comm_errors([&] {
    build_arrays();
    root_only_ = !device_ && only_root_works();  // the device backend always runs on the device
    explain_ = make_explain();
    make_groups();
  });
}

WORKPART_DECL std::string map_runtime::make_explain() const {
  std::string text = explain_text(name_, grid_, size_, space_text_, n_, cons_.blocks, local_text_,
                                  solution_views(), runs_in_place());
  for (std::size_t k = 0; k < inspection_.size(); ++k) {
    text += "  data-dependent range " + std::to_string(k) + ", inspected on root:";
    for (std::size_t r = 0; r < inspection_[k].size(); ++r) {
      const auto& ir = inspection_[k][r];
      text += " r" + std::to_string(r) + " " +
              (!ir.known        ? std::string("whole")
               : ir.hi <= ir.lo ? std::string("[]")
                                : "[" + std::to_string(ir.lo) + ", " + std::to_string(ir.hi) + ")");
    }
    text += "\n";
  }
  return text;
}

WORKPART_DECL void map_runtime::make_groups() {
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

WORKPART_DECL bool map_runtime::only_root_works() const {
  for (int r = 1; r < size_; ++r) {
    if (!cons_.blocks[r].empty(n_)) return false;
    for (const auto& ap : arrays_)
      if (!ap.rbox[r].empty() || !ap.wbox[r].empty()) return false;
  }
  return true;
}

WORKPART_DECL void map_runtime::allocate() {
  const host_memory mem = device_ ? device_->host_allocator() : host_memory{};
  auto block = [&](buffer& b, const box& bx, const array_buffers& ap, const char* what) {
    try {
      alloc(b, bx.size(), ap.use.elem_size, mem);
    } catch (const std::bad_alloc&) {
      throw error("out of memory while allocating the " +
                  std::to_string(bx.size() * index_t(ap.use.elem_size)) + "-byte " + what +
                  " block of array '" + ap.use.name + "' for map '" + name_ + "'");
    }
  };
  std::size_t scratch = 0;  // the gather's reduce onto this rank, where it leads a group
  for (auto& ap : arrays_) {
    if (ap.use.read && !ap.reads_own_writes && !ap.shares_reads)
      block(ap.rbuf, ap.rbox[rank_], ap, "read");
    if (ap.use.written) block(ap.wbuf, ap.wbox[rank_], ap, "write");
    if (ap.use.written && !ap.wgroup.empty() && ap.wcomm && ap.wcomm.rank() == 0)
      scratch = std::max(scratch, reduce_scratch_bytes(ap.use.elem_size, ap.wbox[rank_].size()));
  }
  scratch_.reserve(scratch, "the gather's reduce of map '" + name_ + "'");
  allocated_ = true;
}

WORKPART_DECL void map_runtime::scatter_reads(array_buffers& ap) {
  // only what root sends: not what the map's own earlier statements fill (none), what
  // generate_local() made (generate), or what a program's earlier maps provide (none)
  if (ap.in_steps.empty() || ap.in_steps.front().op != step_op::scatterv) return;
  const auto& b = ap.rbox[rank_];
  count(stats_.scatter, scatterv_boxes(comm_, ap.use, ap.rbox, leaders(ap.rgroup), read_data(ap),
                                       root_data(ap.use)));
  if (!ap.rgroup.empty() && ap.rcomm && !b.empty())
    count(stats_.scatter, bcast_box(ap.rcomm, ap.use.elem, read_data(ap), b.size()));
}

WORKPART_DECL void map_runtime::init_writes(array_buffers& ap) {
  void* buf = buf_data(ap.wbuf);
  if (!ap.w_init_old || ap.init_steps.empty() || ap.init_steps.front().op != step_op::scatterv)
    return;
  count(stats_.scatter,
        scatterv_boxes(comm_, ap.use, ap.wbox, leaders(ap.wgroup), buf, root_data(ap.use)));
}

WORKPART_DECL void map_runtime::refresh_own_inputs() {
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

WORKPART_DECL void map_runtime::copy_box(array_buffers& ap, const box& b) {
  if (b.empty()) return;
  const auto& rb = ap.rbox[rank_];
  const auto& wb = ap.wbox[rank_];
  if (device_) {  // on the device where both blocks live there, else on the host
    bool done = false;
    {
      const phase_scope ps(phase_scope::untimed, stats_.execute, device_.get());
      done = copy_box_on_device(*device_, ap.use, {read_data(ap), rb}, {buf_data(ap.wbuf), wb}, b);
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
    std::memcpy(static_cast<char*>(rv.data) + ro * es, static_cast<const char*>(wv.data) + wo * es,
                es);
    for (int a = ap.use.rank - 1; a >= 0; --a) {
      if (++c[a] < b.hi[a]) break;
      c[a] = b.lo[a];
    }
  }
}

WORKPART_DECL void map_runtime::gather_writes(array_buffers& ap) {
  if (!ap.use.written) return;
  gather_writes_now(ap);
  // Root now holds this array: later scatters send root's values instead of init()'s.
  const std::size_t u = std::size_t(&ap - arrays_.data());
  if (generated_[u]) {
    generated_[u] = 0;
    replan_transfers(u);
  }
}

WORKPART_DECL void map_runtime::replan_transfers(std::size_t u) {
  array_buffers fresh = plan_array(u);
  auto& ap = arrays_[u];
  ap.in_steps = std::move(fresh.in_steps);
  ap.init_steps = std::move(fresh.init_steps);
  ap.out_steps = std::move(fresh.out_steps);
  explain_ = make_explain();
  update_predictions();
}

WORKPART_DECL void map_runtime::gather_writes_now(array_buffers& ap) {
  const auto& u = ap.use;
  const index_t n = ap.wbox[rank_].size();
  void* buf = buf_data(ap.wbuf);
  auto restart = [&] {  // this partial is now in the leader's total: the next execute()
    with_elem(u.elem, [&](auto t) {  // starts from the identity
      fill_identity<decltype(t)>(buf, n, u.write_kind);
    });
  };
  if (!ap.wgroup.empty() && ap.wcomm && n > 0) {
    count(stats_.gather,
          reduce_onto_leader(ap.wcomm, u.elem, u.write_kind, buf, n, scratch_.data()));
    if (ap.wcomm.rank() != 0) restart();
  }
  // root gathers one copy of each box: from the group leaders, replica 0's where replicated
  const std::vector<char> take = leaders(with_replica_dim(grid_, ap.wgroup));
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
WORKPART_DECL map_runtime::map_runtime(std::string name, int space_rank, std::string space_text,
                                       const grid_shape& g, const boost::mpi::communicator& comm)
    : name_(std::move(name)),
      grid_(g),
      comm_(comm),
      space_text_(std::move(space_text)),
      n_(space_rank) {
  if (!comm_)
    throw plan_error(
        "wp::distribute: this rank is not in the context's communicator; build "
        "the plan only on the ranks of the communicator given to wp::context");
  rank_ = comm_.rank();
  size_ = comm_.size();
}

WORKPART_DECL void map_runtime::split(const std::vector<int>& dims, const std::vector<box>& boxes,
                                      boost::mpi::communicator& out, bool& leader) {
  int color = MPI_UNDEFINED, key = 0;
  if (rank_ < int(grid_.product()) && !boxes[rank_].empty()) {
    auto ck = group_key(grid_, rank_, dims);
    color = ck.first;
    key = ck.second;
  }
  leader = key == 0;
  // What decides the members: the grid, the group's dimensions and which ranks hold a part
  // (the same on every rank: every rank has every rank's boxes).
  std::vector<index_t> what;
  if (splits_) {
    what.assign(grid_.dims.begin(), grid_.dims.end());
    what.push_back(grid_.replica_axis ? -2 : -1);
    what.insert(what.end(), dims.begin(), dims.end());
    what.push_back(-1);
    for (int r = 0; r < int(grid_.product()) && r < size_; ++r)
      what.push_back(boxes[std::size_t(r)].empty() ? 0 : 1);
    const auto it = splits_->find(what);
    if (it != splits_->end()) {
      out = it->second;
      return;
    }
  }
  MPI_Comm c;
  WORKPART_MPI_CHECK(MPI_Comm_split, (comm_, color, key, &c));
  if (c != MPI_COMM_NULL) out = boost::mpi::communicator(c, boost::mpi::comm_take_ownership);
  if (splits_) splits_->emplace(std::move(what), out);
}

WORKPART_DECL void map_runtime::scatter_arrays() {
  const phase_scope ps(stats_.scatter);
  for (auto& ap : arrays_) {
    if (ap.use.read) scatter_reads(ap);
    if (ap.use.written) init_writes(ap);
  }
}

WORKPART_DECL std::pair<double, double> map_runtime::run_block_timed() {
  const double t0 = MPI_Wtime();
  {
    const phase_scope ps(stats_.execute);  // (run_block: the device copies)
    run_block();
  }
  const double t1 = MPI_Wtime();
  block_samples_.add(t1 - t0);
  return {t0, t1};
}

WORKPART_DECL plan_profile map_runtime::measured_profile() const {
  require_live("profile");
  plan_profile::row r;
  r.kind = "map";
  r.name = name_;
  r.grid = grid_.str();
  r.map = 0;
  r.executes = block_samples_.size();
  r.measured = block_samples_.median();
  return collect_profile(comm_, {r}, step_samples_, marks_);
}

WORKPART_DECL void map_runtime::gather_slot(array_buffers& ap, phase_stats& phase) {
  const phase_stats before = stats_.gather;
  gather_writes_now(ap);
  phase.bytes_sent += stats_.gather.bytes_sent - before.bytes_sent;
  phase.bytes_received += stats_.gather.bytes_received - before.bytes_received;
}

WORKPART_DECL void map_runtime::finish_plan_sharing(
    std::map<std::vector<index_t>, boost::mpi::communicator>& splits) {
  splits_ = &splits;
  try {
    finish_plan();
  } catch (...) {
    splits_ = nullptr;
    throw;
  }
  splits_ = nullptr;
}

}  // namespace workpart::detail
