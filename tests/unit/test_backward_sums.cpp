// wp::backward of inner sums (wp::sum over wp::range with constant bounds, and over wp::all)
// against central finite differences (double, relative error <= 1e-6, uneven extents): the
// body's derivative runs over the map's space extended by the sum's index (a map of its own,
// d<map>.sum), seeded by the sum's seed stored per point. One process (wp::run);
// tests/mpi/test_train.cpp distributes a step with an inner sum.

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include <workpart/workpart.hpp>

#include "finite_differences.hpp"

namespace wp = workpart;
using Catch::Matchers::Contains;
using namespace fd;

TEST_CASE("backward: an inner sum over a constant range (a convolution), seeded through tanh",
          "[backward][sum]") {
  const wp::index_t n = 12, R = 3, m = (n - R) / 2 + 1;  // stride 2: 5 outputs
  wp::array<double, 1> x("x", {n}), dx("dx", {n}), w("w", {R}), dw("dw", {R});
  wp::array<double, 1> y("y", {m}), g("g", {m});
  wp::array<double, 0> L("L", {});
  fill(x, 1);
  fill(w, 2);
  fill(g, 3);
  auto [i, r] = wp::indices<2>();
  auto fwd = wp::program(
      wp::map("conv", wp::space(m),
              y(i) = wp::tanh(wp::sum(wp::range(r, 0, R), w(r) * x(2 * i + r))) + 0.5 * x(i)),
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(m), L() += y(i) * g(i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(w, dw));
  std::string names;
  bwd.for_each_map([&](const auto& mp) { names += mp.name() + " "; });
  CHECK_THAT(names, Contains("dconv ") && Contains("dconv.sum "));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, x, dx);  // the transposed convolution, plus the direct read
  require_gradient(fwd, L, w, dw);  // summed over the output positions
  REQUIRE(dx.at({n - 1}) == 0.0);   // x(11): beyond every window (2 * 4 + 2) and every x(i)
}

TEST_CASE("backward: inner sums from a nonzero lower bound, in a rank-0 map, over wp::all",
          "[backward][sum]") {
  const wp::index_t M = 4, C = 5;
  wp::array<double, 2> X("X", {M, C}), dX("dX", {M, C}), Y("Y", {M, C});
  wp::array<double, 1> v("v", {C + 2}), dv("dv", {C + 2});
  wp::array<double, 0> L("L", {});
  fill(X, 4);
  fill(v, 5);
  auto [i, j, r] = wp::indices<3>();
  auto fwd = wp::program(
      // centre each row: Y(i, j) = X(i, j) - mean_k X(i, k)  (wp::all: an implicit inner index)
      wp::map("centre", wp::space(M, C), Y(i, j) = X(i, j) - wp::sum(X(i, wp::all)) / double(C)),
      wp::map("l0", wp::space(), L() = wp::sum(wp::range(r, 2, C + 2), v(r) * v(r - 1))),
      wp::map("loss", wp::space(M, C), L() += Y(i, j) * Y(i, j) * (1.0 + 0.1 * wp::val(j))));
  auto bwd = wp::backward(fwd, L, wp::wrt(X, dX), wp::wrt(v, dv));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, X, dX);
  require_gradient(fwd, L, v, dv);  // v(0) is read only as v(r - 1) at r = 1: never
  REQUIRE(dv.at({0}) == 0.0);
}

TEST_CASE("backward: inner reductions whose bounds vary with the outer indices",
          "[backward][sum][affine]") {
  const wp::index_t n = 7, W = 3;
  wp::array<double, 1> x("x", {n + W}), dx("dx", {n + W}), w("w", {n}), dw("dw", {n});
  wp::array<double, 1> y("y", {n}), z("z", {n}), q("q", {n}), g("g", {n});
  wp::array<double, 2> M("M", {n, n}), dM("dM", {n, n});
  wp::array<double, 0> L("L", {});
  fill(x, 1);
  fill(w, 2);
  fill(g, 3);
  fill(M, 4);
  auto [i, r] = wp::indices<2>();
  auto tail =
      wp::program(wp::map("l0", wp::space(), L() = 0.0),
                  wp::map("loss", wp::space(n), L() += (y(i) + z(i) * q(i)) * g(i) + y(i) * z(i)));
  auto names = [](const auto& prog) {
    std::string s;
    prog.for_each_map([&](const auto& mp) { s += mp.name() + " "; });
    return s;
  };
  SECTION("a causal prefix sum, a sliding window, and a prefix max with ties") {
    auto fwd = wp::program(
        // y(i) = sum_{r <= i} M(i, r) x(r) w(r)   (a triangle, the range [0, i + 1): causal
        // attention's weighted sum of values)
        wp::map("prefix", wp::space(n),
                y(i) = wp::sum(wp::range(r, 0, i + 1), M(i, r) * x(r) * w(r))),
        // z(i) = tanh(sum_{r in [i, i + W)} x(r)^2)   (a window sliding with i)
        wp::map("window", wp::space(n),
                z(i) = wp::tanh(wp::sum(wp::range(r, i, i + W), x(r) * x(r)))),
        // q(i) = max_{r in [1, i + 2)} x(r) w(i) + w(i)   (no ties: the values are distinct)
        wp::map("pmax", wp::space(n),
                q(i) = wp::max_of(wp::range(r, 1, i + 2), x(r) * w(i)) + w(i)),
        tail);
    auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(w, dw), wp::wrt(M, dM));
    CHECK_THAT(names(bwd), Contains("dprefix.sum ") && Contains("dwindow.sum ") &&
                               Contains("dpmax.sum.ties ") && Contains("dpmax.sum "));
    wp::run(wp::program(fwd, bwd));
    require_gradient(fwd, L, x, dx);
    require_gradient(fwd, L, w, dw);
    require_gradient(fwd, L, M, dM);
    for (wp::index_t a = 0; a < n; ++a)  // the upper triangle is outside every range
      for (wp::index_t b = a + 1; b < n; ++b) REQUIRE(dM.at({a, b}) == 0.0);
    REQUIRE(dx.at({n + W - 1}) == 0.0);  // beyond every window: x(n + W - 1) is never read
  }
  SECTION("ties of a max over a varying range share the gradient only inside the range") {
    wp::array<double, 1> t("t", {n}), dt("dt", {n});
    for (wp::index_t e = 0; e < n; ++e) t.at({e}) = double(e % 3);  // 0 1 2 0 1 2 0: ties
    // q(i) = max_{r in [0, i + 1)} t(r); L = sum_i q(i) g(i)
    auto fwd = wp::program(
        wp::map("pmax", wp::space(n), q(i) = wp::max_of(wp::range(r, 0, i + 1), t(r))),
        wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(n), L() += q(i) * g(i)));
    auto bwd = wp::backward(fwd, L, wp::wrt(t, dt));
    wp::run(wp::program(fwd, bwd));
    // by hand: q(a)'s seed g(a) is shared evenly among the r <= a whose t(r) is the maximum
    std::vector<double> want(std::size_t(n), 0.0);
    for (wp::index_t a = 0; a < n; ++a) {
      double mx = -1e300;
      for (wp::index_t b = 0; b <= a; ++b) mx = std::max(mx, t.at({b}));
      int ties = 0;
      for (wp::index_t b = 0; b <= a; ++b) ties += t.at({b}) == mx ? 1 : 0;
      for (wp::index_t b = 0; b <= a; ++b)
        if (t.at({b}) == mx) want[std::size_t(b)] += g.at({a}) / ties;
    }
    for (wp::index_t b = 0; b < n; ++b) {
      INFO("dt(" << b << ")");
      REQUIRE(dt.at({b}) == Approx(want[std::size_t(b)]).epsilon(1e-12).margin(1e-14));
    }
    REQUIRE(want[5] != 0.0);  // t(5) = 2 ties with t(2) from q(5) on
  }
}

TEST_CASE("backward: a varying range whose hull leaves an array is refused",
          "[backward][sum][affine][errors]") {
  const wp::index_t n = 6;
  wp::array<double, 1> x("x", {n}), dx("dx", {n}), y("y", {n});
  wp::array<double, 0> L("L", {});
  auto [i, r] = wp::indices<2>();
  // r in [0, i + 1) and x(i - r): inside for the range, but over the hull r = 0 .. n - 1 at
  // i = 0 the read x(-5) would leave x
  auto fwd = wp::program(
      wp::map("rev", wp::space(n), y(i) = wp::sum(wp::range(r, 0, i + 1), x(i - r) * x(r))),
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(n), L() += y(i)));
  REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(x, dx)),
                      Contains("[workpart.plan_error]") && Contains("map 'rev'") &&
                          Contains("depends on the outer indices") && Contains("x(i0 - i1)"));
}

TEST_CASE("backward: a sum that reads a row's whole axis covers its gradient with '='",
          "[backward][sum]") {
  const wp::index_t M = 3, C = 7;
  wp::array<double, 2> X("X", {M, C}), dX("dX", {M, C});
  wp::array<double, 1> s("s", {M});
  wp::array<double, 0> L("L", {});
  fill(X, 6);
  auto [i] = wp::indices<1>();
  auto fwd = wp::program(wp::map("lse", wp::space(M), s(i) = wp::sum(wp::exp(X(i, wp::all)))),
                         wp::map("l0", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(M), L() += wp::log(s(i)) * (1.0 + wp::val(i))));
  auto bwd = wp::backward(fwd, L, wp::wrt(X, dX));
  // dX(i, k) += ... over (i, k) spans dX once: written with '=', no zeroing map runs
  std::string zeroing;
  bwd.for_each_map([&](const auto& mp) {
    // a pruned zeroing map accesses nothing
    if (mp.name().rfind("zero.dX", 0) == 0 && !mp.access_events().empty())
      zeroing += mp.name() + " ";
  });
  CHECK(zeroing.empty());
  for (wp::index_t k = 0; k < dX.size(); ++k) dX.data()[k] = 123.0;  // stale: overwritten
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, X, dX);
}

TEST_CASE("backward: an inner sum over a value the same map computed is refused",
          "[backward][sum][errors]") {
  const wp::index_t n = 6, R = 2;
  wp::array<double, 1> x("x", {n}), t("t", {n}), y("y", {n - 1}), dx("dx", {n});
  wp::array<double, 0> L("L", {});
  auto [i, r] = wp::indices<2>();
  auto fwd = wp::program(wp::map("both", wp::space(n - 1), t(i) = 2.0 * x(i),
                                 y(i) = wp::sum(wp::range(r, 0, R), t(i) * x(i + r))),
                         wp::map("l0", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(n - 1), L() += y(i)));
  REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(x, dx)),
                      Contains("[workpart.plan_error]") &&
                          Contains("map 'both' reduces over 't'") &&
                          Contains("write 't' in an earlier map"));
}

TEST_CASE("backward: an inner sum whose bounds read data is refused, naming the map and the fix",
          "[backward][sum][errors]") {
  // A program is run-time data, so this is a wp::plan_error, not a build error: the map is
  // fine to run (wp::run below), only its derivative is not derived yet.
  wp::array<double, 1> x("x", {6}), y("y", {4}), dx("dx", {6}), val("val", {9});
  wp::array<std::int32_t, 1> row("row", {5}), col("col", {9});
  wp::array<double, 0> L("L", {});
  auto [i, q] = wp::indices<2>();
  const std::int32_t rows[] = {0, 2, 2, 5, 9}, cols[] = {0, 5, 1, 2, 3, 0, 1, 4, 5};
  for (int k = 0; k < 5; ++k) row.data()[k] = rows[k];
  for (int k = 0; k < 9; ++k) col.data()[k] = cols[k];
  fill(val, 3);
  fill(x, 4);
  auto fwd = wp::program(
      wp::map("spmv", wp::space(4),
              y(i) = wp::sum(wp::range(q, row(i), row(i + 1)), val(q) * x(col(q)))),
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(4), L() += y(i) * y(i)));
  REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(x, dx)),
                      Contains("[workpart.plan_error]") &&
                          Contains("map 'spmv' has no derivative") &&
                          Contains("bounds read data is not yet") &&
                          Contains("a CSR row sum as y(row_of(q)) += val(q) * x(col(q))"));
  wp::run(fwd);  // the forward program itself runs: y(i) = sum over row i's nonzeros
  for (int r = 0; r < 4; ++r) {
    double want = 0;
    for (int k = rows[r]; k < rows[r + 1]; ++k) want += val.data()[k] * x.data()[cols[k]];
    CHECK(y.data()[r] == Approx(want));
  }
}

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
