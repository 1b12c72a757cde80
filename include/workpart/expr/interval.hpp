#pragma once
/// \file interval.hpp
/// Exact interval analysis of affine subscripts over a box of outer indices, with inner
/// ranges whose bounds are affine in the indices around them. Inner indices are eliminated
/// innermost first, each replaced by the end of its range that extremises the form, so the
/// result is the exact min and max over every point where the access runs (ranges empty at
/// some points make it a safe over-estimate). Used by the bounds check when a map is built
/// and by constraint extraction.

#include <optional>
#include <vector>

#include "access.hpp"
#include "reduce.hpp"

namespace workpart::detail {

struct linear_form {
  index_t coef[max_dims] = {};
  index_t offset = 0;
};

inline linear_form to_linear(const axis_form& f) {
  linear_form l;
  l.offset = f.offset;
  for (int d = 0; d < max_dims; ++d) l.coef[d] = f.coef[d];
  return l;
}

struct interval {
  index_t lo = 0;  ///< smallest value taken
  index_t hi = -1; ///< largest value taken (hi < lo: empty)
  bool empty() const { return hi < lo; }
};

/// Extreme (min if want_min, else max) of `f` over the box [lo_d, hi_d) of the outer
/// dimensions and the enclosing ranges (outermost first). std::nullopt when the form uses
/// an index whose range depends on data.
inline std::optional<index_t> extreme(linear_form f, const std::vector<range_form>& ranges,
                                      const index_t* box_lo, const index_t* box_hi, bool want_min) {
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
    const int r = it->dim;
    const index_t c = f.coef[r];
    if (c == 0) continue;
    if (it->data_dependent) return std::nullopt;
    // c > 0: the min is at lo, the max at hi - 1; c < 0: the other way round.
    const bool use_lo = (c > 0) == want_min;
    const axis_form& b = use_lo ? it->lo : it->hi;
    f.coef[r] = 0;
    for (int d = 0; d < max_dims; ++d) f.coef[d] += c * b.coef[d];
    f.offset += c * (b.offset - (use_lo ? 0 : 1));
  }
  index_t v = f.offset;
  for (int d = 0; d < max_dims; ++d) {
    const index_t c = f.coef[d];
    if (c == 0) continue;
    if (box_hi[d] <= box_lo[d]) return std::nullopt;  // not a dimension of the box
    v += c * ((c > 0) == want_min ? box_lo[d] : box_hi[d] - 1);
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
  linear_form len = to_linear(r.hi);
  const linear_form lo = to_linear(r.lo);
  len.offset -= lo.offset;
  for (int d = 0; d < max_dims; ++d) len.coef[d] -= lo.coef[d];
  std::vector<range_form> outer(ranges.begin(), ranges.end() - 1);
  auto m = extreme(len, outer, box_lo, box_hi, false);
  return !m || *m > 0;
}

}  // namespace workpart::detail
