#pragma once
/// \file concat.hpp
/// `wp::nn::concat(name, x1, x2, ...)`: arrays joined along their second axis -- the channels
/// of (batch, channels, height, width), the features of (batch, features) -- as an Inception
/// module joins its branches.

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

namespace detail {
/// Index D of a copy into the second axis from `offset` on: i1 + offset there, i_D elsewhere.
template <std::size_t D>
auto shifted_index(index_t offset) {
  if constexpr (D == 1)
    return offset + index<1>{};
  else
    return index<int(D)>{};
}

/// The map `name` copying x into y's second axis from `offset` on.
template <class T, int N>
auto copy_at(const std::string& name, array<T, N>& y, array<T, N>& x, index_t offset) {
  return [&]<std::size_t... D>(std::index_sequence<D...>) {
    // y(i0, offset + i1, i2, ...) = x(i0, i1, i2, ...)
    return map(name, workpart::detail::space_of(x),
               y(shifted_index<D>(offset)...) = x(index<int(D)>{}...));
  }
  (std::make_index_sequence<std::size_t(N)>{});
}

/// concat over its inputs as a run-time list: what every arity of wp::nn::concat compiles to.
template <class T, int N>
layer_of<T, N> concat_inputs(const std::string& name, const std::vector<array<T, N>*>& xs) {
  array<T, N>& first = *xs.front();
  auto shape = first.shape();
  shape[1] = 0;
  for (const array<T, N>* x : xs) {
    for (int d = 0; d < N; ++d)
      if (d != 1 && x->extent(d) != first.extent(d))
        refuse(name, "it joins '" + first.name() + "' " + shape_text(first.shape().data(), N) +
                         " and '" + x->name() + "' " + shape_text(x->shape().data(), N) +
                         " along the second axis; every other extent must match");
    shape[1] += x->extent(1);
  }
  layer_arrays a;
  auto& y = a.make<T, N>(name + ".y", shape);
  workpart::program p;
  index_t offset = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    p.add(copy_at(name + "." + std::to_string(k + 1), y, *xs[k], offset));
    offset += xs[k]->extent(1);
  }
  p.keep(a.owned);
  return make_layer(std::move(p), y, std::tuple<>{});
}

}  // namespace detail

/// y = x1, x2, ... along the second axis: y(i0, o_k + i1, i2, ...) = x_k(i0, i1, i2, ...), o_k
/// the extents before x_k. Maps `<name>.1` .. `<name>.<count>`, one per input (each writes its
/// part of y: a plan moves each part from where its map ran), output `<name>.y`. Every other
/// extent must be the same in every input. Each input's gradient is its part of y's.
template <class T, int N, class... More>
layer_of<T, N> concat(const std::string& name, array<T, N>& first, More&... more) {
  static_assert(N >= 2, "wp::nn::concat joins arrays along their second axis: give rank 2 or more");
  static_assert((std::is_same_v<More, array<T, N>> && ...),
                "wp::nn::concat: give arrays of one element type and rank");
  return detail::concat_inputs<T, N>(name, {&first, &more...});
}

/// The instances compiled once in workpart::nn_compiled, ranks 2 to 4 (see layer.hpp).
#define WORKPART_NN_CONCAT_INSTANCES(EXTERN, T)                                                 \
  EXTERN template layer_of<T, 2> detail::concat_inputs<T, 2>(const std::string&,                \
                                                             const std::vector<array<T, 2>*>&); \
  EXTERN template layer_of<T, 3> detail::concat_inputs<T, 3>(const std::string&,                \
                                                             const std::vector<array<T, 3>*>&); \
  EXTERN template layer_of<T, 4> detail::concat_inputs<T, 4>(const std::string&,                \
                                                             const std::vector<array<T, 4>*>&);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_CONCAT_INSTANCES)

}  // namespace workpart::nn
