// The layer library (<workpart/nn.hpp>) on one process (wp::run, double): every layer's
// forward values (the sequence forms of linear, layer_norm and the loss, and nn::add's too)
// against plain loops over the same parameters, its gradients (inputs and
// parameters) against central finite differences, uneven extents; the parameters'
// initial values; the errors a layer raises when it is made. tests/mpi/test_nn.cpp trains a
// network of these layers at np 1-4.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <workpart/nn.hpp>

#include "../random_uniform_reference.hpp"
#include "finite_differences.hpp"

namespace wp = workpart;
using Catch::Matchers::Contains;
using fd::fill;
using fd::require_gradient;
using wp::index_t;

namespace {

/// L = sum y * g over y's shape, g filled with fixed values: the loss the layers' gradients
/// are checked through.
template <int N>
struct weighted_sum {
  wp::array<double, N> g;
  wp::array<double, 0> L{"L", {}};
  explicit weighted_sum(const wp::array<double, N>& y) : g("g", y.shape()) { fill(g, 7); }
  auto program(wp::array<double, N>& y) {
    std::array<wp::bounds, std::size_t(N)> b{};
    for (int d = 0; d < N; ++d) b[std::size_t(d)] = {0, y.extent(d)};
    const wp::space<N> sp(typename wp::space<N>::from_bounds_t{}, b);
    return [&]<std::size_t... D>(std::index_sequence<D...>) {
      return wp::program(
          wp::map("l0", wp::space(), L() = 0.0),
          wp::map("loss", sp, L() += y(wp::index<int(D)>{}...) * g(wp::index<int(D)>{}...)));
    }
    (std::make_index_sequence<std::size_t(N)>{});
  }
};

/// Multi-head attention of x (B, S, E) over m (B, T, E; self-attention: m is x) in plain
/// loops, with the layer's projections: y (B, S, E) flattened.
std::vector<double> attention_in_loops(wp::array<double, 3>& x, wp::array<double, 3>& m,
                                       wp::array<double, 3>& Wq, wp::array<double, 3>& Wk,
                                       wp::array<double, 3>& Wv, wp::array<double, 3>& Wo,
                                       index_t H, bool causal) {
  const index_t B = x.extent(0), S = x.extent(1), E = x.extent(2), T = m.extent(1), D = E / H;
  std::vector<double> out(std::size_t(B * S * E), 0.0);
  for (index_t b = 0; b < B; ++b) {
    std::vector<double> O(std::size_t(S * H * D), 0.0);
    auto proj = [&](wp::array<double, 3>& src, wp::array<double, 3>& Wm, index_t s, index_t h,
                    index_t d) {
      double v = 0;
      for (index_t e = 0; e < E; ++e) v += src.at({b, s, e}) * Wm.at({e, h, d});
      return v;
    };
    for (index_t h = 0; h < H; ++h)
      for (index_t s = 0; s < S; ++s) {
        std::vector<double> p(std::size_t(T), 0.0);
        double mx = -1e300, z = 0;
        const index_t last = causal ? s : T - 1;
        for (index_t t = 0; t <= last; ++t) {
          double q = 0;
          for (index_t d = 0; d < D; ++d) q += proj(x, Wq, s, h, d) * proj(m, Wk, t, h, d);
          p[std::size_t(t)] = q / std::sqrt(double(D));
          mx = std::max(mx, p[std::size_t(t)]);
        }
        for (index_t t = 0; t <= last; ++t)
          z += (p[std::size_t(t)] = std::exp(p[std::size_t(t)] - mx));
        for (index_t d = 0; d < D; ++d)
          for (index_t t = 0; t <= last; ++t)
            O[std::size_t((s * H + h) * D + d)] += p[std::size_t(t)] / z * proj(m, Wv, t, h, d);
      }
    for (index_t s = 0; s < S; ++s)
      for (index_t e = 0; e < E; ++e)
        for (index_t h = 0; h < H; ++h)
          for (index_t d = 0; d < D; ++d)
            out[std::size_t((b * S + s) * E + e)] +=
                O[std::size_t((s * H + h) * D + d)] * Wo.at({h, d, e});
  }
  return out;
}

/// An attention layer's output against attention_in_loops, and its four projections'
/// gradients against central differences of `fwd`'s loss L.
template <class Layer, class Fwd>
void require_attention(Layer& at, const Fwd& fwd, wp::array<double, 0>& L, wp::array<double, 3>& x,
                       wp::array<double, 3>& m, index_t H, bool causal) {
  auto& Wq = *std::get<0>(at.params).param;
  auto& Wk = *std::get<1>(at.params).param;
  auto& Wv = *std::get<2>(at.params).param;
  auto& Wo = *std::get<3>(at.params).param;
  const auto want = attention_in_loops(x, m, Wq, Wk, Wv, Wo, H, causal);
  const index_t B = x.extent(0), S = x.extent(1), E = x.extent(2);
  for (index_t b = 0; b < B; ++b)
    for (index_t s = 0; s < S; ++s)
      for (index_t e = 0; e < E; ++e)
        REQUIRE(std::abs(at.out().at({b, s, e}) - want[std::size_t((b * S + s) * E + e)]) <= 1e-12);
  require_gradient(fwd, L, Wq, *std::get<0>(at.params).grad);
  require_gradient(fwd, L, Wk, *std::get<1>(at.params).grad);
  require_gradient(fwd, L, Wv, *std::get<2>(at.params).grad);
  require_gradient(fwd, L, Wo, *std::get<3>(at.params).grad);
}

}  // namespace

TEST_CASE("nn::linear: y = b + x W, and its gradients", "[nn]") {
  const index_t B = 5, I = 4, O = 3;
  wp::array<double, 2> x("x", {B, I}), dx("dx", {B, I});
  fill(x, 1);
  auto fc = wp::nn::linear("fc", x, O);
  auto& W = *std::get<0>(fc.params).param;
  auto& dW = *std::get<0>(fc.params).grad;
  auto& b = *std::get<1>(fc.params).param;
  auto& db = *std::get<1>(fc.params).grad;
  CHECK(W.name() == "fc.W");
  CHECK(b.name() == "fc.b");
  REQUIRE(W.shape() == std::array<index_t, 2>{I, O});
  weighted_sum<2> loss(fc.out());
  auto fwd = wp::program(fc.program, loss.program(fc.out()));
  auto bwd =
      wp::backward(fwd, loss.L, wp::wrt(x, dx), std::get<0>(fc.params), std::get<1>(fc.params));
  wp::run(wp::program(fwd, bwd));
  for (index_t i = 0; i < B; ++i)
    for (index_t o = 0; o < O; ++o) {
      double want = b.at({o});
      for (index_t k = 0; k < I; ++k) want += x.at({i, k}) * W.at({k, o});
      REQUIRE(std::abs(fc.out().at({i, o}) - want) <= 1e-12);
    }
  require_gradient(fwd, loss.L, x, dx);
  require_gradient(fwd, loss.L, W, dW);
  require_gradient(fwd, loss.L, b, db);
}

TEST_CASE("nn::conv2d: stride 2, padding 1, two groups, and its gradients", "[nn][padded]") {
  const index_t N = 2, C = 4, H = 7, W = 6, K = 6, R = 3, G = 2;
  wp::array<double, 4> x("x", {N, C, H, W}), dx("dx", {N, C, H, W});
  fill(x, 2);
  auto conv = wp::nn::conv2d("conv", x, K, R, {.stride = 2, .padding = 1, .groups = G});
  const index_t Ho = (H + 2 - R) / 2 + 1, Wo = (W + 2 - R) / 2 + 1;  // 4 x 3
  auto& y = conv.out();
  REQUIRE(y.shape() == std::array<index_t, 4>{N, K, Ho, Wo});
  auto& w = *std::get<0>(conv.params).param;
  auto& b = *std::get<1>(conv.params).param;
  REQUIRE(w.shape() == std::array<index_t, 4>{K, C / G, R, R});
  weighted_sum<4> loss(y);
  auto fwd = wp::program(conv.program, loss.program(y));
  auto bwd =
      wp::backward(fwd, loss.L, wp::wrt(x, dx), std::get<0>(conv.params), std::get<1>(conv.params));
  wp::run(wp::program(fwd, bwd));
  for (index_t n = 0; n < N; ++n)
    for (index_t k = 0; k < K; ++k)
      for (index_t i = 0; i < Ho; ++i)
        for (index_t j = 0; j < Wo; ++j) {
          double want = b.at({k});
          const index_t g = k / (K / G);
          for (index_t c = 0; c < C / G; ++c)
            for (index_t r = 0; r < R; ++r)
              for (index_t s = 0; s < R; ++s) {
                const index_t h = 2 * i + r - 1, v = 2 * j + s - 1;
                if (h >= 0 && h < H && v >= 0 && v < W)
                  want += x.at({n, g * (C / G) + c, h, v}) * w.at({k, c, r, s});
              }
          INFO("y(" << n << ", " << k << ", " << i << ", " << j << ")");
          REQUIRE(std::abs(y.at({n, k, i, j}) - want) <= 1e-12);
        }
  require_gradient(fwd, loss.L, x, dx);
  require_gradient(fwd, loss.L, w, *std::get<0>(conv.params).grad);
  require_gradient(fwd, loss.L, b, *std::get<1>(conv.params).grad);
}

TEST_CASE("nn::conv2d: rectangular kernels and padding per axis (1 x 3, 3 x 1), and gradients",
          "[nn][padded]") {
  // InceptionV3's factorised convolutions: 1 x 3 padded (0, 1), then 3 x 1 padded (2, 0) with
  // stride 2 on an uneven image
  const index_t N = 2, C = 3, H = 6, W = 5, K1 = 4, K2 = 2;
  wp::array<double, 4> x("x", {N, C, H, W}), dx("dx", {N, C, H, W});
  fill(x, 4);
  auto a = wp::nn::conv2d("a", x, K1, {1, 3}, {.padding = {0, 1}});
  auto b = wp::nn::conv2d("b", a.out(), K2, {3, 1}, {.stride = 2, .padding = {2, 0}});
  const index_t Ho = (H + 4 - 3) / 2 + 1, Wo = (W - 1) / 2 + 1;  // 4 x 3
  REQUIRE(a.out().shape() == std::array<index_t, 4>{N, K1, H, W});
  REQUIRE(b.out().shape() == std::array<index_t, 4>{N, K2, Ho, Wo});
  auto& wa = *std::get<0>(a.params).param;
  auto& wb = *std::get<0>(b.params).param;
  REQUIRE(wa.shape() == std::array<index_t, 4>{K1, C, 1, 3});
  REQUIRE(wb.shape() == std::array<index_t, 4>{K2, K1, 3, 1});
  weighted_sum<4> loss(b.out());
  auto fwd = wp::program(a.program, b.program, loss.program(b.out()));
  auto bwd = wp::backward(fwd, loss.L, wp::wrt(x, dx), std::get<0>(a.params), std::get<1>(a.params),
                          std::get<0>(b.params), std::get<1>(b.params));
  wp::run(wp::program(fwd, bwd));
  std::vector<double> ya(std::size_t(N * K1 * H * W));
  for (index_t n = 0; n < N; ++n)
    for (index_t k = 0; k < K1; ++k)
      for (index_t i = 0; i < H; ++i)
        for (index_t j = 0; j < W; ++j) {
          double v = std::get<1>(a.params).param->at({k});
          for (index_t c = 0; c < C; ++c)
            for (index_t s = 0; s < 3; ++s)
              if (j + s - 1 >= 0 && j + s - 1 < W)
                v += x.at({n, c, i, j + s - 1}) * wa.at({k, c, 0, s});
          ya[std::size_t(((n * K1 + k) * H + i) * W + j)] = v;
          REQUIRE(std::abs(a.out().at({n, k, i, j}) - v) <= 1e-12);
        }
  for (index_t n = 0; n < N; ++n)
    for (index_t k = 0; k < K2; ++k)
      for (index_t i = 0; i < Ho; ++i)
        for (index_t j = 0; j < Wo; ++j) {
          double v = std::get<1>(b.params).param->at({k});
          for (index_t c = 0; c < K1; ++c)
            for (index_t r = 0; r < 3; ++r) {
              const index_t h = 2 * i + r - 2;
              if (h >= 0 && h < H)
                v += ya[std::size_t(((n * K1 + c) * H + h) * W + 2 * j)] * wb.at({k, c, r, 0});
            }
          INFO("b(" << n << ", " << k << ", " << i << ", " << j << ")");
          REQUIRE(std::abs(b.out().at({n, k, i, j}) - v) <= 1e-12);
        }
  require_gradient(fwd, loss.L, x, dx);
  require_gradient(fwd, loss.L, wa, *std::get<0>(a.params).grad);
  require_gradient(fwd, loss.L, wb, *std::get<0>(b.params).grad);
  require_gradient(fwd, loss.L, *std::get<1>(b.params).param, *std::get<1>(b.params).grad);
}

TEST_CASE("nn::concat: branches joined along the channels, and their gradients", "[nn]") {
  const index_t N = 2, H = 3, W = 2;
  wp::array<double, 4> x1("x1", {N, 2, H, W}), x2("x2", {N, 3, H, W}), x3("x3", {N, 1, H, W});
  wp::array<double, 4> d1("d1", {N, 2, H, W}), d2("d2", {N, 3, H, W}), d3("d3", {N, 1, H, W});
  fill(x1, 1);
  fill(x2, 2);
  fill(x3, 3);
  auto cat = wp::nn::concat("cat", x1, x2, x3);
  auto& y = cat.out();
  REQUIRE(y.shape() == std::array<index_t, 4>{N, 6, H, W});
  // y read twice (a branch point, as an Inception module's input), so that the gradient
  // slices are summed from two readers
  auto sq = wp::nn::relu("sq", y);
  auto sum = wp::nn::add("sum", y, sq.out());
  weighted_sum<4> loss(sum.out());
  auto fwd = wp::program(cat.program, sq.program, sum.program, loss.program(sum.out()));
  auto bwd = wp::backward(fwd, loss.L, wp::wrt(x1, d1), wp::wrt(x2, d2), wp::wrt(x3, d3));
  wp::run(wp::program(fwd, bwd));
  for (index_t n = 0; n < N; ++n)
    for (index_t c = 0; c < 6; ++c)
      for (index_t h = 0; h < H; ++h)
        for (index_t w = 0; w < W; ++w) {
          const double want = c < 2   ? x1.at({n, c, h, w})
                              : c < 5 ? x2.at({n, c - 2, h, w})
                                      : x3.at({n, c - 5, h, w});
          REQUIRE(y.at({n, c, h, w}) == want);
        }
  require_gradient(fwd, loss.L, x1, d1);
  require_gradient(fwd, loss.L, x2, d2);
  require_gradient(fwd, loss.L, x3, d3);
  // rank 2: (batch, features)
  wp::array<double, 2> f1("f1", {3, 2}), f2("f2", {3, 4});
  fill(f1, 5);
  fill(f2, 6);
  auto cf = wp::nn::concat("cf", f1, f2);
  wp::run(cf.program);
  for (index_t n = 0; n < 3; ++n)
    for (index_t c = 0; c < 6; ++c)
      REQUIRE(cf.out().at({n, c}) == (c < 2 ? f1.at({n, c}) : f2.at({n, c - 2})));
}

TEST_CASE("nn::max_pool2d, nn::avg_pool2d, nn::relu, nn::flatten, and their gradients",
          "[nn][padded]") {
  const index_t N = 2, C = 3, H = 7, W = 5;
  wp::array<double, 4> x("x", {N, C, H, W}), dx("dx", {N, C, H, W});
  fill(x, 3);
  auto mp = wp::nn::max_pool2d("mp", x, 3, {.stride = 2, .padding = 1});         // 4 x 3
  auto ap = wp::nn::avg_pool2d("ap", mp.out(), 2, {.stride = 1, .padding = 1});  // 5 x 4
  auto re = wp::nn::relu("re", ap.out());
  auto fl = wp::nn::flatten("fl", re.out());
  const index_t Ho = 4, Wo = 3, Ao = 5, Bo = 4;
  REQUIRE(mp.out().shape() == std::array<index_t, 4>{N, C, Ho, Wo});
  REQUIRE(ap.out().shape() == std::array<index_t, 4>{N, C, Ao, Bo});
  REQUIRE(fl.out().shape() == std::array<index_t, 2>{N, C * Ao * Bo});
  weighted_sum<2> loss(fl.out());
  auto fwd = wp::program(mp.program, ap.program, re.program, fl.program, loss.program(fl.out()));
  auto bwd = wp::backward(fwd, loss.L, wp::wrt(x, dx));
  wp::run(wp::program(fwd, bwd));
  std::vector<double> m(std::size_t(N * C * Ho * Wo));
  for (index_t n = 0; n < N; ++n)
    for (index_t c = 0; c < C; ++c) {
      for (index_t i = 0; i < Ho; ++i)
        for (index_t j = 0; j < Wo; ++j) {
          double best = -std::numeric_limits<double>::infinity();
          for (index_t r = 0; r < 3; ++r)
            for (index_t s = 0; s < 3; ++s) {
              const index_t h = 2 * i + r - 1, v = 2 * j + s - 1;
              if (h >= 0 && h < H && v >= 0 && v < W) best = std::max(best, x.at({n, c, h, v}));
            }
          m[std::size_t(((n * C + c) * Ho + i) * Wo + j)] = best;
          REQUIRE(mp.out().at({n, c, i, j}) == best);
        }
      for (index_t i = 0; i < Ao; ++i)
        for (index_t j = 0; j < Bo; ++j) {
          double s = 0;
          for (index_t r = 0; r < 2; ++r)
            for (index_t q = 0; q < 2; ++q) {
              const index_t h = i + r - 1, v = j + q - 1;
              if (h >= 0 && h < Ho && v >= 0 && v < Wo)
                s += m[std::size_t(((n * C + c) * Ho + h) * Wo + v)];
            }
          const double a = s / 4;
          REQUIRE(std::abs(ap.out().at({n, c, i, j}) - a) <= 1e-12);
          REQUIRE(std::abs(fl.out().at({n, (c * Ao + i) * Bo + j}) - std::max(a, 0.0)) <= 1e-12);
        }
    }
  require_gradient(fwd, loss.L, x, dx);
}

TEST_CASE("nn::softmax_cross_entropy: the batch mean of -log softmax at the label", "[nn]") {
  const index_t B = 5, C = 4;
  wp::array<double, 2> z("z", {B, C}), dz("dz", {B, C});
  wp::array<std::int32_t, 1> label("label", {B});
  fill(z, 4, 0.0);
  z.at({2, 1}) = z.at({2, 3});  // a tie at the row's maximum: its gradient stays exact
  label.init([](const std::array<index_t, 1>& g) { return std::int32_t((g[0] * 3) % C); });
  auto ce = wp::nn::softmax_cross_entropy("ce", z, label);
  auto fwd = ce.program;
  wp::run(wp::program(fwd, wp::backward(fwd, ce.out(), wp::wrt(z, dz))));
  double want = 0;
  for (index_t b = 0; b < B; ++b) {
    double s = 0;
    for (index_t c = 0; c < C; ++c) s += std::exp(z.at({b, c}));
    want += (std::log(s) - z.at({b, (b * 3) % C})) / double(B);
    for (index_t c = 0; c < C; ++c) {
      const double g = (std::exp(z.at({b, c})) / s - (c == (b * 3) % C ? 1.0 : 0.0)) / double(B);
      REQUIRE(std::abs(dz.at({b, c}) - g) <= 1e-12);
    }
  }
  REQUIRE(std::abs(ce.out().at({}) - want) <= 1e-12);
  require_gradient(fwd, ce.out(), z, dz);
}

TEST_CASE("nn::layer_norm, nn::gelu: per row, and their gradients", "[nn]") {
  const index_t B = 4, F = 7;
  wp::array<double, 2> x("x", {B, F}), dx("dx", {B, F});
  fill(x, 5);
  auto ln = wp::nn::layer_norm("ln", x);
  auto ge = wp::nn::gelu("ge", ln.out());
  auto& gamma = *std::get<0>(ln.params).param;
  auto& beta = *std::get<1>(ln.params).param;
  // gamma and beta start at 1 and 0; other values make their gradients matter more
  gamma.init([](const std::array<index_t, 1>& g) { return 1.0 + 0.1 * double(g[0]); });
  beta.init([](const std::array<index_t, 1>& g) { return 0.05 * double(g[0]) - 0.1; });
  weighted_sum<2> loss(ge.out());
  auto fwd = wp::program(ln.program, ge.program, loss.program(ge.out()));
  auto bwd =
      wp::backward(fwd, loss.L, wp::wrt(x, dx), std::get<0>(ln.params), std::get<1>(ln.params));
  wp::run(wp::program(fwd, bwd));
  for (index_t b = 0; b < B; ++b) {
    double m = 0, v = 0;
    for (index_t f = 0; f < F; ++f) m += x.at({b, f}) / double(F);
    for (index_t f = 0; f < F; ++f) v += (x.at({b, f}) - m) * (x.at({b, f}) - m) / double(F);
    for (index_t f = 0; f < F; ++f) {
      const double z = (x.at({b, f}) - m) / std::sqrt(v + 1e-5) * gamma.at({f}) + beta.at({f});
      REQUIRE(std::abs(ln.out().at({b, f}) - z) <= 1e-12);
      REQUIRE(std::abs(ge.out().at({b, f}) - 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)))) <=
              1e-12);
    }
  }
  require_gradient(fwd, loss.L, x, dx);
  require_gradient(fwd, loss.L, gamma, *std::get<0>(ln.params).grad);
  require_gradient(fwd, loss.L, beta, *std::get<1>(ln.params).grad);
}

TEST_CASE("nn::add and the sequence forms of linear, layer_norm and the loss, and their gradients",
          "[nn]") {
  // a Transformer block's pieces over (batch, positions, features): fc = linear(x), a layer
  // norm of it, their sum (a residual), a linear head and the mean next-token loss
  const index_t B = 3, S = 4, I = 5, F = 6, C = 7;
  wp::array<double, 3> x("x", {B, S, I}), dx("dx", {B, S, I});
  wp::array<std::int32_t, 2> label("label", {B, S});
  fill(x, 2);
  label.init([](const std::array<index_t, 2>& g) { return std::int32_t((g[0] * 5 + g[1]) % 7); });
  auto fc = wp::nn::linear("fc", x, F);
  auto ln = wp::nn::layer_norm("ln", fc.out());
  auto res = wp::nn::add("res", ln.out(), fc.out());
  auto head = wp::nn::linear("head", res.out(), C);
  auto ce = wp::nn::softmax_cross_entropy("ce", head.out(), label);
  auto& gamma = *std::get<0>(ln.params).param;
  auto& beta = *std::get<1>(ln.params).param;
  gamma.init([](const std::array<index_t, 1>& g) { return 1.0 + 0.1 * double(g[0]); });
  beta.init([](const std::array<index_t, 1>& g) { return 0.05 * double(g[0]) - 0.1; });
  REQUIRE(fc.out().shape() == std::array<index_t, 3>{B, S, F});
  REQUIRE(head.out().shape() == std::array<index_t, 3>{B, S, C});
  auto fwd = wp::program(fc.program, ln.program, res.program, head.program, ce.program);
  auto bwd = wp::backward(fwd, ce.out(), wp::wrt(x, dx), std::get<0>(fc.params),
                          std::get<1>(fc.params), std::get<0>(ln.params), std::get<1>(ln.params),
                          std::get<0>(head.params), std::get<1>(head.params));
  wp::run(wp::program(fwd, bwd));
  auto& W1 = *std::get<0>(fc.params).param;
  auto& b1 = *std::get<1>(fc.params).param;
  auto& W2 = *std::get<0>(head.params).param;
  auto& b2 = *std::get<1>(head.params).param;
  double want = 0;
  for (index_t b = 0; b < B; ++b)
    for (index_t s = 0; s < S; ++s) {
      std::vector<double> y(static_cast<std::size_t>(F)), r(static_cast<std::size_t>(F));
      double m = 0, v = 0;
      for (index_t f = 0; f < F; ++f) {
        y[std::size_t(f)] = b1.at({f});
        for (index_t k = 0; k < I; ++k) y[std::size_t(f)] += x.at({b, s, k}) * W1.at({k, f});
        REQUIRE(std::abs(fc.out().at({b, s, f}) - y[std::size_t(f)]) <= 1e-12);
        m += y[std::size_t(f)] / double(F);
      }
      for (index_t f = 0; f < F; ++f) v += (y[std::size_t(f)] - m) * (y[std::size_t(f)] - m);
      v /= double(F);
      for (index_t f = 0; f < F; ++f) {
        const double z =
            (y[std::size_t(f)] - m) / std::sqrt(v + 1e-5) * gamma.at({f}) + beta.at({f});
        REQUIRE(std::abs(ln.out().at({b, s, f}) - z) <= 1e-12);
        r[std::size_t(f)] = z + y[std::size_t(f)];
        REQUIRE(std::abs(res.out().at({b, s, f}) - r[std::size_t(f)]) <= 1e-12);
      }
      double mx = -1e300, sum = 0, at_label = 0;
      std::vector<double> logit(static_cast<std::size_t>(C));
      for (index_t c = 0; c < C; ++c) {
        double o = b2.at({c});
        for (index_t f = 0; f < F; ++f) o += r[std::size_t(f)] * W2.at({f, c});
        REQUIRE(std::abs(head.out().at({b, s, c}) - o) <= 1e-12);
        logit[std::size_t(c)] = o;
        mx = std::max(mx, o);
      }
      for (index_t c = 0; c < C; ++c) sum += std::exp(logit[std::size_t(c)] - mx);
      at_label = logit[std::size_t((b * 5 + s) % 7)];
      want += (std::log(sum) + mx - at_label) / double(B * S);
    }
  REQUIRE(std::abs(ce.out().at({}) - want) <= 1e-12);
  require_gradient(fwd, ce.out(), x, dx);
  require_gradient(fwd, ce.out(), W1, *std::get<0>(fc.params).grad);
  require_gradient(fwd, ce.out(), b1, *std::get<1>(fc.params).grad);
  require_gradient(fwd, ce.out(), gamma, *std::get<0>(ln.params).grad);
  require_gradient(fwd, ce.out(), beta, *std::get<1>(ln.params).grad);
  require_gradient(fwd, ce.out(), W2, *std::get<0>(head.params).grad);
  require_gradient(fwd, ce.out(), b2, *std::get<1>(head.params).grad);
}

TEST_CASE("nn::batch_norm: per channel over the batch and the image, and its gradients", "[nn]") {
  const index_t N = 3, C = 2, H = 3, W = 4;
  wp::array<double, 4> x("x", {N, C, H, W}), dx("dx", {N, C, H, W});
  fill(x, 6);
  auto bn = wp::nn::batch_norm("bn", x);
  auto& gamma = *std::get<0>(bn.params).param;
  gamma.init([](const std::array<index_t, 1>& g) { return 0.8 + 0.3 * double(g[0]); });
  weighted_sum<4> loss(bn.out());
  auto fwd = wp::program(bn.program, loss.program(bn.out()));
  auto bwd =
      wp::backward(fwd, loss.L, wp::wrt(x, dx), std::get<0>(bn.params), std::get<1>(bn.params));
  wp::run(wp::program(fwd, bwd));
  for (index_t c = 0; c < C; ++c) {
    double m = 0, v = 0;
    const double cnt = double(N * H * W);
    for (index_t n = 0; n < N; ++n)
      for (index_t h = 0; h < H; ++h)
        for (index_t w = 0; w < W; ++w) m += x.at({n, c, h, w}) / cnt;
    for (index_t n = 0; n < N; ++n)
      for (index_t h = 0; h < H; ++h)
        for (index_t w = 0; w < W; ++w)
          v += (x.at({n, c, h, w}) - m) * (x.at({n, c, h, w}) - m) / cnt;
    for (index_t n = 0; n < N; ++n)
      for (index_t h = 0; h < H; ++h)
        for (index_t w = 0; w < W; ++w)
          REQUIRE(std::abs(bn.out().at({n, c, h, w}) -
                           (x.at({n, c, h, w}) - m) / std::sqrt(v + 1e-5) * gamma.at({c})) <=
                  1e-12);
  }
  require_gradient(fwd, loss.L, x, dx);
  require_gradient(fwd, loss.L, gamma, *std::get<0>(bn.params).grad);
  require_gradient(fwd, loss.L, *std::get<1>(bn.params).param, *std::get<1>(bn.params).grad);
}

TEST_CASE("nn::embedding: each token's row, its gradient a scatter-add", "[nn]") {
  const index_t B = 3, S = 4, V = 5, D = 3;
  wp::array<std::int64_t, 2> tok("tok", {B, S});
  tok.init([](const std::array<index_t, 2>& g) { return std::int64_t((g[0] * 7 + g[1] * 3) % 4); });
  auto em = wp::nn::embedding<double>("em", tok, V, D);
  auto& E = *std::get<0>(em.params).param;
  weighted_sum<3> loss(em.out());
  auto fwd = wp::program(em.program, loss.program(em.out()));
  wp::run(wp::program(fwd, wp::nn::backward(fwd, loss.L, em)));
  for (index_t b = 0; b < B; ++b)
    for (index_t s = 0; s < S; ++s)
      for (index_t d = 0; d < D; ++d)
        REQUIRE(em.out().at({b, s, d}) == E.at({(b * 7 + s * 3) % 4, d}));
  require_gradient(fwd, loss.L, E, *std::get<0>(em.params).grad);
  for (index_t d = 0; d < D; ++d) REQUIRE(std::get<0>(em.params).grad->at({4, d}) == 0.0);
}

TEST_CASE("nn::multi_head_attention: causal and not, and its gradients", "[nn]") {
  const index_t B = 2, S = 5, E = 6, H = 2;
  for (const bool causal : {false, true}) {
    INFO("causal " << causal);
    wp::array<double, 3> x("x", {B, S, E}), dx("dx", {B, S, E});
    fill(x, 8);
    auto at = wp::nn::multi_head_attention("at", x, H, {.causal = causal});
    weighted_sum<3> loss(at.out());
    auto fwd = wp::program(at.program, loss.program(at.out()));
    auto bwd = std::apply(
        [&](const auto&... w) { return wp::backward(fwd, loss.L, wp::wrt(x, dx), w...); },
        at.params);
    wp::run(wp::program(fwd, bwd));
    require_attention(at, fwd, loss.L, x, x, H, causal);
    require_gradient(fwd, loss.L, x, dx);
  }
}

TEST_CASE("nn::multi_head_attention over a memory: a decoder's attention, and its gradients",
          "[nn]") {
  // queries from x (S positions), keys and values from the memory (T != S positions)
  const index_t B = 2, S = 3, T = 5, E = 4, H = 2;
  for (const bool causal : {false, true}) {
    INFO("causal " << causal);
    wp::array<double, 3> x("x", {B, S, E}), dx("dx", {B, S, E}), m("m", {B, T, E}),
        dm("dm", {B, T, E});
    fill(x, 8);
    fill(m, 9);
    auto at = wp::nn::multi_head_attention("at", x, m, H, {.causal = causal});
    weighted_sum<3> loss(at.out());
    auto fwd = wp::program(at.program, loss.program(at.out()));
    auto bwd = std::apply(
        [&](const auto&... w) {
          return wp::backward(fwd, loss.L, wp::wrt(x, dx), wp::wrt(m, dm), w...);
        },
        at.params);
    wp::run(wp::program(fwd, bwd));
    require_attention(at, fwd, loss.L, x, m, H, causal);
    require_gradient(fwd, loss.L, x, dx);
    require_gradient(fwd, loss.L, m, dm);
  }
}

TEST_CASE("wp::random_uniform: a counter-based generator of its integer arguments", "[nn]") {
  const index_t n = 4001;
  wp::array<double, 1> u("u", {n});
  wp::array<std::int64_t, 0> key("key", {});
  key.init([](const std::array<index_t, 0>&) { return std::int64_t(-12); });
  auto [i] = wp::indices<1>();
  wp::run(wp::program(wp::map("u", wp::space(n), u(i) = wp::random_uniform(key(), wp::val(i), 3))));
  double mean = 0;
  for (index_t k = 0; k < n; ++k) {
    const double want = ref::uniform(ref::hash(ref::hash(-12, k), 3));
    REQUIRE(u.at({k}) == want);
    REQUIRE((u.at({k}) >= 0.0 && u.at({k}) < 1.0));
    mean += u.at({k}) / double(n);
  }
  CHECK(std::abs(mean - 0.5) < 0.02);
  // one argument: hash(k, 0)
  wp::run(wp::program(wp::map("u1", wp::space(n), u(i) = wp::random_uniform(wp::val(i)))));
  for (index_t k = 0; k < n; ++k) REQUIRE(u.at({k}) == ref::uniform(ref::hash(k, 0)));
}

TEST_CASE("nn::dropout: a mask from (layer, step, coordinates), and its gradient", "[nn]") {
  const index_t B = 37, F = 23;
  const double p = 0.3;
  wp::array<double, 2> x("x", {B, F}), dx("dx", {B, F});
  wp::array<std::int64_t, 0> step("step", {});
  fill(x, 3);
  auto dr = wp::nn::dropout("drop", x, p, step);
  weighted_sum<2> loss(dr.out());
  auto fwd = wp::program(dr.program, loss.program(dr.out()));
  auto bwd = wp::backward(fwd, loss.L, wp::wrt(x, dx));
  std::vector<int> kept_before;
  for (std::int64_t k : {std::int64_t(1), std::int64_t(2)}) {
    step.init([k](const std::array<index_t, 0>&) { return k; });
    wp::run(wp::program(fwd, bwd));
    index_t dropped = 0;
    std::vector<int> kept;
    for (index_t b = 0; b < B; ++b)
      for (index_t f = 0; f < F; ++f) {
        const double r =
            ref::uniform(ref::hash(ref::hash(ref::hash(ref::name_seed("drop"), k), b), f));
        const bool keep = r >= p;
        kept.push_back(keep);
        dropped += !keep;
        REQUIRE(dr.out().at({b, f}) == (keep ? x.at({b, f}) * (1.0 / (1.0 - p)) : 0.0));
        // dL/dx = g / (1 - p) where kept, 0 where dropped: the same mask backward
        REQUIRE(std::abs(dx.at({b, f}) - (keep ? loss.g.at({b, f}) / (1.0 - p) : 0.0)) <= 1e-12);
      }
    const double rate = double(dropped) / double(B * F);
    CHECK((rate > p - 0.05 && rate < p + 0.05));
    if (!kept_before.empty()) {  // another step, another mask
      index_t differ = 0;
      for (std::size_t e = 0; e < kept.size(); ++e) differ += kept[e] != kept_before[e];
      CHECK(differ > index_t(kept.size() / 5));
    }
    kept_before = kept;
    require_gradient(fwd, loss.L, x, dx);
  }
  // p = 0 keeps everything
  auto all = wp::nn::dropout("keep_all", x, 0.0, step);
  wp::run(all.program);
  for (index_t b = 0; b < B; ++b)
    for (index_t f = 0; f < F; ++f) REQUIRE(all.out().at({b, f}) == x.at({b, f}));
}

TEST_CASE("nn::lstm: a cell per step, against loops, and its gradients", "[nn][lstm]") {
  constexpr index_t S = 3;
  const index_t B = 2, I = 3, H = 4;
  wp::array<double, 3> x("x", {B, S, I}), dx("dx", {B, S, I});
  fill(x, 11);
  auto ls = wp::nn::lstm<S>("lstm", x, H);
  auto& Wx = *std::get<0>(ls.params).param;
  auto& Wh = *std::get<1>(ls.params).param;
  auto& bias = *std::get<2>(ls.params).param;
  weighted_sum<3> loss(ls.out());
  auto fwd = wp::program(ls.program, loss.program(ls.out()));
  auto bwd = wp::backward(fwd, loss.L, wp::wrt(x, dx), std::get<0>(ls.params),
                          std::get<1>(ls.params), std::get<2>(ls.params));
  wp::run(wp::program(fwd, bwd));
  // PyTorch's cell in plain loops
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  std::vector<double> h(std::size_t(B * H), 0.0), c(std::size_t(B * H), 0.0);
  for (index_t t = 0; t < S; ++t) {
    std::vector<double> hn(h.size()), cn(c.size());
    for (index_t b = 0; b < B; ++b)
      for (index_t k = 0; k < H; ++k) {
        double z[4];
        for (index_t q = 0; q < 4; ++q) {
          z[q] = bias.at({q, k});
          for (index_t r = 0; r < I; ++r) z[q] += x.at({b, t, r}) * Wx.at({r, q, k});
          for (index_t r = 0; r < H; ++r) z[q] += h[std::size_t(b * H + r)] * Wh.at({r, q, k});
        }
        const std::size_t e = std::size_t(b * H + k);
        cn[e] = sig(z[1]) * c[e] + sig(z[0]) * std::tanh(z[2]);
        hn[e] = sig(z[3]) * std::tanh(cn[e]);
        REQUIRE(std::abs(ls.out().at({b, t, k}) - hn[e]) <= 1e-12);
      }
    h = hn;
    c = cn;
  }
  require_gradient(fwd, loss.L, x, dx);
  require_gradient(fwd, loss.L, Wx, *std::get<0>(ls.params).grad);
  require_gradient(fwd, loss.L, Wh, *std::get<1>(ls.params).grad);
  require_gradient(fwd, loss.L, bias, *std::get<2>(ls.params).grad);
}

TEST_CASE("nn: parameters start uniform in +-1/sqrt(fan-in), from their names", "[nn]") {
  wp::array<double, 2> x("x", {2, 9});
  auto a = wp::nn::linear("a", x, 40);
  auto a2 = wp::nn::linear("a", x, 40);
  auto b = wp::nn::linear("b", x, 40);
  wp::run(wp::program(a.program, a2.program, b.program));
  auto& Wa = *std::get<0>(a.params).param;
  auto& Wa2 = *std::get<0>(a2.params).param;
  auto& Wb = *std::get<0>(b.params).param;
  double lo = 1, hi = -1;
  int same = 0;
  for (index_t e = 0; e < Wa.size(); ++e) {
    lo = std::min(lo, Wa.data()[e]);
    hi = std::max(hi, Wa.data()[e]);
    REQUIRE(Wa.data()[e] == Wa2.data()[e]);  // the same name: the same values
    same += Wa.data()[e] == Wb.data()[e];
  }
  CHECK(same == 0);
  CHECK(lo >= -1.0 / 3);
  CHECK(hi < 1.0 / 3);
  CHECK(hi - lo > 0.5);  // 360 values spread over the interval
}

TEST_CASE("nn: a layer that cannot be made says why", "[nn][errors]") {
  wp::array<double, 4> x("x", {2, 6, 5, 5});
  wp::array<double, 2> z("z", {3, 4});
  wp::array<std::int32_t, 1> label("label", {2});
  auto what = [](auto&& f) {
    try {
      f();
    } catch (const wp::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(what([&] { wp::nn::conv2d("c", x, 8, 3, {.groups = 4}); }),
             Contains("[workpart.shape_error] wp::nn: layer 'c': groups 4 must divide the input "
                      "channels 6 and the output channels 8"));
  CHECK_THAT(what([&] { wp::nn::conv2d("c", x, 8, 7); }),
             Contains("layer 'c': the height 5 padded by 0 is smaller than the kernel 7"));
  CHECK_THAT(what([&] {
               wp::nn::conv2d("c", x, 8, {1, 9}, {.padding = {0, 1}});
             }),
             Contains("layer 'c': the width 5 padded by 1 is smaller than the kernel 9"));
  wp::array<double, 4> x2("x2", {2, 3, 4, 5});
  CHECK_THAT(what([&] { wp::nn::concat("cat", x, x2); }),
             Contains("layer 'cat': it joins 'x' (2, 6, 5, 5) and 'x2' (2, 3, 4, 5) along the "
                      "second axis; every other extent must match"));
  CHECK_THAT(what([&] { wp::nn::max_pool2d("p", x, 2, {.padding = 2}); }),
             Contains("layer 'p': padding 2 is more than half the kernel 2"));
  CHECK_THAT(what([&] { wp::nn::softmax_cross_entropy("ce", z, label); }),
             Contains("layer 'ce': labels 'label' hold 2 entries for a batch of 3"));
  CHECK_THAT(what([&] { wp::nn::linear("fc", z, 0); }),
             Contains("layer 'fc': out_features must be at least 1"));
  wp::array<double, 3> seq("seq", {2, 3, 6});
  CHECK_THAT(what([&] { wp::nn::linear("fc", seq, 0); }),
             Contains("layer 'fc': out_features must be at least 1"));
  wp::array<double, 3> seq2("seq2", {2, 4, 6});
  CHECK_THAT(what([&] { wp::nn::add("res", seq, seq2); }),
             Contains("layer 'res': it adds 'seq' (2, 3, 6) and 'seq2' (2, 4, 6); give two arrays "
                      "of one shape"));
  wp::array<std::int32_t, 2> labels("labels", {2, 4});
  CHECK_THAT(what([&] { wp::nn::softmax_cross_entropy("ce", seq, labels); }),
             Contains("layer 'ce': labels 'labels' are (2, 4) for logits of (2, 3) positions"));
  wp::array<std::int64_t, 0> step("step", {});
  CHECK_THAT(what([&] { wp::nn::dropout("dr", z, 1.0, step); }),
             Contains("layer 'dr': the drop probability must be in [0, 1), got 1"));
  CHECK_THAT(what([&] { wp::nn::lstm<2>("ls", seq, 5); }),
             Contains("layer 'ls': its input 'seq' holds 3 steps, the layer 2"));
  CHECK_THAT(what([&] { wp::nn::multi_head_attention("at", seq, 4); }),
             Contains("layer 'at': heads 4 must divide the embedding 6"));
  wp::array<double, 3> mem("mem", {2, 7, 4});
  CHECK_THAT(what([&] { wp::nn::multi_head_attention("at", seq, mem, 2); }),
             Contains("layer 'at': its memory 'mem' (batch 2, embedding 4) does not match 'seq' "
                      "(batch 2, embedding 6)"));
  CHECK_THAT(what([&] { wp::nn::multi_head_attention("at", seq, seq, 4); }),
             Contains("layer 'at': heads 4 must divide the embedding 6"));
  // a label outside the classes: an out-of-bounds error when the map runs
  wp::array<std::int32_t, 1> bad("bad", {3});
  bad.init([](const std::array<index_t, 1>& g) { return std::int32_t(g[0] == 1 ? 4 : 0); });
  auto ce = wp::nn::softmax_cross_entropy("ce", z, bad);
  CHECK_THAT(what([&] { wp::run(ce.program); }), Contains("'z'"));
}
