#pragma once
/// \file redistribute.ipp
/// The bodies of redistribute.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../redistribute.hpp"

namespace workpart::detail {

/// Whether box::intersect(x, y) is not empty, without building it (a box is 264 bytes).
inline bool boxes_meet(const box& x, const box& y) {
  if (x.empty() || y.empty()) return false;
  for (int a = 0; a < x.rank; ++a)
    if (std::max(x.lo[a], y.lo[a]) >= std::min(x.hi[a], y.hi[a])) return false;
  return true;
}

/// Whether y holds all of x (x not empty).
inline bool box_covers(const box& y, const box& x) {
  if (x.empty() || y.empty() || x.rank != y.rank) return false;
  for (int a = 0; a < x.rank; ++a)
    if (y.lo[a] > x.lo[a] || x.hi[a] > y.hi[a]) return false;
  return true;
}

WORKPART_DECL void subtract_into(const box& a, const box& b, std::vector<box>& out) {
  if (a.empty()) return;
  const box c = box::intersect(a, b);
  if (c.empty()) {
    out.push_back(a);
    return;
  }
  box rest = a;
  for (int x = 0; x < a.rank; ++x) {
    if (rest.lo[x] < c.lo[x]) {
      box p = rest;
      p.hi[x] = c.lo[x];
      out.push_back(p);
    }
    if (c.hi[x] < rest.hi[x]) {
      box p = rest;
      p.lo[x] = c.hi[x];
      out.push_back(p);
    }
    rest.lo[x] = c.lo[x];
    rest.hi[x] = c.hi[x];
  }
}

WORKPART_DECL holder_index::holder_index(const std::vector<box>& held) {
  int rank = -1;
  for (const box& b : held)
    if (!b.empty()) rank = b.rank;
  if (rank < 0) return;  // nothing held
  axes_.resize(std::size_t(std::max(rank, 1)));
  for (int a = 0; a < int(axes_.size()); ++a) {
    auto& ax = axes_[std::size_t(a)];
    for (int s = 0; s < int(held.size()); ++s) {
      const box& b = held[std::size_t(s)];
      if (!b.empty()) ax.entries.push_back({rank == 0 ? 0 : b.lo[a], rank == 0 ? 1 : b.hi[a], s});
    }
    std::sort(ax.entries.begin(), ax.entries.end(), [](const entry& x, const entry& y) {
      return x.lo != y.lo ? x.lo < y.lo : x.rank < y.rank;
    });
    for (std::size_t e = 1; e < ax.entries.size(); ++e)
      ax.monotone = ax.monotone && ax.entries[e - 1].hi <= ax.entries[e].hi;
  }
  rank_zero_ = rank == 0;
}

WORKPART_DECL void holder_index::candidates(const box& b, std::vector<int>& out) const {
  out.clear();
  if (axes_.empty()) return;
  std::size_t best = 0;
  range pick{};
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    const range r = run(a, b);
    if (a == 0 || r.last - r.first < pick.last - pick.first) pick = r, best = a;
  }
  const index_t lo = rank_zero_ ? 0 : b.lo[best];
  for (auto e = pick.first; e != pick.last; ++e)
    if (e->hi > lo) out.push_back(e->rank);
}

WORKPART_DECL holder_index::range holder_index::run(std::size_t a, const box& b) const {
  const auto& ax = axes_[a];
  const index_t lo = rank_zero_ ? 0 : b.lo[a], hi = rank_zero_ ? 1 : b.hi[a];
  const iter last = std::partition_point(ax.entries.begin(), ax.entries.end(),
                                         [&](const entry& e) { return e.lo < hi; });
  iter first = ax.entries.begin();
  if (ax.monotone)
    first =
        std::partition_point(ax.entries.begin(), last, [&](const entry& e) { return e.hi <= lo; });
  return {first, last};
}

WORKPART_DECL transfer plan_transfer(const std::vector<box>& need,
                                     const std::vector<layer>& layers) {
  transfer t;
  plan_transfer(need, layers, t);
  return t;
}

WORKPART_DECL void plan_transfer(const std::vector<box>& need, const std::vector<layer>& layers,
                                 transfer& t) {
  const int P = int(need.size());
  t.pieces.clear();
  t.rest.clear();
  t.remainder.assign(std::size_t(P), 0);
  std::vector<holder_index> index;
  for (const auto& l : layers) index.emplace_back(l.boxes);
  std::vector<box> left, next;
  std::vector<int> senders;
  for (int r = 0; r < P; ++r) {
    if (need[r].empty()) continue;
    left.assign(1, need[r]);
    for (std::size_t l = 0; l < layers.size() && !left.empty(); ++l) {
      const auto& held = layers[l].boxes;
      // the rank holds all it still needs: the one piece the order below would find first
      // (most needs of a replicated layer: no candidates to list and sort)
      if (left.size() == 1 && std::size_t(r) < held.size() &&
          box_covers(held[std::size_t(r)], left[0])) {
        t.pieces.push_back({r, r, int(l), left[0]});
        left.clear();
        break;
      }
      // the rank itself first (nothing moves), then the ranks after it: spreads the senders
      // (ranks whose box cannot meet the need are left out: they would add no piece)
      index[l].candidates(need[r], senders);
      std::sort(senders.begin(), senders.end(),
                [&](int a, int b) { return (a - r + P) % P < (b - r + P) % P; });
      for (std::size_t k = 0; k < senders.size() && !left.empty(); ++k) {
        const int s = senders[k];
        const box& h = held[std::size_t(s)];
        // the first piece left that s holds any of; where none, nothing changes (no copies)
        std::size_t i = 0;
        while (i < left.size() && !boxes_meet(left[i], h)) ++i;
        if (i == left.size()) continue;
        next.assign(left.begin(), left.begin() + std::ptrdiff_t(i));
        for (; i < left.size(); ++i) {
          if (!boxes_meet(left[i], h)) {
            next.push_back(left[i]);
            continue;
          }
          const box c = box::intersect(left[i], h);
          t.pieces.push_back({s, r, int(l), c});
          subtract_into(left[i], c, next);
        }
        left.swap(next);
      }
    }
    t.remainder[std::size_t(r)] = !left.empty();
    for (const box& x : left) t.rest.push_back({0, r, -1, x});
  }
}

WORKPART_DECL std::vector<box> need_before(const array_solution& ap, const grid_shape& g,
                                           int nranks, bool old_values) {
  std::vector<box> need(static_cast<std::size_t>(nranks));
  if (!old_values) {
    if (ap.use.read && !ap.reads_own_writes) need = ap.rbox;
    return need;
  }
  if (!(ap.use.written && ap.w_init_old)) return need;
  for (int r = 0; r < int(g.product()) && r < nranks; ++r)
    if (group_key(g, r, ap.wgroup).second == 0) need[std::size_t(r)] = ap.wbox[std::size_t(r)];
  return need;
}

WORKPART_DECL std::vector<box> leaders_write_boxes(const array_solution& ap, const grid_shape& g,
                                                   int nranks) {
  std::vector<box> held(static_cast<std::size_t>(nranks));
  for (int r = 0; r < int(g.product()) && r < nranks; ++r)
    if (!ap.wbox[std::size_t(r)].empty() && group_key(g, r, ap.wgroup).second == 0)
      held[std::size_t(r)] = ap.wbox[std::size_t(r)];
  return held;
}

WORKPART_DECL std::string transfer_kind(const transfer& t, const std::vector<layer>& layers) {
  if (!t.any_remote()) return "none";
  std::vector<char> holds_all(t.remainder.size(), 0);
  for (const auto& p : t.pieces)
    if (p.from == p.to && p.b == layers[std::size_t(p.layer)].boxes[std::size_t(p.to)])
      holds_all[std::size_t(p.to)] = 1;
  for (const auto& p : t.pieces)
    if (p.from != p.to && !holds_all[std::size_t(p.to)]) return "Alltoallw";
  return "halo exchange";
}
}  // namespace workpart::detail
