#pragma once
/// \file ordering.hpp
/// Phase 1 of the PaSE search: the elimination order (the cheaper of two greedy orders: fewest
/// unprocessed neighbours first, smallest table first), each vertex's dependent set D(v), the
/// elimination tree, the tables' layouts and sizes.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine.hpp"

namespace workpart::detail::pase {

/// One greedy elimination order over the neighbour lists `adj` (consumed): each step takes the
/// vertex with the fewest unprocessed neighbours, then the smallest table (K_v times its
/// neighbours' K), then the lowest number; without `fewest_neighbours`, the smallest table
/// first. Fills the order, each vertex's position in it and its dependent set (unsorted), and
/// `entries`, what the tables of that order hold (the sum of K_v times its dependent set's K),
/// or infinity as soon as they pass `bound` (an order no better than one in hand: its fill-in,
/// which can grow to cliques of hundreds of vertices, is not worked out); false when the budget
/// ran out.
template <class Arg, class G, class Progress>
constexpr bool engine<Arg, G, Progress>::greedy_order(std::vector<std::vector<std::size_t>>& adj,
                                                      bool fewest_neighbours,
                                                      std::vector<std::size_t>& order,
                                                      std::vector<std::size_t>& pos,
                                                      std::vector<std::vector<std::size_t>>& D,
                                                      double& entries, double bound) const {
  entries = 0;
  auto work = [&](std::size_t v) {
    double r = double(K_[v]);
    for (std::size_t d : adj[v]) r *= double(K_[d]);
    return r;
  };
  auto bucket_of = [&](std::size_t v) { return fewest_neighbours ? adj[v].size() : 0; };
  std::vector<double> size(n_);
  for (std::size_t v = 0; v < n_; ++v) size[v] = work(v);
  if (must_stop()) return false;
  std::vector<char> alive(n_, 1);
  auto insert = [](std::vector<std::size_t>& s, std::size_t x) {
    auto it = std::lower_bound(s.begin(), s.end(), x);
    if (it == s.end() || *it != x) s.insert(it, x);
  };
  // One binary heap of (size, vertex) per neighbour count (one heap in all without
  // `fewest_neighbours`), an entry pushed whenever a vertex's key changes and skipped when
  // popped stale: O((n + fill-in) log n), not O(n^2). Per count rather than one heap: most
  // steps pop from a small low-count heap (on a chain the two ends), so the many entries of
  // higher counts are built in O(n) and rarely sifted.
  struct key {
    double size;
    std::size_t v;
  };
  const auto later = [](const key& a, const key& b) {
    return a.size != b.size ? a.size > b.size : a.v > b.v;
  };
  std::vector<std::vector<key>> heaps;
  for (std::size_t v = 0; v < n_; ++v) {
    const std::size_t b = bucket_of(v);
    if (b >= heaps.size()) heaps.resize(b + 1);
    heaps[b].push_back({size[v], v});
  }
  for (auto& h : heaps) std::make_heap(h.begin(), h.end(), later);
  std::size_t lowest = 0;  // no heap below it holds a live entry
  for (std::size_t step = 0; step < n_; ++step) {
    if ((step & 1023) == 1023 && must_stop()) return false;
    std::size_t best = npos;
    while (best == npos) {
      auto& h = heaps[lowest];
      if (h.empty()) {
        ++lowest;
        continue;
      }
      std::pop_heap(h.begin(), h.end(), later);
      const key k = h.back();
      h.pop_back();
      if (alive[k.v] && bucket_of(k.v) == lowest && k.size == size[k.v]) best = k.v;
    }
    const std::size_t v = best;
    alive[v] = 0;
    entries += size[v];  // its table: K_v times its neighbours' K, D(v) being those
    if (entries > bound) {
      entries = inf;
      return true;
    }
    pos[v] = step;
    order.push_back(v);
    D[v] = std::move(adj[v]);
    adj[v].clear();
    for (std::size_t d : D[v]) {
      auto& s = adj[d];
      s.erase(std::lower_bound(s.begin(), s.end(), v));
    }
    for (std::size_t i = 0; i < D[v].size(); ++i)
      for (std::size_t j = i + 1; j < D[v].size(); ++j) {
        insert(adj[D[v][i]], D[v][j]);
        insert(adj[D[v][j]], D[v][i]);
      }
    for (std::size_t d : D[v]) {
      size[d] = work(d);
      const std::size_t b = bucket_of(d);
      if (b >= heaps.size()) heaps.resize(b + 1);
      heaps[b].push_back({size[d], d});
      std::push_heap(heaps[b].begin(), heaps[b].end(), later);
      lowest = std::min(lowest, b);
    }
  }
  return true;
}

template <class Arg, class G, class Progress>
constexpr bool engine<Arg, G, Progress>::plan() {
  planned_ = false;
  rows_.assign(n_, 1);
  rows_d_.assign(n_, 1);
  D_.assign(n_, {});
  pos_.assign(n_, 0);
  order_.clear();
  // The edges at each vertex, first: the fallback needs them even when the ordering stops.
  incident_.assign_pairs(n_, [&](auto put) {
    for (std::size_t e = 0; e < src_.size(); ++e)
      if (src_[e] != dst_[e]) {
        put(src_[e], e);
        put(dst_[e], e);
      }
  });
  if (must_stop()) return false;
  // Neighbours, sorted and without repeats: one allocation per vertex, which becomes D(v).
  std::vector<std::vector<std::size_t>> adj(n_);
  for (std::size_t v = 0; v < n_; ++v) {
    auto& a = adj[v];
    a.reserve(incident_[v].size());
    for (std::size_t e : incident_[v]) a.push_back(src_[e] == v ? dst_[e] : src_[e]);
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  // Two greedy orders, and the one whose tables hold fewer entries (the work of the sweeps)
  // is kept (the first where they tie): fewest unprocessed neighbours first, then the smallest
  // table; and the smallest table first. Either gives the exact optimum; their costs differ
  // by orders of magnitude where the vertices' configuration counts differ much. (InceptionV3's
  // step at 64 ranks: fewest neighbours first made one table of 6.8e7 rows, 2.4 s of search;
  // smallest first, none over 7.5e4 rows, 0.08 s.)
  std::vector<std::size_t> order, pos;
  std::vector<std::vector<std::size_t>> D;
  double best_work = 0;
  // No order's tables hold fewer entries than one per configuration (every D(v) empty): an
  // order that reaches it is not bettered (at one rank, every table one entry).
  double least_work = 0;
  for (std::size_t v = 0; v < n_; ++v) least_work += double(K_[v]);
  for (const bool fewest_neighbours : {true, false}) {
    if (!fewest_neighbours && best_work <= least_work) break;
    order.clear();
    pos.assign(n_, 0);
    D.assign(n_, {});
    // the first order works on a copy of the neighbour lists, the second on them
    std::vector<std::vector<std::size_t>> a;
    if (fewest_neighbours)
      a = adj;
    else
      a = std::move(adj);
    double w = 0;
    const bool done =
        greedy_order(a, fewest_neighbours, order, pos, D, w, fewest_neighbours ? inf : best_work);
    if (!done && !fewest_neighbours) break;  // out of time: the first order stands
    if (fewest_neighbours || w < best_work) {
      best_work = w;
      order_.swap(order);
      pos_.swap(pos);
      D_.swap(D);
    }
    if (!done) return false;  // the vertices ordered so far are in order_
  }
  for (std::size_t v = 0; v < n_; ++v) {
    auto& d = D_[v];
    std::sort(d.begin(), d.end(), [&](std::size_t a, std::size_t b) { return pos_[a] < pos_[b]; });
    double r = 1;
    for (std::size_t x : d) r *= double(K_[x]);
    rows_d_[v] = r;
    work_total_ += r * double(K_[v]);
  }
  // Children in order: put in the order's sequence (the counting sort keeps it).
  children_.assign_pairs(n_, [&](auto put) {
    for (std::size_t v : order_)
      if (!D_[v].empty()) put(D_[v].front(), v);
  });
  // The layout of each vertex's table of costs: mixed radix over D(v), the first digit
  // fastest, except that the first two digits swap places when the second is the first
  // digit of the parent's dependent set: the parent then finds, per block of its table,
  // a contiguous [k][a0] matrix (the kernel's layout). (The argmin tables keep the plain
  // layout.)
  ms_.assign_sizes(n_, [&](std::size_t v) { return D_[v].size(); });
  for (std::size_t v = 0; v < n_; ++v) {
    const auto& d = D_[v];
    const auto st = ms_[v];
    std::size_t stride = 1;
    for (std::size_t i = 0; i < d.size(); ++i) {
      st[i] = stride;
      stride *= K_[d[i]];
    }
    if (d.size() >= 2 && !D_[d[0]].empty() && D_[d[0]][0] == d[1]) {
      st[1] = 1;
      st[0] = K_[d[1]];
    }
  }
  // Each edge belongs to the bucket of its end processed first.
  owned_edges_.assign_pairs(n_, [&](auto put) {
    for (std::size_t e = 0; e < src_.size(); ++e)
      if (src_[e] != dst_[e]) put(pos_[src_[e]] < pos_[dst_[e]] ? src_[e] : dst_[e], e);
  });
  planned_ = true;
  return true;
}

/// Whether the tables fit `max_table_bytes`; sets rows_ when they do.
template <class Arg, class G, class Progress>
constexpr bool engine<Arg, G, Progress>::fits() {
  double bytes = 0;
  for (std::size_t v = 0; v < n_; ++v) bytes += rows_d_[v] * double(sizeof(double) + sizeof(Arg));
  if (!(bytes <= double(opt_.max_table_bytes))) return false;
  for (std::size_t v = 0; v < n_; ++v) rows_[v] = std::size_t(rows_d_[v]);
  return true;
}

}  // namespace workpart::detail::pase
