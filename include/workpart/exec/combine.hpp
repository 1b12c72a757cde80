#pragma once
/// \file combine.hpp
/// How a statement's value goes into its left-hand element (`=`, `+=`, `max_into`,
/// `min_into`), on the host and in device kernels alike.

#include <utility>

#include "../expr/access.hpp"
#include "../expr/ops.hpp"

namespace workpart::detail {

template <combine K, class T, class V>
WORKPART_HD WORKPART_ALWAYS_INLINE T combine_value(T old, V v) {
  if constexpr (K == combine::assign)
    return static_cast<T>(v);
  else if constexpr (K == combine::add)
    return static_cast<T>(old + v);
  else if constexpr (K == combine::max)
    return static_cast<T>(op_max::apply(old, v));
  else
    return static_cast<T>(op_min::apply(old, v));
}

/// The dimensions the left side maps one-to-one: those that subscript some left axis alone.
/// Points that differ along any of them write different elements, so they can run in
/// parallel; the other dimensions run in order within one thread (or one device thread).
template <class Lhs>
constexpr dim_mask lhs_owned_dims() {
  dim_mask owned = 0;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    constexpr affine_sig sigs[] = {Lhs::template axis_sig<int(A)>()..., affine_sig{}};
    for (int a = 0; a < int(sizeof...(A)); ++a)
      if (sigs[a].present != 0 && (sigs[a].present & (sigs[a].present - 1)) == 0)
        owned |= sigs[a].present;
  }
  (std::make_index_sequence<Lhs::array_type::rank>{});
  return owned;
}

}  // namespace workpart::detail
