#pragma once
/// \file inner_rows.hpp
/// Statements whose right side is an inner range with bounds that stay put along the row:
/// stencils, windowed sums, convolutions (`y(i, j) = wp::sum(wp::range(r, 0, 3), wp::sum(
/// wp::range(s, 0, 3), w(r, s) * x(i + r - 1, j + s - 1)))`, `y(i) = wp::sum(wp::range(k, 0,
/// 64), w(k) * x(i + k))`). Point by point, each point runs its own short range (3 or 64 terms),
/// which no compiler vectorises; here the range runs outside and the row inside: for each
/// value of the range's index, the body's row along the statement's row dimension (w(r, s) a
/// constant, x(i + r - 1, j + s - 1) contiguous) is added into a buffer of the row's partial
/// results, as vectors where the body has a vector form (simd_row.hpp). Every point adds its
/// terms in the order of the range, so a single range gives the point-by-point loop's bits. A
/// range of the same reduction nested in the body (a sum of a sum) adds into the same buffer,
/// as a plain nested loop over the taps does (`acc += w[r][s] * x[...]`), where the
/// point-by-point path added each inner sum, started from zero, to the outer one: a sum's last
/// bits can differ between the two (max and min cannot). Ranges whose bounds move along the row
/// (`range(k, 0, i + 1)` with rows along i), read data, or whose body's row would not be a vector
/// (range_outside_pays) keep the point-by-point path.

#include <algorithm>
#include <type_traits>

#include "../../expr/reduce.hpp"
#include "../combine.hpp"
#include "simd_row.hpp"

namespace workpart::detail {

/// Whether B (a bound node) is an inner range whose row along M can run inside its range:
/// affine bounds that do not use dimension M.
template <int M, class B>
constexpr bool row_inside_range() {
  if constexpr (requires {
                  typename B::reduction;
                  B::affine_bounds;
                }) {
    return B::affine_bounds && !(B::bounds_free & dim_bit(M)) && B::dim != M;
  } else {
    return false;
  }
}

/// Whether the body of B is a range of the same reduction and type that adds into B's buffer.
template <int M, class B>
constexpr bool nests_same_range() {
  using Body = typename B::body_type;
  if constexpr (row_inside_range<M, Body>())
    return std::is_same_v<typename Body::reduction, typename B::reduction> &&
           std::is_same_v<typename Body::value_type, typename B::value_type>;
  else
    return false;
}

/// The body whose rows B's accumulation adds: B's, or that of the innermost range of the same
/// reduction nested in it.
template <int M, class B>
auto innermost_range_body_of() {
  if constexpr (nests_same_range<M, B>())
    return innermost_range_body_of<M, typename B::body_type>();
  else
    return std::type_identity<typename B::body_type>{};
}
template <int M, class B>
using innermost_range_body = typename decltype(innermost_range_body_of<M, B>())::type;

/// Whether running B's range outside the row pays: the innermost body's row along M has a
/// vector form (a stencil's x(i + r, j + s) along j). Where it does not (`sum(x(i, wp::all))`
/// with rows along i reads x down its columns) each point's own range, along its contiguous
/// index, is the faster loop.
template <int M, class B>
constexpr bool range_outside_pays() {
  if constexpr (row_inside_range<M, B>()) {
    using Body = innermost_range_body<M, B>;
    using Row = std::remove_cvref_t<decltype(std::declval<const Body&>().template row<M>(
        static_cast<const index_t*>(nullptr)))>;
    return simd::row_vectorises<typename B::value_type, Row>;
  } else {
    return false;
  }
}

/// Whether no level that would be flattened reads data-dependent subscripts (those levels
/// check their rows point by point: keep that path).
template <int M, class B>
bool ranges_unchecked(const B& b) {
  if (b.checked) return false;
  if constexpr (nests_same_range<M, B>())
    return ranges_unchecked<M>(b.body);
  else
    return true;
}

/// Points of a row accumulated together (the buffer lives on the stack: 8 KB of doubles).
inline constexpr index_t inner_chunk = 1024;

/// Taps whose rows are combined into a vector of the buffer while it stays in a register.
inline constexpr int taps_per_pass = 16;

/// Up to taps_per_pass rows of the innermost body (one per tap of the flattened range nest, in
/// the nest's order), combined into the buffer in one pass when full (simd::accumulate_rows):
/// each point still adds its taps in the nest's order, so the bits are those of one pass per
/// tap, without storing and reloading the buffer between taps.
template <combine K, class V, class Row>
struct tap_rows {
  Row rows[taps_per_pass];
  int count = 0;
  V* acc = nullptr;
  index_t n = 0;
  WORKPART_ALWAYS_INLINE void add(const Row& r) {
    rows[count++] = r;
    if (count == taps_per_pass) flush();
  }
  WORKPART_ALWAYS_INLINE void flush() {
    if (count > 0) simd::accumulate_rows<K>(acc, rows, count, n);
    count = 0;
  }
};

/// The rows of every tap of B's range (and of the same reduction's ranges nested in it), in
/// order, into `taps`.
template <int M, class B, class Taps>
WORKPART_ALWAYS_INLINE void collect_taps(const B& b, index_t* q, Taps& taps) {
  const index_t lo = bound_value(b.lo, q), hi = bound_value(b.hi, q);
  for (index_t r = lo; r < hi; ++r) {
    q[B::dim] = r;
    if constexpr (nests_same_range<M, B>())
      collect_taps<M>(b.body, q, taps);
    else
      taps.add(b.body.template row<M>(q));
  }
}

/// acc[t] = Red(acc[t], body at q + t along M) for t < n and every value of B's range (and of
/// the same reduction's ranges nested in it).
template <int M, class B, class V>
WORKPART_ALWAYS_INLINE void accumulate_range(const B& b, index_t* q, V* acc, index_t n) {
  using Red = typename B::reduction;
  using Body = innermost_range_body<M, B>;
  using Row = std::remove_cvref_t<decltype(std::declval<const Body&>().template row<M>(
      static_cast<const index_t*>(nullptr)))>;
  if constexpr (simd::row_vectorises<V, Row> && std::is_default_constructible_v<Row> &&
                std::is_trivially_copyable_v<Row>) {
    tap_rows<simd::combine_of<Red>, V, Row> taps;  // rows left uninitialised until added
    taps.acc = acc;
    taps.n = n;
    collect_taps<M>(b, q, taps);
    taps.flush();
  } else {  // rows that cannot be kept in an array: one pass over the buffer per tap
    const index_t lo = bound_value(b.lo, q), hi = bound_value(b.hi, q);
    for (index_t r = lo; r < hi; ++r) {
      q[B::dim] = r;
      if constexpr (nests_same_range<M, B>()) {
        accumulate_range<M>(b.body, q, acc, n);
      } else {
        const auto row = b.body.template row<M>(q);
        if constexpr (simd::row_vectorises<V, Row>) {
          simd::store_row<simd::combine_of<Red>>(acc, row, n);  // acc[t] K= row(t)
        } else {
          for (index_t t = 0; t < n; ++t) acc[t] = Red::apply(acc[t], row(t));
        }
      }
    }
  }
}

/// One row of `lhs K= range(...)`: pt[M] its start, len points, in chunks of inner_chunk.
template <combine K, int M, class BL, class BR>
void run_row_range_outside(const BL& lhs, const BR& rhs, const index_t* pt, index_t len) {
  using T = typename BL::value_type;
  using V = typename BR::value_type;
  using Red = typename BR::reduction;
  T* p = lhs.ptr(pt);
  const index_t st = lhs.step(M);
  alignas(64) V acc[inner_chunk];
  index_t q[max_dims];
  for (index_t c0 = 0; c0 < len; c0 += inner_chunk) {
    const index_t n = std::min(inner_chunk, len - c0);
    for (index_t t = 0; t < n; ++t) acc[t] = Red::template identity<V>();
    for (int d = 0; d < max_dims; ++d) q[d] = pt[d];
    q[M] = pt[M] + c0;
    accumulate_range<M>(rhs, q, acc, n);
    T* out = p + c0 * st;
    if constexpr (std::is_same_v<T, V> && simd::enabled<T>) {
      if (st == 1) {
        simd::store_row<K>(out, unit_row<T>{acc}, n);
        continue;
      }
    }
    for (index_t t = 0; t < n; ++t) out[t * st] = combine_value<K>(out[t * st], acc[t]);
  }
}

}  // namespace workpart::detail
