#pragma once
/// \file interval.ipp
/// The bodies of interval.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../interval.hpp"

namespace workpart::detail {

WORKPART_DECL linear_form to_linear(const axis_form& f) {
  linear_form l;
  l.offset = f.offset;
  for (int d = 0; d < max_dims; ++d) l.coef[d] = f.coef[d];
  return l;
}

WORKPART_DECL std::optional<wide> extreme_where_positive(const linear_form& g,
                                                         const linear_form& len,
                                                         const index_t* box_lo,
                                                         const index_t* box_hi, bool want_min) {
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

WORKPART_DECL linear_form range_length(const range_form& r) {
  linear_form len = to_linear(r.hi);
  const linear_form lo = to_linear(r.lo);
  len.offset -= lo.offset;
  for (int d = 0; d < max_dims; ++d) len.coef[d] -= lo.coef[d];
  return len;
}

WORKPART_DECL void eliminate(linear_form& f, const range_form& r, bool want_min) {
  const wide c = f.coef[r.dim];
  if (c == 0) return;
  const bool use_lo = (c > 0) == want_min;
  const axis_form& b = use_lo ? r.lo : r.hi;
  f.coef[r.dim] = 0;
  for (int d = 0; d < max_dims; ++d) f.coef[d] = wadd(f.coef[d], wmul(c, b.coef[d]));
  f.offset = wadd(f.offset, wmul(c, wide(b.offset) - (use_lo ? 0 : 1)));
}

WORKPART_DECL std::optional<wide> extreme(linear_form f, const std::vector<range_form>& ranges,
                                          const index_t* box_lo, const index_t* box_hi,
                                          bool want_min) {
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

WORKPART_DECL std::optional<interval> form_interval(const linear_form& f,
                                                    const std::vector<range_form>& ranges,
                                                    const index_t* box_lo, const index_t* box_hi) {
  auto a = extreme(f, ranges, box_lo, box_hi, true);
  auto b = extreme(f, ranges, box_lo, box_hi, false);
  if (!a || !b) return std::nullopt;
  return interval{*a, *b};
}

WORKPART_DECL bool range_may_run(const std::vector<range_form>& ranges, const index_t* box_lo,
                                 const index_t* box_hi) {
  const range_form& r = ranges.back();
  if (r.data_dependent) return true;
  const linear_form len = range_length(r);
  std::vector<range_form> outer(ranges.begin(), ranges.end() - 1);
  auto m = extreme(len, outer, box_lo, box_hi, false);
  return !m || *m > 0;
}
}  // namespace workpart::detail
