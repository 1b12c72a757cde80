// wp::backward of nested reductions with a range bound to the outer index (a triangle),
// padded reads inside inner reductions over any index, and an indirect read inside an inner
// reduction, against central finite differences; the forms are in backward_nested_forms.hpp.

#include "backward_nested_forms.hpp"

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
