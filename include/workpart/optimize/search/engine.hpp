#pragma once
/// \file engine.hpp
/// The PaSE search's engine (../search.hpp): the graph read into flat arrays, the state the
/// phases share, and the helpers they all use. The phases are defined in files of their own:
/// ordering.hpp (1. the elimination order and dependent sets), elimination.hpp (2. the tables,
/// 3. assembly), runner_ups.hpp (the top-down pass) and fallback.hpp (when the search stops
/// early); ../search.hpp runs them.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../cost_tables.hpp"
#include "../min_plus.hpp"
#include "result.hpp"

namespace workpart::detail::pase {

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

/// One list per vertex in two flat arrays: one allocation for all of them, where a vector per
/// vertex costs an allocation each (on a 300,000-vertex graph that alone was most of the
/// set-up time).
template <class T>
struct flat_lists {
  std::vector<std::size_t> start = {0};  ///< list v is items[start[v] .. start[v + 1])
  std::vector<T> items;

  constexpr std::span<const T> operator[](std::size_t v) const {
    return {items.data() + start[v], start[v + 1] - start[v]};
  }
  constexpr std::span<T> operator[](std::size_t v) {
    return {items.data() + start[v], start[v + 1] - start[v]};
  }
  /// n lists of the sizes size(v), value-initialised.
  template <class Size>
  constexpr void assign_sizes(std::size_t n, Size&& size) {
    start.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) start[v + 1] = start[v] + size(v);
    items.assign(start[n], T{});
  }
  /// n lists filled from (list, item) pairs that for_each_pair(put) hands to put, in the
  /// order given (a counting sort: two passes over the pairs).
  template <class ForEachPair>
  constexpr void assign_pairs(std::size_t n, ForEachPair&& for_each_pair) {
    start.assign(n + 1, 0);
    for_each_pair([&](std::size_t v, const T&) { ++start[v + 1]; });
    for (std::size_t v = 0; v < n; ++v) start[v + 1] += start[v];
    items.resize(start[n]);
    std::vector<std::size_t> at(start.begin(), start.end() - 1);
    for_each_pair([&](std::size_t v, const T& x) { items[at[v]++] = x; });
  }
};

/// An allocator whose elements start uninitialised at run time (value-initialised in constant
/// evaluation): a vertex's table is written in full by its sweep before anything reads it, so
/// zeroing it first only costs time (the 3-position RNNLM's free search at 4 ranks: a third of
/// it went to zeroing its tables).
template <class T>
struct uninitialised_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninitialised_allocator<U>;
  };
  constexpr uninitialised_allocator() noexcept = default;
  template <class U>
  constexpr uninitialised_allocator(const uninitialised_allocator<U>&) noexcept {}
  template <class U>
  constexpr void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    if (std::is_constant_evaluated())
      std::construct_at(p);
    else
      ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  constexpr void construct(U* p, A&&... a) {
    std::construct_at(p, std::forward<A>(a)...);
  }
};
/// A vertex's table: a cost or a configuration per row of its dependent set.
template <class T>
using table_vector = std::vector<T, uninitialised_allocator<T>>;

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
    for (std::size_t v = 0; v < n_; ++v) {
      const std::size_t k = g_.num_configs(v);
      if (k == 0) throw_no_configs(v);
      if (k > std::size_t(std::numeric_limits<Arg>::max())) throw_too_many_configs(v, k);
      K_[v] = k;
    }
    unary0_.assign_sizes(n_, [&](std::size_t v) { return K_[v]; });
    for (std::size_t v = 0; v < n_; ++v) {
      const std::size_t k = K_[v];
      const auto u = unary0_[v];
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
    if (!std::is_constant_evaluated()) load_seconds_ = wall_seconds() - start_;
  }

  // ---------------------------------------------------- 1. ordering (ordering.hpp)
  /// The order, dependent sets and table layouts; false when the budget ran out first (the
  /// vertices ordered so far are in take_order(); only the fallback can run then).
  constexpr bool plan();

  /// One greedy order over neighbour lists `adj` (consumed) into order, pos and D, and the
  /// entries its tables hold (see ordering.hpp), infinite once they pass `bound`; false when
  /// the budget ran out.
  constexpr bool greedy_order(std::vector<std::vector<std::size_t>>& adj, bool fewest_neighbours,
                              std::vector<std::size_t>& order, std::vector<std::size_t>& pos,
                              std::vector<std::vector<std::size_t>>& D, double& entries,
                              double bound) const;

  /// Whether the tables fit `max_table_bytes`; sets rows_ when they do.
  constexpr bool fits();

  // ---------------------------------------------------- 2. elimination (elimination.hpp)
  /// Processes the vertices in order; false when the budget ran out (done_ were finished).
  constexpr bool eliminate();

  // ---------------------------------------------------- 3. assembly (elimination.hpp)
  /// Configurations of the processed vertices (the first `done_` in order, decoded last to
  /// first) given those of the others in `config`.
  constexpr void assemble(std::vector<std::size_t>& config) const;

  // ---------------------------------------------------- runner-ups (runner_ups.hpp)
  /// Min-marginals: best[v][k] = the least total cost with v in configuration k. A top-down
  /// pass: outside[v] (a table over D(v)) is the least cost of everything not below v in the
  /// elimination tree; v's sums plus it, minimised, give best[v] and its children's outside.
  constexpr bool min_marginals(std::vector<std::vector<double>>& best);

  // ---------------------------------------------------- fallback (fallback.hpp)
  /// The strategy returned when the search stops early: (1) greedy (vertices in order, each
  /// to its best configuration given those set before) and local search (one vertex at a
  /// time to its best configuration given all others, until none improves), alternated with
  /// setting the vertices processed so far optimally given the rest (their tables); then
  /// (2) the exact search restricted to a few configurations per vertex (that strategy's and
  /// the cheapest given its neighbours there; as many as keep the work under ~2e7), then local
  /// search again. The best of these; never worse than (1).
  constexpr std::vector<std::size_t> fallback() const;

  // ------------------------------------------------------------------ accessors
  constexpr std::size_t done() const { return done_; }
  /// The order and dependent sets, moved out (the engine is done with them).
  constexpr std::vector<std::size_t> take_order() { return std::move(order_); }
  constexpr std::vector<std::vector<std::size_t>> take_dependent_sets() { return std::move(D_); }
  constexpr const std::vector<double>& rows() const { return rows_d_; }
  constexpr double work_total() const { return work_total_; }
  constexpr double seconds() const {
    return std::is_constant_evaluated() ? 0.0 : wall_seconds() - start_;
  }

  /// The result's costs of strategy S: per vertex (as given, without self-loops), per edge
  /// (self-loops included), and their sum in that order.
  constexpr double costs(const std::vector<std::size_t>& S, std::vector<double>& vertex_cost,
                         std::vector<double>& edge_cost) const {
    vertex_cost.resize(n_);
    edge_cost.resize(src_.size());
    double total = 0;
    for (std::size_t v = 0; v < n_; ++v) {
      if constexpr (has_spans)
        vertex_cost[v] = g_.vertex_costs(v)[S[v]];
      else
        vertex_cost[v] = double(g_.vertex_cost(v, S[v]));
      total += vertex_cost[v];
    }
    for (std::size_t e = 0; e < src_.size(); ++e)
      total += edge_cost[e] = edge(e, S[src_[e]], S[dst_[e]]);
    return total;
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
  constexpr bucket make_bucket(std::size_t v) const;

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
  constexpr bool sweep(std::size_t v, const bucket& b, Fn&& fn);

  // The budget covers the whole search, result included. Whatever stops the search early, the
  // greedy pass, one use of the tables, two objectives and the result's costs still run: each
  // one pass over the edges, reading K_u + K_v costs of each or 1, where load() read all
  // K_u x K_v. On a 300,000-vertex chain with K = 4 they took 1.3x what load() took together.
  // So the ordering and the tables stop two load()s before the budget (must_stop), the
  // fallback's improvements one load() before it (out_of_time). (bench_search_budget.)
  /// Whether the fallback's improvements must stop (never in constant evaluation).
  constexpr bool out_of_time() const {
    if (std::is_constant_evaluated()) return false;
    return wall_seconds() - start_ + load_seconds_ > opt_.time_budget_seconds;
  }

  /// Whether the ordering and the tables must stop (never in constant evaluation).
  constexpr bool must_stop() const {
    if (std::is_constant_evaluated()) return false;
    return wall_seconds() - start_ + 2 * load_seconds_ > opt_.time_budget_seconds;
  }

  /// Reports progress; false once the budget has run out (in the elimination: must_stop).
  /// Free in constant evaluation.
  constexpr bool tick(double work) {
    if (std::is_constant_evaluated()) return true;
    progress_(search_progress{phase_, done_, n_, work, work_total_, wall_seconds() - start_});
    const double t = wall_seconds() - start_;  // after the callback: its time counts too
    const double keep = phase_ == search_phase::eliminate ? 2 * load_seconds_ : 0.0;
    return t + keep <= opt_.time_budget_seconds;
  }

  /// Cost of v in configuration k given the configured ones among its neighbours.
  constexpr double local_cost(std::size_t v, std::size_t k, const std::vector<std::size_t>& S,
                              const std::vector<char>& set) const;

  constexpr std::size_t best_local(std::size_t v, const std::vector<std::size_t>& S,
                                   const std::vector<char>& set) const;

  /// One vertex at a time to its best configuration given the others, until none improves.
  constexpr void local_search(std::vector<std::size_t>& S, const std::vector<char>& set) const;

  /// The exact search over at most k configurations per vertex: `keep`'s and those cheapest
  /// given `keep`'s configurations of the neighbours.
  constexpr std::vector<std::size_t> restricted_search(std::size_t k,
                                                       const std::vector<std::size_t>& keep) const;

  constexpr double objective(const std::vector<std::size_t>& S) const;

  const G& g_;
  const search_options& opt_;
  Progress& progress_;
  double start_ = 0;
  double load_seconds_ = 0;  ///< what load() took: the unit of the budget's reserves
  search_phase phase_ = search_phase::eliminate;
  std::size_t n_ = 0, done_ = 0;
  double work_total_ = 0, work_done_ = 0;
  std::vector<std::size_t> K_;
  flat_lists<double> unary0_;                ///< vertex costs (+ self-loop diagonals)
  std::vector<std::size_t> src_, dst_;       ///< edges
  std::vector<std::size_t> pos_, order_;     ///< position in the order; the order
  std::vector<std::vector<std::size_t>> D_;  ///< dependent sets, earliest processed first
  bool planned_ = false;                     ///< plan() finished
  flat_lists<std::size_t> children_;         ///< c with D(c)[0] == v, in order
  flat_lists<std::size_t> owned_edges_;      ///< edges whose first-processed end is v
  flat_lists<std::size_t> incident_;         ///< edges touching v (not self-loops)
  flat_lists<std::size_t> ms_;               ///< per vertex: strides of D(v) in msg_
  std::vector<std::size_t> rows_;            ///< table rows per vertex
  std::vector<double> rows_d_;               ///< the same as doubles (may not fit)
  std::vector<table_vector<double>> msg_;    ///< per vertex: best cost per row
  std::vector<table_vector<Arg>> arg_;       ///< per vertex: best configuration per row
  /// Tables the search is done with, their storage kept for the next ones: a fresh table's
  /// pages are zeroed by the system on first touch, and a search that frees and allocates
  /// tables of tens of MB (each mapped and unmapped by malloc) spends as long in those faults
  /// as in its sums. At most spare_tables_ kept, the smallest dropped first.
  std::vector<table_vector<double>> spare_;
  static constexpr std::size_t spare_tables_ = 4;
  /// A table of `rows` entries, uninitialised: the smallest spare that holds it, else new.
  constexpr table_vector<double> take_table(std::size_t rows) {
    std::size_t best = npos;
    for (std::size_t i = 0; i < spare_.size(); ++i)
      if (spare_[i].capacity() >= rows &&
          (best == npos || spare_[i].capacity() < spare_[best].capacity()))
        best = i;
    table_vector<double> t;
    if (best != npos) {
      t = std::move(spare_[best]);
      spare_.erase(spare_.begin() + std::ptrdiff_t(best));
    }
    t.resize(rows);
    return t;
  }
  /// Keeps table t's storage for take_table; t is left empty.
  constexpr void give_back(table_vector<double>& t) {
    if (t.capacity() > 0) spare_.push_back(std::move(t));
    t = {};
    if (spare_.size() > spare_tables_) {
      std::size_t small = 0;
      for (std::size_t i = 1; i < spare_.size(); ++i)
        if (spare_[i].capacity() < spare_[small].capacity()) small = i;
      spare_.erase(spare_.begin() + std::ptrdiff_t(small));
    }
  }
};

}  // namespace workpart::detail::pase
