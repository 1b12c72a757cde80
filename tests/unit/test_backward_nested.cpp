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
