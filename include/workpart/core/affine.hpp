#pragma once
/// \file affine.hpp
/// Affine subscripts `c0 + sum_d c_d * i_d`. Which dimensions appear, and the coefficients
/// the compiler can see (+1 from `i`, -1 from `-i` or `N - i`), are in the type (`affine_sig`);
/// offsets and coefficients written as runtime integers (`2 * i`) are values.

#include <array>
#include <bit>
#include <concepts>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "index.hpp"

namespace workpart {
namespace detail {

/// The compile-time structure of an affine subscript.
struct affine_sig {
  dim_mask present = 0;         ///< dimensions with a (possibly) nonzero coefficient
  dim_mask dynamic = 0;         ///< of those, the ones whose coefficient is a runtime value
  index_t coef[max_dims] = {};  ///< static coefficients (where present and not dynamic)
  bool has_offset = false;      ///< an integer was added (its value is a runtime value)
  constexpr bool operator==(const affine_sig&) const = default;

  constexpr int terms() const { return std::popcount(present); }
  constexpr bool uses(int d) const { return (present & dim_bit(d)) != 0; }
  constexpr bool static_coef(int d) const { return uses(d) && !(dynamic & dim_bit(d)); }
  /// `i` alone: one dimension, coefficient +1, no offset.
  constexpr bool is_plain() const {
    return terms() == 1 && dynamic == 0 && !has_offset && coef[std::countr_zero(present)] == 1;
  }
  constexpr int plain_dim() const { return std::countr_zero(present); }
  /// Position of dimension d among the present ones (storage slot).
  constexpr int slot(int d) const { return std::popcount(present & dims_below(d)); }
};

constexpr affine_sig plain_sig(int d) {
  affine_sig s;
  s.present = dim_bit(d);
  s.coef[d] = 1;
  return s;
}
constexpr affine_sig constant_sig() {
  affine_sig s;
  s.has_offset = true;
  return s;
}
constexpr affine_sig with_offset(affine_sig s) {
  s.has_offset = true;
  return s;
}
constexpr affine_sig negated(affine_sig s) {
  for (int d = 0; d < max_dims; ++d) s.coef[d] = -s.coef[d];
  return s;
}
constexpr affine_sig scaled(affine_sig s) {  // times a runtime integer
  s.dynamic = s.present;
  for (int d = 0; d < max_dims; ++d) s.coef[d] = 0;
  return s;
}
constexpr affine_sig summed(affine_sig a, affine_sig b) {
  affine_sig s;
  s.has_offset = a.has_offset || b.has_offset;
  s.dynamic = a.dynamic | b.dynamic;
  for (int d = 0; d < max_dims; ++d) {
    if (!a.uses(d) && !b.uses(d)) continue;
    if (s.dynamic & dim_bit(d)) {
      s.present |= dim_bit(d);
      continue;
    }
    s.coef[d] = a.coef[d] + b.coef[d];
    if (s.coef[d] != 0) s.present |= dim_bit(d);  // i - i cancels out of the type
  }
  return s;
}

}  // namespace detail

namespace detail {
/// The structure of an affine subscript as plain integers: the type's name then holds no
/// class-type template argument, which nvcc's host stubs for device kernels cannot spell.
template <dim_mask P, dim_mask D, bool O, index_t... C>
constexpr affine_sig sig_of() {
  affine_sig s;
  s.present = P;
  s.dynamic = D;
  s.has_offset = O;
  const index_t c[] = {C...};
  for (int d = 0; d < max_dims; ++d) s.coef[d] = c[d];
  return s;
}
}  // namespace detail

/// An affine subscript with structure S (named through the alias `affine<S>` below). Built
/// from index variables with + - and integer scaling; users rarely name this type.
template <detail::dim_mask P, detail::dim_mask D, bool O, index_t... C>
struct affine_form {
  static_assert(sizeof...(C) == detail::max_dims);
  static constexpr detail::affine_sig S = detail::sig_of<P, D, O, C...>();
  static constexpr detail::affine_sig sig = S;
  static constexpr int nterms = S.terms();
  index_t offset = 0;
  std::array<index_t, nterms> coef{};  ///< coefficients of the present dims, in dim order

  /// Coefficient of dimension d (0 where absent).
  // (Device code uses the integer template arguments, not the static member S.)
  WORKPART_HD constexpr index_t coef_of(int d) const {
    return (P & detail::dim_bit(d)) ? coef[std::popcount(P & detail::dims_below(d))] : 0;
  }
  /// Value at a point (pt[d] = coordinate of dimension d).
  WORKPART_HD WORKPART_ALWAYS_INLINE constexpr index_t operator()(const index_t* pt) const {
    index_t v = offset;
    for (int t = 0, d = 0; d < detail::max_dims; ++d)
      if (P & detail::dim_bit(d)) v += coef[t++] * pt[d];
    return v;
  }
  /// Text such as `i0 + 2*i1 - 1` (dimensions are named i<d>).
  std::string str() const {
    std::string s;
    for (int d = 0; d < detail::max_dims; ++d) {
      if (!S.uses(d)) continue;
      const index_t c = coef_of(d);
      if (c == 0) continue;
      if (s.empty()) {
        if (c < 0) s += '-';
      } else {
        s.append(c < 0 ? " - " : " + ");
      }
      const index_t m = c < 0 ? -c : c;
      if (m != 1) {
        s.append(std::to_string(m));
        s += '*';
      }
      s += 'i';
      s.append(std::to_string(d));
    }
    if (s.empty()) return std::to_string(offset);
    if (offset != 0) {
      s.append(offset < 0 ? " - " : " + ");
      s.append(std::to_string(offset < 0 ? -offset : offset));
    }
    return s;
  }
};

namespace detail {
template <affine_sig S>
struct affine_of {
  using type =
      affine_form<S.present, S.dynamic, S.has_offset, S.coef[0], S.coef[1], S.coef[2], S.coef[3],
                  S.coef[4], S.coef[5], S.coef[6], S.coef[7], S.coef[8], S.coef[9], S.coef[10],
                  S.coef[11], S.coef[12], S.coef[13], S.coef[14], S.coef[15]>;
};
}  // namespace detail
template <detail::affine_sig S>
using affine = typename detail::affine_of<S>::type;

namespace detail {
static_assert(max_dims == 16, "affine<S> spells out max_dims coefficients");
template <class T>
inline constexpr bool is_affine_v = false;
template <dim_mask P, dim_mask D, bool O, index_t... C>
inline constexpr bool is_affine_v<affine_form<P, D, O, C...>> = true;

template <class T>
concept affine_like = is_index_v<T> || is_affine_v<T>;
template <class T>
concept integer_like = std::integral<T> && !std::same_as<T, bool>;

/// Coefficient and offset arithmetic that refuses to wrap around (2 * i with a huge runtime
/// factor must stay the value written, or be an error).
[[noreturn]] inline void affine_overflow() {
  throw shape_error(
      "an affine subscript's coefficient or offset overflows 64 bits; use "
      "smaller factors or offsets");
}
constexpr index_t aff_mul(index_t a, index_t b) {
  index_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) affine_overflow();
  return r;
}
constexpr index_t aff_add(index_t a, index_t b) {
  index_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) affine_overflow();
  return r;
}

template <int D>
constexpr auto to_affine(index<D>) {
  affine<plain_sig(D)> a;
  a.coef[0] = 1;
  return a;
}
template <class A>
requires is_affine_v<A>
constexpr A to_affine(A a) { return a; }
template <integer_like I>
constexpr auto to_affine(I v) {
  affine<constant_sig()> a;
  a.offset = static_cast<index_t>(v);
  return a;
}

template <class X, class Y>
requires is_affine_v<X> && is_affine_v<Y>
constexpr auto add_affine(const X& a, const Y& b, index_t sign) {
  constexpr affine_sig R = summed(X::sig, Y::sig);
  affine<R> r;
  r.offset = aff_add(a.offset, aff_mul(sign, b.offset));
  for (int d = 0; d < max_dims; ++d)
    if (R.uses(d)) r.coef[R.slot(d)] = aff_add(a.coef_of(d), aff_mul(sign, b.coef_of(d)));
  return r;
}
template <class X>
requires is_affine_v<X>
constexpr auto neg_affine(const X& a) {
  affine<negated(X::sig)> r;
  r.offset = aff_mul(-1, a.offset);
  for (int t = 0; t < X::nterms; ++t) r.coef[t] = aff_mul(-1, a.coef[t]);
  return r;
}
}  // namespace detail

// Arithmetic on index variables and affine subscripts (found by ADL through index/affine).
template <detail::affine_like A, detail::affine_like B>
constexpr auto operator+(A a, B b) {
  auto x = detail::to_affine(a);
  auto y = detail::to_affine(b);
  return detail::add_affine(x, y, 1);
}
template <detail::affine_like A, detail::affine_like B>
constexpr auto operator-(A a, B b) {
  auto x = detail::to_affine(a);
  auto y = detail::neg_affine(detail::to_affine(b));
  return detail::add_affine(x, y, 1);
}
template <detail::affine_like A, detail::integer_like I>
constexpr auto operator+(A a, I c) {
  auto x = detail::to_affine(a);
  affine<detail::with_offset(decltype(x)::sig)> r{
      detail::aff_add(x.offset, static_cast<index_t>(c)), x.coef};
  return r;
}
template <detail::affine_like A, detail::integer_like I>
constexpr auto operator+(I c, A a) {
  return a + c;
}
template <detail::affine_like A, detail::integer_like I>
constexpr auto operator-(A a, I c) {
  return a + detail::aff_mul(-1, static_cast<index_t>(c));
}
template <detail::affine_like A, detail::integer_like I>
constexpr auto operator-(I c, A a) {
  return detail::neg_affine(detail::to_affine(a)) + c;
}
template <detail::affine_like A>
constexpr auto operator-(A a) {
  return detail::neg_affine(detail::to_affine(a));
}
template <detail::affine_like A>
constexpr auto operator+(A a) {
  return detail::to_affine(a);
}
template <detail::affine_like A, detail::integer_like I>
constexpr auto operator*(I c, A a) {
  auto x = detail::to_affine(a);
  constexpr auto S = detail::scaled(decltype(x)::sig);
  affine<S> r;
  r.offset = detail::aff_mul(x.offset, static_cast<index_t>(c));
  for (int t = 0; t < affine<S>::nterms; ++t)
    r.coef[t] = detail::aff_mul(x.coef[t], static_cast<index_t>(c));
  return r;
}
template <detail::affine_like A, detail::integer_like I>
constexpr auto operator*(A a, I c) {
  return c * a;
}

}  // namespace workpart
