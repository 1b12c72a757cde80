#pragma once
/// \file program.ipp
/// The bodies of program.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../program.hpp"

namespace workpart::detail {

WORKPART_DECL program_maps program_maps_of(const std::vector<map_solution>& maps, int nranks) {
  program_maps in;
  in.nranks = nranks;
  for (const auto& m : maps) {
    in.names.push_back(m.name);
    in.grids.push_back(m.grid);
    in.arrays.emplace_back();
    for (const auto& a : m.arrays) in.arrays.back().push_back(&a);
  }
  return in;
}

WORKPART_DECL program_solution solve_program(program_maps maps) {
  program_solution s(std::move(maps));
  s.collect_arrays();
  s.check_split_writes();
  s.choose_combines();
  return s;
}

WORKPART_DECL std::vector<box> program_solution::held_after(int m, std::size_t a,
                                                            bool gather_side) const {
  const auto& ap = slot(m, a);
  const combine_mode mode = arrays_[a].partial[std::size_t(m)];
  if (mode == combine_mode::reduce_scatter) return arrays_[a].owned[std::size_t(m)];
  if (mode == combine_mode::overlapping) return ap.w_parts;
  // after a Reduce only the leaders hold whole values; after an Allreduce every member
  if (mode != combine_mode::all_reduce || gather_side)
    return leaders_write_boxes(ap, grid(m), nranks());
  std::vector<box> held(static_cast<std::size_t>(nranks()));
  for (int r = 0; r < int(grid(m).product()); ++r) held[std::size_t(r)] = ap.wbox[std::size_t(r)];
  return held;
}

WORKPART_DECL std::vector<layer> program_solution::layers(const std::vector<int>& maps,
                                                          std::size_t a, bool gather_side) const {
  std::vector<layer> v;
  for (int m : maps) v.push_back({m, held_after(m, a, gather_side)});
  return v;
}

WORKPART_DECL std::vector<layer> program_solution::source_layers(const program_redist& r,
                                                                 bool first) const {
  if (r.partials)  // every member's own partial results, where the previous writer left them
    return {{r.first_layers.front(), slot(r.first_layers.front(), r.array).wbox}};
  if (first && r.first_reads) {
    std::vector<layer> v;
    for (int m : r.first_layers) v.push_back({m, slot(m, r.array).rbox});
    return v;
  }
  return layers(first ? r.first_layers : r.steady_layers, r.array, r.gather);
}

/// Maps before m that read array a into a read buffer, newest first.
WORKPART_DECL std::vector<int> program_solution::readers_before(std::size_t a, int m) const {
  std::vector<int> v;
  for (int k = m - 1; k >= 0; --k) {
    if (arrays_[a].slot[std::size_t(k)] < 0) continue;
    const auto& ap = slot(k, a);
    if (ap.use.read && !ap.reads_own_writes) v.push_back(k);
  }
  return v;
}

/// Writers of array a that run before map m, newest first; `cyclic`: then those from the
/// previous execute() (m itself last). Not those that pass their partial results on: they
/// never hold values (the writer after them holds the same boxes, and combines).
WORKPART_DECL std::vector<int> program_solution::writers_before(std::size_t a, int m,
                                                                bool cyclic) const {
  std::vector<int> v;
  const auto& pa = arrays_[a];
  const auto& w = pa.writers;
  for (auto it = w.rbegin(); it != w.rend(); ++it)
    if (*it < m && !pa.passes_on[std::size_t(*it)]) v.push_back(*it);
  if (cyclic)
    for (auto it = w.rbegin(); it != w.rend(); ++it)
      if (*it >= m && !pa.passes_on[std::size_t(*it)]) v.push_back(*it);
  return v;
}

WORKPART_DECL int program_solution::passed_from(std::size_t a, int m) const {
  const auto& pa = arrays_[a];
  const auto& w = pa.writers;
  const auto it = std::find(w.begin(), w.end(), m);
  if (it == w.end() || it == w.begin()) return -1;
  return pa.passes_on[std::size_t(*(it - 1))] ? *(it - 1) : -1;
}

WORKPART_DECL void program_solution::collect_arrays() {
  const int M = num_maps();
  for (int m = 0; m < M; ++m) {
    const auto& maps = in_.arrays[std::size_t(m)];
    for (std::size_t u = 0; u < maps.size(); ++u) {
      const array_solution& ap = *maps[u];
      std::size_t a = find(ap.use.id);
      if (a == std::size_t(-1)) {
        program_array pa;
        pa.name = ap.use.name;
        pa.id = ap.use.id;
        pa.slot.assign(std::size_t(M), -1);
        pa.partial.assign(std::size_t(M), combine_mode::none);
        pa.passes_on.assign(std::size_t(M), 0);
        pa.first_user = m;
        a = arrays_.size();
        arrays_.push_back(std::move(pa));
      }
      arrays_[a].slot[std::size_t(m)] = int(u);
      if (ap.use.written) arrays_[a].writers.push_back(m);
    }
  }
}

/// Partial results whose boxes overlap between ranks: where the program uses the array again
/// (another map, or this map's next run), they are combined rank to rank on the ranks'
/// disjoint parts (combine_mode::overlapping), else the map gathers them itself (combined on
/// root); refused where the boxes cannot be cut into one part per rank.
WORKPART_DECL void program_solution::check_split_writes() {
  const int M = num_maps();
  for (std::size_t a = 0; a < arrays_.size(); ++a)
    for (int m : arrays_[a].writers) {
      const auto& ap = slot(m, a);
      if (!ap.w_combine_on_root) continue;
      bool other_maps = arrays_[a].writers.size() > 1 ||
                        std::find(in_.used_elsewhere.begin(), in_.used_elsewhere.end(),
                                  arrays_[a].id) != in_.used_elsewhere.end();
      for (int k = 0; k < M; ++k)
        if (k != m && arrays_[a].slot[std::size_t(k)] >= 0) other_maps = true;
      if (overlapping_refused(ap, other_maps)) throw plan_error(overlap_refusal(a, m));
      if (overlapping_combined(ap, other_maps))
        arrays_[a].partial[std::size_t(m)] = combine_mode::overlapping;
      else
        delegated_gather_.push_back(a);
    }
}

/// Why a split write whose partial results overlap cannot be planned: the map, the grid, two
/// ranks' boxes that overlap, the other use of the array, and the grid dimensions to stop
/// splitting.
WORKPART_DECL std::string program_solution::overlap_refusal(std::size_t a, int m) const {
  const auto& ap = slot(m, a);
  const grid_shape& g = grid(m);
  const std::string& an = arrays_[a].name;
  const int active = int(g.product());
  // two ranks whose boxes overlap (and differ: not a group of partial results)
  std::string pair;
  for (int r = 0; r < active && pair.empty(); ++r)
    for (int q = r + 1; q < active && pair.empty(); ++q) {
      const box &x = ap.wbox[std::size_t(r)], &y = ap.wbox[std::size_t(q)];
      if (!(x == y) && !box::intersect(x, y).empty())
        pair = "rank " + std::to_string(r) + " writes " + x.str() + ", rank " + std::to_string(q) +
               " " + y.str();
    }
  // the grid dimensions whose neighbours' boxes overlap
  std::string dims;
  for (int d = 0; d < g.space_rank(); ++d) {
    if (g.dims[std::size_t(d)] <= 1) continue;
    bool makes = false;
    for (int r = 0; r < active && !makes; ++r) {
      auto c = grid_coords(g, r);
      if (c[std::size_t(d)] + 1 >= g.dims[std::size_t(d)]) continue;
      ++c[std::size_t(d)];
      const box &x = ap.wbox[std::size_t(r)], &y = ap.wbox[std::size_t(grid_rank(g, c))];
      makes = !(x == y) && !box::intersect(x, y).empty();
    }
    if (makes) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  }
  // the other use of the array: the nearest map before this one, else after it
  std::string other;
  for (int k = m - 1; k >= 0 && other.empty(); --k) {
    if (arrays_[a].slot[std::size_t(k)] < 0) continue;
    const auto& u = slot(k, a).use;
    const std::string& nk = name(k);  // wp::backward's zeroing maps: zero.dx, zero.dx.2, ...
    const std::string zero = "zero." + an;
    if (u.written && u.write_kind == combine::assign && nk.compare(0, zero.size(), zero) == 0 &&
        (nk.size() == zero.size() || nk[zero.size()] == '.'))
      other = "map '" + name(k) + "', which wp::backward added to zero the gradient before '" +
              name(m) + "' adds into it, writes '" + an + "' first";
    else
      other =
          "map '" + name(k) + "' " + (u.written ? "writes" : "reads") + " '" + an + "' before it";
  }
  for (int k = m + 1; k < num_maps() && other.empty(); ++k)
    if (arrays_[a].slot[std::size_t(k)] >= 0)
      other = "map '" + name(k) + "' " + (slot(k, a).use.read ? "reads" : "writes") + " '" + an +
              "' after it";
  if (other.empty())
    other = ap.use.read ? "this map reads '" + an + "' again on its next run"
                        : "the program uses '" + an + "' in other maps";
  const bool replicated = g.replicas() > 1;
  return "map '" + name(m) + "': under grid " + g.str() + " the ranks' partial results of '" + an +
         "' overlap (" + pair + ") and " +
         (replicated ? "the grid replicates the map, so they cannot be combined rank to rank"
                     : "cannot be cut into one part per rank to combine them rank to rank") +
         "; they could only be combined on root, but " + other + ". " +
         (dims.empty() ? "Give map '" + name(m) + "' a grid that does not split its space"
                       : "Stop splitting dimension" +
                             std::string(dims.find(',') != std::string::npos ? "s " : " ") + dims +
                             " of map '" + name(m) +
                             "' (the split that makes its write boxes of '" + an + "' overlap)") +
         (replicated ? ", or give it a grid without replicas" : "");
}

WORKPART_DECL void program_solution::build_redists(std::size_t only) {
  const int M = num_maps();
  const bool all = only == std::size_t(-1);
  const std::size_t a_lo = all ? 0 : only, a_hi = all ? arrays_.size() : only + 1;
  // the transfers of the last build lend their storage to this one's
  for (auto& r : redists_) {
    pool().give(std::move(r.first));
    pool().give(std::move(r.steady));
  }
  redists_.clear();
  into_.assign(std::size_t(M), {});
  for (int m = 0; m < M; ++m)
    for (std::size_t a = a_lo; a < a_hi; ++a) {
      if (arrays_[a].slot[std::size_t(m)] < 0) continue;
      for (bool old_values : {false, true}) {
        // a writer the previous one passes its partial results on to: every member's own
        const int from = old_values ? passed_from(a, m) : -1;
        const auto need = from >= 0 ? slot(m, a).wbox : need_of(m, a, old_values);
        bool any = false;
        for (const auto& b : need) any = any || !b.empty();
        if (!any) continue;
        program_redist r;
        r.array = a;
        r.to_map = m;
        r.old_values = old_values;
        if (from >= 0) {
          r.partials = true;
          r.first_layers = r.steady_layers = {from};
        } else if (arrays_[a].writers.empty()) {
          r.first_reads = true;
          r.first_layers = readers_before(a, m);
        } else {
          r.first_layers = writers_before(a, m, false);
          r.steady_layers = writers_before(a, m, true);
        }
        r.first = pool().take();
        plan_transfer(need, source_layers(r, true), r.first);
        r.steady = pool().take();
        // the same layers (a reader after the program's only writer): the same transfer
        if (!r.first_reads && r.steady_layers == r.first_layers)
          r.steady = r.first;
        else
          plan_transfer(need, source_layers(r, false), r.steady);
        finish(r);
        into_[std::size_t(m)].push_back(redists_.size());
        redists_.push_back(std::move(r));
      }
    }
  // root's gather of the final values: the last writer of each element
  for (std::size_t a = a_lo; a < a_hi && in_.gathers; ++a) {
    if (arrays_[a].writers.empty() || gathered_by_map(a)) continue;
    std::vector<box> need(static_cast<std::size_t>(nranks()));
    need[0] = whole_box(slot(arrays_[a].writers.front(), a).use);
    program_redist r;
    r.array = a;
    r.gather = true;
    r.steady_layers = writers_before(a, M, false);
    r.first_layers = r.steady_layers;
    r.steady = pool().take();
    plan_transfer(need, source_layers(r, false), r.steady);
    r.first = r.steady;
    finish(r);
    redists_.push_back(std::move(r));
  }
}

WORKPART_DECL void program_solution::finish(program_redist& r) const {
  r.first_remote = r.first.any_remote();
  r.steady_remote = r.steady.any_remote();
  if (!in_.words) return;
  std::string from;
  for (const auto* lay : {&r.steady_layers, &r.first_layers})
    for (int m : *lay)
      if (from.find("'" + name(m) + "'") == std::string::npos)
        from += (from.empty() ? "'" : ", '") + name(m) + "'";
  if (r.steady.any_remainder() || r.first.any_remainder()) from += from.empty() ? "root" : ", root";
  r.from = from;
  r.to = r.gather ? "root" : "'" + name(r.to_map) + "'";
  if (r.partials) {  // the chain's last writer combines them
    const auto& pa = arrays_[r.array];
    auto w = std::find(pa.writers.begin(), pa.writers.end(), r.to_map);
    while (pa.passes_on[std::size_t(*w)]) ++w;
    r.kind = "kept (partial results passed on, combined after '" + name(*w) + "')";
    return;
  }
  const bool by_first = r.steady.pieces.empty() && !r.first.pieces.empty();
  r.kind = r.gather ? "Gatherv"
                    : transfer_kind(by_first ? r.first : r.steady, source_layers(r, by_first));
}

WORKPART_DECL index_t program_solution::redist_bytes(std::size_t x, int r, bool first,
                                                     bool sent) const {
  const program_redist& rd = redists_[x];
  if (rd.combine) {
    for (const auto& c : combines_)
      if (c.entry == x) {
        const auto b = combine_bytes(c)[std::size_t(r)];
        return sent ? b.first : b.second;
      }
    return 0;
  }
  const transfer& t = first ? rd.first : rd.steady;
  const std::size_t es = elem_size(rd.array);
  return sent ? t.bytes_sent(r, es) : t.bytes_received(r, es);
}

WORKPART_DECL void program_solution::totals() {
  root_total_ = rank_first_total_ = rank_steady_total_ = 0;
  // what moves between ranks, over all of them (each piece once: not rank by rank, which is
  // the ranks times the pieces)
  auto moved = [&](const transfer& t, std::size_t a) {
    index_t n = 0;
    for (const auto& p : t.pieces)
      if (p.from != p.to) n += p.b.size();
    return n * index_t(elem_size(a));
  };
  for (const auto& r : redists_) {
    if (r.combine) continue;
    if (r.gather) {
      root_total_ += moved(r.steady, r.array);
    } else {
      rank_first_total_ += moved(r.first, r.array);
      rank_steady_total_ += moved(r.steady, r.array);
    }
  }
  for (const auto& c : combines_)
    for (const auto& b : combine_bytes(c)) {
      rank_first_total_ += b.second;
      rank_steady_total_ += b.second;
    }
}

WORKPART_DECL bool program_solution::shown(const program_redist& r) const {
  if (r.gather || r.combine) return true;
  for (const auto* lay : {&r.steady_layers, &r.first_layers})
    for (int m : *lay)
      if (m != r.to_map) return true;
  return r.first.any_remote() || r.steady.any_remote();
}

WORKPART_DECL void program_solution::program_steps(int m, const array_solution& fresh,
                                                   std::vector<comm_step>& in,
                                                   std::vector<comm_step>& init,
                                                   std::vector<comm_step>& out) {
  in = fresh.in_steps;
  init = fresh.init_steps;
  const std::size_t a = find(fresh.use.id);
  // the program gathers, except arrays whose partial results only their map combines
  if (gathered_by_map(a))
    out = fresh.out_steps;
  else
    out.clear();
  const std::vector<index_t> zero(std::size_t(nranks()), 0);
  for (std::size_t x : into_[std::size_t(m)]) {  // the redistributions into map m
    auto& r = redists_[x];
    if (r.array != a) continue;  // (into_ holds no gather, no combine, only map m's)
    auto& steps = r.old_values ? init : in;
    r.root_part = false;
    if (r.first.any_remainder()) {
      // root sends only the parts no earlier map provides (init() generates in place);
      // where no map provides any, the map's own scatter (with its broadcasts) stays
      // (overlapping partial results: root sends the old values of each rank's part, which
      // the map's own scatter has no step for)
      const bool parts =
          r.old_values && arrays_[a].partial[std::size_t(m)] == combine_mode::overlapping;
      if (!parts &&
          (r.first.pieces.empty() || steps.empty() || steps.front().op != step_op::scatterv))
        continue;
      comm_step part{step_op::scatterv_part, "Alltoallw",
                     "root -> ranks, only the parts no earlier map writes", zero, zero};
      const index_t es = index_t(fresh.use.elem_size);
      r.rest_remote = false;
      for (const auto& p : r.first.rest)
        if (p.to != 0) {
          part.sent[0] += p.b.size() * es;
          part.received[std::size_t(p.to)] += p.b.size() * es;
          r.rest_remote = true;
        }
      r.root_part = true;
      steps.assign(1, part);
      continue;
    }
    steps.assign(1, comm_step{step_op::none, "none",
                              "from map(s) " + r.from + " (see the redistributions)", zero, zero});
  }
}

WORKPART_DECL index_t program_solution::root_scatter_total() const {
  index_t t = 0;
  for (const auto& maps : in_.arrays) t += predicted_total(maps, nranks(), true);
  return t;
}

WORKPART_DECL index_t program_solution::root_gather_total() const {
  index_t t = root_total_;
  for (const auto& maps : in_.arrays) t += predicted_total(maps, nranks(), false);
  return t;
}

WORKPART_DECL program_bytes program_solution::bytes_of(int r) const {
  program_bytes b;
  for (const auto& maps : in_.arrays) {
    b.scatter_sent += predicted_bytes(maps, r, true, true);
    b.scatter_received += predicted_bytes(maps, r, true, false);
    // arrays a map gathers itself (overlapping partial results)
    b.gather_sent += predicted_bytes(maps, r, false, true);
    b.gather_received += predicted_bytes(maps, r, false, false);
  }
  for (std::size_t x = 0; x < redists_.size(); ++x) {
    if (redists_[x].gather) {
      b.gather_sent += redist_bytes(x, r, false, true);
      b.gather_received += redist_bytes(x, r, false, false);
      continue;
    }
    b.first_sent += redist_bytes(x, r, true, true);
    b.first_received += redist_bytes(x, r, true, false);
    b.steady_sent += redist_bytes(x, r, false, true);
    b.steady_received += redist_bytes(x, r, false, false);
  }
  return b;
}

WORKPART_DECL std::vector<shared_read> program_solution::shared_reads(int rank) const {
  std::vector<shared_read> out;
  // the single local piece that fills this rank's whole need, or nullptr
  auto whole_local = [&](const transfer& t, const box& need) -> const piece* {
    const piece* only = nullptr;
    for (const auto& p : t.pieces)
      if (p.to == rank) {
        if (only) return nullptr;
        only = &p;
      }
    return only && only->from == rank && only->b == need ? only : nullptr;
  };
  for (const auto& r : redists_) {
    // not where root sends (or init() generates) the reader's box at scatter(): that would
    // write into the shared buffer
    if (r.gather || r.combine || r.old_values || r.first.any_remainder()) continue;
    const box& need = slot(r.to_map, r.array).rbox[std::size_t(rank)];
    if (need.empty()) continue;
    const piece* p = whole_local(r.first, need);
    if (!p) continue;
    const int src = r.first_layers[std::size_t(p->layer)];
    if (r.first_reads) {
      if (slot(src, r.array).rbox[std::size_t(rank)] == need)
        out.push_back({r.to_map, r.array, src, false});
      continue;
    }
    const piece* q = whole_local(r.steady, need);
    if (!q || r.steady_layers[std::size_t(q->layer)] != src ||
        !(slot(src, r.array).wbox[std::size_t(rank)] == need))
      continue;
    out.push_back({r.to_map, r.array, src, true});
  }
  return out;
}

WORKPART_DECL std::string program_solution::explain(
    const std::vector<std::string>& map_texts) const {
  const int M = num_maps();
  std::string s =
      "program of " + std::to_string(M) + " maps on " + std::to_string(nranks()) + " ranks:";
  for (int m = 0; m < M; ++m)
    s += std::string(m ? "," : "") + " '" + name(m) + "' " + grid(m).str();
  s += "\n";
  for (const auto& t : map_texts) s += t;
  auto per_rank = [&](const transfer& t, std::size_t e) {
    index_t tot = 0;
    std::string v;
    for (int k = 0; k < nranks(); ++k) {
      const index_t b = t.bytes_received(k, e);
      tot += b;
      v += " " + std::to_string(b);
    }
    return "total " + bytes_text(tot) + "; received per rank:" + v;
  };
  auto mapping = [&](int m, std::size_t a, bool writes) {
    std::string out;
    const std::string& mt = slot(m, a).mapping_text;
    std::size_t pos = 0;
    while (pos < mt.size()) {
      const std::size_t end = mt.find('\n', pos);
      const std::string line = mt.substr(pos, end - pos);
      if (line.find(writes ? "write " : "read  ") != std::string::npos)
        out += "      " + name(m) + ": " + line.substr(line.find_first_not_of(' ')) + "\n";
      pos = end == std::string::npos ? mt.size() : end + 1;
    }
    return out;
  };
  s += "  between maps (before each map runs; from the maps that wrote last, inputs from the maps "
       "that read them before):\n";
  bool any = false;
  for (std::size_t x = 0; x < redists_.size(); ++x) {
    const auto& r = redists_[x];
    if (r.gather || r.to_map < 0 || !shown(r)) continue;
    any = true;
    const std::size_t a = r.array;
    const std::size_t es = elem_size(a);
    if (r.combine) {
      s += "    array " + arrays_[a].name + ": partial results of " + r.from +
           " combined: " + r.kind + "; received per rank:";
      index_t tot = 0;
      for (int k = 0; k < nranks(); ++k) {
        const index_t b = redist_bytes(x, k, false, false);
        s += " " + std::to_string(b);
        tot += b;
      }
      s += ", total " + bytes_text(tot) + "\n";
      continue;
    }
    s += "    array " + arrays_[a].name + (r.old_values ? " (old values)" : "") + " -> " + r.to +
         " from " + r.from + ":\n";
    for (int m : r.first_reads ? r.first_layers : r.steady_layers)
      s += mapping(m, a, !r.first_reads);
    s += mapping(r.to_map, a, false);
    if (r.first_layers != r.steady_layers && r.first.pieces.size() + r.steady.pieces.size() > 0 &&
        (r.first.any_remote() != r.steady.any_remote() ||
         per_rank(r.first, es) != per_rank(r.steady, es))) {
      s += "      first execute(): " + transfer_kind(r.first, source_layers(r, true)) + ", " +
           per_rank(r.first, es) + "\n";
      s += "      later execute(): " +
           (r.steady.pieces.empty() ? std::string("nothing (it stays)") : r.kind) + ", " +
           per_rank(r.steady, es) + "\n";
    } else {
      s += "      " + r.kind + ", " + per_rank(r.steady, es) + "\n";
    }
  }
  if (!any) s += "    nothing\n";
  s += "  gather (root receives the final values of what the program writes):\n";
  for (const auto& r : redists_)
    if (r.gather)
      s += "    array " + arrays_[r.array].name + " from " + r.from + ": " + r.kind + ", " +
           per_rank(r.steady, elem_size(r.array)) + "\n";
  for (std::size_t a : delegated_gather_)
    s += "    array " + arrays_[a].name + ": by map '" + name(arrays_[a].writers.front()) +
         "' (overlapping partial results, combined on root; its gather steps above)\n";
  s += "  bytes through root: scatter " + bytes_text(root_scatter_total()) + ", gather " +
       bytes_text(root_gather_total()) + "; rank to rank: first execute() " +
       bytes_text(rank_first_total_) + ", each later execute() " + bytes_text(rank_steady_total_) +
       "\n";
  return s;
}
}  // namespace workpart::detail
