#pragma once
/// \file padded.hpp
/// `wp::padded(x, fill)(subscripts...)`: a read of x that is `fill` wherever its subscripts
/// leave the array — a zero-padded convolution's input, a max pooling's -infinity border:
/// \code
///   z(n, k, i, j) += wp::sum(wp::range(r, 0, 3),
///                            wp::padded(x, 0.0f)(n, c, i + r - 1, j + s - 1) * w(k, c, r, s));
/// \endcode
/// It is planned as a plain read whose boxes are clipped to the array (no rank receives or
/// holds padding) and never raises an out-of-bounds error; the fill costs a compare per axis.
/// Its subscripts are affine (no wp::all, no indirect subscript).

#include <string>
#include <type_traits>

#include "../core/array.hpp"
#include "access.hpp"
#include "node.hpp"

namespace workpart::detail {

/// The read A of an array (an access_node with affine subscripts), `fill` outside the array.
template <class A>
struct padded_node : expr_base {
  static_assert(A::all_affine,
                "workpart: wp::padded(x, fill)(...) takes affine subscripts (i + r - 1, 2 * i + r, "
                "a constant), not wp::all or an array access");
  using value_type = typename A::value_type;
  using access_type = A;
  static constexpr int rank = A::array_type::rank;
  static constexpr node_info info = [] {
    node_info r = A::info;
    r.simple = false;  // its rows test every element against the array's bounds
    return r;
  }();

  A acc;
  value_type fill;
  constexpr padded_node(const A& a, value_type f) : acc(a), fill(f) {}

  template <class B>
  struct bound {
    using value_type = typename padded_node::value_type;
    B acc;                                ///< the read bound to this rank's buffer
    index_t extent[rank > 0 ? rank : 1];  ///< the array's (global) extents
    value_type fill;

    WORKPART_HD WORKPART_ALWAYS_INLINE bool inside(const index_t* pt) const {
      bool in = true;
      [&]<std::size_t... X>(std::index_sequence<X...>) {
        ((in = in &&
               [&] {
                 const index_t v = acc.template sub_value<X>(pt);
                 return v >= 0 && v < extent[X];
               }()),
         ...);
      }
      (std::make_index_sequence<std::size_t(rank)>{});
      return in;
    }
    WORKPART_HD WORKPART_ALWAYS_INLINE value_type eval(const index_t* pt) const {
      return inside(pt) ? acc.eval(pt) : fill;
    }
    template <int M>
    WORKPART_HD WORKPART_ALWAYS_INLINE auto row(const index_t* pt) const {
      return make_generic_row<M>(*this, pt);
    }
    template <int M>
    WORKPART_HD bool check_row(const index_t*, index_t) const {
      return true;  // never out of bounds: outside the array is the fill
    }
  };
  template <class Env>
  auto bind(const Env& env, dim_mask dd) const {
    auto a = acc.bind(env, dd);
    bound<decltype(a)> b{a, {}, fill};
    for (int x = 0; x < rank; ++x) b.extent[x] = acc.arr->extent(x);
    return b;
  }
  /// Passes that know padded reads (the access events: no bounds error, clipped boxes) get
  /// on_padded_access; the others see a plain read of the array.
  template <class Visitor>
  void visit(Visitor& v) const {
    if constexpr (requires { v.on_padded_access(acc); })
      v.on_padded_access(acc);
    else
      v.on_access(acc);
  }
  std::string str() const { return "padded(" + acc.str() + ")"; }
};

/// What wp::padded returns: called with subscripts, a padded read.
template <class T, int N>
struct padded_array {
  array<T, N>* arr;
  T fill;
  template <class... Args>
  constexpr auto operator()(Args... args) const {
    static_assert(sizeof...(Args) == std::size_t(N),
                  "workpart: wp::padded(x, fill)(...) takes one subscript per axis of x");
    auto a = (*arr)(args...);
    return padded_node<decltype(a)>(a, fill);
  }
};

}  // namespace workpart::detail

namespace workpart {

/// `wp::padded(x, fill)(i + r - 1, ...)`: reads x, and `fill` where the subscripts leave it.
template <class T, int N, class F>
requires std::is_convertible_v<F, T> detail::padded_array<T, N> padded(array<T, N>& x, F fill) {
  return {&x, static_cast<T>(fill)};
}

}  // namespace workpart
