#pragma once
/// \file activation.hpp
/// Elementwise activations over an array of any rank: `wp::nn::relu(name, x)`.

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

namespace detail {
/// The space of an array's shape, and f(x(i...), more(i...)...) over it (arrays of x's
/// shape) as the map `name` writing y.
template <class T, int N, class F, class... More>
auto elementwise(const std::string& name, F f, array<T, N>& x, More&... more) {
  layer_arrays a;
  auto& y = a.make<T, N>(name + ".y", x.shape());
  const auto sp = workpart::detail::space_of(x);
  auto m = [&]<std::size_t... D>(std::index_sequence<D...>) {
    return map(name, sp,
               y(index<int(D)>{}...) = f(x(index<int(D)>{}...), more(index<int(D)>{}...)...));
  }
  (std::make_index_sequence<std::size_t(N)>{});
  return make_layer(program_of(a, m), y, std::tuple<>{});
}
}  // namespace detail

/// y = max(x, 0); its gradient at x = 0 is 0 (wp::max's rule gives a tie to the right
/// argument, here the constant), as PyTorch's.
template <class T, int N>
layer_of<T, N> relu(const std::string& name, array<T, N>& x) {
  return detail::elementwise(
      name, [](const auto& e) { return workpart::max(e, T(0)); }, x);
}

/// y = tanh(x).
template <class T, int N>
layer_of<T, N> tanh(const std::string& name, array<T, N>& x) {
  return detail::elementwise(
      name, [](const auto& e) { return workpart::tanh(e); }, x);
}

/// y = x (1 + erf(x / sqrt 2)) / 2: GELU, exact (not the tanh approximation).
template <class T, int N>
layer_of<T, N> gelu(const std::string& name, array<T, N>& x) {
  return detail::elementwise(
      name,
      [](const auto& e) {
        return T(0.5) * e * (T(1) + workpart::erf(e * T(0.70710678118654752440)));
      },
      x);
}

/// The instances compiled once in workpart::nn_compiled, ranks 2 to 4 (see layer.hpp).
#define WORKPART_NN_ACTIVATION_INSTANCES(EXTERN, T)                            \
  EXTERN template layer_of<T, 2> relu<T, 2>(const std::string&, array<T, 2>&); \
  EXTERN template layer_of<T, 3> relu<T, 3>(const std::string&, array<T, 3>&); \
  EXTERN template layer_of<T, 4> relu<T, 4>(const std::string&, array<T, 4>&); \
  EXTERN template layer_of<T, 2> tanh<T, 2>(const std::string&, array<T, 2>&); \
  EXTERN template layer_of<T, 3> tanh<T, 3>(const std::string&, array<T, 3>&); \
  EXTERN template layer_of<T, 4> tanh<T, 4>(const std::string&, array<T, 4>&); \
  EXTERN template layer_of<T, 2> gelu<T, 2>(const std::string&, array<T, 2>&); \
  EXTERN template layer_of<T, 3> gelu<T, 3>(const std::string&, array<T, 3>&); \
  EXTERN template layer_of<T, 4> gelu<T, 4>(const std::string&, array<T, 4>&);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_ACTIVATION_INSTANCES)

}  // namespace workpart::nn
