#pragma once
/// \file map.hpp
/// Maps: a parallel loop over a space with one or more statements, run in order. (Programs,
/// maps in program order, are run-time lists: program/program.hpp.)

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "../core/space.hpp"
#include "access_list.hpp"
#include "interval.hpp"
#include "statement.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// Checks every access of a map (its access_events) against its array's bounds over the
/// whole space [lo, hi) of `rank` dimensions.
WORKPART_DECL void check_bounds_of(const std::string& map_name,
                                   const std::vector<access_event>& events, const index_t* lo,
                                   const index_t* hi, int rank, const std::string& space_text);

/// Rank of the integer matrix rows x cols (row-major in m), by Gaussian elimination.
constexpr int matrix_rank(double* m, int rows, int cols) {
  int rank = 0;
  for (int c = 0; c < cols && rank < rows; ++c) {
    int piv = -1;
    for (int r = rank; r < rows; ++r)
      if (m[r * cols + c] != 0) piv = r;
    if (piv < 0) continue;
    for (int k = 0; k < cols; ++k) {
      const double t = m[rank * cols + k];
      m[rank * cols + k] = m[piv * cols + k];
      m[piv * cols + k] = t;
    }
    for (int r = 0; r < rows; ++r) {
      if (r == rank || m[r * cols + c] == 0) continue;
      const double f = m[r * cols + c] / m[rank * cols + c];
      for (int k = 0; k < cols; ++k) m[r * cols + k] -= f * m[rank * cols + k];
    }
    ++rank;
  }
  return rank;
}

/// For a left side with coefficients known at compile time: whether distinct points of a
/// space of rank N always write distinct elements (the subscript map has rank N).
/// True when some coefficient is only known at run time (checked when the map is built).
template <int N, class Lhs>
constexpr bool lhs_one_to_one() {
  constexpr int R = Lhs::array_type::rank;
  if constexpr (N == 0) {
    return true;
  } else {
    bool dynamic = false;
    double m[(R > 0 ? R : 1) * N] = {};
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      constexpr affine_sig sigs[] = {Lhs::template axis_sig<int(A)>()..., affine_sig{}};
      for (int a = 0; a < R; ++a)
        for (int d = 0; d < N; ++d) {
          if (sigs[a].dynamic & dim_bit(d)) dynamic = true;
          m[a * N + d] = double(sigs[a].coef[d]);
        }
    }
    (std::make_index_sequence<R>{});
    return dynamic || matrix_rank(m, R, N) == N;
  }
}

template <int N, class Stmt>
constexpr void check_statement_types() {
  constexpr node_info li = Stmt::lhs_type::info, ri = Stmt::rhs_type::info;
  constexpr dim_mask space_dims = dims_below(N);
  static_assert(!li.has_all && !ri.has_all,
                "workpart::map: wp::all reads a whole axis and has no single value; use it inside "
                "wp::sum / wp::max_of / wp::min_of, e.g. wp::sum(x(i, wp::all))");
  static_assert(((li.free | ri.free) & ~space_dims) == 0,
                "workpart::map: an index beyond the space's rank is used; a space of rank N binds "
                "index<0> .. index<N-1>: add a dimension to wp::space or bind the index with "
                "wp::range");
  static_assert(((li.bound | ri.bound) & space_dims) == 0,
                "workpart::map: an inner index must not be an index of the enclosing space; use "
                "an index variable numbered at or above the space's rank in wp::range");
  static_assert(Stmt::kind != combine::assign || (li.free & space_dims) == space_dims,
                "workpart::map: a plain '=' whose left side does not use every index of its space "
                "is a race (several points write one element); use += to sum, or wp::max_into / "
                "wp::min_into");
  static_assert(Stmt::kind != combine::assign || (li.free & space_dims) != space_dims ||
                    lhs_one_to_one<N, typename Stmt::lhs_type>(),
                "workpart::map: a plain '=' whose left side sends several points of the space to "
                "one element (e.g. out(i + j)) is a race; use += to sum, or wp::max_into / "
                "wp::min_into");
}

/// Whether an affine left side is one-to-one over a box of the space, decided exactly from
/// its coefficients (no enumeration of the space's points). Two points p != q write one
/// element exactly when v = q - p is a nonzero integer vector with A v = 0 and
/// |v_d| < extent_d for every dimension d. The integer kernel of A is brought to reduced
/// echelon form; a kernel of dimension 1 is a line whose shortest integer step is computed
/// directly, and a larger kernel is searched over its free coordinates (the dimensions of
/// smallest extent), which are few. `race` holds such a v when there is one.
struct one_to_one_result {
  enum verdict { one_to_one, race, undecided } kind = one_to_one;
  index_t step[max_dims] = {};  ///< for race: q - p
};

WORKPART_DECL one_to_one_result decide_one_to_one(const index_t* coef /* R x N, row-major */, int R,
                                                  int N, const index_t* extent);

/// The run-time half of the check above, for coefficients written as runtime integers,
/// decided exactly for any size of space (decide_one_to_one). Two points that write one
/// element are a race, named in the error with the element they both write. Checks the left
/// side of every plain '=' among a map's access events over the space [lo, hi) of N
/// dimensions.
WORKPART_DECL void check_one_to_one_of(const std::string& map_name,
                                       const std::vector<access_event>& events, int N,
                                       const index_t* lo, const index_t* hi,
                                       const std::string& space_text);

}  // namespace workpart::detail

namespace workpart {

/// A parallel loop over `space` whose statements run in order (each over the whole space).
template <int N, class... Stmts>
class map_t {
 public:
  static constexpr int rank = N;
  static constexpr std::size_t statement_count = sizeof...(Stmts);
  using statements_type = std::tuple<Stmts...>;

  /// Checks every access against its array's bounds and every plain '=' for races. Under a
  /// context of several ranks a failure is kept and raised by wp::distribute on every rank
  /// alike (the values behind it may differ by rank, and a rank that threw here would leave
  /// the others waiting in distribute's first collective); otherwise it is thrown here.
  map_t(std::string name, const space<N>& sp, const Stmts&... stmts)
      : name_(std::move(name)), space_(sp), stmts_(stmts...) {
    try {
      check_bounds();
    } catch (const shape_error& e) {
      if (detail::current_size() <= 1) throw;
      deferred_error_ = e.what();
    }
  }

  /// Throws the error found when the map was built, if it was kept for wp::distribute.
  void require_valid() const {
    if (!deferred_error_.empty())
      throw shape_error(deferred_error_.substr(deferred_error_.find("] ") + 2));
  }

  const std::string& name() const noexcept { return name_; }
  /// What made the map where the library did ("wp::backward of the loss 'L'"), for messages
  /// about its generated name; empty for a map the user wrote.
  const std::string& origin() const noexcept { return origin_; }
  void set_origin(std::string o) { origin_ = std::move(o); }
  const space<N>& iteration_space() const noexcept { return space_; }
  /// Every statement, those pruned included (see prune_statement).
  const statements_type& statements() const noexcept { return stmts_; }

  /// Calls f(stmt) for every statement that runs, in order. Everything downstream (the
  /// constraints, the plans, the cost model, the executors, explain) sees the map this way.
  template <class F>
  void for_each_statement(F&& f) const {
    std::size_t s = 0;
    std::apply([&](const auto&... st) { ((runs(s++) ? void(f(st)) : void()), ...); }, stmts_);
  }
  /// Walks the accesses and inner ranges of every statement that runs with v, left side
  /// then right side: v.on_access(a), v.enter_range(r), v.leave_range().
  template <class V>
  void visit_accesses(V& v) const {
    for_each_statement([&](const auto& st) {
      st.lhs.visit(v);
      st.rhs.visit(v);
    });
  }
  /// The access events of the statements that run (numbered as in the whole map).
  std::vector<detail::access_event> access_events() const {
    std::vector<detail::access_event> ev = detail::access_events(stmts_);
    if (pruned_ != 0)
      std::erase_if(ev,
                    [&](const detail::access_event& e) { return !runs(std::size_t(e.statement)); });
    return ev;
  }
  /// Whether statement s runs. wp::backward prunes the statements that write gradients no
  /// named gradient needs (a run-time fact: arrays are known by identity), so one map type
  /// serves every choice of parameters.
  bool runs(std::size_t s) const noexcept { return (pruned_ >> s & 1u) == 0; }
  void prune_statement(std::size_t s) noexcept { pruned_ |= std::uint64_t(1) << s; }

  std::string str() const {
    std::string s = "map '" + name_ + "' over " + space_.str() + ":";
    for_each_statement([&](const auto& st) { s += "\n  " + st.str(); });
    if (const int n = std::popcount(pruned_))
      s += "\n  (" + std::to_string(n) + " statement" + (n > 1 ? "s" : "") +
           " pruned by wp::backward)";
    return s;
  }

 private:
  void check_bounds() const {
    if (space_.empty()) return;  // runs nowhere, reads nothing
    const std::vector<detail::access_event> events = detail::access_events(stmts_);
    const std::string space_text = space_.str();
    detail::check_bounds_of(name_, events, space_.lo.data(), space_.hi.data(), N, space_text);
    // after the bounds check, so that every subscript is inside its axis
    detail::check_one_to_one_of(name_, events, N, space_.lo.data(), space_.hi.data(), space_text);
  }

  std::string name_;
  std::string origin_;
  space<N> space_;
  statements_type stmts_;
  std::uint64_t pruned_ = 0;    // bit s: statement s does not run
  std::string deferred_error_;  // a shape_error kept for distribute (see the constructor)
};

/// \code
///   auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
/// \endcode
/// Throws wp::shape_error when an access can leave its array anywhere in the space.
template <int N, class... Stmts>
map_t<N, Stmts...> map(std::string name, const space<N>& sp, const Stmts&... stmts) {
  static_assert(sizeof...(Stmts) > 0, "workpart::map: give at least one statement");
  static_assert(sizeof...(Stmts) <= 64, "workpart::map: at most 64 statements per map");
  static_assert((detail::is_statement_v<Stmts> && ...),
                "workpart::map: every argument after the space must be a statement "
                "(out(i) = e, out(i) += e, wp::max_into(out(i), e), wp::min_into(out(i), e))");
  (detail::check_statement_types<N, Stmts>(), ...);
  return map_t<N, Stmts...>(std::move(name), sp, stmts...);
}

namespace detail {
template <class T>
inline constexpr bool is_map_v = false;
template <int N, class... S>
inline constexpr bool is_map_v<map_t<N, S...>> = true;
}  // namespace detail

}  // namespace workpart

#if WORKPART_HEADER_ONLY
#include "impl/map.ipp"
#endif
