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
auto add(const std::string& name, array<T, N>& x, array<T, N>& y) {
  if (x.shape() != y.shape())
    detail::refuse(name, "it adds '" + x.name() + "' " + detail::shape_text(x.shape().data(), N) +
                             " and '" + y.name() + "' " + detail::shape_text(y.shape().data(), N) +
                             "; give two arrays of one shape");
  return detail::elementwise(
      name, [](const auto& a, const auto& b) { return a + b; }, x, y);
}

}  // namespace workpart::nn
