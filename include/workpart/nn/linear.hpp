#pragma once
/// \file linear.hpp
/// `wp::nn::linear(name, x, out_features)`: y(b, o) = bias(o) + sum_k x(b, k) W(k, o); over a
/// sequence x (batch, positions, in_features), the same weights at every position (a
/// Transformer's projections and feed-forward layers).

#include <cmath>
#include <string>

#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

namespace detail {
/// A fully connected layer's weights W (in, out) and bias b (out) with their gradients,
/// initialised uniform in +-1/sqrt(in) from their names.
template <class T>
struct linear_params {
  array<T, 2>&W, &dW;
  array<T, 1>&b, &db;
  linear_params(layer_arrays& a, const std::string& name, index_t I, index_t O)
      : W(a.make<T, 2>(name + ".W", {I, O})),
        dW(a.make<T, 2>("d" + name + ".W", {I, O})),
        b(a.make<T, 1>(name + ".b", {O})),
        db(a.make<T, 1>("d" + name + ".b", {O})) {
    init_uniform(W, 1 / std::sqrt(double(I)));
    init_uniform(b, 1 / std::sqrt(double(I)));
  }
  auto params() const { return std::tuple{wrt(W, dW), wrt(b, db)}; }
};
/// What a fully connected layer refuses: no outputs, or an input without features.
inline void check_linear(const std::string& name, const std::string& x, index_t I, index_t O) {
  if (O < 1) refuse(name, "out_features must be at least 1");
  if (I < 1) refuse(name, "its input '" + x + "' has no features");
}
}  // namespace detail

/// A fully connected layer over x (batch, in_features): maps `<name>.bias` (y = bias) and
/// `<name>` (y += x W over (batch, out, in): the local GEMM path). Parameters `<name>.W`
/// (in, out) and `<name>.b` (out), initialised uniform in +-1/sqrt(in) from their names.
template <class T>
layer_of<T, 2, 2, 1> linear(const std::string& name, array<T, 2>& x, index_t out_features) {
  const index_t B = x.extent(0), I = x.extent(1), O = out_features;
  detail::check_linear(name, x.name(), I, O);
  detail::layer_arrays a;
  detail::linear_params<T> w(a, name, I, O);
  auto& y = a.make<T, 2>(name + ".y", {B, O});
  auto [i, j, k] = indices<3>();
  auto p = detail::program_of(a, map(name + ".bias", space(B, O), y(i, j) = w.b(j)),
                              map(name, space(B, O, I), y(i, j) += x(i, k) * w.W(k, j)));
  return detail::make_layer(std::move(p), y, w.params());
}

/// The same layer over a sequence x (batch, positions, in_features): y(b, s, o) = bias(o) +
/// sum_k x(b, s, k) W(k, o). Maps `<name>.bias` and `<name>` (over (batch, positions, out,
/// in)); the same parameters.
template <class T>
layer_of<T, 3, 2, 1> linear(const std::string& name, array<T, 3>& x, index_t out_features) {
  const index_t B = x.extent(0), S = x.extent(1), I = x.extent(2), O = out_features;
  detail::check_linear(name, x.name(), I, O);
  detail::layer_arrays a;
  detail::linear_params<T> w(a, name, I, O);
  auto& y = a.make<T, 3>(name + ".y", {B, S, O});
  auto [i, s, j, k] = indices<4>();
  auto p = detail::program_of(a, map(name + ".bias", space(B, S, O), y(i, s, j) = w.b(j)),
                              map(name, space(B, S, O, I), y(i, s, j) += x(i, s, k) * w.W(k, j)));
  return detail::make_layer(std::move(p), y, w.params());
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_LINEAR_INSTANCES(EXTERN, T)                                              \
  EXTERN template layer_of<T, 2, 2, 1> linear<T>(const std::string&, array<T, 2>&, index_t); \
  EXTERN template layer_of<T, 3, 2, 1> linear<T>(const std::string&, array<T, 3>&, index_t);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_LINEAR_INSTANCES)

}  // namespace workpart::nn
