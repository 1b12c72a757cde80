#pragma once
/// \file ops.hpp
/// Arithmetic, functions, comparisons, `select` and `val` over expression nodes.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "../core/index.hpp"
#include "node.hpp"

namespace workpart::detail {

constexpr node_info merge_info(node_info a, node_info b) {
  return {a.free | b.free, a.has_all || b.has_all, a.simple && b.simple, a.reduces || b.reduces,
          a.bound | b.bound};
}

// ---- operations (value semantics as in C++ arithmetic) ----
#define WORKPART_BINARY_OP(NAME, SYM, EXPR)                                    \
  struct NAME {                                                                \
    static constexpr const char* sym = SYM;                                    \
    static constexpr bool infix = true;                                        \
    template <class A, class B>                                                \
    WORKPART_HD WORKPART_ALWAYS_INLINE static constexpr auto apply(A a, B b) { \
      return EXPR;                                                             \
    }                                                                          \
  };
WORKPART_BINARY_OP(op_add, "+", a + b)
WORKPART_BINARY_OP(op_sub, "-", a - b)
WORKPART_BINARY_OP(op_mul, "*", a* b)
WORKPART_BINARY_OP(op_div, "/", a / b)
WORKPART_BINARY_OP(op_lt, "<", a < b)
WORKPART_BINARY_OP(op_le, "<=", a <= b)
WORKPART_BINARY_OP(op_gt, ">", a > b)
WORKPART_BINARY_OP(op_ge, ">=", a >= b)
WORKPART_BINARY_OP(op_eq, "==", a == b)
WORKPART_BINARY_OP(op_ne, "!=", a != b)
#undef WORKPART_BINARY_OP

// max and min propagate NaN (as numpy.maximum, IEEE 754-2019 maximum): a NaN operand
// gives NaN, in either position. So the result of max_into / min_into / max_of / min_of
// does not depend on the order in which elements are combined, hence not on the grid.
// (x != x is false for integers, and compiles away.)
struct op_max {
  static constexpr const char* sym = "max";
  static constexpr bool infix = false;
  template <class A, class B>
  WORKPART_HD WORKPART_ALWAYS_INLINE static constexpr auto apply(A a, B b) {
    using C = std::common_type_t<A, B>;
    const C x = C(a), y = C(b);
    return (x > y || x != x) ? x : y;
  }
};
struct op_min {
  static constexpr const char* sym = "min";
  static constexpr bool infix = false;
  template <class A, class B>
  WORKPART_HD WORKPART_ALWAYS_INLINE static constexpr auto apply(A a, B b) {
    using C = std::common_type_t<A, B>;
    const C x = C(a), y = C(b);
    return (x < y || x != x) ? x : y;
  }
};

template <class A>
WORKPART_HD WORKPART_ALWAYS_INLINE auto as_real(A a) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<double>(a);
  else
    return a;
}
// The math functions in device code are CUDA's (global namespace), on the host <cmath>'s.
#if defined(__CUDA_ARCH__)
#define WORKPART_MATH(F) ::F
#else
#define WORKPART_MATH(F) std::F
#endif
template <class A>
WORKPART_HD WORKPART_ALWAYS_INLINE A abs_value(A a) {
  if constexpr (std::is_floating_point_v<A>)
    return WORKPART_MATH(fabs)(a);
  else
    return a < A(0) ? A(-a) : a;
}
// pow: std::pow on the operands as real numbers (integers become double).
struct op_pow {
  static constexpr const char* sym = "pow";
  static constexpr bool infix = false;
  template <class A, class B>
  WORKPART_HD WORKPART_ALWAYS_INLINE static auto apply(A a, B b) {
    using C = std::common_type_t<decltype(as_real(a)), decltype(as_real(b))>;
    return WORKPART_MATH(pow)(C(as_real(a)), C(as_real(b)));
  }
};

#define WORKPART_UNARY_OP(NAME, SYM, EXPR)                      \
  struct NAME {                                                 \
    static constexpr const char* sym = SYM;                     \
    template <class A>                                          \
    WORKPART_HD WORKPART_ALWAYS_INLINE static auto apply(A a) { \
      return EXPR;                                              \
    }                                                           \
  };
/// The logistic function 1 / (1 + e^-a): 0 where e^-a overflows, never a NaN from finite a.
template <class A>
WORKPART_HD WORKPART_ALWAYS_INLINE auto sigmoid_value(A a) {
  const auto x = as_real(a);
  using V = std::remove_const_t<decltype(x)>;
  return V(1) / (V(1) + WORKPART_MATH(exp)(-x));
}
WORKPART_UNARY_OP(op_neg, "-", -a)
WORKPART_UNARY_OP(op_exp, "exp", WORKPART_MATH(exp)(as_real(a)))
WORKPART_UNARY_OP(op_log, "log", WORKPART_MATH(log)(as_real(a)))
WORKPART_UNARY_OP(op_sqrt, "sqrt", WORKPART_MATH(sqrt)(as_real(a)))
WORKPART_UNARY_OP(op_tanh, "tanh", WORKPART_MATH(tanh)(as_real(a)))
WORKPART_UNARY_OP(op_erf, "erf", WORKPART_MATH(erf)(as_real(a)))
WORKPART_UNARY_OP(op_log1p, "log1p", WORKPART_MATH(log1p)(as_real(a)))
WORKPART_UNARY_OP(op_expm1, "expm1", WORKPART_MATH(expm1)(as_real(a)))
WORKPART_UNARY_OP(op_sigmoid, "sigmoid", sigmoid_value(a))
// abs: fabs for floating types, so abs(-0.0) is +0.0 as std::abs gives (a < 0 ? -a : a kept
// the zero's sign).
WORKPART_UNARY_OP(op_abs, "abs", abs_value(a))
#undef WORKPART_UNARY_OP

// ---- a counter-based generator: wp::random_uniform ----

/// splitmix64's output function (Steele, Lea and Flood 2014): a bijection of 64-bit words
/// whose outputs on consecutive counters pass BigCrush. Unsigned, so it wraps, never overflows.
WORKPART_HD WORKPART_ALWAYS_INLINE constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/// hash(a, b) = mix64(mix64(a) + b) >> 1 over the integers' 64-bit two's complement words:
/// a non-negative std::int64_t that depends on both (and on their order).
struct op_hash {
  static constexpr const char* sym = "hash";
  static constexpr bool infix = false;
  template <class A, class B>
  WORKPART_HD WORKPART_ALWAYS_INLINE static constexpr std::int64_t apply(A a, B b) {
    static_assert(std::is_integral_v<A> && std::is_integral_v<B>,
                  "wp::random_uniform: every argument must be an integer (an index's wp::val, an "
                  "integer array's element, an integer constant)");
    return std::int64_t(mix64(mix64(std::uint64_t(a)) + std::uint64_t(b)) >> 1);
  }
};
/// A hash's top 53 bits as a double in [0, 1).
struct op_unit_interval {
  static constexpr const char* sym = "uniform";
  template <class A>
  WORKPART_HD WORKPART_ALWAYS_INLINE static double apply(A a) {
    return double(std::uint64_t(a) >> 10) * 0x1.0p-53;
  }
};

template <class Op, class R>
struct unary_row {
  R r;
  WORKPART_HD WORKPART_ALWAYS_INLINE auto operator()(index_t t) const { return Op::apply(r(t)); }
};
template <class Op, class L, class R>
struct binary_row {
  L l;
  R r;
  WORKPART_HD WORKPART_ALWAYS_INLINE auto operator()(index_t t) const {
    return Op::apply(l(t), r(t));
  }
};

template <class Op, class E>
struct unary_node : expr_base {
  using op = Op;
  using value_type = decltype(Op::apply(std::declval<typename E::value_type>()));
  static constexpr node_info info = E::info;
  E e;
  constexpr explicit unary_node(const E& x) : e(x) {}

  template <class B>
  struct bound {
    using value_type = typename unary_node::value_type;
    B e;
    WORKPART_HD WORKPART_ALWAYS_INLINE value_type eval(const index_t* pt) const {
      return Op::apply(e.eval(pt));
    }
    template <int M>
    WORKPART_HD WORKPART_ALWAYS_INLINE auto row(const index_t* pt) const {
      auto r = e.template row<M>(pt);
      return unary_row<Op, decltype(r)>{r};
    }
    template <int M>
    WORKPART_HD bool check_row(const index_t* pt, index_t len) const {
      return e.template check_row<M>(pt, len);
    }
  };
  template <class Env>
  auto bind(const Env& env, dim_mask dd) const {
    auto b = e.bind(env, dd);
    return bound<decltype(b)>{b};
  }
  template <class Visitor>
  void visit(Visitor& v) const {
    e.visit(v);
  }
  std::string str() const { return std::string(Op::sym) + "(" + e.str() + ")"; }
};

template <class Op, class L, class R>
struct binary_node : expr_base {
  using op = Op;
  using value_type = decltype(Op::apply(std::declval<typename L::value_type>(),
                                        std::declval<typename R::value_type>()));
  static constexpr node_info info = merge_info(L::info, R::info);
  L l;
  R r;
  constexpr binary_node(const L& a, const R& b) : l(a), r(b) {}

  template <class BL, class BR>
  struct bound {
    using value_type = typename binary_node::value_type;
    BL l;
    BR r;
    WORKPART_HD WORKPART_ALWAYS_INLINE value_type eval(const index_t* pt) const {
      return Op::apply(l.eval(pt), r.eval(pt));
    }
    template <int M>
    WORKPART_HD WORKPART_ALWAYS_INLINE auto row(const index_t* pt) const {
      auto a = l.template row<M>(pt);
      auto b = r.template row<M>(pt);
      return binary_row<Op, decltype(a), decltype(b)>{a, b};
    }
    template <int M>
    WORKPART_HD bool check_row(const index_t* pt, index_t len) const {
      const bool a = l.template check_row<M>(pt, len);
      const bool b = r.template check_row<M>(pt, len);
      return a && b;
    }
  };
  template <class Env>
  auto bind(const Env& env, dim_mask dd) const {
    auto a = l.bind(env, dd);
    auto b = r.bind(env, dd);
    return bound<decltype(a), decltype(b)>{a, b};
  }
  template <class Visitor>
  void visit(Visitor& v) const {
    l.visit(v);
    r.visit(v);
  }
  std::string str() const {
    if constexpr (Op::infix)
      return "(" + l.str() + " " + Op::sym + " " + r.str() + ")";
    else
      return std::string(Op::sym) + "(" + l.str() + ", " + r.str() + ")";
  }
};

template <class Op, class E>
struct node_traits<unary_node<Op, E>> {
  using children = std::tuple<E>;
  static constexpr bool elementwise = true;
  template <class F>
  static constexpr auto map(const unary_node<Op, E>& n, F&& f) {
    auto e = f(n.e);
    return unary_node<Op, decltype(e)>(e);
  }
};
template <class Op, class L, class R>
struct node_traits<binary_node<Op, L, R>> {
  using children = std::tuple<L, R>;
  static constexpr bool elementwise = true;
  template <class F>
  static constexpr auto map(const binary_node<Op, L, R>& n, F&& f) {
    auto l = f(n.l);
    auto r = f(n.r);
    return binary_node<Op, decltype(l), decltype(r)>(l, r);
  }
};

/// `wp::val(i)`: the global coordinate of dimension D as std::int64_t.
template <int D>
struct val_node : expr_base {
  using value_type = index_t;
  static constexpr int dim = D;
  static constexpr node_info info{dim_bit(D), false, true, false};

  struct val_row {
    index_t start;
    WORKPART_HD WORKPART_ALWAYS_INLINE index_t operator()(index_t t) const { return start + t; }
  };
  struct bound {
    using value_type = index_t;
    WORKPART_HD WORKPART_ALWAYS_INLINE index_t eval(const index_t* pt) const { return pt[D]; }
    template <int M>
    WORKPART_HD WORKPART_ALWAYS_INLINE auto row(const index_t* pt) const {
      if constexpr (M == D)
        return val_row{pt[D]};
      else
        return const_row<index_t>{pt[D]};
    }
    template <int M>
    WORKPART_HD bool check_row(const index_t*, index_t) const {
      return true;
    }
  };
  template <class Env>
  bound bind(const Env&, dim_mask) const {
    return {};
  }
  template <class Visitor>
  void visit(Visitor&) const {}
  std::string str() const { return "val(i" + std::to_string(D) + ")"; }
};

template <class C, class A, class B>
struct select_row {
  C c;
  A a;
  B b;
  using V = std::common_type_t<decltype(a(0)), decltype(b(0))>;
  WORKPART_HD WORKPART_ALWAYS_INLINE V operator()(index_t t) const {
    return c(t) ? V(a(t)) : V(b(t));
  }
};

/// `wp::select(cond, a, b)`.
template <class C, class A, class B>
struct select_node : expr_base {
  using value_type = std::common_type_t<typename A::value_type, typename B::value_type>;
  static constexpr node_info info = merge_info(C::info, merge_info(A::info, B::info));
  C c;
  A a;
  B b;
  constexpr select_node(const C& x, const A& y, const B& z) : c(x), a(y), b(z) {}

  template <class BC, class BA, class BB>
  struct bound {
    using value_type = typename select_node::value_type;
    BC c;
    BA a;
    BB b;
    WORKPART_HD WORKPART_ALWAYS_INLINE value_type eval(const index_t* pt) const {
      return c.eval(pt) ? value_type(a.eval(pt)) : value_type(b.eval(pt));
    }
    template <int M>
    WORKPART_HD WORKPART_ALWAYS_INLINE auto row(const index_t* pt) const {
      auto x = c.template row<M>(pt);
      auto y = a.template row<M>(pt);
      auto z = b.template row<M>(pt);
      return select_row<decltype(x), decltype(y), decltype(z)>{x, y, z};
    }
    template <int M>
    WORKPART_HD bool check_row(const index_t* pt, index_t len) const {
      const bool x = c.template check_row<M>(pt, len);
      const bool y = a.template check_row<M>(pt, len);
      const bool z = b.template check_row<M>(pt, len);
      return x && y && z;
    }
  };
  template <class Env>
  auto bind(const Env& env, dim_mask dd) const {
    auto x = c.bind(env, dd);
    auto y = a.bind(env, dd);
    auto z = b.bind(env, dd);
    return bound<decltype(x), decltype(y), decltype(z)>{x, y, z};
  }
  template <class Visitor>
  void visit(Visitor& v) const {
    c.visit(v);
    a.visit(v);
    b.visit(v);
  }
  std::string str() const { return "select(" + c.str() + ", " + a.str() + ", " + b.str() + ")"; }
};

template <class C, class A, class B>
struct node_traits<select_node<C, A, B>> {
  using children = std::tuple<C, A, B>;
  static constexpr bool elementwise = true;
  template <class F>
  static constexpr auto map(const select_node<C, A, B>& n, F&& f) {
    auto c = f(n.c);
    auto a = f(n.a);
    auto b = f(n.b);
    return select_node<decltype(c), decltype(a), decltype(b)>(c, a, b);
  }
};

template <class A, class B>
concept binary_operands = (is_expr_v<A> && (is_expr_v<B> || arithmetic_scalar<B>)) ||
                          (arithmetic_scalar<A> && is_expr_v<B>);

template <class Op, class A, class B>
constexpr auto make_binary(const A& a, const B& b) {
  return binary_node<Op, node_t<A>, node_t<B>>(as_node(a), as_node(b));
}

// Operators, found by ADL through the node types (all in this namespace).
#define WORKPART_DEFINE_OPERATOR(SYM, OP) \
  template <class A, class B>             \
  requires binary_operands<A, B>          \
  constexpr auto operator SYM(const A& a, const B& b) { return make_binary<OP>(a, b); }
WORKPART_DEFINE_OPERATOR(+, op_add)
WORKPART_DEFINE_OPERATOR(-, op_sub)
WORKPART_DEFINE_OPERATOR(*, op_mul)
WORKPART_DEFINE_OPERATOR(/, op_div)
WORKPART_DEFINE_OPERATOR(<, op_lt)
WORKPART_DEFINE_OPERATOR(<=, op_le)
WORKPART_DEFINE_OPERATOR(>, op_gt)
WORKPART_DEFINE_OPERATOR(>=, op_ge)
WORKPART_DEFINE_OPERATOR(==, op_eq)
WORKPART_DEFINE_OPERATOR(!=, op_ne)
#undef WORKPART_DEFINE_OPERATOR

template <expr_node E>
constexpr auto operator-(const E& e) {
  return unary_node<op_neg, E>(e);
}
template <expr_node E>
constexpr const E& operator+(const E& e) {
  return e;
}

/// hash(...hash(hash(a, b), c)..., z) as nodes (wp::random_uniform).
template <class A, class B, class... Rest>
constexpr auto hash_fold(const A& a, const B& b, const Rest&... rest) {
  auto h = binary_node<op_hash, node_t<A>, node_t<B>>(as_node(a), as_node(b));
  if constexpr (sizeof...(Rest) == 0)
    return h;
  else
    return hash_fold(h, rest...);
}

}  // namespace workpart::detail

namespace workpart {

#define WORKPART_DEFINE_FUNCTION(NAME, OP)       \
  template <detail::expr_node E>                 \
  constexpr auto NAME(const E& e) {              \
    return detail::unary_node<detail::OP, E>(e); \
  }
WORKPART_DEFINE_FUNCTION(exp, op_exp)
WORKPART_DEFINE_FUNCTION(log, op_log)
WORKPART_DEFINE_FUNCTION(sqrt, op_sqrt)
WORKPART_DEFINE_FUNCTION(tanh, op_tanh)
WORKPART_DEFINE_FUNCTION(abs, op_abs)
WORKPART_DEFINE_FUNCTION(erf, op_erf)
WORKPART_DEFINE_FUNCTION(log1p, op_log1p)
WORKPART_DEFINE_FUNCTION(expm1, op_expm1)
WORKPART_DEFINE_FUNCTION(sigmoid, op_sigmoid)
#undef WORKPART_DEFINE_FUNCTION

/// `wp::pow(a, b)`: a to the power b, elementwise; either side may be a scalar.
template <class A, class B>
requires detail::binary_operands<A, B>
constexpr auto pow(const A& a, const B& b) { return detail::make_binary<detail::op_pow>(a, b); }

/// `wp::max(a, b)`, `wp::min(a, b)`: elementwise; either side may be a scalar.
template <class A, class B>
requires detail::binary_operands<A, B>
constexpr auto max(const A& a, const B& b) { return detail::make_binary<detail::op_max>(a, b); }
template <class A, class B>
requires detail::binary_operands<A, B>
constexpr auto min(const A& a, const B& b) { return detail::make_binary<detail::op_min>(a, b); }

/// `wp::select(cond, a, b)`: a where cond holds, else b (a and b may be scalars).
template <class C, class A, class B>
requires detail::is_expr_v<C> &&(detail::is_expr_v<A> || detail::arithmetic_scalar<A>)&&(
    detail::is_expr_v<B> ||
    detail::arithmetic_scalar<B>)constexpr auto select(const C& c, const A& a, const B& b) {
  return detail::select_node<C, detail::node_t<A>, detail::node_t<B>>(c, detail::as_node(a),
                                                                      detail::as_node(b));
}

/// `wp::random_uniform(k1, k2, ...)`: a double in [0, 1) that depends only on its integer
/// arguments, a counter-based generator: uniform(hash(...hash(hash(k1, k2), k3)..., kn)) with
/// hash and uniform as in detail::op_hash and detail::op_unit_interval (one argument: hash(k1,
/// 0)). Arguments are expressions of integer type (`wp::val(i)`, an integer array's element)
/// or integer constants, so `wp::random_uniform(seed, step(), wp::val(i), wp::val(j))` is the
/// same number for point (i, j) on every rank, every grid and the device: dropout's mask
/// (wp::nn::dropout). Its gradient is zero (a constant of the arrays that are differentiated).
template <class K1, class... K>
requires((detail::is_expr_v<K1> || std::is_integral_v<K1>)&&(
    (detail::is_expr_v<K> ||
     std::is_integral_v<K>)&&...)) constexpr auto random_uniform(const K1& k1, const K&... k) {
  if constexpr (sizeof...(K) == 0)
    return detail::unary_node<detail::op_unit_interval,
                              decltype(detail::hash_fold(k1, std::int64_t(0)))>(
        detail::hash_fold(k1, std::int64_t(0)));
  else
    return detail::unary_node<detail::op_unit_interval, decltype(detail::hash_fold(k1, k...))>(
        detail::hash_fold(k1, k...));
}

/// `wp::val(i)`: the global coordinate of index i (std::int64_t).
template <int D>
constexpr detail::val_node<D> val(index<D>) {
  return {};
}

}  // namespace workpart
