#pragma once
/// \file ordering.hpp
/// Phase 1 of the PaSE search: the elimination order (fewest unprocessed neighbours first,
/// kept in a heap),
/// each vertex's dependent set D(v), the elimination tree, the tables' layouts and sizes.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine.hpp"

namespace workpart::detail::pase {

template <class Arg, class G, class Progress>
constexpr void engine<Arg, G, Progress>::plan() {
  std::vector<std::vector<std::size_t>> adj(n_);
  for (std::size_t e = 0; e < src_.size(); ++e) {
    if (src_[e] == dst_[e]) continue;
    adj[src_[e]].push_back(dst_[e]);
    adj[dst_[e]].push_back(src_[e]);
  }
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  auto work = [&](std::size_t v) {
    double r = double(K_[v]);
    for (std::size_t d : adj[v]) r *= double(K_[d]);
    return r;
  };
  std::vector<double> size(n_);
  for (std::size_t v = 0; v < n_; ++v) size[v] = work(v);
  std::vector<char> alive(n_, 1);
  pos_.assign(n_, 0);
  order_.clear();
  order_.reserve(n_);
  D_.assign(n_, {});
  auto insert = [](std::vector<std::size_t>& s, std::size_t x) {
    auto it = std::lower_bound(s.begin(), s.end(), x);
    if (it == s.end() || *it != x) s.insert(it, x);
  };
  // The next vertex: fewest unprocessed neighbours, then the smallest table, then the lowest
  // number. A binary heap of (neighbours, size, vertex) keys, an entry pushed whenever a
  // vertex's key changes and skipped when popped stale: O((n + fill-in) log n), not O(n^2).
  struct key {
    std::size_t deg;
    double size;
    std::size_t v;
    constexpr bool operator>(const key& o) const {
      if (deg != o.deg) return deg > o.deg;
      if (size != o.size) return size > o.size;
      return v > o.v;
    }
  };
  const auto later = [](const key& a, const key& b) { return a > b; };
  std::vector<key> heap;
  heap.reserve(n_);
  for (std::size_t v = 0; v < n_; ++v) heap.push_back({adj[v].size(), size[v], v});
  std::make_heap(heap.begin(), heap.end(), later);
  for (std::size_t step = 0; step < n_; ++step) {
    std::size_t best = npos;
    while (best == npos) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const key k = heap.back();
      heap.pop_back();
      if (alive[k.v] && k.deg == adj[k.v].size() && k.size == size[k.v]) best = k.v;
    }
    const std::size_t v = best;
    alive[v] = 0;
    pos_[v] = step;
    order_.push_back(v);
    D_[v] = std::move(adj[v]);
    adj[v].clear();
    for (std::size_t d : D_[v]) {
      auto& s = adj[d];
      s.erase(std::lower_bound(s.begin(), s.end(), v));
    }
    for (std::size_t i = 0; i < D_[v].size(); ++i)
      for (std::size_t j = i + 1; j < D_[v].size(); ++j) {
        insert(adj[D_[v][i]], D_[v][j]);
        insert(adj[D_[v][j]], D_[v][i]);
      }
    for (std::size_t d : D_[v]) {
      size[d] = work(d);
      heap.push_back({adj[d].size(), size[d], d});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  children_.assign(n_, {});
  rows_.assign(n_, 1);
  rows_d_.assign(n_, 1);
  for (std::size_t v = 0; v < n_; ++v) {
    auto& d = D_[v];
    std::sort(d.begin(), d.end(), [&](std::size_t a, std::size_t b) { return pos_[a] < pos_[b]; });
    if (!d.empty()) children_[d.front()].push_back(v);
    double r = 1;
    for (std::size_t x : d) r *= double(K_[x]);
    rows_d_[v] = r;
    work_total_ += r * double(K_[v]);
  }
  for (auto& c : children_)
    std::sort(c.begin(), c.end(), [&](std::size_t a, std::size_t b) { return pos_[a] < pos_[b]; });
  // The layout of each vertex's table of costs: mixed radix over D(v), the first digit
  // fastest, except that the first two digits swap places when the second is the first
  // digit of the parent's dependent set: the parent then finds, per block of its table,
  // a contiguous [k][a0] matrix (the kernel's layout). (The argmin tables keep the plain
  // layout.)
  ms_.assign(n_, {});
  for (std::size_t v = 0; v < n_; ++v) {
    const auto& d = D_[v];
    auto& st = ms_[v];
    st.assign(d.size(), 0);
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
  // Each edge belongs to the bucket of its end processed first; the fallback needs all
  // edges of a vertex.
  owned_edges_.assign(n_, {});
  incident_.assign(n_, {});
  for (std::size_t e = 0; e < src_.size(); ++e) {
    const std::size_t s = src_[e], t = dst_[e];
    if (s == t) continue;
    owned_edges_[pos_[s] < pos_[t] ? s : t].push_back(e);
    incident_[s].push_back(e);
    incident_[t].push_back(e);
  }
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
