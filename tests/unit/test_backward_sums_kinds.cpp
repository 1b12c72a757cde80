// wp::backward of inner max_of / min_of, softmax cross-entropy written with inner reductions,
// and padded reads in inner sums, against central finite differences (double, relative error
// <= 1e-6, uneven extents); tests/unit/test_backward_sums.cpp has the sums themselves. One
// process (wp::run).

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include <workpart/workpart.hpp>

#include "finite_differences.hpp"

namespace wp = workpart;
using Catch::Matchers::Contains;
using namespace fd;

TEST_CASE("backward: inner max_of / min_of send the gradient to the terms that won",
          "[backward][sum][max]") {
  const wp::index_t M = 4, K = 6;
  wp::array<double, 2> X("X", {M, K}), dX("dX", {M, K});
  wp::array<double, 1> w("w", {K}), dw("dw", {K}), hi("hi", {M}), lo("lo", {M});
  wp::array<double, 0> L("L", {});
  auto [i, r] = wp::indices<2>();
  auto fwd = wp::program(
      wp::map("hi", wp::space(M), hi(i) = wp::max_of(wp::range(r, 0, K), X(i, r) * w(r))),
      wp::map("lo", wp::space(M), lo(i) = wp::min_of(wp::exp(X(i, wp::all)))),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(M), L() += wp::tanh(hi(i)) * (1.0 + wp::val(i)) + lo(i) * lo(i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(X, dX), wp::wrt(w, dw));

  SECTION("distinct values: finite differences") {
    fill(X, 7);
    fill(w, 8, 1.5);
    wp::run(wp::program(fwd, bwd));
    require_gradient(fwd, L, X, dX);
    require_gradient(fwd, L, w, dw);
  }
  SECTION("ties: each of k equal winners gets 1/k of the gradient") {
    // row i: the values (j * 5 + i) % 3, so the maximum 2 and minimum 0 recur; w = 1
    X.init([](const std::array<wp::index_t, 2>& g) { return double((g[1] * 5 + g[0]) % 3); });
    w.init([](const std::array<wp::index_t, 1>&) { return 1.0; });
    wp::run(wp::program(fwd, bwd));
    for (wp::index_t a = 0; a < M; ++a) {
      int top = 0, bottom = 0;
      for (wp::index_t j = 0; j < K; ++j) {
        top += (j * 5 + a) % 3 == 2;
        bottom += (j * 5 + a) % 3 == 0;
      }
      const double d_hi = (1.0 - std::tanh(2.0) * std::tanh(2.0)) * (1.0 + double(a));
      const double d_lo = 2.0 * 1.0 * 1.0;  // d(lo^2)/dlo * d exp(x)/dx at x = 0, lo = 1
      for (wp::index_t j = 0; j < K; ++j) {
        const wp::index_t v = (j * 5 + a) % 3;
        const double want = (v == 2 ? d_hi / top : 0.0) + (v == 0 ? d_lo / bottom : 0.0);
        INFO("dX(" << a << ", " << j << ")");
        REQUIRE(dX.at({a, j}) == Approx(want).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("backward: softmax cross-entropy written with inner reductions, map by map",
          "[backward][sum]") {
  const wp::index_t M = 5, C = 7;
  wp::array<double, 2> X("X", {M, C}), dX("dX", {M, C}), E("E", {M, C});
  wp::array<double, 1> mx("mx", {M}), s("s", {M});
  wp::array<int, 1> label("label", {M});
  wp::array<double, 0> L("L", {});
  fill(X, 9);
  label.init([](const std::array<wp::index_t, 1>& g) { return int((g[0] * 3) % C); });
  auto [i, j] = wp::indices<2>();
  auto fwd = wp::program(
      wp::map("max", wp::space(M), mx(i) = wp::max_of(X(i, wp::all))),
      wp::map("exp", wp::space(M, C), E(i, j) = wp::exp(X(i, j) - mx(i))),
      wp::map("sum", wp::space(M), s(i) = wp::sum(E(i, wp::all))),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("nll", wp::space(M, C),
              L() += wp::select(label(i) == wp::val(j), wp::log(s(i)) - (X(i, j) - mx(i)), 0.0)));
  auto bwd = wp::backward(fwd, L, wp::wrt(X, dX));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, X, dX);
}

// Padded reads (wp::padded): each one's gradient is written into an array made by
// wp::backward, `dx.padded`, spanning x and every subscript over the derivative's space, and
// `unpad.dx.padded` adds its part over x into dx; where the read was the fill nothing reaches
// dx.
TEST_CASE("backward: padded reads, in an inner sum (stride 2) and beyond the array",
          "[backward][sum][padded]") {
  const wp::index_t n = 11, R = 3, m = (n + 2 - R) / 2 + 1;  // pad 1, stride 2: 6 outputs
  wp::array<double, 1> x("x", {n}), dx("dx", {n}), w("w", {R}), dw("dw", {R});
  wp::array<double, 1> y("y", {m}), g("g", {m});
  wp::array<double, 0> L("L", {});
  fill(x, 1);
  fill(w, 2);
  fill(g, 3);
  auto [i, r] = wp::indices<2>();
  auto fwd = wp::program(
      wp::map(
          "conv", wp::space(m),
          y(i) = wp::tanh(wp::sum(wp::range(r, 0, R), wp::padded(x, 0.0)(2 * i + r - 1) * w(r))) +
                 // x(i + 8): inside for i < 3, the fill 0.25 beyond
                 wp::padded(x, 0.25)(i + 8) * wp::padded(x, 0.5)(n - 3 - 2 * i)),
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(m), L() += y(i) * g(i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(w, dw));
  std::string names;
  bwd.for_each_map([&](const auto& mp) { names += mp.name() + " "; });
  CHECK_THAT(names, Contains("unpad.dx.padded ") && Contains("unpad.dx.padded2 ") &&
                        Contains("unpad.dx.padded3 "));
  // the one in the sum spans x(-1) .. x(2 * 5 + 2 - 1 = 11): x's 11 and one on each side
  bool sized = false;
  bwd.for_each_map([&](const auto& mp) {
    if (mp.name() == "zero.dx.padded3") sized = mp.lo()[0] == 0 && mp.hi()[0] == n + 2;
  });
  CHECK(sized);
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, x, dx);
  require_gradient(fwd, L, w, dw);
}

TEST_CASE(
    "backward: a padded 2-D convolution (stride 2) into a max pooling with a "
    "-infinity border",
    "[backward][padded]") {
  const wp::index_t N = 2, C = 2, K = 2, H = 7, W = 5, R = 3;
  const wp::index_t Ho = (H + 2 - R) / 2 + 1, Wo = (W + 2 - R) / 2 + 1;    // 4 x 3
  const wp::index_t Po = (Ho + 2 - 3) / 2 + 1, Qo = (Wo + 2 - 3) / 2 + 1;  // 2 x 2
  wp::array<double, 4> x("x", {N, C, H, W}), dx("dx", {N, C, H, W}), w("w", {K, C, R, R}),
      dw("dw", {K, C, R, R}), z("z", {N, K, Ho, Wo}), p("p", {N, K, Po, Qo}),
      g("g", {N, K, Po, Qo});
  wp::array<double, 0> L("L", {});
  fill(x, 6);
  fill(w, 7);
  fill(g, 8);
  const double inf = std::numeric_limits<double>::infinity();
  auto [n, k, i, j, c, r, s] = wp::indices<7>();
  auto fwd = wp::program(
      wp::map("z0", wp::space(N, K, Ho, Wo), z(n, k, i, j) = 0.0),
      wp::map(
          "conv", wp::space(N, K, Ho, Wo, C, R, R),
          z(n, k, i, j) += wp::padded(x, 0.0)(n, c, 2 * i + r - 1, 2 * j + s - 1) * w(k, c, r, s)),
      wp::map("p0", wp::space(N, K, Po, Qo), p(n, k, i, j) = -inf),
      wp::map("pool", wp::space(N, K, Po, Qo, 3, 3),
              wp::max_into(p(n, k, i, j),
                           wp::tanh(wp::padded(z, -inf)(n, k, 2 * i + c - 1, 2 * j + r - 1)))),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(N, K, Po, Qo), L() += p(n, k, i, j) * g(n, k, i, j)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(w, dw));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, x, dx);  // the transposed convolution, cut at the border
  require_gradient(fwd, L, w, dw);
}

TEST_CASE("backward: a padded read under a range that varies with the outer indices",
          "[backward][sum][affine][padded]") {
  const wp::index_t n = 6;
  wp::array<double, 1> x("x", {n}), dx("dx", {n}), y("y", {n});
  wp::array<double, 0> L("L", {});
  fill(x, 9);
  auto [i, r] = wp::indices<2>();
  // over the hull r = 0 .. n - 1 the read x(i - r) leaves x (refused for a plain read, above);
  // padded, its gradient there lands in dx.padded's border and is dropped
  auto fwd =
      wp::program(wp::map("rev", wp::space(n),
                          y(i) = wp::sum(wp::range(r, 0, i + 1), wp::padded(x, 0.0)(i - r) * x(r))),
                  wp::map("l0", wp::space(), L() = 0.0),
                  wp::map("loss", wp::space(n), L() += y(i) * (1.0 + 0.3 * wp::val(i))));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, x, dx);
}

// Nested inner reductions differentiate level by level: each level's seed is stored per point
// of its derivative's space (dsum.<map>.sum, ...) and its body differentiated over that space
// extended by its own index (d<map>.sum.sum, ...).
TEST_CASE(
    "backward: nested inner reductions (a padded 2-D convolution as three sums, a max "
    "pooling as two max_of from -1, a triangle inside a sum)",
    "[backward][sum][nested]") {
  const wp::index_t N = 2, C = 2, K = 2, H = 6, W = 5;
  const wp::index_t Ho = (H + 2 - 3) / 2 + 1, Wo = (W + 2 - 3) / 2 + 1;  // 3 x 3
  wp::array<double, 4> x("x", {N, C, H, W}), dx("dx", {N, C, H, W}), w("w", {K, C, 3, 3}),
      dw("dw", {K, C, 3, 3}), z("z", {N, K, Ho, Wo}), p("p", {N, K, Ho, Wo});
  wp::array<double, 0> L("L", {});
  fill(x, 10);
  fill(w, 11);
  auto [n, k, i, j, c, r, s] = wp::indices<7>();
  auto xp = wp::padded(x, 0.0);
  const double inf = std::numeric_limits<double>::infinity();
  auto fwd = wp::program(
      wp::map("conv", wp::space(N, K, Ho, Wo),
              z(n, k, i, j) = wp::sum(
                  wp::range(c, 0, C),
                  wp::sum(wp::range(r, 0, 3),
                          wp::sum(wp::range(s, 0, 3),
                                  xp(n, c, 2 * i + r - 1, 2 * j + s - 1) * w(k, c, r, s))))),
      wp::map("pool", wp::space(N, K, Ho, Wo),
              p(n, k, i, j) = wp::max_of(
                  wp::range(c, -1, 2), wp::max_of(wp::range(r, -1, 2), wp::tanh(wp::padded(z, -inf)(
                                                                           n, k, i + c, j + r))))),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(N, K, Ho, Wo),
              L() += p(n, k, i, j) * (1.0 + 0.1 * wp::val(i) - 0.2 * wp::val(j))));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(w, dw));
  std::string names;
  bwd.for_each_map([&](const auto& mp) { names += mp.name() + " "; });
  CHECK_THAT(names, Contains("dconv.sum.sum.sum ") && Contains("dpool.sum.sum.ties ") &&
                        Contains("unpad.dz.padded ") && Contains("unpad.dx.padded "));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, x, dx);
  require_gradient(fwd, L, w, dw);

  // sum_t a(t) sum_{u <= t} exp(a(u)) v(q + t - u + 1): the inner range varies with the outer
  // sum's index; over its hull the read of v leaves v (padded, so its gradient is dropped)
  wp::array<double, 1> a("a", {5}), da("da", {5}), v("v", {9}), dv("dv", {9}), y("y", {4});
  fill(a, 12);
  fill(v, 13);
  auto [q, t, u] = wp::indices<3>();
  auto tri = wp::program(
      wp::map("tri", wp::space(4),
              y(q) = wp::sum(wp::range(t, 0, 5),
                             a(t) * wp::sum(wp::range(u, 0, t + 1),
                                            wp::exp(a(u)) * wp::padded(v, 0.0)(q + t - u + 1)))),
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(4), L() += y(q) * y(q)));
  auto tb = wp::backward(tri, L, wp::wrt(a, da), wp::wrt(v, dv));
  wp::run(wp::program(tri, tb));
  require_gradient(tri, L, a, da);
  require_gradient(tri, L, v, dv);
}
