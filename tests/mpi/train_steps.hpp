#pragma once
// What tests/mpi/test_train*.cpp share: the training steps and the serial loops they are
// checked against.

#include "mpi_test_support.hpp"
#include "../conv_train_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

using namespace mpitest;

namespace {

constexpr index_t B = 7, I = 5, H = 6, O = 3;
constexpr double lr = 0.05;
constexpr int steps = 3;

inline double xv(index_t b, index_t k) { return std::sin(0.3 * double(b * I + k) + 0.1); }
inline double tv(index_t b, index_t o) { return std::cos(0.7 * double(b * O + o)); }
inline double w1v(index_t k, index_t h) { return 0.2 * std::sin(double(k * H + h) + 0.5); }
inline double w2v(index_t h, index_t o) { return 0.3 * std::cos(double(h * O + o) + 0.2); }

/// The same steps in plain loops: W1, W2 after `steps` SGD steps, and the last loss.
struct reference {
  std::vector<double> w1, w2;
  double loss = 0;
};
inline reference train_serially() {
  reference r;
  for (index_t k = 0; k < I; ++k)
    for (index_t h = 0; h < H; ++h) r.w1.push_back(w1v(k, h));
  for (index_t h = 0; h < H; ++h)
    for (index_t o = 0; o < O; ++o) r.w2.push_back(w2v(h, o));
  for (int s = 0; s < steps; ++s) {
    std::vector<double> a(B * H), d_out(B * O), dw1(I * H, 0.0), dw2(H * O, 0.0), da(B * H, 0.0);
    r.loss = 0;
    for (index_t b = 0; b < B; ++b)
      for (index_t h = 0; h < H; ++h) {
        double z = 0;
        for (index_t k = 0; k < I; ++k) z += xv(b, k) * r.w1[k * H + h];
        a[b * H + h] = std::tanh(z);
      }
    for (index_t b = 0; b < B; ++b)
      for (index_t o = 0; o < O; ++o) {
        double y = 0;
        for (index_t h = 0; h < H; ++h) y += a[b * H + h] * r.w2[h * O + o];
        d_out[b * O + o] = y - tv(b, o);
        r.loss += 0.5 * d_out[b * O + o] * d_out[b * O + o];
      }
    for (index_t b = 0; b < B; ++b)
      for (index_t h = 0; h < H; ++h)
        for (index_t o = 0; o < O; ++o) {
          dw2[h * O + o] += a[b * H + h] * d_out[b * O + o];
          da[b * H + h] += d_out[b * O + o] * r.w2[h * O + o];
        }
    for (index_t b = 0; b < B; ++b)
      for (index_t h = 0; h < H; ++h) {
        const double dz = da[b * H + h] * (1 - a[b * H + h] * a[b * H + h]);
        for (index_t k = 0; k < I; ++k) dw1[k * H + h] += xv(b, k) * dz;
      }
    for (std::size_t e = 0; e < dw1.size(); ++e) r.w1[e] -= lr * dw1[e];
    for (std::size_t e = 0; e < dw2.size(); ++e) r.w2[e] -= lr * dw2[e];
  }
  return r;
}

/// A grid for every map of the program: `split` picks the dimension split over p (or none).
template <class Prog, class Split>
wp::schedule schedule_of(const Prog& prog, int p, Split split) {
  wp::schedule s;
  prog.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    const int d = split(m.rank());
    if (d >= 0) g[std::size_t(d)] = p;
    s.set(m.name(), wp::grid_shape(g));
  });
  return s;
}

/// The MLP's arrays and its training step (forward, backward, SGD), built once per test.
struct mlp {
  index_t nb = B, ni = I, nh = H, no = O;  // batch, input, hidden, output
  wp::array<double, 2> X{"X", {nb, ni}}, T{"T", {nb, no}}, W1{"W1", {ni, nh}}, W2{"W2", {nh, no}};
  wp::array<double, 2> Hd{"H", {nb, nh}}, A{"A", {nb, nh}}, Out{"Out", {nb, no}};
  wp::array<double, 2> dW1{"dW1", {ni, nh}}, dW2{"dW2", {nh, no}};
  wp::array<double, 0> L{"L", {}};

  mlp() = default;
  mlp(index_t b, index_t i, index_t h, index_t o) : nb(b), ni(i), nh(h), no(o) {}

  auto step() {
    auto [b, h, k] = wp::indices<3>();
    auto fwd = wp::program(wp::map("h0", wp::space(nb, nh), Hd(b, h) = 0.0),
                           wp::map("h", wp::space(nb, nh, ni), Hd(b, h) += X(b, k) * W1(k, h)),
                           wp::map("act", wp::space(nb, nh), A(b, h) = wp::tanh(Hd(b, h))),
                           wp::map("o0", wp::space(nb, no), Out(b, h) = 0.0),
                           wp::map("o", wp::space(nb, no, nh), Out(b, h) += A(b, k) * W2(k, h)),
                           wp::map("l0", wp::space(), L() = 0.0),
                           wp::map("loss", wp::space(nb, no),
                                   L() += 0.5 * (Out(b, h) - T(b, h)) * (Out(b, h) - T(b, h))));
    return wp::program(fwd, wp::backward(fwd, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2)),
                       wp::map("sgd1", wp::space(ni, nh), W1(b, h) = W1(b, h) - lr * dW1(b, h)),
                       wp::map("sgd2", wp::space(nh, no), W2(b, h) = W2(b, h) - lr * dW2(b, h)));
  }
  void fill() {
    fill2(X, xv);
    fill2(T, tv);
    fill2(W1, w1v);
    fill2(W2, w2v);
  }
};

}  // namespace
