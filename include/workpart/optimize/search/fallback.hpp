#pragma once
/// \file fallback.hpp
/// When the PaSE search stops early (time budget, table limit): greedy, local search and an
/// exact search restricted to a few configurations per vertex; never worse than greedy.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine.hpp"

namespace workpart::detail::pase {

/// A graph with fewer configurations: vertex v keeps sub[v] (the fallback's search).
template <class G>
struct restricted_view {
  const G& g;
  const std::vector<std::vector<std::size_t>>& sub;
  constexpr std::size_t num_vertices() const { return g.num_vertices(); }
  constexpr std::size_t num_edges() const { return g.num_edges(); }
  constexpr std::size_t num_configs(std::size_t v) const { return sub[v].size(); }
  constexpr double vertex_cost(std::size_t v, std::size_t k) const {
    return double(g.vertex_cost(v, sub[v][k]));
  }
  constexpr std::size_t edge_source(std::size_t e) const { return g.edge_source(e); }
  constexpr std::size_t edge_target(std::size_t e) const { return g.edge_target(e); }
  constexpr double edge_cost(std::size_t e, std::size_t a, std::size_t b) const {
    return double(g.edge_cost(e, sub[g.edge_source(e)][a], sub[g.edge_target(e)][b]));
  }
};

/// The strategy returned when the search stops early: (1) greedy (vertices in order, each
/// to its best configuration given those set before) and local search (one vertex at a
/// time to its best configuration given all others, until none improves), alternated with
/// setting the vertices processed so far optimally given the rest (their tables); then
/// (2) the exact search restricted to a few configurations per vertex (that strategy's and
/// the cheapest given its neighbours there; as many as keep the work under ~2e7), then local
/// search again. The best of these; never worse than (1). Each step after the greedy pass
/// stops where the time budget runs out (the greedy pass itself is linear in the edges).
template <class Arg, class G, class Progress>
constexpr std::vector<std::size_t> engine<Arg, G, Progress>::fallback() const {
  std::vector<std::size_t> S(n_, 0);
  std::vector<char> set(n_, 0);
  for (std::size_t v = 0; v < n_; ++v) {
    S[v] = best_local(v, S, set);
    set[v] = 1;
  }
  local_search(S, set);
  std::vector<std::size_t> best = S;
  double best_cost = objective(S);
  // every later step only improves on the greedy strategy: each stops where the budget does,
  // except the first use of the tables (linear in them: the one step that makes the time spent
  // on them count, inside must_stop's reserve)
  if (done_ > 0) {
    for (int round = 0; round < 16 && (round == 0 || !out_of_time()); ++round) {
      assemble(S);
      local_search(S, set);
      const double c = objective(S);
      if (!(c < best_cost)) break;
      best = S;
      best_cost = c;
    }
  }
  for (std::size_t k : {32, 16, 8, 4}) {
    if (!planned_ || out_of_time()) break;  // unplanned: no dependent sets to size it by
    double work = 0;
    for (std::size_t v = 0; v < n_; ++v) {
      double w = double(std::min(k, K_[v]));
      for (std::size_t d : D_[v]) w *= double(std::min(k, K_[d]));
      work += w;
    }
    if (work > 2e7) continue;
    std::vector<std::size_t> R = restricted_search(k, best);
    local_search(R, set);
    const double c = objective(R);
    if (c < best_cost) {
      best = R;
      best_cost = c;
    }
    break;
  }
  return best;
}

/// Cost of v in configuration k given the configured ones among its neighbours.
template <class Arg, class G, class Progress>
constexpr double engine<Arg, G, Progress>::local_cost(std::size_t v, std::size_t k,
                                                      const std::vector<std::size_t>& S,
                                                      const std::vector<char>& set) const {
  double c = unary0_[v][k];
  for (std::size_t e : incident_[v]) {
    const std::size_t s = src_[e], t = dst_[e];
    if (s == v) {
      if (set[t]) c += edge(e, k, S[t]);
    } else {
      if (set[s]) c += edge(e, S[s], k);
    }
  }
  return c;
}

template <class Arg, class G, class Progress>
constexpr std::size_t engine<Arg, G, Progress>::best_local(std::size_t v,
                                                           const std::vector<std::size_t>& S,
                                                           const std::vector<char>& set) const {
  std::size_t bk = 0;
  double bc = local_cost(v, 0, S, set);
  for (std::size_t k = 1; k < K_[v]; ++k) {
    const double c = local_cost(v, k, S, set);
    if (c < bc) {
      bc = c;
      bk = k;
    }
  }
  return bk;
}

/// One vertex at a time to its best configuration given the others, until none improves.
template <class Arg, class G, class Progress>
constexpr void engine<Arg, G, Progress>::local_search(std::vector<std::size_t>& S,
                                                      const std::vector<char>& set) const {
  for (int sweep_no = 0; sweep_no < 100 && !out_of_time(); ++sweep_no) {
    bool changed = false;
    for (std::size_t v = 0; v < n_; ++v) {
      if ((v & 4095) == 4095 && out_of_time()) return;
      const std::size_t k = best_local(v, S, set);
      if (k != S[v] && local_cost(v, k, S, set) < local_cost(v, S[v], S, set)) {
        S[v] = k;
        changed = true;
      }
    }
    if (!changed) break;
  }
}

/// The exact search over at most k configurations per vertex: `keep`'s and those cheapest
/// given `keep`'s configurations of the neighbours.
template <class Arg, class G, class Progress>
constexpr std::vector<std::size_t> engine<Arg, G, Progress>::restricted_search(
    std::size_t k, const std::vector<std::size_t>& keep) const {
  std::vector<std::vector<std::size_t>> sub(n_);
  const std::vector<char> all(n_, 1);
  std::vector<double> u;
  for (std::size_t v = 0; v < n_; ++v) {
    auto& c = sub[v];
    c.resize(K_[v]);
    u.resize(K_[v]);
    for (std::size_t i = 0; i < K_[v]; ++i) {
      c[i] = i;
      u[i] = local_cost(v, i, keep, all);
    }
    std::sort(c.begin(), c.end(),
              [&](std::size_t a, std::size_t b) { return u[a] != u[b] ? u[a] < u[b] : a < b; });
    c.resize(std::min(k, K_[v]));
    if (std::find(c.begin(), c.end(), keep[v]) == c.end()) c.back() = keep[v];
  }
  const restricted_view<G> view{g_, sub};
  search_options o;
  o.runner_ups = false;
  if (!std::is_constant_evaluated())  // what is left of this search's budget
    o.time_budget_seconds = opt_.time_budget_seconds - (wall_seconds() - start_);
  no_progress quiet;
  engine<std::uint16_t, restricted_view<G>, no_progress> inner(view, o, quiet);
  inner.load();
  if (!inner.plan() || !inner.fits() || !inner.eliminate()) return keep;
  std::vector<std::size_t> c(n_, 0);
  inner.assemble(c);
  for (std::size_t v = 0; v < n_; ++v) c[v] = sub[v][c[v]];
  return c;
}

template <class Arg, class G, class Progress>
constexpr double engine<Arg, G, Progress>::objective(const std::vector<std::size_t>& S) const {
  double c = 0;
  for (std::size_t v = 0; v < n_; ++v) c += unary0_[v][S[v]];
  for (std::size_t e = 0; e < src_.size(); ++e)
    if (src_[e] != dst_[e]) c += edge(e, S[src_[e]], S[dst_[e]]);
  return c;
}

}  // namespace workpart::detail::pase
