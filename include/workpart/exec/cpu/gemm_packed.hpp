#pragma once
/// \file gemm_packed.hpp
/// Runs the contractions of ../contraction_affine.hpp (convolutions, sums over constant
/// ranges) as GEMMs on the CPU. An operand whose subscripts are not plain has no matrix
/// layout in memory (`In(n, c, y + r, x + s)` reads each element for several (r, s)), so its
/// GEMM matrix is copied out first (im2col), per batch point and in column blocks that fit
/// packed_operand_budget_bytes(); plain operands are used in place as gemm.hpp does.

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

/// Copies rows [i0, i1) x columns [j0, j1) of an operand's GEMM matrix into out (row-major):
/// rows flatten the dims rdims, columns the dims cdims, every other dim stays at pt0.
/// Runs along the innermost column dim are copied as strided rows.
template <class T, class Bound>
void pack_operand(const Bound& x, const index_t* pt0, const int* rdims, int nr, const int* cdims,
                  int nc, index_t i0, index_t i1, index_t j0, index_t j1, const index_t* lo,
                  const index_t* hi, T* out) {
  const index_t w = j1 - j0;
  const int cin = nc > 0 ? cdims[nc - 1] : -1;
  const index_t cstep = cin < 0 ? 0 : x.step(cin);
  const index_t cext = cin < 0 ? 1 : hi[cin] - lo[cin];
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
      const T* s = x.ptr(pt);
      if (cstep == 1)
        std::copy(s, s + len, o);
      else
        for (index_t t = 0; t < len; ++t) o[t] = s[t * cstep];
      o += len;
      j += len;
      if (cin >= 0) pt[cin] = hi[cin] - 1;  // where the run ended (or j == j1)
    }
  }
  counters().packed_elements.fetch_add(long((i1 - i0) * w), std::memory_order_relaxed);
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
/// False, before anything is written, where a loop serves better: a packed operand whose
/// elements would be used fewer than packed_gemm_min_reuse times. (Subscripts are proven in
/// bounds when the map is built, constant ranges and affine subscripts being all there is;
/// were one not, the loop would check it point by point.)
template <int N, class Stmt, class WEnv, class REnv>
bool run_affine_contraction(const Stmt& st, const WEnv& wenv, const REnv& renv, const index_t* lo,
                            const index_t* hi) {
  using tr = affine_contraction_traits<N, Stmt>;
  using F = typename tr::form;
  using T = typename Stmt::value_type;
  constexpr int NE = tr::rank;
  constexpr affine_contraction_dims<NE> cd = tr::dims();
  const auto& body = tr::nest::body(st.rhs);
  const auto bc = st.lhs.bind(wenv, 0);
  const auto ba = F::a(body).bind(renv, 0);
  const auto bb = F::b(body).bind(renv, 0);
  if (bc.checked || ba.checked || bb.checked) return false;
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
  const index_t m = role_ext(cd.m, cd.nm), n = role_ext(cd.n, cd.nn);
  if ((cd.pack_b && m < packed_gemm_min_reuse) || (cd.pack_a && n < packed_gemm_min_reuse))
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
    as[d] = ba.step(d);
    bs[d] = bb.step(d);
  }
  // A packed operand's steps are its buffer's: [m x k] for A, [k x n] for B.
  if constexpr (cd.pack_a) packed_steps(cd.m, cd.nm, cd.k, cd.nk, elo, ehi, as);
  if constexpr (cd.pack_b) packed_steps(cd.k, cd.nk, cd.n, cd.nn, elo, ehi, bs);
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
  // Blocks of a packed operand's free side, so that its buffer fits the budget.
  const index_t block =
      std::max<index_t>(1, index_t(packed_operand_budget_bytes() / sizeof(T)) / K);
  const index_t mb = cd.pack_a ? std::min(M, block) : M;
  const index_t nb = cd.pack_b ? std::min(Nc, block) : Nc;
  std::vector<T> pa(static_cast<std::size_t>(cd.pack_a ? mb * K : 0));
  std::vector<T> pb(static_cast<std::size_t>(cd.pack_b ? K * nb : 0));
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
        pack_operand<T>(ba, pt, cd.m + fm, cd.nm - fm, cd.k + fk, cd.nk - fk, i0, i1, 0, K, elo,
                        ehi, pa.data());
        ap = pa.data();
        a_rs = K;
        a_cs = 1;
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
          pack_operand<T>(bb, pt, cd.k + fk, cd.nk - fk, cd.n + fn, cd.nn - fn, 0, K, j0, j1, elo,
                          ehi, pb.data());
          bp = pb.data();
          b_rs = j1 - j0;
          b_cs = 1;
        } else {
          b_cs = step(bs, g.n.inner);
          b_rs = step(bs, g.k.inner);
          bp = bb.ptr(pt) + j0 * b_cs;
        }
        const index_t c_rs = step(cs, g.m.inner), c_cs = step(cs, g.n.inner);
        gemm_strided<T>(i1 - i0, j1 - j0, K, alpha, ap, a_rs, a_cs, bp, b_rs, b_cs,
                        bc.ptr(pt) + i0 * c_rs + j0 * c_cs, c_rs, c_cs, overwrite);
      }
    }
  } while (next_loop_point(pt, g.loops, g.nloops, elo, ehi));
  return true;
}

}  // namespace workpart::detail
