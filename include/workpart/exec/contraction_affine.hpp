#pragma once
/// \file contraction_affine.hpp
/// Contractions beyond plain subscripts, recognised from a statement's types: operands with
/// affine subscripts (a convolution's `In(n, c, y + r, x + s)`) and sums over constant inner
/// ranges (`C(i, j) = wp::sum(wp::range(k, 0, K), A(i, k) * B(k, j))`, `wp::sum(A(i, wp::all)
/// * B(wp::all, j))`). Every space dim and every range index sorts into batch, m, n or k by
/// the operands that *use* it, as for plain contractions (contraction.hpp); an operand whose
/// subscripts are not plain is packed into a buffer laid out as its GEMM matrix (im2col)
/// before the GEMMs run (cpu/gemm_packed.hpp). CPU only: the device backend runs these
/// statements as its generic kernel.

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
/// by the m rows of A, A's by the n columns of B (a 1-D convolution, m = 1, stays a loop).
inline constexpr index_t packed_gemm_min_reuse = 8;

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

/// A contraction with packed operands over the extended space: the space's N dims and the
/// ranges' dims, NE slots in all (dims in neither are inactive and belong to no role).
template <int NE>
struct affine_contraction_dims : contraction_dims<NE> {
  bool pack_a = false, pack_b = false;  // the operand's subscripts are not plain
  bool zero_first = false;              // `=`: the left side is zeroed, then accumulated
};

template <int N, class Stmt>
struct affine_contraction_traits {
  using nest = sum_nest<typename Stmt::rhs_type>;
  using form = contraction_form<typename nest::body_type>;
  static constexpr int rank = N > nest::top_dim + 1 ? N : nest::top_dim + 1;  // NE

  static constexpr affine_contraction_dims<rank> dims() {
    affine_contraction_dims<rank> r;
    constexpr bool sum_form = nest::depth > 0;
    if constexpr (N == 0 || !form::matches || !nest::constant ||
                  !(Stmt::kind == combine::add || (Stmt::kind == combine::assign && sum_form))) {
      return r;
    } else {
      using C = typename Stmt::lhs_type;
      using A = typename form::a_type;
      using B = typename form::b_type;
      if constexpr (!gemm_types_v<C, A, B, typename form::scale_type> || !A::all_affine ||
                    !B::all_affine) {
        return r;
      } else {
        constexpr auto pc = plain_axes_of<C, rank>();
        constexpr auto pa = plain_axes_of<A, rank>();
        constexpr auto pb = plain_axes_of<B, rank>();
        // Plain operands and no ranges: contraction.hpp's form, already a GEMM.
        if (!pc.ok || (pa.ok && pb.ok && !sum_form)) return r;
        constexpr dim_mask ua = used_dims<A>(), ub = used_dims<B>();
        for (int d = 0; d < rank; ++d) {
          const bool active = d < N || (nest::dims & dim_bit(d));
          const bool c = pc.axis_of[d] >= 0, a = (ua & dim_bit(d)) != 0, b = (ub & dim_bit(d)) != 0;
          if (!active) {
            if (a || b) return r;  // (cannot happen: an operand uses only bound indices)
            continue;
          }
          // `=` over a space dim C does not hold would overwrite, not accumulate.
          if (Stmt::kind == combine::assign && d < N && !c) return r;
          if (!assign_role<rank>(r, d, c, a, b)) return r;
        }
        order_by_axis<rank>(r.m, r.nm, pc.axis_of);
        order_by_axis<rank>(r.n, r.nn, pc.axis_of);
        if (pa.ok)
          order_by_axis<rank>(r.k, r.nk, pa.axis_of);
        else if (pb.ok)
          order_by_axis<rank>(r.k, r.nk, pb.axis_of);
        r.pack_a = !pa.ok;
        r.pack_b = !pb.ok;
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
  const std::string packed = std::string(cd.pack_a ? "A" : "") +
                             (cd.pack_a && cd.pack_b ? " and " : "") + (cd.pack_b ? "B" : "");
  const std::string reuse = cd.pack_a && cd.pack_b ? "m or n" : cd.pack_b ? "m" : "n";
  if (cd.pack_a || cd.pack_b)
    s += "; " + packed + " packed as a matrix (im2col) per batch point, in blocks of at most " +
         std::to_string(packed_operand_budget_bytes() >> 10) + " KiB";
  if (cd.zero_first)
    s += "; `=` over the sums: C overwritten by the GEMM (zeroed first where a k index is left to "
         "a loop)";
  if (!cd.pack_a && !cd.pack_b) return s;
  return s + "; else, where " + reuse + " < " + std::to_string(packed_gemm_min_reuse) +
         " (a packed element used fewer times than that), the loop: ";
}

}  // namespace workpart::detail
