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
#include "../config.hpp"

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

WORKPART_DECL linear_form to_linear(const axis_form& f);

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
WORKPART_DECL std::optional<wide> extreme_where_positive(const linear_form& g,
                                                         const linear_form& len,
                                                         const index_t* box_lo,
                                                         const index_t* box_hi, bool want_min);

/// hi - lo of a range, as a linear form of the indices around it.
WORKPART_DECL linear_form range_length(const range_form& r);

/// Replaces r's index in f by the end of its range that extremises f: for a coefficient
/// c > 0 the min is at lo and the max at hi - 1, for c < 0 the other way round. Exact at every
/// point where the range runs.
WORKPART_DECL void eliminate(linear_form& f, const range_form& r, bool want_min);

/// Extreme (min if want_min, else max) of `f` over the box [lo_d, hi_d) of the outer
/// dimensions and the enclosing ranges (outermost first). std::nullopt when the form uses
/// an index whose range depends on data.
WORKPART_DECL std::optional<wide> extreme(linear_form f, const std::vector<range_form>& ranges,
                                          const index_t* box_lo, const index_t* box_hi,
                                          bool want_min);

WORKPART_DECL std::optional<interval> form_interval(const linear_form& f,
                                                    const std::vector<range_form>& ranges,
                                                    const index_t* box_lo, const index_t* box_hi);

/// Whether the innermost of `ranges` runs at least once somewhere in the box (the largest
/// hi - lo over the box and the outer ranges is positive). Unknown (data) counts as yes.
WORKPART_DECL bool range_may_run(const std::vector<range_form>& ranges, const index_t* box_lo,
                                 const index_t* box_hi);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/interval.ipp"
#endif
