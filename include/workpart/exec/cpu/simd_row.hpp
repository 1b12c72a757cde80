#pragma once
/// \file simd_row.hpp
/// Rows evaluated a vector at a time, with Eigen's packet math: the CPU loop executor
/// (loop.hpp) stores a row of `y(i) = f(x(i), ...)` or reduces a row of `s(i) += x(i, j)` in
/// packets of `width<T>` lanes (4 floats with SSE2, 16 with AVX-512) when every node of the
/// row has a vector form in one element type T (float or double); otherwise it runs the
/// scalar row as before. Results are those of the scalar row: + - * / sqrt, comparisons,
/// `select`, `abs` and the NaN-propagating `max` / `min` exactly; `exp` and `log` within
/// 1 ulp of std::exp / std::log on float, 2 on double (Eigen's generic pexp_* / plog_*), and a
/// packet with a lane outside their safe range (NaN, infinities, results that are subnormal
/// or overflow) is computed lane by lane with the scalar function; `tanh` on float within 2
/// ulp (vtanh). tanh on double runs lane by lane inside the packet, so the rest of the row
/// stays vectorised. Sums along a row (`+=` into an element fixed along it, an inner range's
/// own row) use several vector accumulators: they add in another order than the scalar loop,
/// as any vectorised sum does.
///
/// Why rows: the executor already runs every statement as rows along the dimension that makes
/// the most accesses contiguous; a row whose accesses are all unit-stride is exactly what a
/// packet load reads. Strided, data-dependent, mixed-type rows (`0.1 * x(i)` on float data
/// computes in double, as C++ does) keep the scalar path: `vector_form<T, Row>::why` says
/// which node stopped it, for explain_local().

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

// Eigen's packet types carry alignment attributes that GCC warns about when they are template
// arguments (-Wignored-attributes); Eigen silences the same warning around its own uses. GCC
// 12 also warns falsely inside its own AVX-512 intrinsics under -march=native
// (-Wmaybe-uninitialized, GCC PR 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>

#include "../../expr/access.hpp"
#include "../../expr/ops.hpp"
#include "../../expr/reduce.hpp"
#include "../combine.hpp"

namespace workpart::detail::simd {

namespace ei = Eigen::internal;

template <class T>
inline constexpr bool real_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
using packet = typename ei::packet_traits<T>::type;

/// Lanes per packet of T (1 where Eigen has no vector type for it).
template <class T>
inline constexpr int width = real_v<T> ? int(ei::unpacket_traits<packet<T>>::size) : 1;

/// Whether vectors pay at all for T on this target.
template <class T>
inline constexpr bool enabled = real_v<T>&& width<T> > 1;

template <class T>
WORKPART_ALWAYS_INLINE packet<T> lane_wise(const packet<T>& x, T (*f)(T)) {
  alignas(64) T v[width<T>];
  ei::pstoreu(v, x);
  for (int k = 0; k < width<T>; ++k) v[k] = f(v[k]);
  return ei::ploadu<packet<T>>(v);
}

/// -x: the sign bit flipped (Eigen's AVX-512 pnegate is 0 - x, which makes -(+0) +0).
template <class P>
WORKPART_ALWAYS_INLINE P negate(const P& x) {
  using T = typename ei::unpacket_traits<P>::type;
  return ei::pxor(x, ei::pset1<P>(T(-0.0)));
}

/// A mask packet (every bit of a lane set where true) of x != x.
template <class P>
WORKPART_ALWAYS_INLINE P is_nan(const P& x) {
  return ei::pandnot(ei::ptrue(x), ei::pcmp_eq(x, x));
}

/// op_max / op_min of the scalar path: (x > y || x != x) ? x : y, and with <.
template <class P>
WORKPART_ALWAYS_INLINE P max_nan(const P& x, const P& y) {
  return ei::pselect(ei::por(ei::pcmp_lt(y, x), is_nan(x)), x, y);
}
template <class P>
WORKPART_ALWAYS_INLINE P min_nan(const P& x, const P& y) {
  return ei::pselect(ei::por(ei::pcmp_lt(x, y), is_nan(x)), x, y);
}

/// Whether every lane of x lies in [lo, hi] (false for NaN).
template <class T>
WORKPART_ALWAYS_INLINE bool all_in(const packet<T>& x, T lo, T hi) {
  using P = packet<T>;
  const P in = ei::pand(ei::pcmp_le(ei::pset1<P>(lo), x), ei::pcmp_le(x, ei::pset1<P>(hi)));
  return !ei::predux_any(ei::pandnot(ei::ptrue(x), in));
}

template <class T>
T scalar_exp(T x) {
  return std::exp(x);
}
template <class T>
T scalar_log(T x) {
  return std::log(x);
}
template <class T>
T scalar_sqrt(T x) {
  return std::sqrt(x);
}
template <class T>
T scalar_tanh(T x) {
  return std::tanh(x);
}

/// Correctly rounded square roots (the instruction): Eigen's float psqrt under its default
/// EIGEN_FAST_MATH is an rsqrt approximation (sqrt(1) = 0x1.fffffep-1, sqrt(inf) = NaN).
template <class P>
WORKPART_ALWAYS_INLINE P exact_sqrt(const P& x) {
  using T = typename ei::unpacket_traits<P>::type;
  return lane_wise<T>(x, &scalar_sqrt<T>);
}
#if defined(EIGEN_VECTORIZE_SSE2)
WORKPART_ALWAYS_INLINE ei::Packet4f exact_sqrt(const ei::Packet4f& x) { return _mm_sqrt_ps(x); }
WORKPART_ALWAYS_INLINE ei::Packet2d exact_sqrt(const ei::Packet2d& x) { return _mm_sqrt_pd(x); }
#endif
#if defined(EIGEN_VECTORIZE_AVX)
WORKPART_ALWAYS_INLINE ei::Packet8f exact_sqrt(const ei::Packet8f& x) { return _mm256_sqrt_ps(x); }
WORKPART_ALWAYS_INLINE ei::Packet4d exact_sqrt(const ei::Packet4d& x) { return _mm256_sqrt_pd(x); }
#endif
#if defined(EIGEN_VECTORIZE_AVX512)
WORKPART_ALWAYS_INLINE ei::Packet16f exact_sqrt(const ei::Packet16f& x) {
  return _mm512_sqrt_ps(x);
}
WORKPART_ALWAYS_INLINE ei::Packet8d exact_sqrt(const ei::Packet8d& x) { return _mm512_sqrt_pd(x); }
#endif

/// exp of a float packet whose lanes all lie in [-87, 88]: Eigen's pexp_float (its range
/// reduction and polynomial, the same bits) with 2^m put straight into the exponent field,
/// which is exact there (2^m is a normal number), where pexp_float's general ldexp splits it
/// into four factors: 1.6x faster, as fast as Eigen's own AVX-512 pexp (which reduces the
/// range in one step and is up to ~24 ulp off).
template <class P>
WORKPART_ALWAYS_INLINE P exp_normal_float(const P& x) {
  const P m = ei::pfloor(ei::pmadd(x, ei::pset1<P>(1.44269504088896341f), ei::pset1<P>(0.5f)));
  P r = ei::pmadd(m, ei::pset1<P>(-0.693359375f), x);
  r = ei::pmadd(m, ei::pset1<P>(2.12194440e-4f), r);
  const P r2 = ei::pmul(r, r), r3 = ei::pmul(r2, r);
  P y = ei::pmadd(ei::pset1<P>(1.9875691500E-4f), r, ei::pset1<P>(1.3981999507E-3f));
  P y1 = ei::pmadd(ei::pset1<P>(4.1665795894E-2f), r, ei::pset1<P>(1.6666665459E-1f));
  const P y2 = ei::padd(r, ei::pset1<P>(1.0f));
  y = ei::pmadd(y, r, ei::pset1<P>(8.3334519073E-3f));
  y1 = ei::pmadd(y1, r, ei::pset1<P>(5.0000001201E-1f));
  y = ei::pmadd(y, r3, y1);
  y = ei::pmadd(y, r2, y2);
  if constexpr (std::is_floating_point_v<P>)  // no vector unit (nvcc): scalar "packets"
    return ei::pldexp(y, m);
  else
    return ei::pldexp_fast_impl<P>::run(y, m);
}

/// 2^m for integral m in [-1022, 1023]: m + 1023 lands in the low mantissa bits of
/// 2^52 + 1023 + m, and a 64-bit shift moves it into the exponent field. (Eigen 3.4 has no
/// 64-bit integer packets; elsewhere Eigen's general pldexp.)
template <class P>
WORKPART_ALWAYS_INLINE P exp2_normal_double(const P& m) {
  [[maybe_unused]] const P t = ei::padd(m, ei::pset1<P>(4503599627370496.0 + 1023.0));
#if defined(EIGEN_VECTORIZE_AVX512)
  if constexpr (std::is_same_v<P, ei::Packet8d>)
    return _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_castpd_si512(t), 52));
#endif
#if defined(EIGEN_VECTORIZE_AVX2)
  if constexpr (std::is_same_v<P, ei::Packet4d>)
    return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(t), 52));
#endif
#if defined(EIGEN_VECTORIZE_SSE2)
  if constexpr (std::is_same_v<P, ei::Packet2d>)
    return _mm_castsi128_pd(_mm_slli_epi64(_mm_castpd_si128(t), 52));
#endif
  return ei::pldexp(ei::pset1<P>(1.0), m);
}

/// exp of a double packet whose lanes all lie in [-708, 709]: Eigen's pexp_double (the same
/// bits) with 2^m made directly (exp2_normal_double), exact there.
template <class P>
WORKPART_ALWAYS_INLINE P exp_normal_double(const P& x0) {
  const P m = ei::pfloor(ei::pmadd(ei::pset1<P>(1.4426950408889634073599), x0, ei::pset1<P>(0.5)));
  P x = ei::psub(x0, ei::pmul(m, ei::pset1<P>(0.693145751953125)));
  x = ei::psub(x, ei::pmul(m, ei::pset1<P>(1.42860682030941723212e-6)));
  const P x2 = ei::pmul(x, x);
  P px = ei::pset1<P>(1.26177193074810590878e-4);
  px = ei::pmadd(px, x2, ei::pset1<P>(3.02994407707441961300e-2));
  px = ei::pmadd(px, x2, ei::pset1<P>(9.99999999999999999910e-1));
  px = ei::pmul(px, x);
  P qx = ei::pset1<P>(3.00198505138664455042e-6);
  qx = ei::pmadd(qx, x2, ei::pset1<P>(2.52448340349684104192e-3));
  qx = ei::pmadd(qx, x2, ei::pset1<P>(2.27265548208155028766e-1));
  qx = ei::pmadd(qx, x2, ei::pset1<P>(2.00000000000000000009e0));
  x = ei::pdiv(px, ei::psub(qx, px));
  x = ei::pmadd(ei::pset1<P>(2.0), x, ei::pset1<P>(1.0));
  return ei::pmul(x, exp2_normal_double(m));
}

template <class T>
WORKPART_ALWAYS_INLINE packet<T> vexp(const packet<T>& x) {
  // Inside these bounds exp(x) and 2^m are normal numbers and the kernels' error holds.
  if constexpr (std::is_same_v<T, float>) {
    if (all_in<float>(x, -87.0f, 88.0f)) return exp_normal_float(x);
  } else {
    if (all_in<double>(x, -708.0, 709.0)) return exp_normal_double(x);
  }
  return lane_wise<T>(x, &scalar_exp<T>);
}
template <class T>
WORKPART_ALWAYS_INLINE packet<T> vlog(const packet<T>& x) {
  // Positive normal finite arguments only; 0, subnormals, negatives, inf and NaN go lane-wise.
  if (all_in<T>(x, std::numeric_limits<T>::min(), std::numeric_limits<T>::max())) {
    if constexpr (std::is_same_v<T, float>)
      return ei::plog_float(x);
    else
      return ei::plog_double(x);
  }
  return lane_wise<T>(x, &scalar_log<T>);
}

/// tanh on floats: for |x| < 0.625 its odd Taylor series to x^21 (Horner in x^2), else
/// 1 - 2 / (exp(2|x|) + 1) with x's sign; within 2 ulp of std::tanh over every float in
/// [-12, 12], NaN, +-inf and subnormals (checked exhaustively when this was written). Eigen's
/// ptanh is a faster rational approximation but 5-7 ulp away. Doubles go lane by lane: the
/// series would need twice the terms.
WORKPART_ALWAYS_INLINE packet<float> vtanh(const packet<float>& x) {
  using P = packet<float>;
  constexpr float c[] = {9.691537956929451e-05f,  -0.00023912911424355248f, 0.000590027440945586f,
                         -0.0014558343870513183f, 0.003592128036572481f,    -0.008863235529902197f,
                         0.021869488536155203f,   -0.05396825396825397f,    0.13333333333333333f,
                         -0.3333333333333333f};
  const P ax = ei::pabs(x), x2 = ei::pmul(x, x);
  P p = ei::pset1<P>(c[0]);
  for (int k = 1; k < 10; ++k) p = ei::pmadd(p, x2, ei::pset1<P>(c[k]));
  const P small = ei::pmadd(ei::pmul(x, x2), p, x);
  const P e = exp_normal_float(ei::pmin(ei::padd(ax, ax), ei::pset1<P>(88.0f)));
  P big =
      ei::psub(ei::pset1<P>(1.0f), ei::pdiv(ei::pset1<P>(2.0f), ei::padd(e, ei::pset1<P>(1.0f))));
  big = ei::pselect(ei::pcmp_lt(x, ei::pzero(x)), negate(big), big);
  const P r = ei::pselect(ei::pcmp_lt(ax, ei::pset1<P>(0.625f)), small, big);
  // NaN and +-0 are their own tanh (the series would turn -0 into +0)
  return ei::pselect(ei::por(is_nan(x), ei::pcmp_eq(x, ei::pzero(x))), x, r);
}

// ------------------------------------------------------------------ which rows vectorise

/// Whether Row has a vector form in element type T: `ok` (a value packet), `mask` (a
/// comparison: a mask packet), `at(row, t)` the packet of lanes t .. t + width - 1, and
/// `why` the node that stops it (for explain texts).
template <class T, class Row>
struct vector_form {
  static constexpr bool ok = false, mask = false;
  static constexpr const char* why = "a node without a vector form (strided, indexed or nested)";
};

template <class T>
struct vector_form<T, unit_row<T>> {
  static constexpr bool ok = real_v<T>, mask = false;
  static constexpr const char* why = "";
  static WORKPART_ALWAYS_INLINE packet<T> at(const unit_row<T>& r, index_t t) {
    return ei::ploadu<packet<T>>(r.p + t);
  }
};
template <class T>
struct vector_form<T, strided_row<T>> {
  static constexpr bool ok = false, mask = false;
  static constexpr const char* why = "a strided access";
};

/// A scalar: exact as T when C++ would convert it to T in the operation (an int or T).
template <class T, class V>
struct vector_form<T, const_row<V>> {
  static constexpr bool ok =
      real_v<T> && std::is_arithmetic_v<V> && std::is_same_v<std::common_type_t<T, V>, T>;
  static constexpr bool mask = false;
  static constexpr const char* why = "a constant of a wider type (computed in it, as C++ does)";
  static WORKPART_ALWAYS_INLINE packet<T> at(const const_row<V>& r, index_t) {
    return ei::pset1<packet<T>>(static_cast<T>(r.v));
  }
};

/// Functions with no packet kernel here: computed lane by lane inside the packet (the rest
/// of the row stays in vectors), bit for bit the scalar function.
template <class Op>
inline constexpr bool lane_unary =
    std::is_same_v<Op, op_erf> || std::is_same_v<Op, op_log1p> || std::is_same_v<Op, op_expm1>;
template <class Op, class T>
T scalar_apply(T v) {
  return static_cast<T>(Op::apply(v));
}
template <class Op>
inline constexpr bool vector_unary =
    std::is_same_v<Op, op_neg> || std::is_same_v<Op, op_abs> || std::is_same_v<Op, op_sqrt> ||
    std::is_same_v<Op, op_exp> || std::is_same_v<Op, op_log> || std::is_same_v<Op, op_tanh> ||
    std::is_same_v<Op, op_sigmoid> || lane_unary<Op>;

template <class T, class Op, class R>
struct vector_form<T, unary_row<Op, R>> {
  using child = vector_form<T, R>;
  using result = std::remove_cvref_t<decltype(Op::apply(std::declval<T>()))>;
  static constexpr bool ok =
      vector_unary<Op> && child::ok && !child::mask && std::is_same_v<result, T>;
  static constexpr bool mask = false;
  static constexpr const char* why = !vector_unary<Op> ? "a function with no vector form"
                                     : child::ok       ? "a function of another type"
                                                       : child::why;
  static WORKPART_ALWAYS_INLINE packet<T> at(const unary_row<Op, R>& r, index_t t) {
    const packet<T> x = child::at(r.r, t);
    if constexpr (std::is_same_v<Op, op_neg>)
      return negate(x);
    else if constexpr (std::is_same_v<Op, op_abs>)  // fabs: clears the sign bit
      return ei::pabs(x);
    else if constexpr (std::is_same_v<Op, op_sqrt>)
      return exact_sqrt(x);
    else if constexpr (std::is_same_v<Op, op_exp>)
      return vexp<T>(x);
    else if constexpr (std::is_same_v<Op, op_log>)
      return vlog<T>(x);
    else if constexpr (std::is_same_v<Op, op_sigmoid>)  // 1 / (1 + e^-x), as the scalar one
      return ei::pdiv(ei::pset1<packet<T>>(T(1)),
                      ei::padd(ei::pset1<packet<T>>(T(1)), vexp<T>(negate(x))));
    else if constexpr (lane_unary<Op>)
      return lane_wise<T>(x, &scalar_apply<Op, T>);
    else if constexpr (std::is_same_v<T, float>)
      return vtanh(x);
    else
      return lane_wise<T>(x, &scalar_tanh<T>);
  }
};

template <class Op>
inline constexpr bool vector_arith =
    std::is_same_v<Op, op_add> || std::is_same_v<Op, op_sub> || std::is_same_v<Op, op_mul> ||
    std::is_same_v<Op, op_div> || std::is_same_v<Op, op_max> || std::is_same_v<Op, op_min> ||
    std::is_same_v<Op, op_pow>;
/// pow lane by lane (std::pow's bits), the rest of the row in vectors.
template <class T>
T scalar_pow(T a, T b) {
  return static_cast<T>(op_pow::apply(a, b));
}
template <class T>
WORKPART_ALWAYS_INLINE packet<T> lane_wise(const packet<T>& x, const packet<T>& y, T (*f)(T, T)) {
  alignas(64) T a[width<T>], b[width<T>];
  ei::pstoreu(a, x);
  ei::pstoreu(b, y);
  for (int k = 0; k < width<T>; ++k) a[k] = f(a[k], b[k]);
  return ei::ploadu<packet<T>>(a);
}
template <class Op>
inline constexpr bool vector_compare =
    std::is_same_v<Op, op_lt> || std::is_same_v<Op, op_le> || std::is_same_v<Op, op_gt> ||
    std::is_same_v<Op, op_ge> || std::is_same_v<Op, op_eq> || std::is_same_v<Op, op_ne>;

template <class T, class Op, class L, class R>
struct vector_form<T, binary_row<Op, L, R>> {
  using left = vector_form<T, L>;
  using right = vector_form<T, R>;
  using lv = std::remove_cvref_t<decltype(std::declval<L>()(0))>;
  using rv = std::remove_cvref_t<decltype(std::declval<R>()(0))>;
  static constexpr bool operands = left::ok && right::ok && !left::mask && !right::mask &&
                                   std::is_same_v<std::common_type_t<lv, rv>, T>;
  static constexpr bool ok = vector_arith<Op> && operands;
  static constexpr bool mask = vector_compare<Op> && operands;
  static constexpr const char* why = !left::ok    ? left::why
                                     : !right::ok ? right::why
                                                  : "operands of different types";
  static WORKPART_ALWAYS_INLINE packet<T> at(const binary_row<Op, L, R>& r, index_t t) {
    const packet<T> a = left::at(r.l, t), b = right::at(r.r, t);
    if constexpr (std::is_same_v<Op, op_add>) return ei::padd(a, b);
    if constexpr (std::is_same_v<Op, op_sub>) return ei::psub(a, b);
    if constexpr (std::is_same_v<Op, op_mul>) return ei::pmul(a, b);
    if constexpr (std::is_same_v<Op, op_div>) return ei::pdiv(a, b);
    if constexpr (std::is_same_v<Op, op_max>) return max_nan(a, b);
    if constexpr (std::is_same_v<Op, op_min>) return min_nan(a, b);
    if constexpr (std::is_same_v<Op, op_pow>) return lane_wise<T>(a, b, &scalar_pow<T>);
    if constexpr (std::is_same_v<Op, op_lt>) return ei::pcmp_lt(a, b);
    if constexpr (std::is_same_v<Op, op_le>) return ei::pcmp_le(a, b);
    if constexpr (std::is_same_v<Op, op_gt>) return ei::pcmp_lt(b, a);
    if constexpr (std::is_same_v<Op, op_ge>) return ei::pcmp_le(b, a);
    if constexpr (std::is_same_v<Op, op_eq>) return ei::pcmp_eq(a, b);
    if constexpr (std::is_same_v<Op, op_ne>) return ei::pandnot(ei::ptrue(a), ei::pcmp_eq(a, b));
  }
};

template <class T, class C, class A, class B>
struct vector_form<T, select_row<C, A, B>> {
  using cond = vector_form<T, C>;
  using yes = vector_form<T, A>;
  using no = vector_form<T, B>;
  static constexpr bool ok = cond::mask && yes::ok && no::ok && !yes::mask && !no::mask &&
                             std::is_same_v<typename select_row<C, A, B>::V, T>;
  static constexpr bool mask = false;
  static constexpr const char* why =
      !cond::mask ? (cond::ok ? "a condition that is not a comparison" : cond::why)
      : !yes::ok  ? yes::why
      : !no::ok   ? no::why
                  : "branches of different types";
  static WORKPART_ALWAYS_INLINE packet<T> at(const select_row<C, A, B>& r, index_t t) {
    return ei::pselect(cond::at(r.c, t), yes::at(r.a, t), no::at(r.b, t));
  }
};

/// Whether a row of values V stored into T vectorises: V is T and the row has a vector form.
template <class T, class Row>
inline constexpr bool row_vectorises = enabled<T>&& vector_form<T, Row>::ok&&
    std::is_same_v<std::remove_cvref_t<decltype(std::declval<Row>()(0))>, T>;

// ------------------------------------------------------------------ the loops

/// a K b lane by lane: a sum, or max / min propagating NaN as the scalar combine does.
template <combine K, class P>
WORKPART_ALWAYS_INLINE P combine_packets(const P& a, const P& b) {
  if constexpr (K == combine::add)
    return ei::padd(a, b);
  else if constexpr (K == combine::max)
    return max_nan(a, b);
  else
    return min_nan(a, b);
}

/// q[t] K= r(t) for t in [0, len): whole packets, then the scalar tail.
template <combine K, class T, class Row>
WORKPART_ALWAYS_INLINE void store_row(T* WORKPART_RESTRICT q, const Row& r, index_t len) {
  using P = packet<T>;
  using F = vector_form<T, Row>;
  constexpr index_t W = width<T>;
  index_t t = 0;
  for (; t + W <= len; t += W) {
    const P v = F::at(r, t);
    if constexpr (K == combine::assign)
      ei::pstoreu(q + t, v);
    else
      ei::pstoreu(q + t, combine_packets<K>(ei::ploadu<P>(q + t), v));
  }
  for (; t < len; ++t) q[t] = combine_value<K>(q[t], r(t));
}

/// acc[t] = acc[t] K rows[0](t) K rows[1](t) ... K rows[count - 1](t) for t < len, in that
/// order for every point (the bits of `count` store_row passes), each vector of acc loaded
/// and stored once.
template <combine K, class T, class Row>
WORKPART_ALWAYS_INLINE void accumulate_rows(T* WORKPART_RESTRICT acc, const Row* rows, int count,
                                            index_t len) {
  using P = packet<T>;
  using F = vector_form<T, Row>;
  constexpr index_t W = width<T>;
  index_t t = 0;
  for (; t + 2 * W <= len; t += 2 * W) {  // two vectors at a time: two independent chains
    P a = ei::ploadu<P>(acc + t), b = ei::ploadu<P>(acc + t + W);
    for (int k = 0; k < count; ++k) {
      a = combine_packets<K>(a, F::at(rows[k], t));
      b = combine_packets<K>(b, F::at(rows[k], t + W));
    }
    ei::pstoreu(acc + t, a);
    ei::pstoreu(acc + t + W, b);
  }
  for (; t + W <= len; t += W) {
    P a = ei::ploadu<P>(acc + t);
    for (int k = 0; k < count; ++k) a = combine_packets<K>(a, F::at(rows[k], t));
    ei::pstoreu(acc + t, a);
  }
  for (; t < len; ++t) {
    T a = acc[t];
    for (int k = 0; k < count; ++k) a = combine_value<K>(a, rows[k](t));
    acc[t] = a;
  }
}

/// acc K r(0) K r(1) ... K r(len - 1): four vector accumulators, then the lanes, then the
/// tail. (max / min give the scalar loop's result, NaN included; a sum adds in another order.)
template <combine K, class T, class Row>
WORKPART_ALWAYS_INLINE T reduce_values(T acc, const Row& r, index_t len) {
  using P = packet<T>;
  using F = vector_form<T, Row>;
  constexpr index_t W = width<T>;
  if (len < W) {  // no whole packet: the scalar loop
    for (index_t t = 0; t < len; ++t) acc = combine_value<K>(acc, r(t));
    return acc;
  }
  const P start = K == combine::add ? ei::pset1<P>(T(0)) : ei::pset1<P>(acc);
  P a0 = start, a1 = start, a2 = start, a3 = start;
  index_t t = 0;
  for (; t + 4 * W <= len; t += 4 * W) {
    a0 = combine_packets<K>(a0, F::at(r, t));
    a1 = combine_packets<K>(a1, F::at(r, t + W));
    a2 = combine_packets<K>(a2, F::at(r, t + 2 * W));
    a3 = combine_packets<K>(a3, F::at(r, t + 3 * W));
  }
  for (; t + W <= len; t += W) a0 = combine_packets<K>(a0, F::at(r, t));
  const P all = combine_packets<K>(combine_packets<K>(a0, a1), combine_packets<K>(a2, a3));
  T v;
  if constexpr (K == combine::add) {
    v = ei::predux(all);  // a tree of adds: short rows (64 taps) pay no W-long scalar chain
  } else {
    alignas(64) T lanes[W];
    ei::pstoreu(lanes, all);
    v = acc;
    for (index_t k = 0; k < W; ++k) v = combine_value<K>(v, lanes[k]);
  }
  for (; t < len; ++t) v = combine_value<K>(v, r(t));
  return K == combine::add ? static_cast<T>(acc + v) : v;
}

/// *p K= r(0) K ... K r(len - 1) (a row of `s(i) += x(i, j)` along j).
template <combine K, class T, class Row>
WORKPART_ALWAYS_INLINE void reduce_row(T* p, const Row& r, index_t len) {
  *p = reduce_values<K>(*p, r, len);
}

template <class Red>
inline constexpr combine combine_of = std::is_same_v<Red, red_sum>   ? combine::add
                                      : std::is_same_v<Red, red_max> ? combine::max
                                                                     : combine::min;

}  // namespace workpart::detail::simd

namespace workpart::detail {

/// An inner range's row (`wp::sum(wp::range(k, 0, K), w(k) * x(i + k))`, `wp::max_of(x(i,
/// wp::all))`) in vector accumulators, where the row has a vector form in the result's type.
template <class Red, class V, class Row>
struct inner_row_reduce<Red, V, Row, std::enable_if_t<simd::row_vectorises<V, Row>>> {
  WORKPART_ALWAYS_INLINE static V run(V acc, const Row& r, index_t n) {
    return simd::reduce_values<simd::combine_of<Red>>(acc, r, n);
  }
};

}  // namespace workpart::detail

namespace workpart::detail::simd {}  // namespace workpart::detail::simd

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
