#pragma once
/// \file rules.hpp
/// The chain rule, one rule per expression node type, applied at compile time (no tape).
///
/// `adjoint(node, seed, grads)` returns, as a std::tuple, the statements that add a node's
/// contribution to the gradient of every array it reads, where `seed` is an expression for
/// d(loss)/d(node's value) at the point. A read `X(g(p))` becomes the accumulating write
/// `dX(g(p)) += seed` over the same space with the same subscripts: a read that broadcasts
/// (an index of the space absent from X) becomes a '+=' that sums over that index, which the
/// plans split and combine rank to rank like any other reduction.
///
/// An inner reduction over constant bounds gives an `inner_reduction_adjoint`, not statements
/// (its terms write where the sum's index points, which is not an index of the map's space):
/// backward.hpp turns it into a stored seed and a map over the space extended by that index.
///
/// A padded read gives a `padded_adjoint`, not a statement either (its writes would leave the
/// array): backward.hpp writes it into a padded gradient array (padded_gradient.hpp).
///
/// Values a derivative needs (the other factor of a product, exp(e), ...) are recomputed
/// from the forward arrays, so the backward pass reads what the forward pass read.

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>

#include "../expr/access.hpp"
#include "../expr/ops.hpp"
#include "../expr/padded.hpp"
#include "../expr/reduce.hpp"
#include "../expr/statement.hpp"
#include "adjoint_kinds/kind.hpp"

namespace workpart::detail {

template <class>
inline constexpr bool no_rule_v = false;

/// The derivative of one node type: `apply(node, seed, grads)` -> tuple of statements.
/// Node types without a rule stop the build with a message naming the limitation.
template <class E>
struct adjoint_rule {
  static_assert(no_rule_v<E>, "wp::backward: this expression node has no differentiation rule");
};

template <class E, class S, class G>
constexpr auto adjoint(const E& e, const S& seed, G& grads) {
  return adjoint_rule<E>::apply(e, seed, grads);
}

/// The real type a derivative of a value of type V is computed in.
template <class V>
using real_of = std::conditional_t<std::is_floating_point_v<V>, V, double>;

// ---- leaves ----

template <class V>
struct adjoint_rule<scalar_node<V>> {  // constants
  template <class S, class G>
  static constexpr auto apply(const scalar_node<V>&, const S&, G&) {
    return std::tuple<>{};
  }
};
template <int D>
struct adjoint_rule<val_node<D>> {  // wp::val(i): a coordinate, a constant
  template <class S, class G>
  static constexpr auto apply(const val_node<D>&, const S&, G&) {
    return std::tuple<>{};
  }
};

/// The same access on the gradient array of the array it reads (same subscripts: the
/// gradient of an indirect read E(tok(b, s), d) is the scatter-add dE(tok(b, s), d) += ...).
template <class A, class G>
A gradient_access(const A& a, G& grads) {
  A d = a;
  d.arr = &grads.of(*a.arr);
  return d;
}

/// A padded read `wp::padded(X, fill)(g(p))`: a read of X where g(p) is inside X, the constant
/// fill elsewhere. Its contribution is not a statement yet: backward.hpp writes it, once the
/// space of the map it runs in is known, into a padded gradient array and adds the part over
/// X into dX (padded_gradient.hpp).
template <class A, class S>
struct padded_adjoint {
  A acc;  ///< the read (its array and subscripts)
  S seed;
  void* grad = nullptr;  ///< the padded gradient array, once made
  std::array<index_t, std::size_t(A::array_type::rank)>
      lo{};  ///< its first element, in X's coordinates
};
template <class A>
struct adjoint_rule<padded_node<A>> {
  template <class S, class G>
  static auto apply(const padded_node<A>& n, const S& s, G&) {
    if constexpr (!std::is_floating_point_v<typename A::value_type>)
      return std::tuple<>{};
    else
      return std::tuple{padded_adjoint<A, S>{n.acc, s}};
  }
};

template <class T, int N, class... Subs>
struct adjoint_rule<access_node<T, N, Subs...>> {
  using A = access_node<T, N, Subs...>;
  static_assert(!(std::is_same_v<Subs, all_sub> || ...),
                "wp::backward: a wp::all read outside an inner reduction has no derivative");
  template <class S, class G>
  static auto apply(const A& a, const S& seed, G& grads) {
    if constexpr (!std::is_floating_point_v<T>)
      return std::tuple<>{};  // integer arrays (indices, labels) carry no gradient
    else
      return std::tuple{make_statement<add_tag>(gradient_access(a, grads), seed)};
  }
};

/// The derivative of an inner reduction `wp::sum(range(r, lo, hi), body)` seeded by s (lo and
/// hi affine in the outer indices; where they vary, the extended space spans their hull and
/// the points outside a point's own range are masked off): every
/// term gets s, but a term's contributions write where r points (dw(r) += s * x(i + r)), and r
/// is not an index of the map's space. So backward_map (backward.hpp) stores s per point of
/// the space in an array made here (`dsum.<map>`, a '=' in d<map>) and differentiates the
/// body, seeded by that array, over the space extended by r (a map of its own, `d<map>.sum`);
/// a reduction nested in the body is one more level of the same (`dsum.<map>.sum`,
/// `d<map>.sum.sum`).
/// `wp::max_of` / `wp::min_of` send s to the terms whose value is the result, shared evenly
/// among ties as max_into does (the same on every grid): d<map> also stores the result per
/// point, and `d<map>.sum.ties`, over the extended space, counts the terms equal to it before
/// `d<map>.sum` gives each its share.
template <class Red, int D, class Lo, class Hi, class Body, class S>
struct inner_reduction_adjoint {
  static constexpr int dim = D;
  static constexpr bool sums = std::is_same_v<Red, red_sum>;
  using node_type = reduce_node<Red, D, Lo, Hi, Body>;
  using value_type = real_of<typename S::value_type>;
  node_type node;
  S seed;
  const void* origin = nullptr;  ///< the forward array the statement writes (for pruning)
  void* seeds = nullptr;         ///< the array<value_type, N> holding the seed per point
  void* results = nullptr;       ///< max/min: the array<node value, N> holding the result
  std::array<index_t, std::size_t(max_dims)> at{};  ///< where the space's origin is in them
};

template <class B>
constexpr bool constant_bound() {
  if constexpr (is_affine_v<B>)
    return B::sig.present == 0;
  else
    return false;
}

template <class Red, int D, class Lo, class Hi, class Body>
struct adjoint_rule<reduce_node<Red, D, Lo, Hi, Body>> {
  static_assert(is_affine_v<Lo> && is_affine_v<Hi>,
                "wp::backward: an inner wp::sum, wp::max_of or wp::min_of is differentiable over "
                "affine bounds (wp::range(r, 0, R), wp::range(r, 0, i + 1), wp::all); one whose "
                "bounds read data is not yet: write it as a statement over a space that "
                "includes its index (a CSR row sum as y(row_of(q)) += val(q) * x(col(q)))");
  template <class S, class G>
  static auto apply(const reduce_node<Red, D, Lo, Hi, Body>& n, const S& s, G& grads) {
    using terms = decltype(adjoint(n.body, s, grads));
    if constexpr (std::tuple_size_v<terms> == 0)
      return std::tuple<>{};  // nothing in the body has a gradient
    else
      return std::tuple{inner_reduction_adjoint<Red, D, Lo, Hi, Body, S>{n, s}};
  }
};

// ---- unary functions: d f(e) = f'(e) de ----

template <class Op>
struct unary_derivative;  // seed for the child, given the seed of f(e)
template <>
struct unary_derivative<op_neg> {
  template <class S, class E>
  static constexpr auto of(const S& s, const E&) {
    return -s;
  }
};
template <>
struct unary_derivative<op_exp> {
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    return s * workpart::exp(e);
  }
};
template <>
struct unary_derivative<op_log> {
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    return s / e;
  }
};
template <>
struct unary_derivative<op_sqrt> {
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    using V = real_of<typename E::value_type>;
    return s / (V(2) * workpart::sqrt(e));
  }
};
template <>
struct unary_derivative<op_tanh> {
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    using V = real_of<typename E::value_type>;
    return s * (V(1) - workpart::tanh(e) * workpart::tanh(e));
  }
};
template <>
struct unary_derivative<op_erf> {  // 2 / sqrt(pi) e^(-e^2)
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    using V = real_of<typename E::value_type>;
    return s * (V(1.1283791670955125739) * workpart::exp(-(e * e)));
  }
};
template <>
struct unary_derivative<op_log1p> {
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    using V = real_of<typename E::value_type>;
    return s / (V(1) + e);
  }
};
template <>
struct unary_derivative<op_expm1> {
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    return s * workpart::exp(e);
  }
};
template <>
struct unary_derivative<op_sigmoid> {  // sigmoid(e) (1 - sigmoid(e))
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    using V = real_of<typename E::value_type>;
    return s * (workpart::sigmoid(e) * (V(1) - workpart::sigmoid(e)));
  }
};
template <>
struct unary_derivative<op_abs> {  // sign(e): 0 at 0, as PyTorch
  template <class S, class E>
  static constexpr auto of(const S& s, const E& e) {
    using V = real_of<typename E::value_type>;
    return workpart::select(e > V(0), s, workpart::select(e < V(0), -s, V(0)));
  }
};

template <class Op, class E>
struct adjoint_rule<unary_node<Op, E>> {
  template <class S, class G>
  static constexpr auto apply(const unary_node<Op, E>& n, const S& s, G& grads) {
    return adjoint(n.e, unary_derivative<Op>::of(s, n.e), grads);
  }
};

/// wp::random_uniform(...): a constant of what is differentiated (its arguments are integers).
template <class E>
struct adjoint_rule<unary_node<op_unit_interval, E>> {
  template <class S, class G>
  static constexpr auto apply(const unary_node<op_unit_interval, E>&, const S&, G&) {
    return std::tuple<>{};
  }
};

// ---- binary operations: seeds for the left and the right operand ----

template <class Op>
struct binary_derivative {  // comparisons: a gate, no gradient through it
  static constexpr bool differentiable = false;
};
template <>
struct binary_derivative<op_add> {
  static constexpr bool differentiable = true;
  template <class S, class L, class R>
  static constexpr auto left(const S& s, const L&, const R&) {
    return s;
  }
  template <class S, class L, class R>
  static constexpr auto right(const S& s, const L&, const R&) {
    return s;
  }
};
template <>
struct binary_derivative<op_sub> {
  static constexpr bool differentiable = true;
  template <class S, class L, class R>
  static constexpr auto left(const S& s, const L&, const R&) {
    return s;
  }
  template <class S, class L, class R>
  static constexpr auto right(const S& s, const L&, const R&) {
    return -s;
  }
};
template <>
struct binary_derivative<op_mul> {
  static constexpr bool differentiable = true;
  template <class S, class L, class R>
  static constexpr auto left(const S& s, const L&, const R& r) {
    return s * r;
  }
  template <class S, class L, class R>
  static constexpr auto right(const S& s, const L& l, const R&) {
    return s * l;
  }
};
template <>
struct binary_derivative<op_div> {
  static constexpr bool differentiable = true;
  template <class S, class L, class R>
  static constexpr auto left(const S& s, const L&, const R& r) {
    return s / r;
  }
  template <class S, class L, class R>
  static constexpr auto right(const S& s, const L& l, const R& r) {
    return -(s * l) / (r * r);
  }
};
// d(a^b)/da = b a^(b-1); d(a^b)/db = a^b log(a)
template <>
struct binary_derivative<op_pow> {
  static constexpr bool differentiable = true;
  template <class S, class L, class R>
  static constexpr auto left(const S& s, const L& l, const R& r) {
    return s * (r * workpart::pow(l, r - 1));
  }
  template <class S, class L, class R>
  static constexpr auto right(const S& s, const L& l, const R& r) {
    return s * (workpart::pow(l, r) * workpart::log(l));
  }
};
// wp::max(a, b) is a where a > b, else b (ties and a NaN b: b): the gradient goes to the
// operand whose value was taken, the same on every grid. wp::min likewise with a < b.
template <>
struct binary_derivative<op_max> {
  static constexpr bool differentiable = true;
  template <class S, class L, class R>
  static constexpr auto left(const S& s, const L& l, const R& r) {
    return workpart::select(l > r, s, 0);
  }
  template <class S, class L, class R>
  static constexpr auto right(const S& s, const L& l, const R& r) {
    return workpart::select(l > r, 0, s);
  }
};
template <>
struct binary_derivative<op_min> {
  static constexpr bool differentiable = true;
  template <class S, class L, class R>
  static constexpr auto left(const S& s, const L& l, const R& r) {
    return workpart::select(l < r, s, 0);
  }
  template <class S, class L, class R>
  static constexpr auto right(const S& s, const L& l, const R& r) {
    return workpart::select(l < r, 0, s);
  }
};

template <class Op, class L, class R>
struct adjoint_rule<binary_node<Op, L, R>> {
  template <class S, class G>
  static constexpr auto apply(const binary_node<Op, L, R>& n, const S& s, G& grads) {
    using D = binary_derivative<Op>;
    if constexpr (!D::differentiable) {
      return std::tuple<>{};
    } else {
      auto l = adjoint(n.l, D::left(s, n.l, n.r), grads);
      auto r = adjoint(n.r, D::right(s, n.l, n.r), grads);
      return std::tuple_cat(std::move(l), std::move(r));
    }
  }
};

/// wp::select(c, a, b): the seed goes to the branch taken; the condition is a gate.
template <class C, class A, class B>
struct adjoint_rule<select_node<C, A, B>> {
  template <class S, class G>
  static constexpr auto apply(const select_node<C, A, B>& n, const S& s, G& grads) {
    auto a = adjoint(n.a, workpart::select(n.c, s, 0), grads);
    auto b = adjoint(n.b, workpart::select(n.c, 0, s), grads);
    return std::tuple_cat(std::move(a), std::move(b));
  }
};

// ---- statements ----

/// The count of a max_into's (min_into's) winners per element, which runs in a map of its own
/// before d<map> (statement_adjoint below).
template <class St>
struct ties_count {
  St st;
};

/// Contributions with the forward array their statement writes noted where their kind takes
/// it (an inner reduction's: adjoint_kinds/).
template <class... C>
std::tuple<C...> with_origin(std::tuple<C...> t, const void* origin) {
  std::apply([&](auto&... c) { (adjoint_kind<C>::note_origin(c, origin), ...); }, t);
  return t;
}

/// The contributions of one forward statement `Y(f(p)) op= rhs` to the gradients of what its
/// right side reads, seeded by dY(f(p)). For '=' the overwritten old value gets no gradient;
/// for '+=' it passes through unchanged (nothing to emit).
///
/// `wp::max_into(Y(f(p)), rhs)` (and min_into): the gradient goes to the points whose value
/// is the result, shared evenly among ties (as PyTorch's amax), so it does not depend on the
/// order of evaluation, hence not on the grid. The ties are counted first, into an array made
/// here (`ties.Y`): `ties(f(p)) += (rhs == Y(f(p)))`, in a map of its own before d<map>
/// (`d<map>.ties`: under a grid that splits the reduced dimension the counts are partial on
/// each rank until the plans combine them between the two maps), then each point that won
/// gets dY(f(p)) / ties(f(p)). Y's values before the statement must be constants (checked when
/// the backward program is built).
template <class K, class L, class R, class G>
auto statement_adjoint(const statement<K, L, R>& st, G& grads) {
  if constexpr (!std::is_floating_point_v<typename L::value_type>) {
    return std::tuple<>{};  // an integer result carries no gradient
  } else if constexpr (K::kind == combine::assign || K::kind == combine::add) {
    return with_origin(adjoint(st.rhs, gradient_access(st.lhs, grads), grads), st.lhs.arr);
  } else {
    L ties = st.lhs;
    ties.arr = &grads.ties_of(*st.lhs.arr);
    const auto won = st.rhs == st.lhs;
    auto rest = with_origin(
        adjoint(st.rhs, workpart::select(won, gradient_access(st.lhs, grads) / ties, 0), grads),
        st.lhs.arr);
    if constexpr (std::tuple_size_v<decltype(rest)> == 0)
      return std::tuple<>{};
    else
      return std::tuple_cat(
          std::tuple{ties_count{make_statement<add_tag>(ties, workpart::select(won, 1, 0))}},
          std::move(rest));
  }
}

}  // namespace workpart::detail
