#pragma once
/// \file padded.hpp
/// The kind of a padded read's contribution (rules.hpp's padded_adjoint,
/// padded_gradient.hpp): it runs in the derivative map as `dX.padded(g(p) - lo) += seed`
/// (padded_write, which makes dX.padded), and `unpad.dX.padded` adds the part over X into dX
/// after the maps of that derivative.

#include <array>
#include <string>
#include <tuple>

#include "../../core/array.hpp"
#include "../../core/space.hpp"
#include "../derivative_maps.hpp"
#include "../gradient_table.hpp"
#include "../padded_gradient.hpp"
#include "../rules.hpp"
#include "kind.hpp"

namespace workpart::detail {

template <class A, class S>
struct adjoint_kind<padded_adjoint<A, S>> {
  using C = padded_adjoint<A, S>;
  static auto ties(const C&) { return std::tuple<>{}; }
  template <int N>
  static auto stores(C& c, derivative_site<N>& site) {
    return padded_write(c, site.sp, site.grads);
  }
  template <class Fwd, int N>
  static auto maps_after(const C&, const Fwd&, derivative_site<N>&) {
    return std::tuple<>{};
  }
  static auto unpad(const C& c, gradient_table& grads) {
    const auto sp = space_of(*c.acc.arr);
    const std::string& padded =
        static_cast<array<typename A::value_type, A::array_type::rank>*>(c.grad)->name();
    return std::tuple{
        derivative_map("unpad." + padded, sp, std::tuple{unpad_statement(c, grads)}, grads)};
  }
  static void note_origin(C&, const void*) {}
  /// X's: the read's gradient is X's, through dX.padded.
  static const void* gradient_origin(const C& c, const gradient_table&) {
    return static_cast<const void*>(c.acc.arr);
  }
};

}  // namespace workpart::detail
