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
