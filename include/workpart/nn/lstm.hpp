#pragma once
/// \file lstm.hpp
/// `wp::nn::lstm<Steps>(name, x, hidden)`: an LSTM layer over a sequence, one cell per step.

#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// An LSTM layer over x (batch, Steps, in) with `hidden` units, PyTorch's cell:
///   z_t = x_t Wx + h_t Wh + b             (batch, 4, hidden): gates i, f, g, o
///   c_{t+1} = sigmoid(f) c_t + sigmoid(i) tanh(g)
///   h_{t+1} = sigmoid(o) tanh(c_{t+1}),   y(b, t, k) = h_{t+1}(b, k)
/// from h_0 = c_0 = 0. A recurrence is a chain of maps: each step t is the maps
/// `<name>.t<t>.z` (z = b), `.zx` (z += x(b, t, r) Wx(r, g, k): the GEMM path), `.zh`
/// (z += h_t Wh), `.c`, `.h` and `.y` (y's slice t, += into zeros), after `<name>.h0`,
/// `<name>.c0` and `<name>.y0`.
/// Steps is a compile-time constant (the program's maps are a type); x's extent 1 must equal
/// it. Parameters `<name>.Wx` (in, 4, hidden), `<name>.Wh` (hidden, 4, hidden), `<name>.b`
/// (4, hidden; one bias, PyTorch's b_ih + b_hh), uniform in +-1/sqrt(hidden) as PyTorch's;
/// every step reads the same parameters, so their gradients sum over the steps.
template <index_t Steps, class T>
auto lstm(const std::string& name, array<T, 3>& x, index_t hidden) {
  static_assert(Steps >= 1, "wp::nn::lstm: at least one step");
  if (hidden < 1) detail::refuse(name, "hidden must be at least 1");
  if (x.extent(1) != Steps)
    detail::refuse(name, "its input '" + x.name() + "' holds " + std::to_string(x.extent(1)) +
                             " steps, the layer " + std::to_string(Steps));
  const index_t B = x.extent(0), I = x.extent(2), H = hidden;
  if (I < 1) detail::refuse(name, "its input '" + x.name() + "' has no features");
  detail::layer_arrays a;
  auto& Wx = a.make<T, 3>(name + ".Wx", {I, 4, H});
  auto& dWx = a.make<T, 3>("d" + name + ".Wx", {I, 4, H});
  auto& Wh = a.make<T, 3>(name + ".Wh", {H, 4, H});
  auto& dWh = a.make<T, 3>("d" + name + ".Wh", {H, 4, H});
  auto& b = a.make<T, 2>(name + ".b", {4, H});
  auto& db = a.make<T, 2>("d" + name + ".b", {4, H});
  auto& y = a.make<T, 3>(name + ".y", {B, Steps, H});
  detail::init_uniform(Wx, 1 / std::sqrt(double(H)));
  detail::init_uniform(Wh, 1 / std::sqrt(double(H)));
  detail::init_uniform(b, 1 / std::sqrt(double(H)));
  std::vector<array<T, 2>*> h, c;  // h_0 .. h_Steps, c_0 .. c_Steps
  std::vector<array<T, 3>*> z;     // z_0 .. z_{Steps-1}
  for (index_t t = 0; t <= Steps; ++t) {
    h.push_back(&a.make<T, 2>(name + ".h" + std::to_string(t), {B, H}));
    c.push_back(&a.make<T, 2>(name + ".c" + std::to_string(t), {B, H}));
    if (t < Steps) z.push_back(&a.make<T, 3>(name + ".z" + std::to_string(t), {B, 4, H}));
  }
  auto [i, g, k, r] = indices<4>();
  auto step = [&, i = i, g = g, k = k, r = r](index_t t) {
    auto& zt = *z[std::size_t(t)];
    auto& ht = *h[std::size_t(t)];
    auto& ct = *c[std::size_t(t)];
    auto& hn = *h[std::size_t(t + 1)];
    auto& cn = *c[std::size_t(t + 1)];
    const std::string s = name + ".t" + std::to_string(t);
    return workpart::program(
        map(s + ".z", space(B, 4, H), zt(i, g, k) = b(g, k)),
        map(s + ".zx", space(B, 4, H, I), zt(i, g, k) += x(i, t, r) * Wx(r, g, k)),
        map(s + ".zh", space(B, 4, H, H), zt(i, g, k) += ht(i, r) * Wh(r, g, k)),
        map(s + ".c", space(B, H),
            cn(i, g) = workpart::sigmoid(zt(i, 1, g)) * ct(i, g) +
                       workpart::sigmoid(zt(i, 0, g)) * workpart::tanh(zt(i, 2, g))),
        map(s + ".h", space(B, H),
            hn(i, g) = workpart::sigmoid(zt(i, 3, g)) * workpart::tanh(cn(i, g))),
        map(s + ".y", space(B, H), y(i, t, g) += hn(i, g)));
  };
  // y's slices are '+=' into zeros: wp::backward takes '=' as an array's first write only
  auto start = detail::program_of(a, map(name + ".h0", space(B, H), (*h[0])(i, g) = T(0)),
                                  map(name + ".c0", space(B, H), (*c[0])(i, g) = T(0)),
                                  map(name + ".y0", space(B, Steps, H), y(i, g, k) = T(0)));
  auto p = [&]<std::size_t... t>(std::index_sequence<t...>) {
    return workpart::program(start, step(index_t(t))...);
  }
  (std::make_index_sequence<std::size_t(Steps)>{});
  return detail::make_layer(std::move(p), y, std::tuple{wrt(Wx, dWx), wrt(Wh, dWh), wrt(b, db)});
}

}  // namespace workpart::nn
