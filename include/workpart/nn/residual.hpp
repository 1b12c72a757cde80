#pragma once
/// \file residual.hpp
/// `wp::nn::add(name, x, y)`: the elementwise sum of two arrays of one shape -- a residual
/// connection (ResNet's shortcut, a Transformer's x + attention(x)).

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// z = x + y over their common shape (any rank): the map `<name>`, output `<name>.y`. Both
/// gradients are z's (wp::backward adds them into x's and y's, whatever else reads them).
template <class T, int N>
auto add(const std::string& name, array<T, N>& x, array<T, N>& y) {
  if (x.shape() != y.shape()) {
    std::string sx, sy;
    for (int d = 0; d < N; ++d) {
      sx += (d ? ", " : "") + std::to_string(x.extent(d));
      sy += (d ? ", " : "") + std::to_string(y.extent(d));
    }
    detail::refuse(name, "it adds '" + x.name() + "' (" + sx + ") and '" + y.name() + "' (" + sy +
                             "); give two arrays of one shape");
  }
  detail::layer_arrays a;
  auto& z = a.make<T, N>(name + ".y", x.shape());
  const auto sp = workpart::detail::space_of(x);
  auto m = [&]<std::size_t... D>(std::index_sequence<D...>) {
    return map(name, sp, z(index<int(D)>{}...) = x(index<int(D)>{}...) + y(index<int(D)>{}...));
  }
  (std::make_index_sequence<std::size_t(N)>{});
  return detail::make_layer(detail::program_of(a, m), z, std::tuple<>{});
}

}  // namespace workpart::nn
