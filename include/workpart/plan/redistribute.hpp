#pragma once
/// \file redistribute.hpp
/// Redistribution between the maps of a program, as planned (no MPI, no templates): what each
/// rank needs of an array (the boxes a later map reads, or the old values it combines into),
/// satisfied from where the array's current values are, by box intersection.
///
/// The current values of an array are in *layers*, newest first: the write boxes of the maps
/// that wrote it last (a map that writes part of an array leaves the rest to the layers below
/// it). A rank's need is cut into pieces: first what the rank itself holds in the newest layer
/// (a local copy, nothing moves), then what the other ranks hold there, then the layer below;
/// whatever no layer holds is what root's values (the program's inputs) provide. So every
/// element a reader needs moves once, from one holder, and only if the reader does not
/// already hold it.

#include <algorithm>
#include <string>
#include <vector>

#include "../schedule/constraints.hpp"
#include "solve_array.hpp"

namespace workpart::detail {

/// Appends a minus b as disjoint boxes (at most two per axis) to out.
inline void subtract_into(const box& a, const box& b, std::vector<box>& out) {
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

/// Box b of an array moves from rank `from` (its buffer in layer `layer`) to rank `to`.
struct piece {
  int from = 0, to = 0, layer = 0;
  box b;
};

/// Where one version of an array lives: the box each rank holds (empty where it holds none).
struct layer {
  int map = 0;  // the program's map whose buffers hold it
  std::vector<box> boxes;
};

/// The pieces that satisfy a need, and which ranks need more than the layers hold.
struct transfer {
  std::vector<piece> pieces;    // local ones (from == to) included
  std::vector<char> remainder;  // [rank]: part of its need is in no layer (root's values)
  std::vector<piece> rest;      // those parts, from root (from 0, layer -1)
  index_t bytes_sent(int r, std::size_t es) const {
    index_t t = 0;
    for (const auto& p : pieces)
      if (p.from == r && p.to != r) t += p.b.size() * index_t(es);
    return t;
  }
  index_t bytes_received(int r, std::size_t es) const {
    index_t t = 0;
    for (const auto& p : pieces)
      if (p.to == r && p.from != r) t += p.b.size() * index_t(es);
    return t;
  }
  bool any_remote() const {
    for (const auto& p : pieces)
      if (p.from != p.to) return true;
    return false;
  }
  bool any_remainder() const {
    for (char c : remainder)
      if (c) return true;
    return false;
  }
};

/// The boxes of one layer, sorted along each axis, to find the holders a need can meet
/// without testing every rank (plans and the cost model ask this for every pair of grids, so
/// it must not be quadratic in the ranks). A query scans the axis whose overlapping run is
/// shortest.
class holder_index {
 public:
  explicit holder_index(const std::vector<box>& held) {
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
  /// The ranks whose box may meet `b` (a superset of those that meet it).
  void candidates(const box& b, std::vector<int>& out) const {
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

 private:
  struct entry {
    index_t lo, hi;
    int rank;
  };
  struct axis {
    std::vector<entry> entries;  // by start
    bool monotone = true;        // ends grow with starts (a tiling): bisect both ends
  };
  using iter = std::vector<entry>::const_iterator;
  struct range {
    iter first, last;
  };
  /// Entries of axis a that may overlap b along a: starts before b ends, and (monotone) ends
  /// after b starts.
  range run(std::size_t a, const box& b) const {
    const auto& ax = axes_[a];
    const index_t lo = rank_zero_ ? 0 : b.lo[a], hi = rank_zero_ ? 1 : b.hi[a];
    const iter last = std::partition_point(ax.entries.begin(), ax.entries.end(),
                                           [&](const entry& e) { return e.lo < hi; });
    iter first = ax.entries.begin();
    if (ax.monotone)
      first = std::partition_point(ax.entries.begin(), last,
                                   [&](const entry& e) { return e.hi <= lo; });
    return {first, last};
  }
  std::vector<axis> axes_;
  bool rank_zero_ = false;
};

/// need[r]: the box rank r needs. layers: newest first.
inline transfer plan_transfer(const std::vector<box>& need, const std::vector<layer>& layers) {
  const int P = int(need.size());
  transfer t;
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
      // the rank itself first (nothing moves), then the ranks after it: spreads the senders
      // (ranks whose box cannot meet the need are left out: they would add no piece)
      index[l].candidates(need[r], senders);
      std::sort(senders.begin(), senders.end(),
                [&](int a, int b) { return (a - r + P) % P < (b - r + P) % P; });
      for (std::size_t k = 0; k < senders.size() && !left.empty(); ++k) {
        const int s = senders[k];
        next.clear();
        for (const box& x : left) {
          const box c = box::intersect(x, held[std::size_t(s)]);
          if (c.empty()) {
            next.push_back(x);
            continue;
          }
          t.pieces.push_back({s, r, int(l), c});
          subtract_into(x, c, next);
        }
        left.swap(next);
      }
    }
    t.remainder[std::size_t(r)] = !left.empty();
    for (const box& x : left) t.rest.push_back({0, r, -1, x});
  }
  return t;
}

/// What each rank needs of an array before a map on grid g runs: its read boxes, or
/// (old_values) the old values under the write boxes of the ranks that combine into them (its
/// group leaders). The program plans and the optimizer's cost model both ask this.
inline std::vector<box> need_before(const array_solution& ap, const grid_shape& g, int nranks,
                                    bool old_values) {
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
/// Where a map's writes hold whole values when its partial results are reduced onto the group
/// leaders (or it has none): the leaders' write boxes.
inline std::vector<box> leaders_write_boxes(const array_solution& ap, const grid_shape& g,
                                            int nranks) {
  std::vector<box> held(static_cast<std::size_t>(nranks));
  for (int r = 0; r < int(g.product()) && r < nranks; ++r)
    if (!ap.wbox[std::size_t(r)].empty() && group_key(g, r, ap.wgroup).second == 0)
      held[std::size_t(r)] = ap.wbox[std::size_t(r)];
  return held;
}

/// The name of a redistribution, from its pieces: nothing moves between ranks (`none`); every
/// receiving rank needs all it holds itself and a margin around it from other ranks (a halo
/// exchange: only neighbours send); otherwise one Alltoallw.
inline std::string transfer_kind(const transfer& t, const std::vector<layer>& layers) {
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
