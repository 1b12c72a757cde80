#pragma once
/// \file inner_reduction.hpp
/// The kind of an inner reduction's derivative (rules.hpp's inner_reduction_adjoint,
/// autodiff/inner_reduction.hpp): the derivative map stores its seed per point (and, for
/// max_of / min_of, its result) in arrays made here, and its maps follow (`<map>.sum`, before
/// it `<map>.sum.ties` for max_of / min_of), where its body's terms are contributions again.

#include <tuple>

#include "../derivative_maps.hpp"
#include "../gradient_table.hpp"
#include "../inner_reduction.hpp"
#include "../rules.hpp"
#include "kind.hpp"

namespace workpart::detail {

template <class Red, int D, class Lo, class Hi, class Body, class S>
struct adjoint_kind<inner_reduction_adjoint<Red, D, Lo, Hi, Body, S>> {
  using C = inner_reduction_adjoint<Red, D, Lo, Hi, Body, S>;
  static auto ties(const C&) { return std::tuple<>{}; }
  template <int N>
  static auto stores(C& c, derivative_site<N>& site) {
    return inner_reduction_stores(site.sp, site.stored, c, site.grads, site.sums++);
  }
  template <class Fwd, int N>
  static auto maps_after(const C& c, const Fwd& fwd, derivative_site<N>& site) {
    return inner_reduction_maps(fwd, site.sp, site.name, c, site.grads, site.sums++);
  }
  static auto unpad(const C&, gradient_table&) { return std::tuple<>{}; }
  /// The arrays it makes serve the forward array's statement (for pruning).
  static void note_origin(C& c, const void* origin) { c.origin = origin; }
  /// None in the derivative map: its terms write in its own maps, checked there.
  static const void* gradient_origin(const C&, const gradient_table&) { return nullptr; }
};

}  // namespace workpart::detail
