#pragma once
/// \file contraction_affine.hpp
/// Contractions beyond plain subscripts, recognised from a statement's types: operands with
/// affine subscripts (a convolution's `In(n, c, y + r, x + s)`, its grouped output
/// `Out(n, Kg * g + k, y, x)`), padded reads (`wp::padded(In, 0)(...)`), and sums over
/// constant inner ranges (`C(i, j) = wp::sum(wp::range(k, 0, K), A(i, k) * B(k, j))`,
/// `wp::sum(A(i, wp::all) * B(wp::all, j))`). Every space dim and every range index sorts
/// into batch, m, n or k by the operands that *use* it, as for plain contractions
/// (contraction.hpp). An operand that is padded or overlaps itself as a matrix (one axis
/// subscripted by dims of two roles) is packed into a buffer laid out as its GEMM matrix
/// (im2col) before the GEMMs run, an overlapping left side is added from one (col2im), the
/// others are used in place by their strides (cpu/gemm_packed.hpp). CPU only: the device
/// backend runs these statements as its generic kernel.

#include <cstddef>
#include <string>
#include <type_traits>

#include "../expr/reduce.hpp"
#include "contraction.hpp"

namespace workpart::detail {

/// Nested `wp::sum` over constant ranges around a body: the ranges' dims and the body.
template <class R>
struct sum_nest {
  using body_type = R;
  static constexpr int depth = 0;
  static constexpr dim_mask dims = 0;
  static constexpr int top_dim = -1;  // the highest range dim
  static constexpr bool constant = true;
  static const R& body(const R& r) { return r; }
  static void bounds(const R&, index_t*, index_t*) {}
};
template <int D, class Lo, class Hi, class Body>
struct sum_nest<reduce_node<red_sum, D, Lo, Hi, Body>> {
  using node = reduce_node<red_sum, D, Lo, Hi, Body>;
  using inner = sum_nest<Body>;
  using body_type = typename inner::body_type;
  static constexpr int depth = inner::depth + 1;
  static constexpr dim_mask dims = inner::dims | dim_bit(D);
  static constexpr int top_dim = D > inner::top_dim ? D : inner::top_dim;
  static constexpr bool constant_bound() {
    if constexpr (is_affine_v<Lo> && is_affine_v<Hi>)
      return Lo::sig.present == 0 && Hi::sig.present == 0;
    else
      return false;
  }
  static constexpr bool constant = constant_bound() && inner::constant;
  static const body_type& body(const node& r) { return inner::body(r.body); }
  /// The ranges' bounds into lo[D], hi[D] (constant: the affine forms' offsets).
  static void bounds(const node& r, index_t* lo, index_t* hi) {
    if constexpr (constant) {
      lo[D] = r.lo.offset;
      hi[D] = r.hi.offset;
      inner::bounds(r.body, lo, hi);
    }
  }
};

/// A packed operand's buffer holds at most this many bytes, larger ones go in blocks (set
/// smaller by tests, to cover the blocks).
inline std::size_t& packed_operand_budget_bytes() {
  static std::size_t bytes = std::size_t(16) << 20;
  return bytes;
}
/// A packed operand pays for its copy when each element is used at least this often: B's
/// by the m rows of A, A's by the n columns of B (a 1-D convolution, m = 1, stays a loop); a
/// buffered C when each element sums this many terms. Only against a loop whose rows run as
/// vectors of at least packed_gemm_long_row elements: shorter rows (along a filter's few taps,
/// as in every convolution layer's maps) pay the loop's per-row work every few elements, and
/// scalar rows (a padded read's, checked point by point) a dozen instructions a point; against
/// either the GEMM wins at any reuse.
inline constexpr index_t packed_gemm_min_reuse = 8;
inline constexpr index_t packed_gemm_long_row = 32;

/// The dims an access's subscripts use (all affine).
template <class Acc>
constexpr dim_mask used_dims() {
  dim_mask m = 0;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    ((m |= Acc::template axis_sig<int(A)>().present), ...);
  }
  (std::make_index_sequence<Acc::array_type::rank>{});
  return m;
}

/// For each dim, the first axis of an access whose subscript uses it (-1: none): the order
/// of a role's dims, outermost first, as plain_axes_of gives it for plain subscripts.
template <class Acc, int N>
constexpr plain_axes<Acc, N> first_axes_of() {
  plain_axes<Acc, N> r;
  for (int d = 0; d < N; ++d) r.axis_of[d] = -1;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    constexpr affine_sig sigs[] = {Acc::template axis_sig<int(A)>()..., affine_sig{}};
    for (int a = int(sizeof...(A)) - 1; a >= 0; --a)
      for (int d = 0; d < N; ++d)
        if (sigs[a].uses(d)) r.axis_of[d] = a;
  }
  (std::make_index_sequence<Acc::array_type::rank>{});
  return r;
}

/// An operand of a packed contraction: the array read, and whether it is padded (read as
/// its fill where the subscripts leave the array).
template <class X>
struct gemm_operand_of {
  using access_type = X;
  static constexpr bool padded = false;
};
template <class A>
struct gemm_operand_of<padded_node<A>> {
  using access_type = A;
  static constexpr bool padded = true;
};

/// A contraction with packed operands over the extended space: the space's N dims and the
/// ranges' dims, NE slots in all (dims in neither are inactive and belong to no role).
template <int NE>
struct affine_contraction_dims : contraction_dims<NE> {
  bool pack_a = false, pack_b = false;  // the operand is copied out as its GEMM matrix
  bool pack_c = false;                  // the GEMM goes to a buffer, then is added into C
  bool zero_first = false;              // `=`: the left side is zeroed, then accumulated
};

/// Whether one axis of an access subscripts dims of two GEMM roles (m, n or k; batch dims
/// aside): then the access's GEMM matrix overlaps itself (a convolution's input
/// `x(n, c, y + r, x + s)`: y in m, r in k), and no strides describe it.
template <class Acc, int NE>
constexpr bool mixes_roles(const affine_contraction_dims<NE>& r) {
  int role[NE > 0 ? NE : 1] = {};  // 0: batch or inactive, 1: m, 2: n, 3: k
  for (int x = 0; x < r.nm; ++x) role[r.m[x]] = 1;
  for (int x = 0; x < r.nn; ++x) role[r.n[x]] = 2;
  for (int x = 0; x < r.nk; ++x) role[r.k[x]] = 3;
  bool mixed = false;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    constexpr affine_sig sigs[] = {Acc::template axis_sig<int(A)>()..., affine_sig{}};
    for (int a = 0; a < int(sizeof...(A)); ++a) {
      int seen = 0;
      for (int d = 0; d < NE; ++d)
        if (sigs[a].uses(d) && role[d] != 0) {
          if (seen != 0 && seen != role[d]) mixed = true;
          seen = role[d];
        }
    }
  }
  (std::make_index_sequence<Acc::array_type::rank>{});
  return mixed;
}

template <int N, class Stmt>
struct affine_contraction_traits {
  using nest = sum_nest<typename Stmt::rhs_type>;
  using form = contraction_form<typename nest::body_type>;
  static constexpr int rank = N > nest::top_dim + 1 ? N : nest::top_dim + 1;  // NE

  static constexpr affine_contraction_dims<rank> dims() {
    affine_contraction_dims<rank> r;
    constexpr bool sum_form = nest::depth > 0;
    if constexpr (N == 0 || !form::operands_match || !nest::constant ||
                  !(Stmt::kind == combine::add || (Stmt::kind == combine::assign && sum_form))) {
      return r;
    } else {
      using C = typename Stmt::lhs_type;
      using OA = gemm_operand_of<typename form::a_type>;
      using OB = gemm_operand_of<typename form::b_type>;
      using A = typename OA::access_type;
      using B = typename OB::access_type;
      if constexpr (!gemm_types_v<C, A, B, typename form::scale_type> || !C::all_affine ||
                    !A::all_affine || !B::all_affine) {
        return r;
      } else {
        constexpr bool plain_c = plain_axes_of<C, rank>().ok;
        constexpr bool plain_a = plain_axes_of<A, rank>().ok && !OA::padded;
        constexpr bool plain_b = plain_axes_of<B, rank>().ok && !OB::padded;
        // Plain operands and no ranges: contraction.hpp's form, already a GEMM.
        if (plain_c && plain_a && plain_b && !sum_form) return r;
        // `=` writes C through the GEMM: only where each point of C is one element.
        if (Stmt::kind == combine::assign && !plain_c) return r;
        constexpr auto fc = first_axes_of<C, rank>();
        constexpr auto fa = first_axes_of<A, rank>();
        constexpr auto fb = first_axes_of<B, rank>();
        constexpr dim_mask uc = used_dims<C>(), ua = used_dims<A>(), ub = used_dims<B>();
        for (int d = 0; d < rank; ++d) {
          const bool active = d < N || (nest::dims & dim_bit(d));
          const bool c = (uc & dim_bit(d)) != 0, a = (ua & dim_bit(d)) != 0,
                     b = (ub & dim_bit(d)) != 0;
          if (!active) {
            if (a || b) return r;  // (cannot happen: an operand uses only bound indices)
            continue;
          }
          // `=` over a space dim C does not hold would overwrite, not accumulate.
          if (Stmt::kind == combine::assign && d < N && !c) return r;
          if (!assign_role<rank>(r, d, c, a, b)) return r;
        }
        // An operand is used in place (its strides) unless it is padded or overlaps itself
        // as a matrix; then it is packed (im2col). C that overlaps itself (a convolution's
        // input gradient, `dx(n, c, y + r, x + s) += ...`) is added from a buffer (col2im).
        r.pack_a = OA::padded || (!plain_a && mixes_roles<A, rank>(r));
        r.pack_b = OB::padded || (!plain_b && mixes_roles<B, rank>(r));
        r.pack_c = !plain_c && mixes_roles<C, rank>(r);
        // Each role in the order of the operand used in place beside it (C, else A or B).
        order_by_axis<rank>(r.m, r.nm, r.pack_c && !r.pack_a ? fa.axis_of : fc.axis_of);
        order_by_axis<rank>(r.n, r.nn, r.pack_c && !r.pack_b ? fb.axis_of : fc.axis_of);
        order_by_axis<rank>(r.k, r.nk, !r.pack_a || r.pack_b ? fa.axis_of : fb.axis_of);
        r.zero_first = Stmt::kind == combine::assign;
        r.ok = true;
        return r;
      }
    }
  }
};

/// Whether a statement is a contraction with packed operands or constant sum ranges (and
/// not one contraction.hpp already recognises).
template <int N, class Stmt>
inline constexpr bool is_affine_contraction_v =
    !is_contraction_v<N, Stmt> && affine_contraction_traits<N, Stmt>::dims().ok;

template <int N, class Stmt>
std::string affine_contraction_text() {
  using tr = affine_contraction_traits<N, Stmt>;
  constexpr auto cd = tr::dims();
  std::string s = contraction_text<tr::rank>(cd);
  using form = typename tr::form;
  const bool pad_a = gemm_operand_of<typename form::a_type>::padded;
  const bool pad_b = gemm_operand_of<typename form::b_type>::padded;
  const std::string packed = std::string(cd.pack_a ? "A" : "") +
                             (cd.pack_a && cd.pack_b ? " and " : "") + (cd.pack_b ? "B" : "");
  std::string reuse = cd.pack_a && cd.pack_b ? "m or n" : cd.pack_b ? "m" : cd.pack_a ? "n" : "";
  if (cd.pack_c) reuse += std::string(reuse.empty() ? "" : " or ") + "k";
  if (cd.pack_a || cd.pack_b)
    s += "; " + packed + " packed as a matrix (im2col) per batch point" +
         (pad_a || pad_b ? " (the padded read's fill where it leaves the array)" : "") +
         ", in blocks of at most " + std::to_string(packed_operand_budget_bytes() >> 10) + " KiB";
  if (cd.pack_c)
    s += "; C overlaps itself as a matrix: the GEMM goes to a buffer, added into C (col2im)";
  if (cd.zero_first)
    s += "; `=` over the sums: C overwritten by the GEMM (zeroed first where a k index is left to "
         "a loop)";
  if (!cd.pack_a && !cd.pack_b && !cd.pack_c) return s;
  const char* why = cd.pack_a || cd.pack_b
                        ? (cd.pack_c ? " (a packed element used, or a buffered one summed, fewer "
                                       "times than that)"
                                     : " (a packed element used fewer times than that)")
                        : " (a buffered element summed fewer times than that)";
  return s + "; else, where " + reuse + " < " + std::to_string(packed_gemm_min_reuse) + why +
         " and the loop's rows are vectors of " + std::to_string(packed_gemm_long_row) +
         " elements or more, the loop: ";
}

}  // namespace workpart::detail
