#pragma once
/// \file contraction.hpp
/// Recognising the contraction "library node" from a statement's types, for every backend:
/// `C(..) += [s *] A(..) * B(..)` whose subscripts are all plain indices, its dimensions
/// sorted into batch (in C, A, B), m (C, A), n (C, B) and k (A, B). The CPU runs it as GEMMs
/// (cpu/gemm.hpp), the device backend as cuBLAS GEMMs (device/cublas.hpp).

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "../expr/map.hpp"
#include "../expr/padded.hpp"

namespace workpart::detail {

/// An operand a GEMM can read: an array read, or (for the packed contractions of
/// contraction_affine.hpp only) a padded read of one.
template <class X>
inline constexpr bool is_gemm_operand_v = is_access_v<X>;
template <class A>
inline constexpr bool is_gemm_operand_v<padded_node<A>> = true;

// ---- recognising the form from the types ----
/// `matches`: a product of two array reads (and a constant); `operands_match`: of two
/// reads either of which may be padded.
template <class R>
struct contraction_form {
  static constexpr bool matches = false;
  static constexpr bool operands_match = false;
};
template <class A, class B>
struct contraction_form<binary_node<op_mul, A, B>> {
  static constexpr bool matches = is_access_v<A> && is_access_v<B>;
  static constexpr bool operands_match = is_gemm_operand_v<A> && is_gemm_operand_v<B>;
  using scale_type = int;
  using a_type = A;
  using b_type = B;
  static const A& a(const binary_node<op_mul, A, B>& r) { return r.l; }
  static const B& b(const binary_node<op_mul, A, B>& r) { return r.r; }
  static double scale(const binary_node<op_mul, A, B>&) { return 1.0; }
};
template <class S, class A, class B>
struct contraction_form<binary_node<op_mul, scalar_node<S>, binary_node<op_mul, A, B>>> {
  using R = binary_node<op_mul, scalar_node<S>, binary_node<op_mul, A, B>>;
  static constexpr bool matches = is_access_v<A> && is_access_v<B>;
  static constexpr bool operands_match = is_gemm_operand_v<A> && is_gemm_operand_v<B>;
  using scale_type = S;
  using a_type = A;
  using b_type = B;
  static const A& a(const R& r) { return r.r.l; }
  static const B& b(const R& r) { return r.r.r; }
  static double scale(const R& r) { return double(r.l.v); }
};
template <class S, class A, class B>
struct contraction_form<binary_node<op_mul, binary_node<op_mul, scalar_node<S>, A>, B>> {
  using R = binary_node<op_mul, binary_node<op_mul, scalar_node<S>, A>, B>;
  static constexpr bool matches = is_access_v<A> && is_access_v<B>;
  static constexpr bool operands_match = is_gemm_operand_v<A> && is_gemm_operand_v<B>;
  using scale_type = S;
  using a_type = A;
  using b_type = B;
  static const A& a(const R& r) { return r.l.r; }
  static const B& b(const R& r) { return r.r; }
  static double scale(const R& r) { return double(r.l.l.v); }
};
template <class S, class A, class B>
struct contraction_form<binary_node<op_mul, binary_node<op_mul, A, B>, scalar_node<S>>> {
  using R = binary_node<op_mul, binary_node<op_mul, A, B>, scalar_node<S>>;
  static constexpr bool matches = is_access_v<A> && is_access_v<B>;
  static constexpr bool operands_match = is_gemm_operand_v<A> && is_gemm_operand_v<B>;
  using scale_type = S;
  using a_type = A;
  using b_type = B;
  static const A& a(const R& r) { return r.l.l; }
  static const B& b(const R& r) { return r.l.r; }
  static double scale(const R& r) { return double(r.r.v); }
};

/// For each space dimension, the axis of an access it subscripts plainly (-1: absent).
/// `ok` is false when an axis is not a plain index or one index subscripts two axes.
template <class Acc, int N>
struct plain_axes {
  int axis_of[N > 0 ? N : 1] = {};
  bool ok = true;
};
template <class Acc, int N>
constexpr plain_axes<Acc, N> plain_axes_of() {
  plain_axes<Acc, N> r;
  for (int d = 0; d < N; ++d) r.axis_of[d] = -1;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    constexpr affine_sig sigs[] = {Acc::template axis_sig<int(A)>()..., affine_sig{}};
    for (int a = 0; a < int(sizeof...(A)); ++a) {
      if (!sigs[a].is_plain() || sigs[a].plain_dim() >= N) {
        r.ok = false;
        continue;
      }
      const int d = sigs[a].plain_dim();
      if (r.axis_of[d] >= 0) r.ok = false;
      r.axis_of[d] = a;
    }
  }
  (std::make_index_sequence<Acc::array_type::rank>{});
  return r;
}

/// The dimension roles of a contraction in a space of rank N. A role may hold several
/// dimensions (attention's Q(b, s, h, d) += X(b, s, e) * W(e, h, d): m = {b, s}, n = {h, d}),
/// listed outermost first as the axes of C (m, n) or A (k) order them; at run time the
/// innermost of them that are contiguous in every operand fuse into one GEMM dimension and
/// the others join the batch loop.
template <int N>
struct contraction_dims {
  static constexpr int cap = N > 0 ? N : 1;
  bool ok = false;
  int m[cap] = {}, n[cap] = {}, k[cap] = {};
  int nm = 0, nn = 0, nk = 0;
  int batch[cap] = {};
  int nbatch = 0;
};

/// Puts dim d in its role by which of C, A and B use it; false for a dim in one operand alone
/// (or in none): then the statement is not a GEMM.
template <int N>
constexpr bool assign_role(contraction_dims<N>& r, int d, bool c, bool a, bool b) {
  if (c && a && b)
    r.batch[r.nbatch++] = d;
  else if (c && a)
    r.m[r.nm++] = d;
  else if (c && b)
    r.n[r.nn++] = d;
  else if (a && b)
    r.k[r.nk++] = d;
  else
    return false;
  return true;
}

/// Sorts dims[0, count) by the axis each has in an access (outermost axis first).
template <int N>
constexpr void order_by_axis(int* dims, int count, const int* axis_of) {
  for (int x = 1; x < count; ++x)
    for (int y = x; y > 0 && axis_of[dims[y - 1]] > axis_of[dims[y]]; --y) {
      const int t = dims[y];
      dims[y] = dims[y - 1];
      dims[y - 1] = t;
    }
}

/// Whether C += s * A * B can be a GEMM by its types: one element type, and an integer GEMM
/// only with an integer scale (0.5 * A * B on int arrays is computed in double by the loop,
/// as C++ would).
template <class C, class A, class B, class Scale>
inline constexpr bool gemm_types_v =
    std::is_same_v<typename C::value_type, typename A::value_type>&&
        std::is_same_v<typename C::value_type, typename B::value_type> &&
    (!std::is_integral_v<typename C::value_type> || std::is_integral_v<Scale>);

template <int N, class Stmt>
constexpr contraction_dims<N> contraction_of() {
  contraction_dims<N> r;
  using F = contraction_form<typename Stmt::rhs_type>;
  if constexpr (N == 0 || Stmt::kind != combine::add || !F::matches) {
    return r;
  } else {
    using C = typename Stmt::lhs_type;
    using A = typename F::a_type;
    using B = typename F::b_type;
    if constexpr (!gemm_types_v<C, A, B, typename F::scale_type>) {
      return r;
    } else {
      constexpr auto pc = plain_axes_of<C, N>();
      constexpr auto pa = plain_axes_of<A, N>();
      constexpr auto pb = plain_axes_of<B, N>();
      if (!pc.ok || !pa.ok || !pb.ok) return r;
      for (int d = 0; d < N; ++d) {
        const bool c = pc.axis_of[d] >= 0, a = pa.axis_of[d] >= 0, b = pb.axis_of[d] >= 0;
        if (!assign_role<N>(r, d, c, a, b)) return r;
      }
      order_by_axis<N>(r.m, r.nm, pc.axis_of);
      order_by_axis<N>(r.n, r.nn, pc.axis_of);
      order_by_axis<N>(r.k, r.nk, pa.axis_of);
      r.ok = true;
      return r;
    }
  }
}

template <int N, class Stmt>
inline constexpr bool is_contraction_v = contraction_of<N, Stmt>().ok;

/// One GEMM dimension of a role at run time: the innermost dims of the role that are
/// contiguous in every operand holding them, fused (extent and the innermost's steps); the
/// role's other dims are appended to `loops` (the batch loop).
struct fused_dim {
  index_t ext = 1;
  int inner = -1;  // the innermost dim (its steps are the fused dimension's), -1: no dim
};
/// xs, ys: the two operands' steps along every dim of the space.
/// The first of a role's dims that fuse: dims[first, count) are contiguous in both operands.
inline int fused_first(const int* dims, int count, const index_t* xs, const index_t* ys,
                       const index_t* lo, const index_t* hi) {
  if (count == 0) return 0;
  auto ext = [&](int d) { return hi[d] - lo[d]; };
  int first = count - 1;  // fuse dims[first .. count) while each outer one steps over the inner
  while (first > 0) {
    const int o = dims[first - 1], i = dims[first];
    if (xs[o] != xs[i] * ext(i) || ys[o] != ys[i] * ext(i)) break;
    --first;
  }
  return first;
}
inline fused_dim fuse_role(const int* dims, int count, const index_t* xs, const index_t* ys,
                           const index_t* lo, const index_t* hi, int* loops, int& nloops) {
  fused_dim f;
  if (count == 0) return f;
  auto ext = [&](int d) { return hi[d] - lo[d]; };
  const int first = fused_first(dims, count, xs, ys, lo, hi);
  for (int j = 0; j < first; ++j) loops[nloops++] = dims[j];
  f.inner = dims[count - 1];
  for (int j = first; j < count; ++j) f.ext *= ext(dims[j]);
  return f;
}

/// A contraction over a box as GEMMs, the same for every backend: the fused m, n and k
/// dimensions, and the dims left to loop over (batch, and role dims that did not fuse), in
/// the space's order (outer first).
struct gemm_layout {
  fused_dim m, n, k;
  int loops[max_dims] = {};
  int nloops = 0;
};
/// cs, as, bs: the steps of C, A and B along every dim of the space.
template <int N>
gemm_layout layout_gemm_steps(const contraction_dims<N>& cd, const index_t* cs, const index_t* as,
                              const index_t* bs, const index_t* lo, const index_t* hi) {
  gemm_layout g;
  for (int x = 0; x < cd.nbatch; ++x) g.loops[g.nloops++] = cd.batch[x];
  g.m = fuse_role(cd.m, cd.nm, cs, as, lo, hi, g.loops, g.nloops);
  g.n = fuse_role(cd.n, cd.nn, cs, bs, lo, hi, g.loops, g.nloops);
  g.k = fuse_role(cd.k, cd.nk, as, bs, lo, hi, g.loops, g.nloops);
  std::sort(g.loops, g.loops + g.nloops);
  return g;
}
template <int N, class C, class A, class B>
gemm_layout layout_gemm(const contraction_dims<N>& cd, const C& c, const A& a, const B& b,
                        const index_t* lo, const index_t* hi) {
  index_t cs[max_dims] = {}, as[max_dims] = {}, bs[max_dims] = {};
  for (int d = 0; d < N; ++d) {
    cs[d] = c.step(d);
    as[d] = a.step(d);
    bs[d] = b.step(d);
  }
  return layout_gemm_steps<N>(cd, cs, as, bs, lo, hi);
}
/// A bound operand's step along dim d, 0 for no dim (a role with no dims).
template <class Bound>
index_t step_along(const Bound& b, int d) {
  return d < 0 ? index_t(0) : b.step(d);
}
/// The next point of the first `count` loop dims (the last fastest); false after the last.
inline bool next_loop_point(index_t* pt, const int* loops, int count, const index_t* lo,
                            const index_t* hi) {
  for (int x = count - 1; x >= 0; --x) {
    const int d = loops[x];
    if (++pt[d] < hi[d]) return true;
    pt[d] = lo[d];
  }
  return false;
}

inline std::string dim_name(int d) { return d < 0 ? std::string("1") : "i" + std::to_string(d); }
/// A role's dims: "i3", "(i0,i1)" (fused where contiguous), or "1" (none).
inline std::string role_name(const int* dims, int count) {
  if (count == 0) return "1";
  if (count == 1) return dim_name(dims[0]);
  std::string s = "(";
  for (int j = 0; j < count; ++j) s += (j ? "," : "") + dim_name(dims[j]);
  return s + ")";
}

template <int N>
std::string contraction_text(const contraction_dims<N>& cd) {
  const std::string m = role_name(cd.m, cd.nm), n = role_name(cd.n, cd.nn),
                    k = role_name(cd.k, cd.nk);
  std::string s =
      "gemm: C[" + m + " x " + n + "] += A[" + m + " x " + k + "] * B[" + k + " x " + n + "]";
  if (cd.nm > 1 || cd.nn > 1 || cd.nk > 1)
    s += " (grouped indices fused where contiguous, else batched)";
  if (cd.nbatch == 0) return s + ", no batch";
  s += ", batched over";
  for (int b = 0; b < cd.nbatch; ++b) s += " " + dim_name(cd.batch[b]);
  return s;
}
template <int N, class Stmt>
std::string contraction_text() {
  return contraction_text<N>(contraction_of<N, Stmt>());
}

}  // namespace workpart::detail
