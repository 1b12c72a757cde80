#pragma once
/// \file norm.hpp
/// Normalisation layers: `wp::nn::layer_norm(name, x)` over each row of x (rows, features)
/// or each position of a sequence x (batch, positions, features),
/// `wp::nn::batch_norm(name, x)` over each channel of x (N, C, H, W) with the batch's
/// statistics (training mode). Both scale by a parameter gamma (starting at 1) and shift by
/// beta (starting at 0); the variance is the biased one (divided by the count), as PyTorch
/// normalises with.

#include <string>

#include "../core/space.hpp"
#include "../expr/reduce.hpp"
#include "layer.hpp"

namespace workpart::nn {

namespace detail {
/// A normalisation's scale gamma (starting at 1) and shift beta (starting at 0) over n
/// features, with their gradients.
template <class T>
struct scale_shift {
  array<T, 1>&gamma, &dgamma, &beta, &dbeta;
  scale_shift(layer_arrays& a, const std::string& name, index_t n)
      : gamma(a.make<T, 1>(name + ".gamma", {n})),
        dgamma(a.make<T, 1>("d" + name + ".gamma", {n})),
        beta(a.make<T, 1>(name + ".beta", {n})),
        dbeta(a.make<T, 1>("d" + name + ".beta", {n})) {
    gamma.init([](const std::array<index_t, 1>&) { return T(1); });
    beta.init([](const std::array<index_t, 1>&) { return T(0); });
  }
  auto params() const { return std::tuple{wrt(gamma, dgamma), wrt(beta, dbeta)}; }
};
}  // namespace detail

/// y(b, f) = (x(b, f) - mean(b)) / sqrt(var(b) + eps) gamma(f) + beta(f). Maps
/// `<name>.mean`, `<name>.var` (inner sums over the features) and `<name>`; parameters
/// `<name>.gamma`, `<name>.beta` (features).
template <class T>
layer_of<T, 2, 1, 1> layer_norm(const std::string& name, array<T, 2>& x, double eps = 1e-5) {
  const index_t B = x.extent(0), F = x.extent(1);
  if (F < 1) detail::refuse(name, "its input '" + x.name() + "' has no features");
  detail::layer_arrays a;
  auto& mean = a.make<T, 1>(name + ".mean", {B});
  auto& var = a.make<T, 1>(name + ".var", {B});
  detail::scale_shift<T> ss(a, name, F);
  auto &gamma = ss.gamma, &beta = ss.beta;
  auto& y = a.make<T, 2>(name + ".y", {B, F});
  const T inv = T(1) / T(F), e = T(eps);
  auto [b, f, k] = indices<3>();
  auto p = detail::program_of(
      a, map(name + ".mean", space(B), mean(b) = sum(range(k, 0, F), x(b, k)) * inv),
      map(name + ".var", space(B),
          var(b) = sum(range(k, 0, F), (x(b, k) - mean(b)) * (x(b, k) - mean(b))) * inv),
      map(name, space(B, F),
          y(b, f) = (x(b, f) - mean(b)) / workpart::sqrt(var(b) + e) * gamma(f) + beta(f)));
  return detail::make_layer(std::move(p), y, ss.params());
}

/// The same over each position of a sequence x (batch, positions, features): mean(b, s) and
/// var(b, s) over the features (maps `<name>.mean`, `<name>.var`, `<name>`), the same
/// parameters (features).
template <class T>
layer_of<T, 3, 1, 1> layer_norm(const std::string& name, array<T, 3>& x, double eps = 1e-5) {
  const index_t B = x.extent(0), S = x.extent(1), F = x.extent(2);
  if (F < 1) detail::refuse(name, "its input '" + x.name() + "' has no features");
  detail::layer_arrays a;
  auto& mean = a.make<T, 2>(name + ".mean", {B, S});
  auto& var = a.make<T, 2>(name + ".var", {B, S});
  detail::scale_shift<T> ss(a, name, F);
  auto &gamma = ss.gamma, &beta = ss.beta;
  auto& y = a.make<T, 3>(name + ".y", {B, S, F});
  const T inv = T(1) / T(F), e = T(eps);
  auto [b, s, f, k] = indices<4>();
  auto p = detail::program_of(
      a, map(name + ".mean", space(B, S), mean(b, s) = sum(range(k, 0, F), x(b, s, k)) * inv),
      map(name + ".var", space(B, S),
          var(b, s) =
              sum(range(k, 0, F), (x(b, s, k) - mean(b, s)) * (x(b, s, k) - mean(b, s))) * inv),
      map(name, space(B, S, F),
          y(b, s, f) =
              (x(b, s, f) - mean(b, s)) / workpart::sqrt(var(b, s) + e) * gamma(f) + beta(f)));
  return detail::make_layer(std::move(p), y, ss.params());
}

/// y(n, c, h, w) = (x(n, c, h, w) - mean(c)) / sqrt(var(c) + eps) gamma(c) + beta(c), the
/// mean and variance over (n, h, w): maps `<name>.mean0`, `<name>.mean` (a '+=' over (N, C,
/// H, W): split over the batch, the plans combine it rank to rank), `<name>.var0`,
/// `<name>.var` and `<name>`; parameters `<name>.gamma`, `<name>.beta` (C). No running
/// statistics are kept (training mode only).
template <class T>
layer_of<T, 4, 1, 1> batch_norm(const std::string& name, array<T, 4>& x, double eps = 1e-5) {
  const index_t N = x.extent(0), C = x.extent(1), H = x.extent(2), W = x.extent(3);
  if (N * H * W < 1) detail::refuse(name, "its input '" + x.name() + "' is empty");
  detail::layer_arrays a;
  auto& mean = a.make<T, 1>(name + ".mean", {C});
  auto& var = a.make<T, 1>(name + ".var", {C});
  detail::scale_shift<T> ss(a, name, C);
  auto &gamma = ss.gamma, &beta = ss.beta;
  auto& y = a.make<T, 4>(name + ".y", {N, C, H, W});
  const T inv = T(1) / T(N * H * W), e = T(eps);
  auto [n, c, h, w] = indices<4>();
  auto [cc] = indices<1>();
  auto p = detail::program_of(
      a, map(name + ".mean0", space(C), mean(cc) = T(0)),
      map(name + ".mean", space(N, C, H, W), mean(c) += x(n, c, h, w) * inv),
      map(name + ".var0", space(C), var(cc) = T(0)),
      map(name + ".var", space(N, C, H, W),
          var(c) += (x(n, c, h, w) - mean(c)) * (x(n, c, h, w) - mean(c)) * inv),
      map(name, space(N, C, H, W),
          y(n, c, h, w) =
              (x(n, c, h, w) - mean(c)) / workpart::sqrt(var(c) + e) * gamma(c) + beta(c)));
  return detail::make_layer(std::move(p), y, ss.params());
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_NORM_INSTANCES(EXTERN, T)                                                   \
  EXTERN template layer_of<T, 2, 1, 1> layer_norm<T>(const std::string&, array<T, 2>&, double); \
  EXTERN template layer_of<T, 3, 1, 1> layer_norm<T>(const std::string&, array<T, 3>&, double); \
  EXTERN template layer_of<T, 4, 1, 1> batch_norm<T>(const std::string&, array<T, 4>&, double);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_NORM_INSTANCES)

}  // namespace workpart::nn
