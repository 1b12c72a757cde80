#pragma once
/// \file program_runtime.ipp
/// The bodies of program_runtime.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../program_runtime.hpp"

namespace workpart::detail {

WORKPART_DECL void program_runtime::scatter() {
  require_live("scatter");
  std::optional<detail::log_scope> log;  // WORKPART_LOG=info (runtime/log.hpp)
  if (detail::log_on()) log.emplace(rank_, "program: scatter of root's inputs (rank 0)");
  const detail::phase_scope ps(stats_.scatter);  // (blocks_to_host counts device copies)
  detail::with_comm_errors([&] {
    std::vector<int> changed;
    for_each_plan([&](int m, detail::map_runtime& mp) {
      if (mp.refresh_generated_changed()) changed.push_back(m);
    });
    if (!changed.empty()) apply_program_steps(changed);
  });
  scattered_ = false;
  failed_ = "scatter() failed";
  local_then_agree([&] {
    detail::blocks_to_host(device_.get(), stats_.scatter);
    for_each_plan([&](int, detail::map_runtime& mp) {
      mp.check_alive();
      mp.make_buffers();
    });
    reserve_combine_scratch();
    link_shared_reads();
    for_each_plan([&](int, detail::map_runtime& mp) { mp.prepare_inputs(); });
  });
  detail::with_comm_errors([&] {
    for_each_plan([&](int, detail::map_runtime& mp) { mp.scatter_arrays(); });
    for (std::size_t x = 0; x < sol_.redists().size(); ++x)
      if (sol_.redists()[x].root_part) scatter_part(x);
  });
  failed_.clear();
  scattered_ = true;
  first_ = true;
  executed_ = false;
}

WORKPART_DECL void program_runtime::execute() {
  require_live("execute");
  if (!scattered_) scatter();
  const detail::phase_scope ps(stats_.execute, device_.get());
  failed_ = "execute() failed";
  scattered_ = false;  // a failure below leaves partial results: start again from root's
  const bool log = detail::log_on();  // WORKPART_LOG=info: a line per map and redistribution
  const std::string run_no = "execute #" + std::to_string(stats_.runs + 1) + ": ";
  auto redist_name = [&](std::size_t x) {
    const auto& r = sol_.redists()[x];
    return sol_.arrays()[r.array].name + " " + r.from + " -> " + r.to + " (" + r.kind + ")";
  };
  // A map's local run that fails on this rank is agreed on right after it where it reads data
  // (or runs on a device); elsewhere -- it can then fail only by running out of memory --
  // agreement waits for the next such map or the end of the step, one collective instead of
  // one per map (a training step's hundreds of small maps each waited for the slowest rank).
  // A rank that failed runs no more maps but takes part in every redistribution, so no rank
  // waits in a collective another skipped; every rank then raises the earliest failure.
  detail::failure pending;
  // plan.profile(): each transfer's seconds in this execute() (its figures' growth), and the
  // intervals of this execute() from its start (one clock read per map and transfer)
  const double origin = MPI_Wtime();
  std::vector<double> before(rstats_.size());
  for (std::size_t x = 0; x < rstats_.size(); ++x) before[x] = rstats_[x].measured.seconds;
  marks_.clear();
  auto mark = [&](int row, double t0) {
    if (row >= 0 || row == -1) marks_.push_back({row, t0 - origin, MPI_Wtime() - origin});
  };
  for_each_plan([&](int m, detail::map_runtime& mp) {
    detail::with_comm_errors([&] {
      for (std::size_t x : sol_.into(m)) {
        std::optional<detail::log_scope> l;
        if (log && sol_.shown(sol_.redists()[x])) l.emplace(rank_, run_no + redist_name(x));
        const double t0 = MPI_Wtime();
        move_into(x);
        mark(profile_row_of_redist_[x], t0);
      }
      refill_identity(m);
    });
    if (!pending) {
      std::optional<detail::log_scope> l;
      if (log) l.emplace(rank_, run_no + "map '" + mp.name() + "' (rank 0's block)");
      pending = detail::capture([&] {
        const auto& inject = detail::injected_run_failure_for_tests();
        if (inject.rank == rank_ && inject.map == mp.name())
          throw error("map '" + mp.name() + "': injected failure (tests)");
        const auto [t0, t1] = mp.run_block_timed();
        marks_.push_back({profile_row_of_map_[std::size_t(m)], t0 - origin, t1 - origin});
      });
      pending.when = std::uint32_t(m);
    }
    mp.count_run();
    detail::with_comm_errors([&] {
      if (mp.agree_after_run()) {
        const double t0 = MPI_Wtime();
        detail::agree(comm_, pending, 0, detail::name_rank::always);
        mark(-1, t0);
      }
      for (std::size_t c : sol_.combines_after(m)) {
        std::optional<detail::log_scope> l;
        const std::size_t x = sol_.combines()[c].entry;
        if (log) l.emplace(rank_, run_no + redist_name(x));
        const double t0 = MPI_Wtime();
        combine_partials(c);
        mark(profile_row_of_redist_[x], t0);
      }
    });
  });
  detail::with_comm_errors([&] {
    const double t0 = MPI_Wtime();
    detail::agree(comm_, pending, 0, detail::name_rank::always);
    mark(-1, t0);
  });
  step_samples_.add(MPI_Wtime() - origin);
  for (std::size_t x = 0; x < rstats_.size(); ++x)
    if (profile_row_of_redist_[x] >= 0)
      redist_samples_[x].add(rstats_[x].measured.seconds - before[x]);
  failed_.clear();
  scattered_ = true;
  first_ = false;
  executed_ = true;
  ++stats_.runs;
}

WORKPART_DECL void program_runtime::gather() {
  require_live("gather");
  std::vector<std::size_t> all;
  for (std::size_t a = 0; a < sol_.arrays().size(); ++a)
    if (!sol_.arrays()[a].writers.empty()) all.push_back(a);
  gather_arrays(all);
}

WORKPART_DECL program_stats program_runtime::stats() const {
  program_stats s = stats_;
  for_each_plan([&](int, const detail::map_runtime& mp) { s.maps.push_back(mp.stats()); });
  for (const auto& ms : s.maps) {  // root's sends of the inputs, counted by each map
    s.scatter.bytes_sent += ms.scatter.bytes_sent;
    s.scatter.bytes_received += ms.scatter.bytes_received;
  }
  s.redistributions.clear();
  for (std::size_t x = 0; x < sol_.redists().size(); ++x)
    if (sol_.shown(sol_.redists()[x])) s.redistributions.push_back(rstats_[x]);
  const detail::program_bytes b = sol_.bytes_of(rank_);
  s.predicted_scatter_sent = b.scatter_sent;
  s.predicted_scatter_received = b.scatter_received;
  s.predicted_gather_sent = b.gather_sent;
  s.predicted_gather_received = b.gather_received;
  return s;
}

WORKPART_DECL std::string program_runtime::to_svg() const {
  std::vector<picture_map> maps;
  for_each_plan([&](int, const detail::map_runtime& mp) { maps.push_back(mp.picture()); });
  std::vector<picture_edge> edges;
  for (std::size_t x = 0; x < sol_.redists().size(); ++x) {
    const auto& r = sol_.redists()[x];
    if (!sol_.shown(r)) continue;
    edges.push_back({sol_.arrays()[r.array].name, r.from, r.to, r.kind, redist_total(x)});
  }
  std::string title = "program plan:";
  for (const auto& m : maps) title += " " + m.name + " " + m.grid;
  return draw_svg(title + ", " + std::to_string(size_) + " ranks", maps, edges, size_);
}

WORKPART_DECL std::string program_runtime::summary() const {
  std::string s = "program of " + std::to_string(runtimes_.size()) + " maps, " +
                  std::to_string(size_) + " ranks (bytes over all ranks):\n";
  for_each_plan([&](int m, const detail::map_runtime& mp) {
    s += "map '" + mp.name() + "' on grid " + mp.grid().str() + "\n";
    for (std::size_t x : sol_.into(m)) {
      const auto& r = sol_.redists()[x];
      if (!sol_.shown(r)) continue;
      s += "  <- " + sol_.arrays()[r.array].name + " from " + r.from + ": " + r.kind + ", " +
           detail::bytes_text(redist_total(x)) + "\n";
    }
    s += mp.summary_arrays();
    for (std::size_t c : sol_.combines_after(m)) {  // its partial results, combined after it
      const std::size_t x = sol_.combines()[c].entry;
      const auto& r = sol_.redists()[x];
      s += "  -> " + sol_.arrays()[r.array].name + " partial results combined: " + r.kind + ", " +
           detail::bytes_text(redist_total(x)) + "\n";
    }
  });
  return s + "through root: " + detail::bytes_text(predicted_root_bytes()) +
         ", rank to rank: first execute() " + detail::bytes_text(predicted_rank_bytes(true)) +
         ", each later one " + detail::bytes_text(predicted_rank_bytes(false)) + "\n";
}

WORKPART_DECL std::string program_runtime::draw_array(const void* id,
                                                      const std::string& name) const {
  std::string s;
  for_each_plan([&](int, const detail::map_runtime& mp) {
    for (const auto& p : mp.pictures_of(id)) s += draw_text(p, mp.name(), mp.grid().str());
  });
  if (s.empty())
    throw plan_error("program plan: draw(" + name + "): no map of the program uses '" + name + "'");
  return s;
}

WORKPART_DECL std::string program_runtime::to_json() const {
  const auto esc = detail::json_escape;
  const auto ph = detail::phase_json;
  const program_stats st = stats();
  std::string s = "{\"program\":[";
  bool first = true;
  for_each_plan([&](int, const detail::map_runtime& mp) {
    s += std::string(first ? "" : ",") + mp.to_json();
    first = false;
  });
  s += "],\"redistributions\":[";
  for (std::size_t x = 0; x < st.redistributions.size(); ++x) {
    const auto& r = st.redistributions[x];
    s += std::string(x ? "," : "") + "{\"array\":\"" + esc(r.array) + "\",\"from\":\"" +
         esc(r.from) + "\",\"to\":\"" + esc(r.to) + "\",\"kind\":\"" + esc(r.kind) +
         "\",\"predicted_sent\":" + std::to_string(r.predicted_sent) +
         ",\"predicted_received\":" + std::to_string(r.predicted_received) +
         ",\"predicted_first_sent\":" + std::to_string(r.predicted_first_sent) +
         ",\"predicted_first_received\":" + std::to_string(r.predicted_first_received) +
         ",\"measured\":" + ph(r.measured) + "}";
  }
  s += "],\"stats\":{\"scatter\":" + ph(st.scatter) + ",\"execute\":" + ph(st.execute) +
       ",\"gather\":" + ph(st.gather) + ",\"runs\":" + std::to_string(st.runs) +
       "},\"bytes\":{\"through_root_gather\":" + std::to_string(sol_.program_gather_total()) +
       ",\"rank_to_rank_first\":" + std::to_string(sol_.rank_to_rank_total(true)) +
       ",\"rank_to_rank_later\":" + std::to_string(sol_.rank_to_rank_total(false)) +
       "},\"explain\":\"" + esc(explain()) + "\"}";
  return s;
}

WORKPART_DECL void program_runtime::check_views_disjoint() const {
  const auto& arrays = sol_.arrays();
  for (std::size_t x = 0; x < arrays.size(); ++x)
    for (std::size_t y = x + 1; y < arrays.size(); ++y) {
      const auto& ux = sol_.slot(arrays[x].first_user, x).use;
      const auto& uy = sol_.slot(arrays[y].first_user, y).use;
      if (!ux.view_begin || !uy.view_begin) continue;
      if (arrays[x].writers.empty() && arrays[y].writers.empty()) continue;
      const char* bx = static_cast<const char*>(ux.view_begin);
      const char* by = static_cast<const char*>(uy.view_begin);
      if (bx < by + uy.view_bytes && by < bx + ux.view_bytes)
        throw plan_error("program: arrays '" + ux.name + "' and '" + uy.name +
                         "' are views of "
                         "overlapping memory on root, and the program writes " +
                         (arrays[x].writers.empty() ? "'" + uy.name + "'" : "'" + ux.name + "'") +
                         "; the maps pass values rank to rank by array, so the other would not "
                         "see the writes. Use one array for both, or copy one of them first");
    }
}

WORKPART_DECL void program_runtime::apply_program_steps(const std::vector<int>& only) {
  auto apply = [&](int m, detail::map_runtime& mp) {
    mp.replan_steps(
        [&](std::size_t, const detail::array_buffers& alone, detail::array_buffers& ap) {
          sol_.program_steps(m, alone, ap.in_steps, ap.init_steps, ap.out_steps);
        });
  };
  if (only.empty())
    for_each_plan(apply);
  else
    for (int m : only) apply(m, runtime(m));
  explain_stale_ = true;
}

WORKPART_DECL void program_runtime::mark_shared_reads() {
  shared_from_.clear();
  for (const auto& sh : sol_.shared_reads(rank_)) {
    auto& dst = slot(sh.reader_map, sh.array);
    dst.shares_reads = true;
    shared_from_.push_back({&dst, &slot(sh.owner_map, sh.array), sh.write});
  }
}

WORKPART_DECL void program_runtime::scatter_part(std::size_t x) {
  const auto& r = sol_.redists()[x];
  auto& dst = slot(r.to_map, r.array);
  detail::phase_scope ps(runtime(r.to_map).scatter_stats());
  const detail::held_buffer target =
      r.old_values ? detail::held_buffer{detail::buf_data(dst.wbuf), dst.wbox[std::size_t(rank_)]}
                   : detail::held_buffer{detail::read_data(dst), dst.rbox[std::size_t(rank_)]};
  const detail::held_buffer root{rank_ == 0 ? dst.use.root_data() : nullptr,
                                 detail::whole_box(dst.use)};
  ps.moved_bytes(detail::exchange_pieces(
      comm_, dst.use, r.first.rest, r.rest_remote, [&](const detail::piece&) { return root; },
      [&](const detail::piece&) { return target; }, &xtypes_[x][0]));
}

WORKPART_DECL void program_runtime::move_into(std::size_t x) {
  const auto& r = sol_.redists()[x];
  auto& dst = slot(r.to_map, r.array);
  const detail::box& dbox =
      r.old_values ? dst.wbox[std::size_t(rank_)] : dst.rbox[std::size_t(rank_)];
  void* dbuf = r.old_values ? detail::buf_data(dst.wbuf) : detail::read_data(dst);
  move_pieces(x, first_, {dbuf, dbox}, stats_.execute);
}

WORKPART_DECL void program_runtime::refill_identity(int m) {
  if (first_) return;  // scatter() filled them
  for (std::size_t a : sol_.restarts(m)) {
    auto& ap = slot(m, a);
    const index_t n = ap.wbox[std::size_t(rank_)].size();
    if (n == 0 || ap.wleader) continue;
    detail::with_elem(ap.use.elem, [&](auto z) {
      detail::fill_identity<decltype(z)>(detail::buf_data(ap.wbuf), n, ap.use.write_kind);
    });
    if (device_) device_->host_wrote(detail::buf_data(ap.wbuf));  // whole block refilled
  }
}

WORKPART_DECL void program_runtime::reserve_combine_scratch() {
  std::size_t need = 0;
  for (std::size_t c = 0; c < sol_.combines().size(); ++c) {
    const auto& pc = sol_.combines()[c];
    auto& ap = slot(pc.map, pc.array);
    const index_t n = ap.wbox[std::size_t(rank_)].size();
    if (pc.mode == detail::combine_mode::overlapping) {
      if (n > 0)
        need = std::max(
            need, std::size_t(detail::overlapping_receive_elements(ap.wbox, ap.w_parts, rank_)) *
                      ap.use.elem_size);
      continue;
    }
    if (!ap.wcomm || n == 0) continue;
    if (pc.mode == detail::combine_mode::reduce_scatter) {
      if (parts_[c].size() <= std::size_t(ap.wcomm.rank())) continue;
      need = std::max(
          need, detail::reduce_scatter_scratch_bytes(
                    ap.use.elem_size, parts_[c][std::size_t(ap.wcomm.rank())], ap.wcomm.size()));
    } else if (pc.mode == detail::combine_mode::all_reduce &&
               detail::all_reduce_uses_parts(n, ap.use.elem_size, ap.wcomm.size())) {
      need = std::max(need, detail::all_reduce_parts_scratch_bytes(
                                ap.use.elem_size, n, ap.wcomm.size(), ap.wcomm.rank()));
    } else if (ap.wcomm.rank() == 0) {
      need = std::max(need, detail::reduce_scratch_bytes(ap.use.elem_size, n));
    }
  }
  scratch_.reserve(need, "the combines of partial results in execute()");
}

WORKPART_DECL void program_runtime::combine_partials(std::size_t c) {
  const auto& pc = sol_.combines()[c];
  auto& ap = slot(pc.map, pc.array);
  auto& st = rstats_[pc.entry];
  const index_t n = ap.wbox[std::size_t(rank_)].size();
  const bool overlapping = pc.mode == detail::combine_mode::overlapping;
  if ((!ap.wcomm && !overlapping) || n == 0) return;
  detail::phase_scope ps(st.measured, device_.get(), &stats_.execute);
  void* buf = detail::buf_data(ap.wbuf);
  if (device_) {  // the partials are the device's; the combined values the host's
    device_->to_host(buf);
    device_->host_wrote(buf);
  }
  if (overlapping) {
    const detail::box& mine = ap.wbox[std::size_t(rank_)];
    ps.moved_bytes(detail::combine_overlapping_boxes(comm_, ap.use, ap.use.write_kind, buf, ap.wbox,
                                                     ap.w_parts, scratch_.data()));
    // what this rank's box holds outside its part is in its owner's values now: the next
    // execute() starts it from the identity (its part takes the old values)
    std::vector<detail::box> rest;
    detail::subtract_into(mine, ap.w_parts[std::size_t(rank_)], rest);
    detail::with_elem(ap.use.elem, [&](auto z) {
      using T = decltype(z);
      for (const auto& b : rest)
        detail::for_each_row(mine, b, ap.use.rank, [&](index_t off, index_t, index_t row) {
          detail::fill_identity<T>(static_cast<T*>(buf) + off, row, ap.use.write_kind);
        });
    });
    return;
  }
  if (pc.mode == detail::combine_mode::reduce_scatter) {
    ps.moved_bytes(detail::reduce_scatter_boxes(ap.wcomm, ap.use, ap.use.write_kind, buf,
                                                ap.wbox[std::size_t(rank_)], parts_[c],
                                                scratch_.data()));
    return;
  }
  if (pc.mode == detail::combine_mode::all_reduce &&
      detail::all_reduce_uses_parts(n, ap.use.elem_size, ap.wcomm.size())) {
    ps.moved_bytes(detail::all_reduce_in_parts(ap.wcomm, ap.use.elem, ap.use.write_kind, buf, n,
                                               scratch_.data()));
    return;
  }
  detail::moved mv =
      detail::reduce_onto_leader(ap.wcomm, ap.use.elem, ap.use.write_kind, buf, n, scratch_.data());
  if (pc.mode == detail::combine_mode::all_reduce) {
    const detail::moved b = detail::bcast_box(ap.wcomm, ap.use.elem, buf, n);
    mv.sent += b.sent;
    mv.received += b.received;
  } else if (ap.wcomm.rank() != 0) {
    detail::with_elem(ap.use.elem, [&](auto z) {
      detail::fill_identity<decltype(z)>(buf, n, ap.use.write_kind);
    });
  }
  ps.moved_bytes(mv);
}

WORKPART_DECL void program_runtime::gather_arrays(const std::vector<std::size_t>& which) {
  if (!failed_.empty())
    throw plan_error("plan for the program: the last " + failed_ +
                     ", so the ranks' blocks "
                     "hold partial results; gather() copies nothing of them to root (root's "
                     "arrays are unchanged). Call scatter() or run() to start again");
  if (!executed_) return;  // nothing ran since the last scatter: root holds the values
  std::optional<detail::log_scope> log;
  if (detail::log_on())
    log.emplace(rank_, "program: gather of " + std::to_string(which.size()) + " arrays (rank 0)");
  const detail::phase_scope ps(stats_.gather);
  local_then_agree([&] {
    for_each_plan([&](int, detail::map_runtime& mp) { mp.check_alive(); });
    detail::blocks_to_host(device_.get(), stats_.gather);
    if (rank_ == 0)
      for (std::size_t a : which) {
        auto& ap = slot(sol_.arrays()[a].writers.back(), a);
        try {
          ap.use.root_data();
        } catch (const error&) {
          throw;
        } catch (const std::exception& e) {
          throw error("program: root could not make its copy of array '" + ap.use.name +
                      "': " + e.what());
        }
      }
  });
  detail::with_comm_errors([&] {
    // (blocks_to_host counted its own copies; these are the moves')
    const detail::phase_scope moves(detail::phase_scope::untimed, stats_.gather, device_.get());
    for (std::size_t a : which) {
      if (sol_.gathered_by_map(a)) {
        const int m = sol_.arrays()[a].writers.front();
        detail::map_runtime& mp = runtime(m);
        mp.gather_slot(slot(m, a), stats_.gather);
        note_gathered(a);
        continue;
      }
      for (std::size_t x = 0; x < sol_.redists().size(); ++x) {
        const auto& r = sol_.redists()[x];
        if (!r.gather || r.array != a) continue;
        const auto& u = sol_.slot(sol_.arrays()[a].writers.front(), a).use;
        move_pieces(x, false, {rank_ == 0 ? u.root_data() : nullptr, detail::whole_box(u)},
                    stats_.gather);
      }
      note_gathered(a);
    }
  });
  log.reset();
  // WORKPART_LOG=info: where the executes' time went (collective; the maps' plans agreed on
  // root's WORKPART_LOG, so every rank asks for it or none)
  if (!runtimes_.empty() && runtimes_.front()->logs_profile() && step_samples_.added() > 0)
    detail::log_profile(measured_profile());
}

WORKPART_DECL void program_runtime::note_gathered(std::size_t a) {
  std::vector<int> changed;
  for_each_plan([&](int m, detail::map_runtime& mp) {
    const int u = sol_.arrays()[a].slot[std::size_t(m)];
    if (u >= 0 && mp.stop_generating(std::size_t(u))) changed.push_back(m);
  });
  if (!changed.empty()) apply_program_steps(changed);
}

WORKPART_DECL std::size_t program_runtime::find_array(const void* id, const std::string& name,
                                                      const char* what) const {
  const std::size_t x = sol_.find(id);
  if (x != std::size_t(-1)) return x;
  throw plan_error(std::string("plan.") + what + "(" + name +
                   "): the program does not use array '" + name + "'");
}

WORKPART_DECL void program_runtime::gather_written(const std::vector<std::size_t>& which) {
  std::vector<std::size_t> written;
  for (std::size_t a : which)
    if (!sol_.arrays()[a].writers.empty()) written.push_back(a);
  gather_arrays(written);
}
WORKPART_DECL void program_runtime::init(std::vector<map_runtime*> runtimes,
                                         std::vector<std::string> names,
                                         const std::vector<grid_shape>& grids) {
  runtimes_ = std::move(runtimes);
  const int M = int(runtimes_.size());
  // The device backend: one context for all maps, so that a block one map leaves on the
  // device is the block the next one reads there (shared buffers have one mirror).
  device_ = runtimes_.front()->device();
  for_each_plan([&](int, map_runtime& mp) { mp.share_device(device_); });
  program_maps maps;
  maps.nranks = size_;
  maps.grids = grids;
  maps.names = std::move(names);
  slot_ptr_.assign(std::size_t(M), {});
  maps.arrays.assign(std::size_t(M), {});
  for_each_plan([&](int m, map_runtime& mp) {
    for (auto& ap : mp.slots()) {
      slot_ptr_[std::size_t(m)].push_back(&ap);
      maps.arrays[std::size_t(m)].push_back(&ap);
    }
  });
  const detail::failure f = detail::capture([&] {
    sol_ = detail::solve_program(std::move(maps));
    check_views_disjoint();
    mark_shared_reads();
  });
  detail::with_comm_errors([&] { detail::agree(comm_, f, 0, detail::name_rank::when_partial); });
  // this rank's figures of each redistribution, and its parts of each reduce-scatter
  rstats_.resize(sol_.redists().size());
  xtypes_.resize(sol_.redists().size());
  for (std::size_t x = 0; x < rstats_.size(); ++x) {
    const auto& r = sol_.redists()[x];
    auto& st = rstats_[x];
    st.array = sol_.arrays()[r.array].name;
    st.from = r.from;
    st.to = r.to;
    st.kind = r.kind;
    st.predicted_sent = sol_.redist_bytes(x, rank_, false, true);
    st.predicted_received = sol_.redist_bytes(x, rank_, false, false);
    st.predicted_first_sent = sol_.redist_bytes(x, rank_, !r.gather, true);
    st.predicted_first_received = sol_.redist_bytes(x, rank_, !r.gather, false);
  }
  for (const auto& c : sol_.combines())
    parts_.push_back(c.mode == detail::combine_mode::reduce_scatter
                         ? sol_.group_parts(c.array, c.map, rank_)
                         : std::vector<detail::box>{});
  apply_program_steps();
  make_profile_rows();
}

WORKPART_DECL void program_runtime::make_profile_rows() {
  // the rows in the order execute() runs them: what moves into a map, the map, its combines
  std::vector<int> shown(sol_.redists().size(), -1);  // [x]: its place in stats()'s list
  int n = 0;
  for (std::size_t x = 0; x < sol_.redists().size(); ++x)
    if (sol_.shown(sol_.redists()[x])) shown[x] = n++;
  profile_row_of_redist_.assign(sol_.redists().size(), -2);
  profile_row_of_map_.assign(runtimes_.size(), -2);
  redist_samples_.assign(sol_.redists().size(), {});
  profile_rows_.clear();
  auto transfer = [&](std::size_t x) {
    const auto& r = sol_.redists()[x];
    if (shown[x] < 0 || r.gather) return;
    profile_row_of_redist_[x] = int(profile_rows_.size());
    plan_profile::row row;
    row.kind = r.kind;
    row.name = sol_.arrays()[r.array].name + ": " + r.from + " -> " + r.to;
    row.transfer = shown[x];
    for (int k = 0; k < size_; ++k) row.bytes += sol_.redist_bytes(x, k, false, false);
    profile_rows_.push_back(std::move(row));
  };
  for_each_plan([&](int m, const map_runtime& mp) {
    for (std::size_t x : sol_.into(m)) transfer(x);
    profile_row_of_map_[std::size_t(m)] = int(profile_rows_.size());
    plan_profile::row row;
    row.kind = "map";
    row.name = mp.name();
    row.grid = mp.grid().str();
    row.map = m;
    profile_rows_.push_back(std::move(row));
    for (std::size_t c : sol_.combines_after(m)) transfer(sol_.combines()[c].entry);
  });
}

WORKPART_DECL plan_profile program_runtime::measured_profile() const {
  std::vector<plan_profile::row> rows = profile_rows_;
  for_each_plan([&](int m, const map_runtime& mp) {
    auto& r = rows[std::size_t(profile_row_of_map_[std::size_t(m)])];
    r.executes = mp.block_samples().size();
    r.measured = mp.block_samples().median();
  });
  for (std::size_t x = 0; x < redist_samples_.size(); ++x)
    if (profile_row_of_redist_[x] >= 0) {
      auto& r = rows[std::size_t(profile_row_of_redist_[x])];
      r.executes = redist_samples_[x].size();
      r.measured = redist_samples_[x].median();
    }
  return detail::collect_profile(comm_, std::move(rows), step_samples_, marks_);
}

WORKPART_DECL void program_runtime::move_pieces(std::size_t x, bool first,
                                                const detail::held_buffer& target,
                                                phase_stats& phase) {
  const auto& r = sol_.redists()[x];
  const auto& t = first ? r.first : r.steady;
  const auto& lay = first ? r.first_layers : r.steady_layers;
  if (t.pieces.empty()) return;
  // x's own figures; the phase's take the same bytes (its own scope times it and counts its
  // device copies: execute(), gather())
  detail::phase_scope ps(rstats_[x].measured, device_.get(), &phase);
  auto source = [&](const detail::piece& p) {
    auto& src = slot(lay[std::size_t(p.layer)], r.array);
    if (first && r.first_reads)
      return detail::held_buffer{detail::read_data(src), src.rbox[std::size_t(rank_)]};
    return detail::held_buffer{detail::buf_data(src.wbuf), src.wbox[std::size_t(rank_)]};
  };
  const auto& use = sol_.slot(sol_.arrays()[r.array].first_user, r.array).use;
  std::vector<detail::piece> rest;  // the device backend: the pieces the host moves
  const std::vector<detail::piece>& pieces =
      device_ ? detail::stage_pieces(*device_, rank_, t.pieces, use, source, target, rest)
              : t.pieces;
  ps.moved_bytes(detail::exchange_pieces(
      comm_, use, pieces, first ? r.first_remote : r.steady_remote, source,
      [&](const detail::piece&) { return target; }, &xtypes_[x][first ? 1 : 2]));
}

}  // namespace workpart::detail
