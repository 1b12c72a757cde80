#pragma once
/// \file ties_count.hpp
/// The kind of a max_into's (min_into's) count of winners per element (rules.hpp's
/// ties_count): its statement runs in `d<map>.ties`, a map of its own before the derivative
/// map (the plans combine the counts before the shares read them); nothing in or after it.

#include <tuple>

#include "../gradient_table.hpp"
#include "../rules.hpp"
#include "kind.hpp"

namespace workpart::detail {

template <class St>
struct adjoint_kind<ties_count<St>> {
  using C = ties_count<St>;
  static auto ties(const C& c) { return std::tuple{c.st}; }
  template <int N>
  static auto stores(const C&, derivative_site<N>&) {
    return std::tuple<>{};
  }
  template <class Fwd, int N>
  static auto maps_after(const C&, const Fwd&, derivative_site<N>&) {
    return std::tuple<>{};
  }
  static auto unpad(const C&, gradient_table&) { return std::tuple<>{}; }
  static void note_origin(C&, const void*) {}
  /// A count writes no gradient.
  static const void* gradient_origin(const C&, const gradient_table&) { return nullptr; }
};

}  // namespace workpart::detail
