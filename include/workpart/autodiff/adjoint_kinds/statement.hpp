#pragma once
/// \file statement.hpp
/// The kind of a plain derivative statement (`dX(g(p)) += seed`, rules.hpp): it runs in the
/// derivative map as itself, or as its '=' form where that may cover its buffer
/// (with_assign_form, zeroing elision); nothing before or after it.

#include <tuple>

#include "../../expr/statement.hpp"
#include "../derivative_maps.hpp"
#include "../gradient_table.hpp"
#include "kind.hpp"

namespace workpart::detail {

template <class K, class L, class R>
struct adjoint_kind<statement<K, L, R>> {
  using C = statement<K, L, R>;
  static auto ties(const C&) { return std::tuple<>{}; }
  template <int N>
  static auto stores(const C& c, derivative_site<N>&) {
    return with_assign_form<N>(c);
  }
  template <class Fwd, int N>
  static auto maps_after(const C&, const Fwd&, derivative_site<N>&) {
    return std::tuple<>{};
  }
  static auto unpad(const C&, gradient_table&) { return std::tuple<>{}; }
  static void note_origin(C&, const void*) {}
  static const void* gradient_origin(const C& c, const gradient_table& grads) {
    return grads.origin_of(c.lhs.arr);
  }
};

}  // namespace workpart::detail
