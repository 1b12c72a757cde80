#pragma once
/// \file reshape.hpp
/// `wp::nn::flatten(name, x)`: x (batch, channels, height, width) as (batch, features), for
/// a linear layer after convolutions.

#include <string>

#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// y(n, (c H + h) W + w) = x(n, c, h, w): a copy (map `<name>`), row-major as PyTorch's.
template <class T>
layer_of<T, 2> flatten(const std::string& name, array<T, 4>& x) {
  const index_t N = x.extent(0), C = x.extent(1), H = x.extent(2), W = x.extent(3);
  detail::layer_arrays a;
  auto& y = a.make<T, 2>(name + ".y", {N, C * H * W});
  auto [n, c, h, w] = indices<4>();
  auto p = detail::program_of(
      a, map(name, space(N, C, H, W), y(n, (H * W) * c + W * h + w) = x(n, c, h, w)));
  return detail::make_layer(std::move(p), y, std::tuple<>{});
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_RESHAPE_INSTANCES(EXTERN, T) \
  EXTERN template layer_of<T, 2> flatten<T>(const std::string&, array<T, 4>&);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_RESHAPE_INSTANCES)

}  // namespace workpart::nn
