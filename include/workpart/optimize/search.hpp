#pragma once
/// \file search.hpp
/// The exact strategy search (PaSE, seeds/001 Algorithms 1-3) over an explicit cost-table
/// problem (optimize/cost_tables.hpp): one configuration per vertex, minimising the sum of
/// the chosen vertex costs and the chosen edge-matrix entries.
///
/// How it works (the paper's algorithm as variable elimination on flat tables):
///  1. *Ordering.* Repeatedly take the unprocessed vertex with the fewest unprocessed
///     neighbours (ties: the less work rows x K_v, then the smaller number). Its unprocessed
///     neighbours at that moment are its *dependent set* D(v). Processing v makes the members
///     of D(v) neighbours of one another (Algorithm 1, line 30: their tables are restricted
///     jointly through v's table), so later dependent sets see that link.
///  2. *Elimination.* v's table has one row per configuration of D(v) (mixed radix, the
///     earliest-processed member fastest; see `plan` for one exception) and keeps, per row, the
///     best configuration of v and its cost: v's vertex cost, the edges between v and D(v), and the
///     tables of the vertices processed earlier whose dependent set held v (Algorithm 1, lines
///     20-25). Rows that differ only in their first digit form one min-plus matrix-vector product
///     (optimize/min_plus.hpp, vectorised); sums over the other digits are kept per digit.
///  3. *Assembly.* In reverse order each vertex reads its configuration from its table at
///     the row its dependent set has already fixed (Algorithm 3).
/// The result equals brute force (the paper's proof; tests/unit/test_search.cpp checks it).
/// The work is the sum over vertices of rows(D(v)) x K_v.
///
/// Runner-ups (best total cost with one vertex forced off its chosen configuration) come
/// from a second, top-down pass over the same tables (min-marginals of the junction tree
/// the elimination builds), exact up to floating-point rounding; about 1-3x the first pass.
///
/// The core is constexpr: a small `static_cost_graph` is optimised inside a static_assert.
/// This header is light (no Boost, no MPI, no Eigen); the run-time graph `cost_graph` is in
/// optimize/cost_graph.hpp, the file reader in io/table_reader.hpp.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "cost_tables.hpp"
#include "min_plus.hpp"

namespace workpart {

/// Why a search stopped before it proved its result optimal.
enum class search_stop {
  none,         ///< it did not stop: the result is optimal
  time_budget,  ///< `search_options::time_budget_seconds` ran out
  table_limit   ///< the tables would exceed `search_options::max_table_bytes`
};

/// The phases a progress callback hears about.
enum class search_phase { eliminate, runner_ups };

/// What a progress callback receives: after each vertex, and every ~10^6 table entries.
struct search_progress {
  search_phase phase = search_phase::eliminate;
  std::size_t vertices_done = 0, vertices_total = 0;
  double work_done = 0, work_total = 0;  ///< table entries (rows x configurations) visited
  double seconds = 0;                    ///< since the search began
};

struct search_options {
  /// Wall-clock budget for the whole search. When it runs out, the search returns the best
  /// strategy it can assemble at once, with `proven_optimal = false`: the vertices processed
  /// so far take their optimal configuration given the others, which come from a greedy pass
  /// improved by local search (one vertex at a time, until no single change lowers the cost).
  /// If it runs out during the runner-up pass, the optimum stands and `has_runner_ups` is
  /// false. Ignored in constant evaluation.
  double time_budget_seconds = std::numeric_limits<double>::infinity();
  /// Compute each vertex's runner-up configuration (a second pass; keeps the tables' costs
  /// alive until then, where without it each is freed once used).
  bool runner_ups = true;
  /// Largest total size of the tables (rows x (8 + 2 or 4) bytes, summed over vertices).
  /// Beyond it the search does not start; it returns the greedy + local-search strategy
  /// with `stop = table_limit`. The runner-up pass needs up to about as much again.
  std::size_t max_table_bytes = std::size_t(16) << 30;
};

/// The best strategy with one vertex forced off its chosen configuration.
struct runner_up {
  static constexpr std::size_t npos = std::size_t(-1);
  std::size_t config = npos;  ///< npos: the vertex has one configuration
  double cost = std::numeric_limits<double>::infinity();   ///< total cost of that strategy
  double delta = std::numeric_limits<double>::infinity();  ///< cost minus the optimum, >= 0
};

struct search_result {
  std::vector<std::size_t> config;  ///< chosen configuration per vertex
  double cost = 0;                  ///< objective of `config` (vertex costs, then edges, in order)
  std::vector<double> vertex_cost;  ///< per vertex, of the chosen configuration
  std::vector<double> edge_cost;    ///< per edge, of the chosen configurations of its ends
  bool proven_optimal = false;
  search_stop stop = search_stop::none;
  bool has_runner_ups = false;
  std::vector<runner_up> runner_ups;  ///< per vertex, when has_runner_ups

  // What the search did.
  std::vector<std::size_t> order;                       ///< processing (elimination) order
  std::vector<std::vector<std::size_t>> dependent_set;  ///< D(v), earliest processed first
  std::size_t eliminated = 0;                           ///< vertices whose table was completed
  std::size_t max_dependent_set = 0;                    ///< largest |D(v)|
  double largest_table_rows = 0;                        ///< largest rows(D(v))
  double table_rows = 0;                                ///< sum of rows(D(v))
  double work = 0;                                      ///< sum of rows(D(v)) x K_v
  double seconds = 0;            ///< wall clock (0 in constant evaluation), of which:
  double setup_seconds = 0;      ///<   reading the graph and the ordering
  double eliminate_seconds = 0;  ///<   the tables, assembly and any fallback
  double runner_up_seconds = 0;  ///<   the runner-up pass
};

/// A progress callback that does nothing.
struct no_progress {
  constexpr void operator()(const search_progress&) const noexcept {}
};

namespace detail::pase {

inline constexpr std::size_t npos = std::size_t(-1);
inline constexpr double inf = std::numeric_limits<double>::infinity();

inline double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] inline void throw_no_configs(std::size_t v) {
  throw shape_error("pase_search: vertex " + std::to_string(v) +
                    " has no configuration; every vertex needs K >= 1");
}
[[noreturn]] inline void throw_too_many_configs(std::size_t v, std::size_t k) {
  throw shape_error("pase_search: vertex " + std::to_string(v) + " has " + std::to_string(k) +
                    " configurations; at most 2^32 - 1 are supported");
}
[[noreturn]] inline void throw_bad_edge(std::size_t e, std::size_t u, std::size_t v,
                                        std::size_t n) {
  throw table_error("pase_search: edge " + std::to_string(e) + " (" + std::to_string(u) + " -> " +
                    std::to_string(v) + ") names a vertex that does not exist (" +
                    std::to_string(n) + " vertices)");
}
[[noreturn]] inline void throw_nan(std::size_t what, bool edge) {
  throw table_error(std::string("pase_search: ") + (edge ? "edge " : "vertex ") +
                    std::to_string(what) + " has a NaN cost; costs must be numbers");
}

/// A table that enters a vertex's sweep: for the row with digits a (the configurations of
/// D(v)), the K_v costs `data[sum_i a_i * stride_i + k]`. Its level is the first digit it
/// depends on; it is added once per change of that digit (or a later one).
struct factor {
  const double* data = nullptr;
  std::size_t level = 0;
  std::size_t strides = 0;  ///< offset into bucket::strides (|D(v)| entries)
};

/// Everything a vertex's sweep adds up. The sweep goes through v's table in blocks of the
/// K_d0 rows that differ only in the first digit d0 (the vertex of D(v) processed first):
/// the factors without d0 are summed into one vector over k per block (level by level, see
/// `factor`), those with d0 form a K_v x K_d0 matrix [k][a0] for the min-plus kernel.
/// Edge matrices are used in place where their layout fits, else copied (and summed).
struct bucket {
  std::vector<double> unary;             ///< vertex cost + tables over {v} alone
  std::vector<factor> factors;           ///< without d0, sorted by level (>= 1)
  std::vector<std::size_t> level_begin;  ///< factors of level L: [level_begin[L], level_begin[L+1])
  std::vector<std::size_t> strides;      ///< |D(v)| per factor, then per level0 factor
  const double* pair0 = nullptr;         ///< v with d0 alone: [k][a0], or null
  std::vector<factor> level0;            ///< earlier tables over v, d0 and more (strided)
  std::vector<std::vector<double>> owned;  ///< copies: transposed or summed edge matrices
};

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

template <class Arg, class G, class Progress>
class engine {
 public:
  constexpr engine(const G& g, const search_options& opt, Progress& progress)
      : g_(g), opt_(opt), progress_(progress) {
    if (!std::is_constant_evaluated()) start_ = wall_seconds();
  }

  // ------------------------------------------------------------------ input
  constexpr void load() {
    n_ = g_.num_vertices();
    K_.resize(n_);
    unary0_.resize(n_);
    for (std::size_t v = 0; v < n_; ++v) {
      const std::size_t k = g_.num_configs(v);
      if (k == 0) throw_no_configs(v);
      if (k > std::size_t(std::numeric_limits<Arg>::max())) throw_too_many_configs(v, k);
      K_[v] = k;
      auto& u = unary0_[v];
      u.resize(k);
      if constexpr (has_spans) {
        const auto s = g_.vertex_costs(v);
        for (std::size_t i = 0; i < k; ++i) u[i] = s[i];
      } else {
        for (std::size_t i = 0; i < k; ++i) u[i] = double(g_.vertex_cost(v, i));
      }
      for (double x : u)
        if (x != x) throw_nan(v, false);
    }
    const std::size_t m = g_.num_edges();
    src_.resize(m);
    dst_.resize(m);
    for (std::size_t e = 0; e < m; ++e) {
      const std::size_t s = g_.edge_source(e), t = g_.edge_target(e);
      if (s >= n_ || t >= n_) throw_bad_edge(e, s, t, n_);
      src_[e] = s;
      dst_[e] = t;
      bool nan = false;
      if constexpr (has_spans) {
        const auto c = g_.edge_costs(e);
        for (std::size_t i = 0; i < K_[s] * K_[t]; ++i) nan |= c[i] != c[i];
      } else {
        for (std::size_t a = 0; a < K_[s]; ++a)
          for (std::size_t b = 0; b < K_[t]; ++b) nan |= edge(e, a, b) != edge(e, a, b);
      }
      if (nan) throw_nan(e, true);
      if (s == t)  // a self-loop: its diagonal is a vertex cost
        for (std::size_t k = 0; k < K_[s]; ++k) unary0_[s][k] += edge(e, k, k);
    }
  }

  // ------------------------------------------------------------------ 1. ordering
  constexpr void plan() {
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
    for (std::size_t step = 0; step < n_; ++step) {
      std::size_t best = npos;
      for (std::size_t v = 0; v < n_; ++v) {
        if (!alive[v]) continue;
        if (best == npos || adj[v].size() < adj[best].size() ||
            (adj[v].size() == adj[best].size() && size[v] < size[best]))
          best = v;
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
      for (std::size_t d : D_[v]) size[d] = work(d);
    }
    children_.assign(n_, {});
    rows_.assign(n_, 1);
    rows_d_.assign(n_, 1);
    for (std::size_t v = 0; v < n_; ++v) {
      auto& d = D_[v];
      std::sort(d.begin(), d.end(),
                [&](std::size_t a, std::size_t b) { return pos_[a] < pos_[b]; });
      if (!d.empty()) children_[d.front()].push_back(v);
      double r = 1;
      for (std::size_t x : d) r *= double(K_[x]);
      rows_d_[v] = r;
      work_total_ += r * double(K_[v]);
    }
    for (auto& c : children_)
      std::sort(c.begin(), c.end(),
                [&](std::size_t a, std::size_t b) { return pos_[a] < pos_[b]; });
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
  constexpr bool fits() {
    double bytes = 0;
    for (std::size_t v = 0; v < n_; ++v) bytes += rows_d_[v] * double(sizeof(double) + sizeof(Arg));
    if (!(bytes <= double(opt_.max_table_bytes))) return false;
    for (std::size_t v = 0; v < n_; ++v) rows_[v] = std::size_t(rows_d_[v]);
    return true;
  }

  // ------------------------------------------------------------------ 2. elimination
  /// Processes the vertices in order; false when the budget ran out (done_ were finished).
  constexpr bool eliminate() {
    msg_.assign(n_, {});
    arg_.assign(n_, {});
    phase_ = search_phase::eliminate;
    for (std::size_t t = 0; t < n_; ++t) {
      const std::size_t v = order_[t];
      const bucket b = make_bucket(v);
      auto& val = msg_[v];
      auto& arg = arg_[v];
      val.resize(rows_[v]);
      arg.resize(rows_[v]);
      const std::size_t Kv = K_[v];
      bool ok = true;
      if (D_[v].empty()) {  // one row: the best configuration of v alone
        val[0] = inf;
        arg[0] = 0;
        for (std::size_t k = 0; k < Kv; ++k)
          if (b.unary[k] < val[0]) {
            val[0] = b.unary[k];
            arg[0] = Arg(k);
          }
        work_done_ += double(Kv);
      } else {
        const auto& ms = ms_[v];
        std::vector<double> tmp(ms[0] == 1 ? 0 : K_[D_[v][0]]);
        ok = sweep(v, b,
                   [&](std::size_t r0, const std::size_t* a, const double* b1, const double* C,
                       const double* C2, std::size_t J) {
                     if (ms[0] == 1) {  // the plain layout: the block is rows r0 .. r0 + J - 1
                       block_min(b1, C, C2, Kv, J, val.data() + r0, arg.data() + r0);
                     } else {  // swapped: the block's costs are ms[0] apart
                       block_min(b1, C, C2, Kv, J, tmp.data(), arg.data() + r0);
                       std::size_t base = 0;
                       for (std::size_t i = 1; i < ms.size(); ++i) base += a[i] * ms[i];
                       for (std::size_t j = 0; j < J; ++j) val[base + j * ms[0]] = tmp[j];
                     }
                   });
      }
      if (!ok) {
        val = {};
        arg = {};
        return false;
      }
      if (!opt_.runner_ups)
        for (std::size_t c : children_[v]) msg_[c] = {};
      ++done_;
      if (!tick(work_done_)) return done_ == n_;
    }
    return true;
  }

  // ------------------------------------------------------------------ 3. assembly
  /// Configurations of the processed vertices (the first `done_` in order, decoded last to
  /// first) given those of the others in `config`.
  constexpr void assemble(std::vector<std::size_t>& config) const {
    for (std::size_t t = done_; t-- > 0;) {
      const std::size_t v = order_[t];
      std::size_t r = 0, stride = 1;
      for (std::size_t d : D_[v]) {
        r += config[d] * stride;
        stride *= K_[d];
      }
      config[v] = arg_[v][r];
    }
  }

  // ------------------------------------------------------------------ runner-ups
  /// Min-marginals: best[v][k] = the least total cost with v in configuration k. A top-down
  /// pass: outside[v] (a table over D(v)) is the least cost of everything not below v in the
  /// elimination tree; v's sums plus it, minimised, give best[v] and its children's outside.
  constexpr bool min_marginals(std::vector<std::vector<double>>& best) {
    phase_ = search_phase::runner_ups;
    work_done_ = 0;
    done_ = 0;
    best.assign(n_, {});
    std::vector<std::vector<double>> outside(n_);
    for (std::size_t t = n_; t-- > 0;) {
      const std::size_t v = order_[t];
      const std::size_t Kv = K_[v], m = D_[v].size();
      const auto& kids = children_[v];
      std::vector<std::size_t> kid_strides(kids.size() * (m ? m : 1), 0);
      for (std::size_t c = 0; c < kids.size(); ++c) {
        outside[kids[c]].assign(rows_[kids[c]], inf);
        child_strides(v, kids[c], kid_strides.data() + c * m);
      }
      const bucket b = make_bucket(v);
      std::vector<double> mm(Kv, inf);
      bool ok = true;
      if (m == 0) {  // a root: its children's tables are over v alone
        mm = b.unary;
        for (std::size_t c : kids) outside[c] = mm;
        work_done_ += double(Kv);
      } else {
        const double* out_v = outside[v].data();
        const auto& ms = ms_[v];
        std::vector<std::size_t> sv(kids.size());
        for (std::size_t c = 0; c < kids.size(); ++c) sv[c] = ms_[kids[c]][0];
        std::vector<double> ov(K_[D_[v][0]]);
        bool need_x = false;
        for (std::size_t c = 0; c < kids.size(); ++c) need_x |= kid_strides[c * m] != 0;
        std::vector<double> X(need_x ? Kv * K_[D_[v][0]] : 0), lo(Kv);
        ok =
            sweep(v, b,
                  [&](std::size_t, const std::size_t* a, const double* b1, const double* C,
                      const double* C2, std::size_t J) {
                    std::size_t base = 0;
                    for (std::size_t i = 1; i < m; ++i) base += a[i] * ms[i];
                    for (std::size_t j = 0; j < J; ++j) ov[j] = out_v[base + j * ms[0]];
                    block_rows(b1, C, C2, ov.data(), Kv, J, need_x ? X.data() : nullptr, lo.data());
                    for (std::size_t k = 0; k < Kv; ++k) mm[k] = std::min(mm[k], lo[k]);
                    for (std::size_t c = 0; c < kids.size(); ++c) {
                      const std::size_t* st = kid_strides.data() + c * m;
                      std::size_t off = 0;
                      for (std::size_t i = 1; i < m; ++i) off += a[i] * st[i];
                      double* dst = outside[kids[c]].data() + off;
                      if (st[0] == 0) {  // d0 not in the child's table: the minimum over the block
                        for (std::size_t k = 0; k < Kv; ++k)
                          dst[k * sv[c]] = std::min(dst[k * sv[c]], lo[k]);
                      } else {  // swapped: [k][a0], contiguous over a0
                        for (std::size_t k = 0; k < Kv; ++k) {
                          double* d = dst + k * sv[c];
                          const double* xk = X.data() + k * J;
                          for (std::size_t j = 0; j < J; ++j) d[j] = d[j] < xk[j] ? d[j] : xk[j];
                        }
                      }
                    }
                  });
      }
      if (!ok) return false;
      for (std::size_t c : kids) {  // remove the child's own table: it is below the child
        auto& oc = outside[c];
        const auto& mc = msg_[c];
        for (std::size_t i = 0; i < oc.size(); ++i) oc[i] = mc[i] == inf ? inf : oc[i] - mc[i];
      }
      outside[v] = {};
      msg_[v] = {};  // its parent is done with it
      best[v] = std::move(mm);
      ++done_;
      if (!tick(work_done_)) return done_ == n_;
    }
    return true;
  }

  // ------------------------------------------------------------------ fallback
  /// The strategy returned when the search stops early: (1) greedy (vertices in order, each
  /// to its best configuration given those set before) and local search (one vertex at a
  /// time to its best configuration given all others, until none improves), alternated with
  /// setting the vertices processed so far optimally given the rest (their tables); then
  /// (2) the exact search restricted to a few configurations per vertex (that strategy's and
  /// the cheapest given its neighbours there; as many as keep the work under ~2e7), then local
  /// search again. The best of these; never worse than (1).
  constexpr std::vector<std::size_t> fallback() const {
    std::vector<std::size_t> S(n_, 0);
    std::vector<char> set(n_, 0);
    for (std::size_t v = 0; v < n_; ++v) {
      S[v] = best_local(v, S, set);
      set[v] = 1;
    }
    local_search(S, set);
    std::vector<std::size_t> best = S;
    double best_cost = objective(S);
    if (done_ > 0) {
      for (int round = 0; round < 16; ++round) {
        assemble(S);
        local_search(S, set);
        const double c = objective(S);
        if (!(c < best_cost)) break;
        best = S;
        best_cost = c;
      }
    }
    for (std::size_t k : {32, 16, 8, 4}) {
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

  // ------------------------------------------------------------------ accessors
  constexpr std::size_t done() const { return done_; }
  constexpr const std::vector<std::size_t>& order() const { return order_; }
  constexpr const std::vector<std::vector<std::size_t>>& dependent_sets() const { return D_; }
  constexpr const std::vector<double>& rows() const { return rows_d_; }
  constexpr double work_total() const { return work_total_; }
  constexpr double seconds() const {
    return std::is_constant_evaluated() ? 0.0 : wall_seconds() - start_;
  }

 private:
  static constexpr bool has_spans = requires(const G& g, std::size_t i) {
    g.vertex_costs(i).data();
    g.edge_costs(i).data();
  };

  constexpr double edge(std::size_t e, std::size_t ks, std::size_t kt) const {
    if constexpr (has_spans)
      return g_.edge_costs(e)[ks * K_[dst_[e]] + kt];
    else
      return double(g_.edge_cost(e, ks, kt));
  }

  constexpr std::size_t digit_of(std::size_t v, std::size_t d) const {
    const auto& s = D_[v];
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i] == d) return i;
    return npos;  // unreachable: neighbours are in the dependent set
  }

  /// Strides over D(v)'s digits of child c's table of costs (0: not in it); returns the
  /// stride of v itself (c's first digit): 1, or K_d0 when the layout is swapped.
  constexpr std::size_t child_strides(std::size_t v, std::size_t c, std::size_t* out) const {
    const auto& dc = D_[c];
    for (std::size_t j = 1; j < dc.size(); ++j) out[digit_of(v, dc[j])] = ms_[c][j];
    return ms_[c][0];
  }

  /// What v's sweep adds: its vertex cost, its edges, its children's tables.
  constexpr bucket make_bucket(std::size_t v) const {
    const std::size_t m = D_[v].size(), Kv = K_[v];
    bucket b;
    b.unary = unary0_[v];
    // Per digit i, the tables over v and D(v)[i] alone: edges and children's tables. One
    // edge whose matrix already has the layout ([k][a0] for digit 0: v its source; else
    // [a_i][k]: v its target) is used in place; anything else is summed into a copy.
    std::vector<std::size_t> parts(m, 0), direct(m, npos), copy_at(m, npos);
    for (std::size_t e : owned_edges_[v]) {
      const std::size_t i = digit_of(v, src_[e] == v ? dst_[e] : src_[e]);
      ++parts[i];
      direct[i] = e;
    }
    for (std::size_t c : children_[v]) {
      if (D_[c].size() == 1) {
        for (std::size_t k = 0; k < Kv; ++k) b.unary[k] += msg_[c][k];
      } else if (D_[c].size() == 2) {
        ++parts[digit_of(v, D_[c][1])];
      }
    }
    for (std::size_t i = 0; i < m; ++i) {
      const bool in_place = has_spans && parts[i] == 1 && direct[i] != npos &&
                            (i == 0 ? src_[direct[i]] == v : dst_[direct[i]] == v);
      if (!in_place) direct[i] = npos;
      if (parts[i] > 0 && !in_place) {
        copy_at[i] = b.owned.size();
        b.owned.emplace_back(Kv * K_[D_[v][i]], 0.0);
      }
    }
    for (std::size_t e : owned_edges_[v]) {
      const bool v_src = src_[e] == v;
      const std::size_t d = v_src ? dst_[e] : src_[e], i = digit_of(v, d);
      if (copy_at[i] == npos) continue;
      auto& o = b.owned[copy_at[i]];
      const std::size_t Kd = K_[d], Ks = v_src ? Kv : Kd, Kt = v_src ? Kd : Kv;
      for (std::size_t ks = 0; ks < Ks; ++ks)
        for (std::size_t kt = 0; kt < Kt; ++kt) {
          const std::size_t kv = v_src ? ks : kt, kd = v_src ? kt : ks;
          o[i == 0 ? kv * Kd + kd : kd * Kv + kv] += edge(e, ks, kt);
        }
    }
    for (std::size_t c : children_[v]) {
      if (D_[c].size() != 2) continue;
      auto& o = b.owned[copy_at[digit_of(v, D_[c][1])]];
      const auto& mc = msg_[c];  // digit 0: [k][a0] (swapped), else [a_i][k]: as the copy
      for (std::size_t x = 0; x < o.size(); ++x) o[x] += mc[x];
    }
    struct entry {
      std::size_t level;
      const double* data;
      std::size_t child;  // npos: a pair factor on digit `level`
      std::size_t seq;    // keeps the sort stable (std::stable_sort is not constexpr)
    };
    std::vector<entry> es, e0;
    for (std::size_t i = 0; i < m; ++i) {
      const double* data = copy_at[i] != npos  ? b.owned[copy_at[i]].data()
                           : direct[i] != npos ? span_data(direct[i])
                                               : nullptr;
      if (!data) continue;
      if (i == 0)
        b.pair0 = data;
      else
        es.push_back({i, data, npos, es.size()});
    }
    for (std::size_t c : children_[v])
      if (D_[c].size() >= 3) {
        const std::size_t level = digit_of(v, D_[c][1]);
        (level == 0 ? e0 : es).push_back({level, msg_[c].data(), c, es.size() + e0.size()});
      }
    std::sort(es.begin(), es.end(), [](const entry& x, const entry& y) {
      return x.level != y.level ? x.level < y.level : x.seq < y.seq;
    });
    b.strides.assign((es.size() + e0.size()) * m, 0);
    std::size_t f = 0;
    for (auto* list : {&es, &e0})
      for (const entry& en : *list) {
        std::size_t* st = b.strides.data() + f * m;
        if (en.child == npos)
          st[en.level] = Kv;
        else
          child_strides(v, en.child, st);
        (list == &es ? b.factors : b.level0).push_back(factor{en.data, en.level, f * m});
        ++f;
      }
    b.level_begin.assign(m + 1, 0);
    for (std::size_t L = 0; L <= m; ++L) {
      std::size_t c = 0;
      while (c < es.size() && es[c].level < L) ++c;
      b.level_begin[L] = c;
    }
    return b;
  }

  constexpr const double* span_data(std::size_t e) const {
    if constexpr (has_spans)
      return g_.edge_costs(e).data();
    else
      return nullptr;
  }

  /// Calls fn(r0, digits, b1, C, C2, J) for every block of v's table: the J = K_d0 rows
  /// r0 .. r0 + J - 1 that share the digits a[1..] of D(v) (a[0] = 0), with b1[k] the sum of
  /// the factors without d0 and C[k * J + j] (+ C2[k * J + j], C2 may be null) the sum of
  /// those with d0 = j. A factor without d0 is added when a digit it depends on changes
  /// (partial sums per level). Needs |D(v)| >= 1.
  template <class Fn>
  constexpr bool sweep(std::size_t v, const bucket& b, Fn&& fn) {
    const std::size_t m = D_[v].size(), Kv = K_[v], R = rows_[v];
    const std::size_t J = K_[D_[v][0]], blocks = R / J;
    std::vector<double> buf((m + 1) * Kv);
    std::copy(b.unary.begin(), b.unary.end(), buf.begin() + std::ptrdiff_t(m * Kv));
    std::vector<std::size_t> a(m, 0), radix(m);
    for (std::size_t i = 0; i < m; ++i) radix[i] = K_[D_[v][i]];
    auto row_of = [&](const factor& f) {
      const std::size_t* st = b.strides.data() + f.strides;
      std::size_t off = 0;
      for (std::size_t i = 1; i < m; ++i) off += a[i] * st[i];
      return f.data + off;
    };
    auto fill = [&](std::size_t L) {  // buf[L] = buf[L + 1] + factors of level L
      double* dst = buf.data() + L * Kv;
      const double* src = dst + Kv;
      for (std::size_t k = 0; k < Kv; ++k) dst[k] = src[k];
      for (std::size_t f = b.level_begin[L]; f < b.level_begin[L + 1]; ++f) {
        const double* p = row_of(b.factors[f]);
        for (std::size_t k = 0; k < Kv; ++k) dst[k] += p[k];
      }
    };
    for (std::size_t L = m; L-- > 1;) fill(L);
    // The matrices over (k, a0): the edges' (fixed) and the children's (one per block, in
    // place: their layout is swapped for this). Two go to the kernel as they are; more are
    // summed first; none is a zero matrix.
    const std::size_t nmat = (b.pair0 ? 1 : 0) + b.level0.size();
    std::vector<double> cbuf(nmat == 0 || nmat > 2 ? Kv * J : 0, 0.0);
    const double* b1 = buf.data() + Kv;
    const std::size_t chunk = std::max<std::size_t>(1, (std::size_t(1) << 20) / (Kv * J));
    std::size_t next_tick = chunk;
    for (std::size_t blk = 0; blk < blocks; ++blk) {
      const double* C = cbuf.data();
      const double* C2 = nullptr;
      if (nmat == 1) {
        C = b.pair0 ? b.pair0 : row_of(b.level0[0]);
      } else if (nmat == 2) {
        C = b.pair0 ? b.pair0 : row_of(b.level0[0]);
        C2 = row_of(b.level0[b.pair0 ? 0 : 1]);
      } else if (nmat > 2) {
        for (std::size_t x = 0; x < Kv * J; ++x) cbuf[x] = b.pair0 ? b.pair0[x] : 0.0;
        for (const factor& f : b.level0) {
          const double* p = row_of(f);
          for (std::size_t x = 0; x < Kv * J; ++x) cbuf[x] += p[x];
        }
      }
      fn(blk * J, a.data(), b1, C, C2, J);
      std::size_t i = 1;
      while (i < m) {
        if (++a[i] < radix[i]) break;
        a[i] = 0;
        ++i;
      }
      if (i == m) break;
      for (std::size_t L = i; L >= 1; --L) fill(L);
      if (blk + 1 == next_tick) {
        next_tick += chunk;
        if (!tick(work_done_ + double(blk + 1) * double(J) * double(Kv))) return false;
      }
    }
    work_done_ += double(R) * double(Kv);
    return true;
  }

  /// Reports progress; false once the budget has run out. Free in constant evaluation.
  constexpr bool tick(double work) {
    if (std::is_constant_evaluated()) return true;
    const double t = wall_seconds() - start_;
    progress_(search_progress{phase_, done_, n_, work, work_total_, t});
    return t <= opt_.time_budget_seconds;
  }

  /// Cost of v in configuration k given the configured ones among its neighbours.
  constexpr double local_cost(std::size_t v, std::size_t k, const std::vector<std::size_t>& S,
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

  constexpr std::size_t best_local(std::size_t v, const std::vector<std::size_t>& S,
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
  constexpr void local_search(std::vector<std::size_t>& S, const std::vector<char>& set) const {
    for (int sweep_no = 0; sweep_no < 100; ++sweep_no) {
      bool changed = false;
      for (std::size_t v = 0; v < n_; ++v) {
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
  constexpr std::vector<std::size_t> restricted_search(std::size_t k,
                                                       const std::vector<std::size_t>& keep) const {
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
    no_progress quiet;
    engine<std::uint16_t, restricted_view<G>, no_progress> inner(view, o, quiet);
    inner.load();
    inner.plan();
    if (!inner.fits() || !inner.eliminate()) return keep;
    std::vector<std::size_t> c(n_, 0);
    inner.assemble(c);
    for (std::size_t v = 0; v < n_; ++v) c[v] = sub[v][c[v]];
    return c;
  }

  constexpr double objective(const std::vector<std::size_t>& S) const {
    double c = 0;
    for (std::size_t v = 0; v < n_; ++v) c += unary0_[v][S[v]];
    for (std::size_t e = 0; e < src_.size(); ++e)
      if (src_[e] != dst_[e]) c += edge(e, S[src_[e]], S[dst_[e]]);
    return c;
  }

  const G& g_;
  const search_options& opt_;
  Progress& progress_;
  double start_ = 0;
  search_phase phase_ = search_phase::eliminate;
  std::size_t n_ = 0, done_ = 0;
  double work_total_ = 0, work_done_ = 0;
  std::vector<std::size_t> K_;
  std::vector<std::vector<double>> unary0_;            ///< vertex costs (+ self-loop diagonals)
  std::vector<std::size_t> src_, dst_;                 ///< edges
  std::vector<std::size_t> pos_, order_;               ///< position in the order; the order
  std::vector<std::vector<std::size_t>> D_;            ///< dependent sets, earliest processed first
  std::vector<std::vector<std::size_t>> children_;     ///< c with D(c)[0] == v
  std::vector<std::vector<std::size_t>> owned_edges_;  ///< edges whose first-processed end is v
  std::vector<std::vector<std::size_t>> incident_;     ///< edges touching v (not self-loops)
  std::vector<std::vector<std::size_t>> ms_;           ///< per vertex: strides of D(v) in msg_
  std::vector<std::size_t> rows_;                      ///< table rows per vertex
  std::vector<double> rows_d_;                         ///< the same as doubles (may not fit)
  std::vector<std::vector<double>> msg_;               ///< per vertex: best cost per row
  std::vector<std::vector<Arg>> arg_;                  ///< per vertex: best configuration per row
};

template <class Arg, class G, class Progress>
constexpr search_result run(const G& g, const search_options& opt, Progress& progress) {
  engine<Arg, G, Progress> e(g, opt, progress);
  e.load();
  e.plan();
  const double t_setup = e.seconds();
  const std::size_t n = g.num_vertices();
  search_result r;
  r.config.assign(n, 0);
  bool done = false;
  if (!e.fits()) {
    r.stop = search_stop::table_limit;
  } else if (e.eliminate()) {
    done = true;
  } else {
    r.stop = search_stop::time_budget;
  }
  if (done) {
    e.assemble(r.config);
    r.proven_optimal = true;
  } else {
    r.config = e.fallback();
  }
  r.eliminated = e.done();

  r.vertex_cost.resize(n);
  r.edge_cost.resize(g.num_edges());
  double total = 0;
  for (std::size_t v = 0; v < n; ++v)
    total += r.vertex_cost[v] = double(g.vertex_cost(v, r.config[v]));
  for (std::size_t x = 0; x < g.num_edges(); ++x)
    total += r.edge_cost[x] =
        double(g.edge_cost(x, r.config[g.edge_source(x)], r.config[g.edge_target(x)]));
  r.cost = total;

  const double t_eliminate = e.seconds();
  if (done && opt.runner_ups) {
    std::vector<std::vector<double>> best;
    if (e.min_marginals(best)) {
      r.has_runner_ups = true;
      r.runner_ups.resize(n);
      for (std::size_t v = 0; v < n; ++v) {
        const auto& mm = best[v];
        const std::size_t k0 = r.config[v];
        auto& ru = r.runner_ups[v];
        for (std::size_t k = 0; k < mm.size(); ++k)
          if (k != k0 && (ru.config == runner_up::npos || mm[k] < mm[ru.config])) ru.config = k;
        if (ru.config != runner_up::npos) {
          const double d = mm[ru.config] - mm[k0];
          ru.delta = d > 0 ? d : 0.0;
          ru.cost = r.cost + ru.delta;
        }
      }
    }
  }

  r.order = e.order();
  r.dependent_set = e.dependent_sets();
  for (std::size_t v = 0; v < n; ++v) {
    r.max_dependent_set = std::max(r.max_dependent_set, r.dependent_set[v].size());
    r.largest_table_rows = std::max(r.largest_table_rows, e.rows()[v]);
    r.table_rows += e.rows()[v];
  }
  r.work = e.work_total();
  r.seconds = e.seconds();
  r.setup_seconds = t_setup;
  r.eliminate_seconds = t_eliminate - t_setup;
  r.runner_up_seconds = r.seconds - t_eliminate;
  return r;
}

}  // namespace detail::pase

/// The optimal strategy of a cost-table problem (PaSE, exact), its cost, per-vertex and
/// per-edge costs and, unless `opt.runner_ups` is false, each vertex's runner-up.
/// `progress` (optional) is called with a `search_progress` after each vertex and every
/// ~10^6 table entries (never in constant evaluation).
/// \code
///   wp::cost_graph g = wp::read_cost_tables("alexnet_p8.json");
///   wp::search_result r = wp::pase_search(g, {.time_budget_seconds = 10});
///   if (r.proven_optimal) std::printf("%.17g\n", r.cost);
/// \endcode
/// Throws `shape_error` for a vertex without configurations, `table_error` for an edge to a
/// vertex that does not exist or a NaN cost.
template <cost_table_graph G, class Progress = no_progress>
constexpr search_result pase_search(const G& g, const search_options& opt = {},
                                    Progress&& progress = {}) {
  std::size_t max_k = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    max_k = std::max<std::size_t>(max_k, g.num_configs(v));
  if (max_k <= 0xFFFF) return detail::pase::run<std::uint16_t>(g, opt, progress);
  return detail::pase::run<std::uint32_t>(g, opt, progress);
}

}  // namespace workpart
