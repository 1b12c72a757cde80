#pragma once
/// \file lstm.hpp
/// `wp::nn::lstm(name, x, hidden)`: an LSTM layer over a sequence, one cell per step, as many
/// steps as x's positions (a run-time value: the steps' maps are of three types whatever the
/// length). `wp::nn::lstm<Steps>(...)` checks x against a compile-time length.

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
///   z_t = x_t Wx + h_{t-1} Wh + b             (batch, 4, hidden): gates i, f, g, o
///   c_t = sigmoid(f) c_{t-1} + sigmoid(i) tanh(g)
///   h_t = sigmoid(o) tanh(c_t),   y(b, t - 1, k) = h_t(b, k)       (t = 1 .. Steps)
/// from h_0 = c_0 = 0. The input's part of every step is one GEMM over the whole sequence, as
/// cuDNN does it: maps `<name>.zx.bias` (zx = b) and `<name>.zx` (zx(b, s, g, k) += x(b, s, r)
/// Wx(r, g, k)), then `<name>.y0` (y = 0). The recurrence is a chain of maps, step t named
/// `<name>.t<t>` (t from 1): `.gates` (z_t = zx's slice t - 1), `.recur` (z_t += h_{t-1} Wh;
/// not in step 1, where h_0 = 0) and `.cell` (c_t, h_t and y's slice t - 1, += into zeros, as
/// three statements; step 1 without c_0 = 0), over step t's arrays `<name>.t<t>.z`, `.c`, `.h`.
/// So each name carries its step as `<name>.t<t>`: a description of the layer written with
/// three steps repeats to a sequence of any length with wp::repeat_blocks(d, name + ".t", n)
/// (step 1 is the first block, whose maps differ from the others').
/// The step count is x's extent 1, read at run time (the steps' maps are values of three map
/// types: a longer sequence costs no compile time); lstm<Steps> also checks it against Steps.
/// Parameters `<name>.Wx` (in, 4, hidden), `<name>.Wh` (hidden, 4, hidden), `<name>.b`
/// (4, hidden; one bias, PyTorch's b_ih + b_hh), uniform in +-1/sqrt(hidden) as PyTorch's;
/// every step reads the same parameters, so their gradients sum over the steps.
template <class T>
layer_of<T, 3, 3, 3, 2> lstm(const std::string& name, array<T, 3>& x, index_t hidden) {
  if (hidden < 1) detail::refuse(name, "hidden must be at least 1");
  const index_t Steps = x.extent(1);
  if (Steps < 1) detail::refuse(name, "its input '" + x.name() + "' holds no steps");
  const index_t B = x.extent(0), I = x.extent(2), H = hidden;
  if (I < 1) detail::refuse(name, "its input '" + x.name() + "' has no features");
  detail::layer_arrays a;
  auto& Wx = a.make<T, 3>(name + ".Wx", {I, 4, H});
  auto& dWx = a.make<T, 3>("d" + name + ".Wx", {I, 4, H});
  auto& Wh = a.make<T, 3>(name + ".Wh", {H, 4, H});
  auto& dWh = a.make<T, 3>("d" + name + ".Wh", {H, 4, H});
  auto& b = a.make<T, 2>(name + ".b", {4, H});
  auto& db = a.make<T, 2>("d" + name + ".b", {4, H});
  auto& zx = a.make<T, 4>(name + ".zx", {B, Steps, 4, H});
  auto& y = a.make<T, 3>(name + ".y", {B, Steps, H});
  detail::init_uniform(Wx, 1 / std::sqrt(double(H)));
  detail::init_uniform(Wh, 1 / std::sqrt(double(H)));
  detail::init_uniform(b, 1 / std::sqrt(double(H)));
  // step t's arrays (t = 1 .. Steps; each is written once: wp::backward's rule)
  std::vector<array<T, 3>*> z{nullptr};
  std::vector<array<T, 2>*> h{nullptr}, c{nullptr};
  for (index_t t = 1; t <= Steps; ++t) {
    const std::string s = name + ".t" + std::to_string(t);
    z.push_back(&a.make<T, 3>(s + ".z", {B, 4, H}));
    c.push_back(&a.make<T, 2>(s + ".c", {B, H}));
    h.push_back(&a.make<T, 2>(s + ".h", {B, H}));
  }
  auto [i, g, k, r] = indices<4>();
  using workpart::sigmoid;
  using workpart::tanh;
  // step t's cell: c_t, h_t and y's slice t - 1 from the gates, as three statements of one
  // map (h_t and y recompute c_t's expression: a statement does not read what its map wrote)
  auto cell = [&, i = i, g = g](index_t t, const auto& c_t) {
    auto& zt = *z[std::size_t(t)];
    auto o = sigmoid(zt(i, 3, g));
    return map(name + ".t" + std::to_string(t) + ".cell", space(B, H),
               (*c[std::size_t(t)])(i, g) = c_t, (*h[std::size_t(t)])(i, g) = o * tanh(c_t),
               y(i, t - 1, g) += o * tanh(c_t));
  };
  auto first = [&, i = i, g = g, k = k] {
    auto& zt = *z[1];
    return workpart::program(map(name + ".t1.gates", space(B, 4, H), zt(i, g, k) = zx(i, 0, g, k)),
                             cell(1, sigmoid(zt(i, 0, g)) * tanh(zt(i, 2, g))));
  };
  auto step = [&, i = i, g = g, k = k, r = r](index_t t) {
    auto& zt = *z[std::size_t(t)];
    auto& cp = *c[std::size_t(t - 1)];
    const std::string s = name + ".t" + std::to_string(t);
    return workpart::program(
        map(s + ".gates", space(B, 4, H), zt(i, g, k) = zx(i, t - 1, g, k)),
        map(s + ".recur", space(B, 4, H, H),
            zt(i, g, k) += (*h[std::size_t(t - 1)])(i, r) * Wh(r, g, k)),
        cell(t, sigmoid(zt(i, 1, g)) * cp(i, g) + sigmoid(zt(i, 0, g)) * tanh(zt(i, 2, g))));
  };
  // over the whole sequence: (batch, position, gate, unit[, input])
  auto [n, s, e, u, f] = indices<5>();
  // y's slices are '+=' into zeros: wp::backward takes '=' as an array's first write only
  auto start = detail::program_of(
      a, map(name + ".zx.bias", space(B, Steps, 4, H), zx(n, s, e, u) = b(e, u)),
      map(name + ".zx", space(B, Steps, 4, H, I), zx(n, s, e, u) += x(n, s, f) * Wx(f, e, u)),
      map(name + ".y0", space(B, Steps, H), y(n, s, e) = T(0)));
  workpart::program p(start, first());
  for (index_t t = 2; t <= Steps; ++t) p.add(step(t));
  return detail::make_layer(std::move(p), y, std::tuple{wrt(Wx, dWx), wrt(Wh, dWh), wrt(b, db)});
}

/// lstm(name, x, hidden) over x of exactly Steps positions (checked when the layer is built).
template <index_t Steps, class T>
auto lstm(const std::string& name, array<T, 3>& x, index_t hidden) {
  static_assert(Steps >= 1, "wp::nn::lstm: at least one step");
  if (x.extent(1) != Steps)
    detail::refuse(name, "its input '" + x.name() + "' holds " + std::to_string(x.extent(1)) +
                             " steps, the layer " + std::to_string(Steps));
  return lstm(name, x, hidden);
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_LSTM_INSTANCES(EXTERN, T) \
  EXTERN template layer_of<T, 3, 3, 3, 2> lstm<T>(const std::string&, array<T, 3>&, index_t);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_LSTM_INSTANCES)

}  // namespace workpart::nn
