// wp::backward of nested inner reductions (wp::sum / max_of / min_of inside one another)
// against central finite differences (double, relative error <= 1e-6, uneven extents), in
// every order of the reductions' indices: an inner reduction's derivative runs over the space
// extended by its index, which there becomes the space's next dimension, and a range nested
// in its body may be bound to that very dimension (`auto [i, c, r]` with the sum over r
// outermost: c is index 1). These used to give wrong gradients silently (off-diagonal
// entries 0), or a shape_error about an access nobody wrote. Also padded reads inside inner
// reductions over any index. One process (wp::run); tests/mpi/test_train.cpp distributes a
// multi-channel convolution written tap-outermost.

#include "backward_nested_forms.hpp"

TEST_CASE("backward: two nested sums in either index order (a multi-channel convolution)",
          "[backward][sum][nested]") {
  two_deep_both_orders<sum_k, sum_k>();
}

TEST_CASE("backward: two nested reductions, sum / max_of / min_of mixed, in either index order",
          "[backward][sum][nested]") {
  two_deep_both_orders<max_k, sum_k>();  // a max pooling over a channel sum: used not to compile
  two_deep_both_orders<sum_k, max_k>();
  two_deep_both_orders<min_k, sum_k>();
  two_deep_both_orders<sum_k, min_k>();
  two_deep_both_orders<max_k, min_k>();
  two_deep_both_orders<min_k, max_k>();
  two_deep_both_orders<max_k, max_k>();
  two_deep_both_orders<min_k, min_k>();
}

TEST_CASE("backward: the 2-D form y(b, k) = sum_r sum_c w(k, c, r) x(b, c, k + r), [b, k, c, r]",
          "[backward][sum][nested]") {
  const index_t Bn = 2, K = 4, C = 3, R = 2;
  wp::array<double, 3> x("x", {Bn, C, K + R - 1}), dx("dx", {Bn, C, K + R - 1});
  wp::array<double, 3> w("w", {K, C, R}), dw("dw", {K, C, R});
  wp::array<double, 2> y("y", {Bn, K}), g("g", {Bn, K});
  wp::array<double, 0> L("L", {});
  distinct_fill(x, 1);
  distinct_fill(w, 2);
  distinct_fill(g, 3);
  auto [b, k, c, r] = wp::indices<4>();
  auto fwd = wp::program(
      wp::map("conv", wp::space(Bn, K),
              y(b, k) = wp::sum(wp::range(r, 0, R),
                                wp::sum(wp::range(c, 0, C), w(k, c, r) * x(b, c, k + r)))),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(Bn, K), L() += y(b, k) * g(b, k) + 0.1 * y(b, k) * y(b, k)));
  run_and_check(fwd, L, x, dx, w, dw);
  // against plain loops too: y(b, k) as the loops compute it, and
  // dw(k, c, r) = sum_b dL/dy(b, k) x(b, c, k + r) with dL/dy = g + 0.2 y
  for (index_t kk = 0; kk < K; ++kk)
    for (index_t cc = 0; cc < C; ++cc)
      for (index_t rr = 0; rr < R; ++rr) {
        double want = 0;
        for (index_t bb = 0; bb < Bn; ++bb) {
          double yv = 0;
          for (index_t r2 = 0; r2 < R; ++r2)
            for (index_t c2 = 0; c2 < C; ++c2) yv += w.at({kk, c2, r2}) * x.at({bb, c2, kk + r2});
          want += (g.at({bb, kk}) + 0.2 * yv) * x.at({bb, cc, kk + rr});
        }
        INFO("dw(" << kk << ", " << cc << ", " << rr << "): " << dw.at({kk, cc, rr}) << ", loops "
                   << want);
        REQUIRE(std::abs(dw.at({kk, cc, rr}) - want) <= 1e-12 * std::max(1.0, std::abs(want)));
      }
}

TEST_CASE("backward: a nested range whose bounds read the outer reduction's index",
          "[backward][sum][nested][affine]") {
  // y(i) = sum_{r < R} sum_{c <= r} w(c, r) x(c, i + r): a triangle of (r, c), either order
  auto check = [](auto r, auto c) {
    const index_t n = 5, R = 3;
    wp::array<double, 2> x("x", {R, n + R - 1}), dx("dx", {R, n + R - 1});
    wp::array<double, 2> w("w", {R, R}), dw("dw", {R, R});
    wp::array<double, 1> y("y", {n}), g("g", {n});
    wp::array<double, 0> L("L", {});
    distinct_fill(x, 1);
    distinct_fill(w, 2);
    distinct_fill(g, 3);
    wp::index<0> i;
    auto fwd =
        wp::program(wp::map("tri", wp::space(n),
                            y(i) = wp::sum(wp::range(r, 0, R),
                                           wp::sum(wp::range(c, 0, r + 1), w(c, r) * x(c, i + r)))),
                    loss_of(y, g, L, n));
    run_and_check(fwd, L, x, dx, w, dw);
    for (index_t cc = 0; cc < R; ++cc)  // above the triangle: never read
      for (index_t rr = 0; rr < cc; ++rr) REQUIRE(dw.at({cc, rr}) == 0.0);
  };
  check(wp::index<1>{}, wp::index<2>{});
  check(wp::index<2>{}, wp::index<1>{});
}

TEST_CASE("backward: padded reads inside inner reductions over any index",
          "[backward][sum][padded]") {
  const index_t n = 6, C = 2, R = 3;
  wp::array<double, 2> x("x", {C, n}), dx("dx", {C, n}), w("w", {C, R}), dw("dw", {C, R});
  wp::array<double, 1> y("y", {n}), g("g", {n});
  wp::array<double, 0> L("L", {});
  distinct_fill(x, 1);
  distinct_fill(w, 2);
  distinct_fill(g, 3);
  auto [i, c, r] = wp::indices<3>();
  auto check = [&](const auto& fwd) { run_and_check(fwd, L, x, dx, w, dw); };
  SECTION("one sum whose index is not the space's next one (used not to compile)") {
    check(wp::program(
        wp::map("conv", wp::space(n),
                y(i) = wp::sum(wp::range(r, 0, R), wp::padded(x, 0.0)(1, i + r - 1) * w(1, r))),
        loss_of(y, g, L, n)));
  }
  SECTION("two nested sums, tap outermost, a border of 0.5") {
    check(wp::program(wp::map("conv", wp::space(n),
                              y(i) = wp::sum(wp::range(r, 0, R),
                                             wp::sum(wp::range(c, 0, C),
                                                     wp::padded(x, 0.5)(c, i + r - 1) * w(c, r)))),
                      loss_of(y, g, L, n)));
  }
  SECTION("a max pooling over a padded window, the window's index above a channel sum's") {
    check(wp::program(
        wp::map("pool", wp::space(n),
                y(i) = wp::max_of(
                    wp::range(r, 0, R),
                    wp::sum(wp::range(c, 0, C), wp::padded(x, -10.0)(c, i + r - 1) * w(c, 1)))),
        loss_of(y, g, L, n)));
  }
}

TEST_CASE("backward: an indirect read inside an inner reduction, over another index",
          "[backward][sum][indirect]") {
  // y(b) = sum_r E(tok(b), r) v(r): an embedding row dotted with v; r is index 2, so the
  // derivative exchanges it with index 1 around the indirect subscript tok(b)
  const index_t Bn = 5, V = 4, D = 3;
  wp::array<double, 2> E("E", {V, D}), dE("dE", {V, D});
  wp::array<double, 1> v("v", {D}), dv("dv", {D}), y("y", {Bn}), g("g", {Bn});
  wp::array<std::int32_t, 1> tok("tok", {Bn});
  wp::array<double, 0> L("L", {});
  distinct_fill(E, 1);
  distinct_fill(v, 2);
  distinct_fill(g, 3);
  tok.init([](const std::array<index_t, 1>& q) { return std::int32_t((3 * q[0] + 1) % 4); });
  auto [b, e, r] = wp::indices<3>();
  (void)e;
  auto fwd = wp::program(
      wp::map("dot", wp::space(Bn), y(b) = wp::sum(wp::range(r, 0, D), E(tok(b), r) * v(r))),
      loss_of(y, g, L, Bn));
  auto bwd = wp::backward(fwd, L, wp::wrt(E, dE), wp::wrt(v, dv));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, E, dE);  // rows 1 0 3 2 1: row 1 twice
  require_gradient(fwd, L, v, dv);
}
