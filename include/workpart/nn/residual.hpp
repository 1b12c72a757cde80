#pragma once
/// \file residual.hpp
/// `wp::nn::add(name, x, y)`: the elementwise sum of two arrays of one shape -- a residual
/// connection (ResNet's shortcut, a Transformer's x + attention(x)).

#include <string>

#include "activation.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// z = x + y over their common shape (any rank): the map `<name>`, output `<name>.y`. Both
/// gradients are z's (wp::backward adds them into x's and y's, whatever else reads them).
template <class T, int N>
layer_of<T, N> add(const std::string& name, array<T, N>& x, array<T, N>& y) {
  if (x.shape() != y.shape())
    detail::refuse(name, "it adds '" + x.name() + "' " + detail::shape_text(x.shape().data(), N) +
                             " and '" + y.name() + "' " + detail::shape_text(y.shape().data(), N) +
                             "; give two arrays of one shape");
  return detail::elementwise(
      name, [](const auto& a, const auto& b) { return a + b; }, x, y);
}

/// The instances compiled once in workpart::nn_compiled, ranks 2 to 4 (see layer.hpp).
#define WORKPART_NN_RESIDUAL_INSTANCES(EXTERN, T)                                           \
  EXTERN template layer_of<T, 2> add<T, 2>(const std::string&, array<T, 2>&, array<T, 2>&); \
  EXTERN template layer_of<T, 3> add<T, 3>(const std::string&, array<T, 3>&, array<T, 3>&); \
  EXTERN template layer_of<T, 4> add<T, 4>(const std::string&, array<T, 4>&, array<T, 4>&);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_RESIDUAL_INSTANCES)

}  // namespace workpart::nn
