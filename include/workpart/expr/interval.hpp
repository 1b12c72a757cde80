#pragma once
/// \file interval.hpp
/// Exact interval analysis of affine subscripts over a box of outer indices, with inner
/// ranges whose bounds are affine in the indices around them. Inner indices are eliminated
/// innermost first, each replaced by the end of its range that extremises the form, so the
/// result is the exact min and max over every point where the access runs. A single affine
/// range that is empty at some points (a triangle such as range(r, i, n)) is handled exactly
/// by keeping only the points where it runs; nested ranges empty at some points give a safe
/// over-estimate. Used by the bounds check when a map is built and by constraint extraction.
///
/// The arithmetic is 128-bit and checked: subscripts such as `(1 << 62) * i` take values
/// beyond 64 bits over the space, and the analysis must see them as they are (far outside
/// the array) rather than wrapped around into it.

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "access.hpp"
#include "reduce.hpp"

namespace workpart::detail {

/// 128-bit integers for the analysis: every product of two 64-bit values fits.
using wide = __int128;

[[noreturn]] inline void wide_overflow() {
  throw shape_error(
      "a subscript's extreme over the space exceeds 128-bit arithmetic (its "
      "coefficients or bounds are far beyond any array's extent); use smaller "
      "coefficients or a smaller space");
}
inline wide wmul(wide a, wide b) {
  wide r;
  if (__builtin_mul_overflow(a, b, &r)) wide_overflow();
  return r;
}
inline wide wadd(wide a, wide b) {
  wide r;
  if (__builtin_add_overflow(a, b, &r)) wide_overflow();
  return r;
}
inline std::string wide_str(wide v) {
  if (v >= std::numeric_limits<index_t>::min() && v <= std::numeric_limits<index_t>::max())
    return std::to_string(index_t(v));
  const bool neg = v < 0;
  std::string s;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  do {
    s.insert(s.begin(), char('0' + int(u % 10)));
    u /= 10;
  } while (u != 0);
  return neg ? "-" + s : s;
}

struct linear_form {
  wide coef[max_dims] = {};
  wide offset = 0;
};

inline linear_form to_linear(const axis_form& f) {
  linear_form l;
  l.offset = f.offset;
  for (int d = 0; d < max_dims; ++d) l.coef[d] = f.coef[d];
  return l;
}

struct interval {
  wide lo = 0;   ///< smallest value taken
  wide hi = -1;  ///< largest value taken (hi < lo: empty)
  bool empty() const { return hi < lo; }
};

inline wide floor_div(wide a, wide b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// Extreme of the affine g over the integer points x of the box where len(x) >= 1, exactly:
/// the dimensions len uses, but the widest, are enumerated (at most 2^20 combinations); for
/// each, len >= 1 bounds the widest one to an interval, and every other dimension takes its
/// best end. std::nullopt when that would enumerate too much or no point satisfies len >= 1.
inline std::optional<wide> extreme_where_positive(const linear_form& g, const linear_form& len,
                                                  const index_t* box_lo, const index_t* box_hi,
                                                  bool want_min) {
  int dims[max_dims], nd = 0, wdim = -1;  // wdim: the widest dimension len uses
  for (int d = 0; d < max_dims; ++d) {
    if (len.coef[d] == 0) continue;
    if (box_hi[d] <= box_lo[d]) return std::nullopt;
    if (wdim < 0 || box_hi[d] - box_lo[d] > box_hi[wdim] - box_lo[wdim]) wdim = d;
    dims[nd++] = d;
  }
  if (wdim < 0) return std::nullopt;
  wide combos = 1;
  for (int x = 0; x < nd; ++x)
    if (dims[x] != wdim && (combos *= box_hi[dims[x]] - box_lo[dims[x]]) > (wide(1) << 20))
      return std::nullopt;
  auto best_end = [&](wide c, wide lo, wide hi_incl) {  // extreme of c * t, t in [lo, hi]
    return wmul(c, (c > 0) == want_min ? lo : hi_incl);
  };
  wide free_part = g.offset;  // dimensions len does not use: independent, at their best end
  for (int d = 0; d < max_dims; ++d) {
    if (g.coef[d] == 0 || len.coef[d] != 0) continue;
    if (box_hi[d] <= box_lo[d]) return std::nullopt;
    free_part = wadd(free_part, best_end(g.coef[d], box_lo[d], box_hi[d] - 1));
  }
  index_t pt[max_dims];
  for (int x = 0; x < nd; ++x) pt[dims[x]] = box_lo[dims[x]];
  std::optional<wide> best;
  for (;;) {
    wide rest = len.offset, val = free_part;
    for (int x = 0; x < nd; ++x)
      if (dims[x] != wdim) {
        rest = wadd(rest, wmul(len.coef[dims[x]], pt[dims[x]]));
        val = wadd(val, wmul(g.coef[dims[x]], pt[dims[x]]));
      }
    // len.coef[wdim] * t + rest >= 1
    const wide c = len.coef[wdim];
    wide lo = box_lo[wdim], hi = box_hi[wdim] - 1;
    if (c > 0)
      lo = std::max(lo, -floor_div(rest - 1, c));
    else
      hi = std::min(hi, floor_div(rest - 1, -c));
    if (lo <= hi) {
      const wide v = wadd(val, best_end(g.coef[wdim], lo, hi));
      if (!best || (want_min ? v < *best : v > *best)) best = v;
    }
    int x = nd - 1;
    for (; x >= 0; --x) {
      const int d = dims[x];
      if (d == wdim) continue;
      if (++pt[d] < box_hi[d]) break;
      pt[d] = box_lo[d];
    }
    if (x < 0) break;
  }
  return best;
}

/// hi - lo of a range, as a linear form of the indices around it.
inline linear_form range_length(const range_form& r) {
  linear_form len = to_linear(r.hi);
  const linear_form lo = to_linear(r.lo);
  len.offset -= lo.offset;
  for (int d = 0; d < max_dims; ++d) len.coef[d] -= lo.coef[d];
  return len;
}

/// Replaces r's index in f by the end of its range that extremises f: for a coefficient
/// c > 0 the min is at lo and the max at hi - 1, for c < 0 the other way round. Exact at every
/// point where the range runs.
inline void eliminate(linear_form& f, const range_form& r, bool want_min) {
  const wide c = f.coef[r.dim];
  if (c == 0) return;
  const bool use_lo = (c > 0) == want_min;
  const axis_form& b = use_lo ? r.lo : r.hi;
  f.coef[r.dim] = 0;
  for (int d = 0; d < max_dims; ++d) f.coef[d] = wadd(f.coef[d], wmul(c, b.coef[d]));
  f.offset = wadd(f.offset, wmul(c, wide(b.offset) - (use_lo ? 0 : 1)));
}

/// Extreme (min if want_min, else max) of `f` over the box [lo_d, hi_d) of the outer
/// dimensions and the enclosing ranges (outermost first). std::nullopt when the form uses
/// an index whose range depends on data.
inline std::optional<wide> extreme(linear_form f, const std::vector<range_form>& ranges,
                                   const index_t* box_lo, const index_t* box_hi, bool want_min) {
  if (ranges.size() == 1 && !ranges[0].data_dependent) {
    // One range empty at some points of the box (a triangle, a band): the access runs only
    // where it is not, so the extreme is taken over those points alone. Where the range runs
    // everywhere, the elimination below is already exact.
    const linear_form len = range_length(ranges[0]);
    const auto shortest = extreme(len, {}, box_lo, box_hi, true);
    if (shortest && *shortest < 1) {
      linear_form g = f;
      eliminate(g, ranges[0], want_min);
      if (auto v = extreme_where_positive(g, len, box_lo, box_hi, want_min)) return v;
    }
  }
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
    if (f.coef[it->dim] == 0) continue;
    if (it->data_dependent) return std::nullopt;
    eliminate(f, *it, want_min);
  }
  wide v = f.offset;
  for (int d = 0; d < max_dims; ++d) {
    const wide c = f.coef[d];
    if (c == 0) continue;
    if (box_hi[d] <= box_lo[d]) return std::nullopt;  // not a dimension of the box
    v = wadd(v, wmul(c, (c > 0) == want_min ? box_lo[d] : box_hi[d] - 1));
  }
  return v;
}

inline std::optional<interval> form_interval(const linear_form& f,
                                             const std::vector<range_form>& ranges,
                                             const index_t* box_lo, const index_t* box_hi) {
  auto a = extreme(f, ranges, box_lo, box_hi, true);
  auto b = extreme(f, ranges, box_lo, box_hi, false);
  if (!a || !b) return std::nullopt;
  return interval{*a, *b};
}

/// Whether the innermost of `ranges` runs at least once somewhere in the box (the largest
/// hi - lo over the box and the outer ranges is positive). Unknown (data) counts as yes.
inline bool range_may_run(const std::vector<range_form>& ranges, const index_t* box_lo,
                          const index_t* box_hi) {
  const range_form& r = ranges.back();
  if (r.data_dependent) return true;
  const linear_form len = range_length(r);
  std::vector<range_form> outer(ranges.begin(), ranges.end() - 1);
  auto m = extreme(len, outer, box_lo, box_hi, false);
  return !m || *m > 0;
}

}  // namespace workpart::detail
