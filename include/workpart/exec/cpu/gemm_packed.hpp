#pragma once
/// \file gemm_packed.hpp
/// Runs the contractions of ../contraction_affine.hpp (convolutions, sums over constant
/// ranges) as GEMMs on the CPU. An operand that overlaps itself as a matrix has no strides
/// (`In(n, c, y + r, x + s)` reads each element for several (r, s)), so its GEMM matrix is
/// copied out first (im2col), per batch point and in blocks that fit
/// packed_operand_budget_bytes(); so is a padded read, its fill written where it leaves the
/// array. A left side that overlaps itself (`dIn(n, c, y + r, x + s) += ...`, a
/// convolution's input gradient) gets the GEMM's result through a buffer, added element by
/// element (col2im). Other operands are used in place by their strides, as gemm.hpp does.

#include <algorithm>
#include <atomic>
#include <vector>

#include "../contraction_affine.hpp"
#include "../counters.hpp"
#include "gemm.hpp"

namespace workpart::detail {

/// Sets pt's coordinates along dims[0, count) to the flat index j of their box (last fastest).
inline void place_flat(const int* dims, int count, index_t j, const index_t* lo, const index_t* hi,
                       index_t* pt) {
  for (int x = count - 1; x >= 0; --x) {
    const int d = dims[x];
    const index_t e = hi[d] - lo[d];
    pt[d] = lo[d] + j % e;
    j /= e;
  }
}

/// The array read of a bound operand: itself, or a padded read's inner read.
template <class Bound>
const auto& array_read_of(const Bound& b) {
  if constexpr (requires { b.fill; }) {
    return b.acc;
  } else {
    return b;
  }
}

inline index_t floor_div(index_t a, index_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
/// Narrows [t0, t1) to the t where 0 <= v + c t < extent (one axis of a padded read's run).
inline void clip_run(index_t v, index_t c, index_t extent, index_t& t0, index_t& t1) {
  index_t lo, hi;  // the t inside: [lo, hi]
  if (c == 0) {
    if (v >= 0 && v < extent) return;
    lo = 0;
    hi = -1;
  } else if (c > 0) {
    lo = -floor_div(v, c);  // ceil(-v / c)
    hi = floor_div(extent - 1 - v, c);
  } else {
    lo = floor_div(v - extent, -c) + 1;
    hi = floor_div(v, -c);
  }
  t0 = std::max(t0, lo);
  t1 = std::min(t1, hi + 1);
}

/// An operand's runs along one dim: its address step, and for a padded read each axis's
/// coefficient of the dim (where the run leaves the array).
struct run_steps {
  index_t step = 0;
  index_t coef[max_dims] = {};
};
template <class Bound>
run_steps run_steps_along(const Bound& x, int cin) {
  run_steps r;
  if (cin < 0) return r;
  const auto& a = array_read_of(x);
  r.step = a.step(cin);
  if constexpr (requires { x.fill; }) {
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      ((r.coef[X] = std::get<X>(a.subs).coef_of(cin)), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(a.subs)>>{});
  }
  return r;
}

/// Copies the run of len elements of x from pt along the dim of rs into o. A padded read
/// gives its fill where its subscripts leave the array, and only the part inside is read
/// (its buffer holds nothing else).
template <class T, class Bound>
void copy_run(const Bound& x, const index_t* pt, const run_steps& rs, index_t len, T* o) {
  const auto& a = array_read_of(x);
  const T* s;
  index_t t0 = 0, t1 = len;
  if constexpr (requires { x.fill; }) {
    constexpr std::size_t R = std::tuple_size_v<decltype(a.subs)>;
    index_t v[R > 0 ? R : 1] = {};
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      ((v[X] = a.template sub_value<X>(pt), clip_run(v[X], rs.coef[X], x.extent[X], t0, t1)), ...);
    }
    (std::make_index_sequence<R>{});
    if (t1 <= t0) t0 = t1 = len;
    std::fill(o, o + t0, x.fill);
    std::fill(o + t1, o + len, x.fill);
    if (t1 <= t0) return;
    index_t off = a.base;  // the first element inside: its subscripts from v, not again
    for (std::size_t X = 0; X < R; ++X) off += (v[X] + rs.coef[X] * t0) * a.stride[X];
    s = a.data + off;
  } else {
    s = a.ptr(pt);
  }
  if (rs.step == 1)
    std::copy(s, s + (t1 - t0), o + t0);
  else
    for (index_t t = t0; t < t1; ++t) o[t] = s[(t - t0) * rs.step];
}

/// Copies rows [i0, i1) x columns [j0, j1) of an operand's GEMM matrix into out (row-major):
/// rows flatten the dims rdims, columns the dims cdims, every other dim stays at pt0.
/// Runs along the innermost column dim are copied as strided rows.
template <class T, class Bound>
void pack_operand(const Bound& x, const index_t* pt0, const int* rdims, int nr, const int* cdims,
                  int nc, index_t i0, index_t i1, index_t j0, index_t j1, const index_t* lo,
                  const index_t* hi, T* out) {
  const index_t w = j1 - j0;
  const int cin = nc > 0 ? cdims[nc - 1] : -1;
  const index_t cext = cin < 0 ? 1 : hi[cin] - lo[cin];
  const run_steps rs = run_steps_along(x, cin);
  // (Serial: OpenMP threads spinning after a parallel region here slow down the BLAS's own
  // threads in the GEMM that follows, more than a parallel copy saves.)
  for (index_t i = i0; i < i1; ++i) {
    index_t pt[max_dims];
    std::copy(pt0, pt0 + max_dims, pt);
    place_flat(rdims, nr, i, lo, hi, pt);
    T* o = out + (i - i0) * w;
    place_flat(cdims, nc, j0, lo, hi, pt);
    for (index_t j = j0; j < j1;) {
      if (j > j0) next_loop_point(pt, cdims, nc, lo, hi);  // the run ended its row: carry
      const index_t pos = cin < 0 ? 0 : pt[cin] - lo[cin];
      const index_t len = std::min(cext - pos, j1 - j);
      copy_run<T>(x, pt, rs, len, o);
      o += len;
      j += len;
      if (cin >= 0) pt[cin] = hi[cin] - 1;  // where the run ended (or j == j1)
    }
  }
  counters().packed_elements.fetch_add(long((i1 - i0) * w), std::memory_order_relaxed);
}

/// Adds rows [i0, i1) x columns [j0, j1) of a GEMM's result `in` (row-major) into the left
/// side c: the reverse of pack_operand (col2im). Elements are added one at a time, so
/// positions that several (row, column) pairs share get every term.
template <class T, class Bound>
void add_unpacked(const Bound& c, const index_t* pt0, const int* rdims, int nr, const int* cdims,
                  int nc, index_t i0, index_t i1, index_t j0, index_t j1, const index_t* lo,
                  const index_t* hi, const T* in) {
  const index_t w = j1 - j0;
  const int cin = nc > 0 ? cdims[nc - 1] : -1;
  const index_t cstep = cin < 0 ? 0 : c.step(cin);
  const index_t cext = cin < 0 ? 1 : hi[cin] - lo[cin];
  for (index_t i = i0; i < i1; ++i) {
    index_t pt[max_dims];
    std::copy(pt0, pt0 + max_dims, pt);
    place_flat(rdims, nr, i, lo, hi, pt);
    const T* s = in + (i - i0) * w;
    place_flat(cdims, nc, j0, lo, hi, pt);
    for (index_t j = j0; j < j1;) {
      if (j > j0) next_loop_point(pt, cdims, nc, lo, hi);
      const index_t pos = cin < 0 ? 0 : pt[cin] - lo[cin];
      const index_t len = std::min(cext - pos, j1 - j);
      T* d = c.ptr(pt);
      for (index_t t = 0; t < len; ++t) d[t * cstep] += s[t];
      s += len;
      j += len;
      if (cin >= 0) pt[cin] = hi[cin] - 1;
    }
  }
  counters().unpacked_elements.fetch_add(long((i1 - i0) * w), std::memory_order_relaxed);
}

/// Zeroes an affine left side over the box [lo, hi) of the space's N dims.
template <int N, class Bound>
void zero_box(const Bound& c, const index_t* lo, const index_t* hi) {
  using T = typename Bound::value_type;
  index_t pt[max_dims] = {};
  int outer[max_dims] = {};
  for (int d = 0; d < N; ++d) pt[d] = lo[d];
  for (int d = 0; d + 1 < N; ++d) outer[d] = d;
  const index_t step = c.step(N - 1), len = hi[N - 1] - lo[N - 1];
  do {
    T* p = c.ptr(pt);
    for (index_t t = 0; t < len; ++t) p[t * step] = T(0);
  } while (next_loop_point(pt, outer, N - 1, lo, hi));
}

/// Contiguous steps for a packed operand's matrix: rdims outside, cdims inside (the
/// fused suffixes of each role then get the same steps as in the buffer).
inline void packed_steps(const int* rdims, int nr, const int* cdims, int nc, const index_t* lo,
                         const index_t* hi, index_t* steps) {
  index_t s = 1;
  for (int x = nc - 1; x >= 0; --x) {
    steps[cdims[x]] = s;
    s *= hi[cdims[x]] - lo[cdims[x]];
  }
  for (int x = nr - 1; x >= 0; --x) {
    steps[rdims[x]] = s;
    s *= hi[rdims[x]] - lo[rdims[x]];
  }
}

/// Runs a statement of contraction_affine.hpp over the box [lo, hi) of its space as GEMMs.
/// False, before anything is written, where a loop serves better: where the loop's rows are
/// long vectors (vector_row elements, packed_gemm_long_row or more; 0 where its rows would
/// run as scalars, as a padded read's do), a packed operand whose elements
/// would be used fewer than packed_gemm_min_reuse times or a buffered C whose elements would
/// sum fewer terms. (Subscripts are proven in bounds when the map is built, constant ranges
/// and affine subscripts being all there is -- a padded read leaves its array by design;
/// were one not, the loop would check it point by point.)
template <int N, class Stmt, class WEnv, class REnv>
bool run_affine_contraction(const Stmt& st, const WEnv& wenv, const REnv& renv, const index_t* lo,
                            const index_t* hi, index_t vector_row) {
  using tr = affine_contraction_traits<N, Stmt>;
  using F = typename tr::form;
  using T = typename Stmt::value_type;
  constexpr int NE = tr::rank;
  constexpr affine_contraction_dims<NE> cd = tr::dims();
  const auto& body = tr::nest::body(st.rhs);
  const auto bc = st.lhs.bind(wenv, 0);
  const auto ba = F::a(body).bind(renv, 0);
  const auto bb = F::b(body).bind(renv, 0);
  if (bc.checked || array_read_of(ba).checked || array_read_of(bb).checked) return false;
  index_t elo[max_dims] = {}, ehi[max_dims] = {};
  for (int d = 0; d < NE; ++d) ehi[d] = 1;  // inactive dims: one point
  for (int d = 0; d < N; ++d) {
    elo[d] = lo[d];
    ehi[d] = hi[d];
  }
  tr::nest::bounds(st.rhs, elo, ehi);
  for (int d = 0; d < NE; ++d) ehi[d] = std::max(ehi[d], elo[d]);  // an empty range: no terms
  auto role_ext = [&](const int* dims, int count) {
    index_t e = 1;
    for (int x = 0; x < count; ++x) e *= ehi[dims[x]] - elo[dims[x]];
    return e;
  };
  const index_t m = role_ext(cd.m, cd.nm), n = role_ext(cd.n, cd.nn), k = role_ext(cd.k, cd.nk);
  const index_t reuse = vector_row >= packed_gemm_long_row ? packed_gemm_min_reuse : 1;
  if ((cd.pack_b && m < reuse) || (cd.pack_a && n < reuse) || (cd.pack_c && k < reuse))
    return false;
  for (int d = 0; d < N; ++d)
    if (hi[d] <= lo[d]) return true;  // no point of the space: nothing is written
  bool empty_range = false;
  for (int d = 0; d < NE; ++d) empty_range = empty_range || ehi[d] <= elo[d];
  if (empty_range) {  // the sums are 0
    if constexpr (cd.zero_first) zero_box<N>(bc, lo, hi);
    return true;
  }

  index_t cs[max_dims] = {}, as[max_dims] = {}, bs[max_dims] = {};
  for (int d = 0; d < NE; ++d) {
    cs[d] = bc.step(d);
    as[d] = array_read_of(ba).step(d);
    bs[d] = array_read_of(bb).step(d);
  }
  // A packed operand's steps are its buffer's: [m x k] for A, [k x n] for B, [m x n] for C,
  // or transposed where the other side's innermost dim is the longer one: the copies run
  // along it (a convolution's input along the output column, not the filter's few taps).
  auto inner_ext = [&](const int* dims, int count) {
    return count == 0 ? index_t(1) : ehi[dims[count - 1]] - elo[dims[count - 1]];
  };
  const bool a_t = cd.pack_a && inner_ext(cd.m, cd.nm) > inner_ext(cd.k, cd.nk);  // [k x m]
  const bool b_t = cd.pack_b && inner_ext(cd.k, cd.nk) > inner_ext(cd.n, cd.nn);  // [n x k]
  const bool c_t = cd.pack_c && inner_ext(cd.m, cd.nm) > inner_ext(cd.n, cd.nn);  // [n x m]
  if constexpr (cd.pack_a) {
    if (a_t)
      packed_steps(cd.k, cd.nk, cd.m, cd.nm, elo, ehi, as);
    else
      packed_steps(cd.m, cd.nm, cd.k, cd.nk, elo, ehi, as);
  }
  if constexpr (cd.pack_b) {
    if (b_t)
      packed_steps(cd.n, cd.nn, cd.k, cd.nk, elo, ehi, bs);
    else
      packed_steps(cd.k, cd.nk, cd.n, cd.nn, elo, ehi, bs);
  }
  if constexpr (cd.pack_c) {
    if (c_t)
      packed_steps(cd.n, cd.nn, cd.m, cd.nm, elo, ehi, cs);
    else
      packed_steps(cd.m, cd.nm, cd.n, cd.nn, elo, ehi, cs);
  }
  const gemm_layout g = layout_gemm_steps<NE>(cd, cs, as, bs, elo, ehi);
  // The fused dims of each role (a suffix of it); the rest are in g.loops.
  const int fm = fused_first(cd.m, cd.nm, cs, as, elo, ehi);
  const int fn = fused_first(cd.n, cd.nn, cs, bs, elo, ehi);
  const int fk = fused_first(cd.k, cd.nk, as, bs, elo, ehi);
  const index_t M = g.m.ext, Nc = g.n.ext, K = g.k.ext;
  // `=` over sums: each GEMM overwrites its block of C where it alone sums every term (no k
  // dim left in the loops), else C is zeroed and every GEMM accumulates.
  bool overwrite = false;
  if constexpr (cd.zero_first) {
    overwrite = true;
    for (int x = 0; x < g.nloops; ++x)
      for (int y = 0; y < cd.nk; ++y) overwrite = overwrite && g.loops[x] != cd.k[y];
    if (!overwrite) zero_box<N>(bc, lo, hi);
  }
  // Blocks of a packed operand's free side, so that its buffer fits the budget (and C's
  // buffer's rows, given its columns).
  const index_t budget = std::max<index_t>(1, index_t(packed_operand_budget_bytes() / sizeof(T)));
  const index_t block = std::max<index_t>(1, budget / K);
  const index_t nb = cd.pack_b ? std::min(Nc, block) : Nc;
  const index_t mb = std::min(cd.pack_a ? std::min(M, block) : M,
                              cd.pack_c ? std::max<index_t>(1, budget / nb) : M);
  std::vector<T> pa(static_cast<std::size_t>(cd.pack_a ? mb * K : 0));
  std::vector<T> pb(static_cast<std::size_t>(cd.pack_b ? K * nb : 0));
  std::vector<T> pc(static_cast<std::size_t>(cd.pack_c ? mb * nb : 0));
  auto step = [](const index_t* s, int d) { return d < 0 ? index_t(0) : s[d]; };
  const T alpha = static_cast<T>(F::scale(body));
  index_t pt[max_dims] = {};
  for (int d = 0; d < NE; ++d) pt[d] = elo[d];
  do {
    for (index_t i0 = 0; i0 < M; i0 += mb) {
      const index_t i1 = std::min(M, i0 + mb);
      const T* ap;
      index_t a_rs, a_cs;
      if constexpr (cd.pack_a) {
        const int *rows = cd.m + fm, *cols = cd.k + fk;
        const int nr = cd.nm - fm, nc = cd.nk - fk;
        if (a_t)
          pack_operand<T>(ba, pt, cols, nc, rows, nr, 0, K, i0, i1, elo, ehi, pa.data());
        else
          pack_operand<T>(ba, pt, rows, nr, cols, nc, i0, i1, 0, K, elo, ehi, pa.data());
        ap = pa.data();
        a_rs = a_t ? 1 : K;
        a_cs = a_t ? i1 - i0 : 1;
      } else {
        a_rs = step(as, g.m.inner);
        a_cs = step(as, g.k.inner);
        ap = ba.ptr(pt) + i0 * a_rs;
      }
      for (index_t j0 = 0; j0 < Nc; j0 += nb) {
        const index_t j1 = std::min(Nc, j0 + nb);
        const T* bp;
        index_t b_rs, b_cs;
        if constexpr (cd.pack_b) {
          const int *rows = cd.k + fk, *cols = cd.n + fn;
          const int nr = cd.nk - fk, nc = cd.nn - fn;
          if (b_t)
            pack_operand<T>(bb, pt, cols, nc, rows, nr, j0, j1, 0, K, elo, ehi, pb.data());
          else
            pack_operand<T>(bb, pt, rows, nr, cols, nc, 0, K, j0, j1, elo, ehi, pb.data());
          bp = pb.data();
          b_rs = b_t ? 1 : j1 - j0;
          b_cs = b_t ? K : 1;
        } else {
          b_cs = step(bs, g.n.inner);
          b_rs = step(bs, g.k.inner);
          bp = bb.ptr(pt) + j0 * b_cs;
        }
        if constexpr (cd.pack_c) {
          const int *rows = cd.m + fm, *cols = cd.n + fn;
          const int nr = cd.nm - fm, nc = cd.nn - fn;
          gemm_strided<T>(i1 - i0, j1 - j0, K, alpha, ap, a_rs, a_cs, bp, b_rs, b_cs, pc.data(),
                          c_t ? 1 : j1 - j0, c_t ? i1 - i0 : 1, true);
          if (c_t)
            add_unpacked<T>(bc, pt, cols, nc, rows, nr, j0, j1, i0, i1, elo, ehi, pc.data());
          else
            add_unpacked<T>(bc, pt, rows, nr, cols, nc, i0, i1, j0, j1, elo, ehi, pc.data());
        } else {
          const index_t c_rs = step(cs, g.m.inner), c_cs = step(cs, g.n.inner);
          gemm_strided<T>(i1 - i0, j1 - j0, K, alpha, ap, a_rs, a_cs, bp, b_rs, b_cs,
                          bc.ptr(pt) + i0 * c_rs + j0 * c_cs, c_rs, c_cs, overwrite);
        }
      }
    }
  } while (next_loop_point(pt, g.loops, g.nloops, elo, ehi));
  return true;
}

}  // namespace workpart::detail
