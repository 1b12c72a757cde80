#pragma once
/// \file reduce.hpp
/// Inner sequential reductions over an extra index:
/// \code
///   wp::sum(wp::range(r, 0, R), w(r) * x(i + r))                          // affine bounds
///   wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj)))       // data-dependent
///   wp::max_of(x(i, wp::all))                                              // a whole axis
/// \endcode

#include <limits>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "access.hpp"
#include "ops.hpp"

namespace workpart::detail {

/// Bounds of an inner range: affine forms of outer indices, or integer-valued expressions.
template <class B>
constexpr auto to_bound(const B& b) {
  if constexpr (is_index_v<B> || is_affine_v<B> || integer_like<B>) {
    return to_affine(b);
  } else {
    static_assert(is_expr_v<B>,
                  "workpart::range: a bound must be an integer, an affine form of outer indices, "
                  "or an integer-valued expression such as row(i + 1)");
    static_assert(std::is_integral_v<typename B::value_type>,
                  "workpart::range: a data-dependent bound must be integer-valued");
    return b;
  }
}

template <class B>
constexpr node_info bound_info() {
  if constexpr (is_affine_v<B>)
    return node_info{B::sig.present, false, true, false, 0};
  else
    return B::info;
}

template <class B, class Env>
auto bind_bound(const B& b, const Env& env, dim_mask dd) {
  if constexpr (is_affine_v<B>)
    return b;
  else
    return b.bind(env, dd);
}
template <class B>
WORKPART_HD WORKPART_ALWAYS_INLINE index_t bound_value(const B& b, const index_t* pt) {
  if constexpr (is_affine_v<B>)
    return b(pt);
  else
    return static_cast<index_t>(b.eval(pt));
}
template <class B>
std::string bound_str(const B& b) {
  return b.str();
}

}  // namespace workpart::detail

namespace workpart {

/// `wp::range(r, lo, hi)`: the inner index r runs over [lo, hi).
template <int D, class Lo, class Hi>
struct range_t {
  static constexpr int dim = D;
  Lo lo;
  Hi hi;
};

template <int D, class Lo, class Hi>
constexpr auto range(index<D>, const Lo& lo, const Hi& hi) {
  auto l = detail::to_bound(lo);
  auto h = detail::to_bound(hi);
  static_assert(!(detail::bound_info<decltype(l)>().free & detail::dim_bit(D)) &&
                    !(detail::bound_info<decltype(h)>().free & detail::dim_bit(D)),
                "workpart::range(r, lo, hi): the bounds must not use r itself");
  return range_t<D, decltype(l), decltype(h)>{l, h};
}

}  // namespace workpart

namespace workpart::detail {

struct red_sum {
  static constexpr const char* name = "sum";
  template <class V>
  WORKPART_HD static constexpr V identity() {
    return V(0);
  }
  template <class A, class B>
  WORKPART_HD WORKPART_ALWAYS_INLINE static constexpr A apply(A a, B b) {
    return a + b;
  }
};
struct red_max {
  static constexpr const char* name = "max_of";
  template <class V>
  WORKPART_HD static constexpr V identity() {
    if constexpr (std::numeric_limits<V>::has_infinity)
      return -std::numeric_limits<V>::infinity();
    else
      return std::numeric_limits<V>::lowest();
  }
  template <class A, class B>
  WORKPART_HD WORKPART_ALWAYS_INLINE static constexpr A apply(A a,
                                                              B b) {  // NaN propagates (op_max)
    const A y = A(b);
    return (a > y || a != a) ? a : y;
  }
};
struct red_min {
  static constexpr const char* name = "min_of";
  template <class V>
  WORKPART_HD static constexpr V identity() {
    if constexpr (std::numeric_limits<V>::has_infinity)
      return std::numeric_limits<V>::infinity();
    else
      return std::numeric_limits<V>::max();
  }
  template <class A, class B>
  WORKPART_HD WORKPART_ALWAYS_INLINE static constexpr A apply(A a,
                                                              B b) {  // NaN propagates (op_min)
    const A y = A(b);
    return (a < y || a != a) ? a : y;
  }
};
/// Describes an inner range to analyses: the dimension and its bounds (affine or data).
struct range_form {
  int dim = 0;
  bool data_dependent = false;
  axis_form lo, hi;  // affine forms when !data_dependent
};

template <class B>
void fill_bound_form(const B& b, axis_form& f, bool& data_dependent) {
  if constexpr (is_affine_v<B>) {
    f.kind = axis_kind::affine;
    f.offset = b.offset;
    for (int d = 0; d < max_dims; ++d) f.coef[d] = b.coef_of(d);
  } else {
    f.kind = axis_kind::indirect;
    data_dependent = true;
  }
}

/// The loop over one inner range's row: acc = Red(acc, r(0), ..., r(n - 1)). The CPU loop
/// executor specialises it where the row runs as vectors (exec/cpu/simd_row.hpp); device
/// code and every other row run this one.
template <class Red, class V, class Row, class = void>
struct inner_row_reduce {
  WORKPART_HD WORKPART_ALWAYS_INLINE static V run(V acc, const Row& r, index_t n) {
    for (index_t t = 0; t < n; ++t) acc = Red::apply(acc, r(t));
    return acc;
  }
};

/// `wp::sum / max_of / min_of (range(r, lo, hi), body)`.
template <class Red, int D, class Lo, class Hi, class Body>
struct reduce_node : expr_base {
  using reduction = Red;
  static constexpr int dim = D;
  using body_value = typename Body::value_type;
  // A sum promotes like C++ addition (a sum of comparisons counts); max/min keep the type.
  using value_type = std::conditional_t<std::is_same_v<Red, red_sum>,
                                        decltype(body_value{} + body_value{}), body_value>;
  static constexpr bool dd_bounds = !is_affine_v<Lo> || !is_affine_v<Hi>;
  static constexpr node_info info = [] {
    node_info r = merge_info(Body::info, merge_info(bound_info<Lo>(), bound_info<Hi>()));
    r.free &= ~dim_bit(D);
    r.simple = false;
    r.reduces = true;
    r.bound |= dim_bit(D);
    return r;
  }();
  static_assert(!(Body::info.bound & dim_bit(D)),
                "workpart: nested inner ranges must use different index variables");

  Lo lo;
  Hi hi;
  Body body;
  constexpr reduce_node(const Lo& l, const Hi& h, const Body& b) : lo(l), hi(h), body(b) {}

  template <class BLo, class BHi, class BBody>
  struct bound {
    using value_type = typename reduce_node::value_type;
    // What the CPU executor's inner-range rows (exec/cpu/inner_rows.hpp) need to know.
    using reduction = Red;
    using body_type = BBody;
    static constexpr int dim = D;
    static constexpr bool affine_bounds = !dd_bounds;
    static constexpr dim_mask bounds_free = bound_info<Lo>().free | bound_info<Hi>().free;
    BLo lo;
    BHi hi;
    BBody body;
    bool checked;  // bounds depend on data, or the body reads data-dependent subscripts

    WORKPART_HD value_type eval(const index_t* pt) const {
      index_t q[max_dims];
      for (int d = 0; d < max_dims; ++d) q[d] = pt[d];
      const index_t a = bound_value(lo, q), b = bound_value(hi, q);
      value_type acc = Red::template identity<value_type>();
      if (b <= a) return acc;
      q[D] = a;
      if (checked && !body.template check_row<D>(q, b - a)) return acc;
      const auto r = body.template row<D>(q);
#if defined(__CUDA_ARCH__)
      for (index_t t = 0, n = b - a; t < n; ++t) acc = Red::apply(acc, r(t));
      return acc;
#else
      return inner_row_reduce<Red, value_type, std::remove_cvref_t<decltype(r)>>::run(acc, r,
                                                                                      b - a);
#endif
    }
    template <int M>
    WORKPART_HD auto row(const index_t* pt) const {
      return make_generic_row<M>(*this, pt);
    }
    template <int M>
    WORKPART_HD bool check_row(const index_t*, index_t) const {
      return true;
    }
  };
  template <class Env>
  auto bind(const Env& env, dim_mask dd) const {
    const bool dd_here = dd_bounds || ((bound_info<Lo>().free | bound_info<Hi>().free) & dd);
    const dim_mask inner_dd = dd | (dd_here ? dim_bit(D) : 0);
    auto l = bind_bound(lo, env, dd);
    auto h = bind_bound(hi, env, dd);
    auto b = body.bind(env, inner_dd);
    return bound<decltype(l), decltype(h), decltype(b)>{l, h, b, inner_dd != 0};
  }
  range_form form() const {
    range_form f;
    f.dim = D;
    fill_bound_form(lo, f.lo, f.data_dependent);
    fill_bound_form(hi, f.hi, f.data_dependent);
    return f;
  }
  template <class Visitor>
  void visit(Visitor& v) const {
    if constexpr (!is_affine_v<Lo>) lo.visit(v);
    if constexpr (!is_affine_v<Hi>) hi.visit(v);
    // A visitor that evaluates bounds (the range inspector) sees the typed node.
    if constexpr (dd_bounds && requires { v.inspect_bounds(*this); }) v.inspect_bounds(*this);
    v.enter_range(form());
    body.visit(v);
    v.leave_range();
  }
  std::string str() const {
    return std::string(Red::name) + "(range(i" + std::to_string(D) + ", " + bound_str(lo) + ", " +
           bound_str(hi) + "), " + body.str() + ")";
  }
};

template <class Red, int D, class Lo, class Hi, class Body>
struct node_traits<reduce_node<Red, D, Lo, Hi, Body>> {
  using children = std::tuple<Body>;          // (data-dependent bounds are not rewritten by passes)
  static constexpr bool elementwise = false;  // the body runs over the inner range
  template <class F>
  static constexpr auto map(const reduce_node<Red, D, Lo, Hi, Body>& n, F&& f) {
    auto b = f(n.body);
    return reduce_node<Red, D, Lo, Hi, decltype(b)>(n.lo, n.hi, b);
  }
};

// ---- wp::all inside a reduction: replaced by an implicit inner index ----
struct all_extent {
  index_t extent = -1;
  std::string where;  // for the mismatch message
};

template <int Dim, class N>
constexpr auto bind_all(const N& n, all_extent& ext);

template <int Dim, class S>
auto bind_all_sub(const S& s, const std::string& arr, index_t axis_extent, int axis,
                  all_extent& ext) {
  if constexpr (std::is_same_v<S, all_sub>) {
    const std::string here =
        arr + " axis " + std::to_string(axis) + " (extent " + std::to_string(axis_extent) + ")";
    if (ext.extent >= 0 && ext.extent != axis_extent)
      throw shape_error("wp::all axes reduced together must have one extent: " + ext.where +
                        " and " + here);
    if (ext.extent < 0) {
      ext.extent = axis_extent;
      ext.where = here;
    }
    affine<plain_sig(Dim)> a;
    a.coef[0] = 1;
    return a;
  } else if constexpr (is_affine_v<S>) {
    return s;
  } else {
    auto e = bind_all<Dim>(s.e, ext);
    return indirect_sub<decltype(e)>{e};
  }
}

template <int Dim, class T, int N, class... Subs>
auto bind_all_access(const access_node<T, N, Subs...>& a, all_extent& ext) {
  return [&]<std::size_t... A>(std::index_sequence<A...>) {
    auto subs = std::make_tuple(bind_all_sub<Dim>(std::get<A>(a.subs), a.arr->name(),
                                                  a.arr->extent(int(A)), int(A), ext)...);
    using R = access_node<T, N, std::tuple_element_t<A, decltype(subs)>...>;
    return R(*a.arr, std::get<A>(subs)...);
  }
  (std::make_index_sequence<N>{});
}

template <int Dim, class N>
constexpr auto bind_all(const N& n, all_extent& ext) {
  if constexpr (!N::info.has_all) {
    return n;
  } else if constexpr (is_access_v<N>) {
    return bind_all_access<Dim>(n, ext);
  } else {
    return node_traits<N>::map(n, [&](const auto& c) { return bind_all<Dim>(c, ext); });
  }
}

template <class Red, class R, class Body>
constexpr auto make_reduce(const R& rng, const Body& body) {
  static_assert(is_expr_v<Body>, "workpart: the body of a reduction must be an expression");
  return reduce_node<Red, R::dim, decltype(rng.lo), decltype(rng.hi), Body>(rng.lo, rng.hi, body);
}

template <class Red, class Body>
auto make_all_reduce(const Body& body) {
  static_assert(is_expr_v<Body> && Body::info.has_all,
                "workpart: a reduction without wp::range needs wp::all subscripts to iterate, "
                "e.g. wp::sum(x(i, wp::all)); otherwise write wp::sum(wp::range(r, lo, hi), ...)");
  constexpr int Dim =
      (Body::info.bound & dim_bit(all_dim_first)) ? all_dim_first + 1 : all_dim_first;
  static_assert(!(Body::info.bound & dim_bit(Dim)),
                "workpart: at most two nested reductions over wp::all");
  all_extent ext;
  auto b = bind_all<Dim>(body, ext);
  auto lo = to_affine(index_t(0));
  auto hi = to_affine(ext.extent);
  return reduce_node<Red, Dim, decltype(lo), decltype(hi), decltype(b)>(lo, hi, b);
}

}  // namespace workpart::detail

namespace workpart {

/// Sequential inner reductions. With a range: over [lo, hi) of the range's index. Without:
/// over the `wp::all` axes of the body (all of one extent).
template <int D, class Lo, class Hi, class Body>
constexpr auto sum(const range_t<D, Lo, Hi>& r, const Body& b) {
  return detail::make_reduce<detail::red_sum>(r, b);
}
template <int D, class Lo, class Hi, class Body>
constexpr auto max_of(const range_t<D, Lo, Hi>& r, const Body& b) {
  return detail::make_reduce<detail::red_max>(r, b);
}
template <int D, class Lo, class Hi, class Body>
constexpr auto min_of(const range_t<D, Lo, Hi>& r, const Body& b) {
  return detail::make_reduce<detail::red_min>(r, b);
}
template <detail::expr_node Body>
auto sum(const Body& b) {
  return detail::make_all_reduce<detail::red_sum>(b);
}
template <detail::expr_node Body>
auto max_of(const Body& b) {
  return detail::make_all_reduce<detail::red_max>(b);
}
template <detail::expr_node Body>
auto min_of(const Body& b) {
  return detail::make_all_reduce<detail::red_min>(b);
}

}  // namespace workpart
