#pragma once
/// \file combine_choice.ipp
/// program_solution's choice of how each split reduction's partial results are combined
/// (Allreduce, a reduce-scatter, Reduce onto the leaders) and what each candidate moves: the
/// bodies of program.hpp's combine functions that are not templates, included by the header
/// (header-only, the default) or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp). The rest of the program solver is in
/// program.ipp.

#include "../program.hpp"

namespace workpart::detail {

/// Split reductions: per writer, the combine that moves the fewest bytes together with what
/// the readers then fetch from where it leaves the values (combine_cost); ties go to the
/// Allreduce (one step), then to a reduce-scatter (no rank receives every partial).
WORKPART_DECL void program_solution::choose_combines() {
  const int M = num_maps();
  for (std::size_t a = 0; a < arrays_.size(); ++a)
    for (int m : arrays_[a].writers)
      if (!slot(m, a).wgroup.empty() && !slot(m, a).w_combine_on_root) {
        arrays_[a].partial[std::size_t(m)] = combine_mode::all_reduce;
        arrays_[a].groups[std::size_t(m)] = find_write_groups(a, m);
      }
  pass_partials();
  // Each candidate is priced by array a's redistributions alone (combine_cost reads no
  // other). Every candidate leaves the values of the same boxes (the group's write boxes),
  // only on other members, so what the readers take from map m's layer is the same boxes
  // under each; a candidate changes only which of them their receivers hold themselves. So
  // the redistributions are planned once and every candidate priced from those pieces
  // (combine_cost_from): the same figures as planning each (a network's step has a combine
  // per weight gradient; the optimizer solves ~10^4 such programs). They are planned with the
  // Reduce onto the leaders, the cheapest in two of three of a Transformer's combines at 64
  // ranks: a program of one array then keeps that plan.
  bool planned_as_chosen = false;
  const bool every = in_.plan_every_candidate;
  for (std::size_t a = 0; a < arrays_.size(); ++a)
    for (int m : arrays_[a].writers) {
      // (overlapping partial results have one way: check_split_writes set it)
      if (arrays_[a].partial[std::size_t(m)] == combine_mode::none ||
          arrays_[a].partial[std::size_t(m)] == combine_mode::overlapping)
        continue;
      auto& pa = arrays_[a];
      auto set = [&](combine_mode mode, std::vector<box> owned) {
        pa.partial[std::size_t(m)] = mode;
        pa.owned[std::size_t(m)] = std::move(owned);
      };
      auto price = [&] {
        if (every) build_redists(a);
        return every ? combine_cost(a, m) : combine_cost_from(a, m);
      };
      if (!every) {
        set(combine_mode::reduce_to_leaders, {});
        build_redists(a);
      }
      set(combine_mode::all_reduce, {});
      combine_mode best_mode = combine_mode::all_reduce;
      std::vector<box> best_owned;
      index_t best = price();
      auto consider = [&](combine_mode mode, std::vector<box> owned) {
        set(mode, owned);
        // the combine's own bytes bound its cost from below: where they alone reach the best,
        // the candidate cannot win (only a cheaper one replaces the best)
        if (combine_only_cost(a, m) >= best) return;
        const index_t c = price();
        if (c < best) {
          best = c;
          best_mode = mode;
          best_owned = std::move(owned);
        }
      };
      for (auto& owned : ownership_candidates(a, m))
        consider(combine_mode::reduce_scatter, std::move(owned));
      consider(combine_mode::reduce_to_leaders, {});
      set(best_mode, std::move(best_owned));
      planned_as_chosen =
          arrays_.size() == 1 && best_mode == combine_mode::reduce_to_leaders && !every;
    }
  // the redistributions with the modes chosen: planned already where the program has one
  // array and its last combine keeps the Reduce they were planned with
  if (!planned_as_chosen) build_redists();
  own_pool_ = {};  // the candidates' spare storage: not kept for the solution's lifetime
  // the combines, in the order the maps run
  combines_of_.assign(std::size_t(M), {});
  for (std::size_t a = 0; a < arrays_.size(); ++a)
    for (int m : arrays_[a].writers)
      if (arrays_[a].partial[std::size_t(m)] != combine_mode::none) {
        combines_of_[std::size_t(m)].push_back(combines_.size());
        combines_.push_back({a, m, arrays_[a].partial[std::size_t(m)], 0});
      }
  // the members that start a later execute() from the identity: after an Allreduce or a
  // reduce-scatter, or where they passed their partial results on, unless the partial results
  // are passed to them
  restarts_of_.assign(std::size_t(M), {});
  for (std::size_t a = 0; a < arrays_.size(); ++a)
    for (int m : arrays_[a].writers) {
      const combine_mode mode = arrays_[a].partial[std::size_t(m)];
      if ((mode == combine_mode::all_reduce || mode == combine_mode::reduce_scatter ||
           arrays_[a].passes_on[std::size_t(m)]) &&
          passed_from(a, m) < 0)
        restarts_of_[std::size_t(m)].push_back(a);
    }
  add_combine_entries();
  totals();
}

/// A split writer whose next writer of the array adds onto the same boxes (each rank's write
/// box the same, the same groups of partial results, the same op, the old values: `+=`,
/// max_into, min_into) and reads no more of it, with no map using the array between them,
/// passes its partial results on: the next writer adds its own onto a local copy of them, and
/// the group's sum of the chain's partial results is the same sum, combined once. A
/// framework accumulates an RNN's weight gradient over its steps so; combining after every
/// step moved it once per step.
WORKPART_DECL void program_solution::pass_partials() {
  for (std::size_t a = 0; a < arrays_.size(); ++a) {
    auto& pa = arrays_[a];
    for (std::size_t i = 0; i + 1 < pa.writers.size(); ++i) {
      const int p = pa.writers[i], n = pa.writers[i + 1];
      if (pa.partial[std::size_t(p)] == combine_mode::none ||
          pa.partial[std::size_t(n)] == combine_mode::none ||
          pa.partial[std::size_t(p)] == combine_mode::overlapping ||
          pa.partial[std::size_t(n)] == combine_mode::overlapping)
        continue;
      bool used_between = false;
      for (int k = p + 1; k < n; ++k) used_between = used_between || pa.slot[std::size_t(k)] >= 0;
      const auto &sp = slot(p, a), &sn = slot(n, a);
      if (used_between || !sn.w_init_old || sn.use.read || sn.use.write_kind == combine::assign ||
          sn.use.write_kind != sp.use.write_kind ||
          pa.groups[std::size_t(p)] != pa.groups[std::size_t(n)])
        continue;
      bool same_boxes = true;
      for (int r = 0; r < nranks() && same_boxes; ++r)
        same_boxes = sp.wbox[std::size_t(r)] == sn.wbox[std::size_t(r)];
      if (!same_boxes) continue;
      pa.passes_on[std::size_t(p)] = 1;
      pa.partial[std::size_t(p)] = combine_mode::none;
    }
  }
}

WORKPART_DECL index_t program_solution::combine_only_cost(std::size_t a, int m) const {
  index_t t = 0;
  for (const auto& b : combine_bytes(a, m, arrays_[a].partial[std::size_t(m)])) t += 2 * b.second;
  return t;
}

/// Bytes (received, over all ranks, first and later executes) of combining map m's partial
/// results of array a as planned now, and of fetching them from where they then are.
WORKPART_DECL index_t program_solution::combine_cost(std::size_t a, int m) const {
  index_t t = combine_only_cost(a, m);
  const index_t es = index_t(slot(m, a).use.elem_size);
  for (const auto& r : redists_) {
    if (r.gather || r.array != a) continue;
    for (const auto* tr : {&r.first, &r.steady}) {
      const auto& lay = tr == &r.first ? r.first_layers : r.steady_layers;
      for (const auto& p : tr->pieces)
        if (lay[std::size_t(p.layer)] == m && p.from != p.to) t += p.b.size() * es;
    }
  }
  return t;
}

WORKPART_DECL index_t program_solution::combine_cost_from(std::size_t a, int m) const {
  const index_t es = index_t(slot(m, a).use.elem_size);
  const std::vector<box> held = held_after(m, a, false);
  index_t remote = 0;
  for (const auto& r : redists_) {
    if (r.gather || r.array != a) continue;
    index_t first = 0;
    for (const auto* tr : {&r.first, &r.steady}) {
      // a later execute() from the same layers moves what the first does (build_redists)
      if (tr == &r.steady && !r.first_reads && r.steady_layers == r.first_layers) {
        remote += first;
        continue;
      }
      const auto& lay = tr == &r.first ? r.first_layers : r.steady_layers;
      index_t n = 0;
      for (const auto& p : tr->pieces)
        if (lay[std::size_t(p.layer)] == m)
          n += p.b.size() - meet_size(p.b, held[std::size_t(p.to)]);
      remote += n;
      first = n;
    }
  }
  return combine_only_cost(a, m) + remote * es;
}

WORKPART_DECL std::vector<std::vector<int>> program_solution::find_write_groups(std::size_t a,
                                                                                int m) const {
  const auto& ap = slot(m, a);
  const auto& g = grid(m);
  std::vector<std::vector<int>> groups;
  std::vector<int> color_of;
  for (int r = 0; r < int(g.product()); ++r) {
    if (ap.wbox[std::size_t(r)].empty()) continue;
    const auto ck = group_key(g, r, ap.wgroup);
    std::size_t x = 0;
    while (x < color_of.size() && color_of[x] != ck.first) ++x;
    if (x == color_of.size()) {
      color_of.push_back(ck.first);
      groups.emplace_back();
    }
    auto& members = groups[x];
    if (members.size() <= std::size_t(ck.second)) members.resize(std::size_t(ck.second) + 1, -1);
    members[std::size_t(ck.second)] = r;
  }
  return groups;
}

/// Ways to cut each group's box into the parts a reduce-scatter leaves on its members: as a
/// later map reads it (where the readers' boxes are members' and cut it exactly), or in
/// near-equal blocks along one axis.
WORKPART_DECL std::vector<std::vector<box>> program_solution::ownership_candidates(std::size_t a,
                                                                                   int m) const {
  const auto& ap = slot(m, a);
  const int R = ap.use.rank;
  const int M = num_maps();
  std::vector<std::vector<box>> out;
  if (R == 0) return out;  // one element: Reduce onto the leader is the same thing
  const auto& groups = write_groups(a, m);
  auto add = [&](std::vector<box> owned) {
    bool leaders_own_all = true;  // that is a Reduce onto the leaders
    for (const auto& members : groups)
      for (std::size_t x = 1; x < members.size(); ++x)
        leaders_own_all = leaders_own_all && owned[std::size_t(members[x])].empty();
    if (!leaders_own_all && std::find(out.begin(), out.end(), owned) == out.end())
      out.push_back(std::move(owned));
  };
  // as a later map (or this one, next time) reads it
  for (int k = 0; k < M; ++k) {
    if (arrays_[a].slot[std::size_t(k)] < 0) continue;
    const auto need = need_of(k, a, false);
    std::vector<box> owned(static_cast<std::size_t>(nranks()));
    bool ok = true;
    for (const auto& members : groups) {
      const box& W = ap.wbox[std::size_t(members.front())];
      index_t covered = 0;
      for (std::size_t x = 0; x < members.size() && ok; ++x) {
        const box o = box::intersect(need[std::size_t(members[x])], W);
        for (std::size_t y = 0; y < x && ok; ++y)
          ok = meet_size(o, owned[std::size_t(members[y])]) == 0;
        owned[std::size_t(members[x])] = o;
        covered += o.size();
      }
      ok = ok && covered == W.size();
      if (!ok) break;
    }
    if (ok) add(std::move(owned));
  }
  // in blocks along each axis
  for (int axis = 0; axis < R; ++axis) {
    std::vector<box> owned(static_cast<std::size_t>(nranks()));
    for (const auto& members : groups) {
      const box& W = ap.wbox[std::size_t(members.front())];
      const index_t G = index_t(members.size());
      for (index_t x = 0; x < G; ++x) {  // the balanced blocks a grid dimension makes
        const block_range k = balanced_block(W.lo[axis], W.hi[axis], G, x);
        box o = W;
        o.lo[axis] = k.start;
        o.hi[axis] = k.end;
        owned[std::size_t(members[std::size_t(x)])] = o.empty() ? box{} : o;
      }
    }
    add(std::move(owned));
  }
  return out;
}

WORKPART_DECL std::vector<box> program_solution::group_parts(std::size_t a, int m, int r) const {
  for (const auto& members : write_groups(a, m))
    if (std::find(members.begin(), members.end(), r) != members.end()) {
      std::vector<box> parts;
      for (int x : members) parts.push_back(arrays_[a].owned[std::size_t(m)][std::size_t(x)]);
      return parts;
    }
  return {};
}

/// The partial combines, as entries after the redistributions.
WORKPART_DECL void program_solution::add_combine_entries() {
  for (auto& c : combines_) {
    const auto& ap = slot(c.map, c.array);
    program_redist r;
    r.array = c.array;
    r.to_map = c.map;
    r.combine = true;
    r.from = r.to = "'" + name(c.map) + "'";
    if (c.mode == combine_mode::overlapping)
      r.kind = std::string("combine of overlapping parts(") + combine_name(ap.use.write_kind) +
               "), each part on its owner";
    else
      r.kind = std::string(c.mode == combine_mode::all_reduce       ? "Allreduce("
                           : c.mode == combine_mode::reduce_scatter ? "reduce-scatter("
                                                                    : "Reduce(") +
               combine_name(ap.use.write_kind) + ") over " + dims_text(ap.wgroup);
    r.first_remote = r.steady_remote = true;
    c.entry = redists_.size();
    redists_.push_back(std::move(r));
  }
}

/// Bytes as the collectives count them: each member but the leader sends its box once (a
/// reduce-scatter: each member sends every other one that one's part); an Allreduce then
/// sends the whole back to each of them, or, in parts, each member sends every other one
/// that one's run of its partial and then its own combined run.
WORKPART_DECL std::vector<std::pair<index_t, index_t>> program_solution::combine_bytes(
    std::size_t a, int m, combine_mode mode) const {
  const auto& ap = slot(m, a);
  std::vector<std::pair<index_t, index_t>> v(static_cast<std::size_t>(nranks()));
  const index_t es = index_t(ap.use.elem_size);
  if (mode == combine_mode::none) return v;
  if (mode == combine_mode::overlapping) {
    // rank r sends rank s what its box holds of s's part
    for_each_overlap(ap, [&](int r, int s, index_t n) {
      v[std::size_t(r)].first += n * es;
      v[std::size_t(s)].second += n * es;
    });
    return v;
  }
  if (mode == combine_mode::reduce_scatter) {
    // each member sends every other one that one's part of its partial results
    const auto& owned = arrays_[a].owned[std::size_t(m)];
    for (const auto& members : write_groups(a, m)) {
      index_t whole = 0;
      for (int r : members) whole += owned[std::size_t(r)].size() * es;
      for (int r : members) {
        const index_t own = owned[std::size_t(r)].size() * es;
        v[std::size_t(r)].first += whole - own;
        v[std::size_t(r)].second += own * index_t(members.size() - 1);
      }
    }
    return v;
  }
  for (const auto& members : write_groups(a, m)) {
    const int G = int(members.size());
    const index_t n = ap.wbox[std::size_t(members.front())].size();
    if (mode == combine_mode::all_reduce && all_reduce_uses_parts(n, ap.use.elem_size, G)) {
      for (int x = 0; x < G; ++x) {  // the others' runs out and in, mine to and from G - 1
        const index_t own = all_reduce_part(n, G, x).size();
        const index_t b = (n - own + index_t(G - 1) * own) * es;
        v[std::size_t(members[std::size_t(x)])].first += b;
        v[std::size_t(members[std::size_t(x)])].second += b;
      }
      continue;
    }
    const std::size_t l = std::size_t(members.front());
    for (int x = 1; x < G; ++x) {
      const std::size_t r = std::size_t(members[std::size_t(x)]);
      v[r].first += n * es;
      v[l].second += n * es;
      if (mode == combine_mode::all_reduce) {
        v[l].first += n * es;
        v[r].second += n * es;
      }
    }
  }
  return v;
}

/// Messages as the collectives send them: a reduce-scatter, every member with every other
/// (both ways); Reduce (and the Bcast of an Allreduce), the leader with each member; an
/// Allreduce in parts, twice every member with every other whose run is not empty.
WORKPART_DECL std::vector<int> program_solution::combine_messages(const partial_combine& c) const {
  const auto& ap = slot(c.map, c.array);
  std::vector<int> v(static_cast<std::size_t>(nranks()), 0);
  if (c.mode == combine_mode::none) return v;
  if (c.mode == combine_mode::overlapping) {
    for_each_overlap(ap, [&](int r, int s, index_t) {
      ++v[std::size_t(r)];
      ++v[std::size_t(s)];
    });
    return v;
  }
  for (const auto& members : write_groups(c.array, c.map)) {
    const int G = int(members.size());
    const index_t n = ap.wbox[std::size_t(members.front())].size();
    const bool parts =
        c.mode == combine_mode::all_reduce && all_reduce_uses_parts(n, ap.use.elem_size, G);
    int runs = 0;  // non-empty runs of an Allreduce in parts
    for (int x = 0; parts && x < G; ++x) runs += all_reduce_part(n, G, x).size() > 0;
    for (int x = 0; x < G; ++x) {
      int& k = v[std::size_t(members[std::size_t(x)])];
      if (c.mode == combine_mode::reduce_scatter) {
        k += 2 * (G - 1);
      } else if (parts) {
        const bool own = all_reduce_part(n, G, x).size() > 0;
        k += 2 * (runs - (own ? 1 : 0)) + (own ? 2 * (G - 1) : 0);
      } else {
        const int peers = x == 0 ? G - 1 : 1;
        k += c.mode == combine_mode::all_reduce ? 2 * peers : peers;
      }
    }
  }
  return v;
}

}  // namespace workpart::detail
