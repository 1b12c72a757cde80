#pragma once
/// \file map.ipp
/// The bodies of map.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../map.hpp"

namespace workpart::detail {

WORKPART_DECL void check_bounds_of(const std::string& map_name,
                                   const std::vector<access_event>& events, const index_t* lo,
                                   const index_t* hi, int rank, const std::string& space_text) {
  index_t blo[max_dims], bhi[max_dims];
  for (int d = 0; d < max_dims; ++d) {
    blo[d] = d < rank ? lo[d] : 0;
    bhi[d] = d < rank ? hi[d] : 0;
  }
  range_stack rs;
  const access_event* written = nullptr;  // the current statement's left side
  for (const access_event& e : events) {
    if (e.what == access_event::kind::enter_range) {
      rs.enter(e.range, blo, bhi);
      continue;
    }
    if (e.what == access_event::kind::leave_range) {
      rs.leave();
      continue;
    }
    if (e.write) written = &e;
    // a scatter whose subscripts read the array it writes would depend on the points' order
    if (e.lhs_subscript && written && written->statement == e.statement && written->arr == e.arr)
      throw shape_error("map '" + map_name + "': the left side " + written->text +
                        " is subscripted by '" + e.name + "', the array it writes; read the " +
                        "subscripts from another array");
    if (rs.skipping() || e.padded) continue;  // a padded read is the fill outside its array
    for (int ax = 0; ax < e.rank; ++ax) {
      const axis_form& form = e.forms[std::size_t(ax)];
      if (form.kind != axis_kind::affine) continue;  // whole axis, or checked at run time
      auto iv = form_interval(to_linear(form), rs.ranges(), blo, bhi);
      if (!iv) continue;  // uses an index whose range depends on data: checked at run time
      const index_t ext = e.extent[std::size_t(ax)];
      if (iv->lo < 0 || iv->hi >= ext) {
        const wide bad = iv->lo < 0 ? iv->lo : iv->hi;
        throw shape_error("map '" + map_name + "': access " + e.text +
                          (e.write ? " writes" : " reads") + " axis " + std::to_string(ax) +
                          " of '" + e.name + "' at " + wide_str(bad) + ", outside [0, " +
                          std::to_string(ext) + ") (subscripts span [" + wide_str(iv->lo) + ", " +
                          wide_str(iv->hi) + "] over the space " + space_text +
                          "); shrink the space or enlarge '" + e.name + "'");
      }
    }
  }
}

WORKPART_DECL one_to_one_result decide_one_to_one(const index_t* coef /* R x N, row-major */, int R,
                                                  int N, const index_t* extent) {
  one_to_one_result res;
  auto race_along = [&](int d) {
    res.kind = one_to_one_result::race;
    res.step[d] = 1;
    return res;
  };
  // Only dimensions with two or more points can tell points apart.
  int cols[max_dims], n = 0;
  for (int d = 0; d < N; ++d)
    if (extent[d] >= 2) cols[n++] = d;
  for (int c = 0; c < n; ++c) {
    bool zero = true;
    for (int a = 0; a < R; ++a) zero = zero && coef[a * N + cols[c]] == 0;
    if (zero) return race_along(cols[c]);  // the left side ignores this dimension
  }
  if (n == 0) return res;
  // Larger extents first: they become pivots, the free coordinates are the small ones.
  std::stable_sort(cols, cols + n, [&](int x, int y) { return extent[x] > extent[y]; });
  std::vector<wide> m(std::size_t(R) * std::size_t(n));
  for (int a = 0; a < R; ++a)
    for (int c = 0; c < n; ++c) m[std::size_t(a * n + c)] = coef[a * N + cols[c]];
  auto at = [&](int r, int c) -> wide& { return m[std::size_t(r * n + c)]; };
  auto gcd = [](wide x, wide y) {
    if (x < 0) x = -x;
    if (y < 0) y = -y;
    while (y != 0) {
      const wide t = x % y;
      x = y;
      y = t;
    }
    return x;
  };
  try {
    int pivot_col[max_dims] = {}, rank = 0;
    bool is_pivot[max_dims] = {};
    for (int c = 0; c < n && rank < R; ++c) {
      int p = -1;
      for (int r = rank; r < R; ++r)
        if (at(r, c) != 0 && (p < 0 || (at(r, c) < 0 ? -at(r, c) : at(r, c)) <
                                           (at(p, c) < 0 ? -at(p, c) : at(p, c))))
          p = r;
      if (p < 0) continue;
      for (int k = 0; k < n; ++k) std::swap(at(p, k), at(rank, k));
      for (int r = 0; r < R; ++r) {
        if (r == rank || at(r, c) == 0) continue;
        const wide f = at(r, c), g = at(rank, c);
        wide div = 0;
        for (int k = 0; k < n; ++k) {
          at(r, k) = wadd(wmul(g, at(r, k)), wmul(-f, at(rank, k)));
          div = gcd(div, at(r, k));
        }
        if (div > 1)
          for (int k = 0; k < n; ++k) at(r, k) /= div;
      }
      pivot_col[rank++] = c;
      is_pivot[c] = true;
    }
    int free_cols[max_dims] = {}, k = 0;
    for (int c = 0; c < n; ++c)
      if (!is_pivot[c]) free_cols[k++] = c;
    if (k == 0) return res;
    // v[pivot_col[i]] = -(sum over free f of at(i, f) * v[f]) / at(i, pivot_col[i]), integral.
    auto lim = [&](int c) { return wide(extent[cols[c]] - 1); };
    auto abs_w = [](wide x) { return x < 0 ? -x : x; };
    if (k == 1) {
      const int f = free_cols[0];
      wide L = 1;  // the smallest positive v[f] that makes every pivot coordinate integral
      for (int i = 0; i < rank; ++i) {
        const wide a = at(i, pivot_col[i]), b = at(i, f);
        const wide need = abs_w(a) / gcd(a, b);
        L = wmul(L / gcd(L, need), need);
        if (L > lim(f)) return res;  // the shortest step already leaves the box
      }
      for (int i = 0; i < rank; ++i)
        if (abs_w(wmul(at(i, f), L) / at(i, pivot_col[i])) > lim(pivot_col[i])) return res;
      res.kind = one_to_one_result::race;
      res.step[cols[f]] = index_t(L);
      for (int i = 0; i < rank; ++i)
        res.step[cols[pivot_col[i]]] = index_t(-wmul(at(i, f), L) / at(i, pivot_col[i]));
      return res;
    }
    // Several free coordinates: search them (the first nonzero one positive: v and -v are
    // the same pair of points).
    wide combos = 1;
    for (int x = 0; x < k; ++x)
      if ((combos = wmul(combos, 2 * lim(free_cols[x]) + 1)) > (wide(1) << 24)) {
        res.kind = one_to_one_result::undecided;
        return res;
      }
    wide v[max_dims] = {};
    for (int x = 0; x < k; ++x) v[free_cols[x]] = -lim(free_cols[x]);
    for (;;) {
      int first = 0;
      while (first < k && v[free_cols[first]] == 0) ++first;
      if (first < k && v[free_cols[first]] > 0) {
        bool ok = true;
        for (int i = 0; i < rank && ok; ++i) {
          wide num = 0;
          for (int x = 0; x < k; ++x) num = wadd(num, wmul(at(i, free_cols[x]), v[free_cols[x]]));
          const wide a = at(i, pivot_col[i]);
          ok = num % a == 0 && abs_w(num / a) <= lim(pivot_col[i]);
          if (ok) v[pivot_col[i]] = -num / a;
        }
        if (ok) {
          res.kind = one_to_one_result::race;
          for (int c = 0; c < n; ++c) res.step[cols[c]] = index_t(v[c]);
          return res;
        }
      }
      int x = k - 1;
      for (; x >= 0; --x) {
        if (++v[free_cols[x]] <= lim(free_cols[x])) break;
        v[free_cols[x]] = -lim(free_cols[x]);
      }
      if (x < 0) return res;
    }
  } catch (const shape_error&) {  // coefficients too large for exact elimination
    res.kind = one_to_one_result::undecided;
    return res;
  }
}

WORKPART_DECL void check_one_to_one_of(const std::string& map_name,
                                       const std::vector<access_event>& events, int N,
                                       const index_t* lo, const index_t* hi,
                                       const std::string& space_text) {
  if (N == 0) return;
  for (int d = 0; d < N; ++d)
    if (hi[d] <= lo[d]) return;  // an empty space writes nothing
  index_t ext[max_dims];
  for (int d = 0; d < N; ++d) ext[d] = hi[d] - lo[d];
  for (const access_event& w : events) {
    if (w.what != access_event::kind::access || !w.write || w.statement_kind != combine::assign)
      continue;
    const int R = w.rank;
    const axis_form* f = w.forms.data();
    std::vector<index_t> coef(std::size_t((R > 0 ? R : 1) * N), 0);
    for (int a = 0; a < R; ++a)
      for (int d = 0; d < N; ++d) coef[std::size_t(a * N + d)] = f[a].coef[d];
    const one_to_one_result r = decide_one_to_one(coef.data(), R, N, ext);
    if (r.kind == one_to_one_result::one_to_one) continue;
    if (r.kind == one_to_one_result::undecided)
      throw shape_error("map '" + map_name + "': the plain '=' into " + w.text +
                        " could not be proven one-to-one over the space " + space_text +
                        " (its coefficients are too large for exact analysis); use += to sum, "
                        "or wp::max_into / wp::min_into");
    // Two points p and q = p + step inside the space, and the element both write.
    std::string p = "(", q = "(", e = "(";
    index_t pt[max_dims] = {};
    for (int d = 0; d < N; ++d) {
      pt[d] = r.step[d] >= 0 ? lo[d] : lo[d] - r.step[d];
      p += (d ? ", " : "") + std::to_string(pt[d]);
      q += (d ? ", " : "") + std::to_string(pt[d] + r.step[d]);
    }
    for (int a = 0; a < R; ++a) {
      index_t v = f[a].offset;
      for (int d = 0; d < N; ++d) v += f[a].coef[d] * pt[d];  // in bounds: checked before
      e += (a ? ", " : "") + std::to_string(v);
    }
    throw shape_error("map '" + map_name + "': the plain '=' into " + w.text +
                      " sends several points of the space to one element (a race: points " + p +
                      ") and " + q + ") both write " + w.name + e +
                      ")); use += to sum, or wp::max_into / wp::min_into");
  }
}
}  // namespace workpart::detail
