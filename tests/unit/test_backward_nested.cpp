// wp::backward of nested inner reductions (wp::sum / max_of / min_of inside one another)
// against central finite differences (double, relative error <= 1e-6, uneven extents), in
// every order of the reductions' indices: an inner reduction's derivative runs over the space
// extended by its index, which there becomes the space's next dimension, and a range nested
// in its body may be bound to that very dimension (`auto [i, c, r]` with the sum over r
// outermost: c is index 1). These used to give wrong gradients silently (off-diagonal
// entries 0), or a shape_error about an access nobody wrote. Also padded reads inside inner
// reductions over any index. One process (wp::run); tests/mpi/test_train.cpp distributes a
// multi-channel convolution written tap-outermost.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#include <workpart/workpart.hpp>

#include "finite_differences.hpp"

namespace wp = workpart;
using fd::require_gradient;
using wp::index_t;

namespace {

// Distinct values (no ties for max_of / min_of, whose finite differences would then not be
// the gradient), smooth and away from zero.
template <int N>
void distinct_fill(wp::array<double, N>& a, int salt) {
  a.init([salt, &a](const std::array<index_t, N>& g) {
    index_t k = 0;
    for (int d = 0; d < N; ++d) k = k * a.extent(d) + g[std::size_t(d)];
    return std::sin(1.37 * double(k) + 0.61 * salt) + 0.02 * double(k) + 0.1 * salt;
  });
}

struct sum_k {
  static constexpr const char* name = "sum";
  template <class R, class B>
  static auto of(const R& r, const B& b) {
    return wp::sum(r, b);
  }
};
struct max_k {
  static constexpr const char* name = "max_of";
  template <class R, class B>
  static auto of(const R& r, const B& b) {
    return wp::max_of(r, b);
  }
};
struct min_k {
  static constexpr const char* name = "min_of";
  template <class R, class B>
  static auto of(const R& r, const B& b) {
    return wp::min_of(r, b);
  }
};

/// Runs fwd and its backward program for x and w, then checks both gradients against
/// central finite differences.
template <class Fwd, int NX, int NW>
void run_and_check(const Fwd& fwd, wp::array<double, 0>& L, wp::array<double, NX>& x,
                   wp::array<double, NX>& dx, wp::array<double, NW>& w, wp::array<double, NW>& dw) {
  wp::run(wp::program(fwd, wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(w, dw))));
  require_gradient(fwd, L, x, dx);
  require_gradient(fwd, L, w, dw);
}

/// A nonlinear loss of y over n points: every point's seed differs.
template <class Y>
auto loss_of(Y& y, wp::array<double, 1>& g, wp::array<double, 0>& L, index_t n) {
  wp::index<0> i;
  return wp::program(wp::map("l0", wp::space(), L() = 0.0),
                     wp::map("loss", wp::space(n), L() += y(i) * g(i) + 0.1 * y(i) * y(i)));
}

/// y(i) = Outer_r Inner_c w(c, r) x(c, i + r): a multi-channel 1-D convolution written
/// tap-outermost, its reduction indices numbered R (the outer) and C (the inner).
template <class Outer, class Inner, int RD, int CD>
void two_deep(index_t C, index_t R) {
  INFO(Outer::name << "(r = i" << RD << ", " << Inner::name << "(c = i" << CD
                   << ", ...)), C = " << C << ", R = " << R);
  const index_t n = 5;
  wp::array<double, 2> x("x", {C, n + R - 1}), dx("dx", {C, n + R - 1});
  wp::array<double, 2> w("w", {C, R}), dw("dw", {C, R});
  wp::array<double, 1> y("y", {n}), g("g", {n});
  wp::array<double, 0> L("L", {});
  distinct_fill(x, 1);
  distinct_fill(w, 2);
  distinct_fill(g, 3);
  wp::index<0> i;
  wp::index<RD> r;
  wp::index<CD> c;
  auto fwd =
      wp::program(wp::map("conv", wp::space(n),
                          y(i) = Outer::of(wp::range(r, 0, R),
                                           Inner::of(wp::range(c, 0, C), w(c, r) * x(c, i + r)))),
                  loss_of(y, g, L, n));
  run_and_check(fwd, L, x, dx, w, dw);
}

template <class Outer, class Inner>
void two_deep_both_orders() {
  for (auto [C, R] : {std::pair<index_t, index_t>{3, 3}, {4, 2}}) {
    two_deep<Outer, Inner, 1, 2>(C, R);  // the inner reduction's index above the outer's
    two_deep<Outer, Inner, 2, 1>(C, R);  // below it: the space's next index, bound inside
  }
}

/// y(i) = K1_a K2_b K3_c w(a, b) v(b, c) x(c, i + a): three nested reductions whose indices
/// are numbered A, B, C (any order of 1, 2, 3); every access mixes two indices.
template <class K1, class K2, class K3, int AD, int BD, int CD>
void three_deep() {
  INFO(K1::name << "(a = i" << AD << ", " << K2::name << "(b = i" << BD << ", " << K3::name
                << "(c = i" << CD << ", ...)))");
  const index_t n = 4, A = 3, B = 2, C = 4;
  wp::array<double, 2> w("w", {A, B}), dw("dw", {A, B}), v("v", {B, C}), dv("dv", {B, C});
  wp::array<double, 2> x("x", {C, n + A - 1}), dx("dx", {C, n + A - 1});
  wp::array<double, 1> y("y", {n}), g("g", {n});
  wp::array<double, 0> L("L", {});
  distinct_fill(w, 1);
  distinct_fill(v, 2);
  distinct_fill(x, 3);
  distinct_fill(g, 4);
  wp::index<0> i;
  wp::index<AD> a;
  wp::index<BD> b;
  wp::index<CD> c;
  auto fwd = wp::program(
      wp::map("nest", wp::space(n),
              y(i) = K1::of(wp::range(a, 0, A),
                            K2::of(wp::range(b, 0, B),
                                   K3::of(wp::range(c, 0, C), w(a, b) * v(b, c) * x(c, i + a))))),
      loss_of(y, g, L, n));
  auto bwd = wp::backward(fwd, L, wp::wrt(w, dw), wp::wrt(v, dv), wp::wrt(x, dx));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, w, dw);
  require_gradient(fwd, L, v, dv);
  require_gradient(fwd, L, x, dx);
}

/// Every order of the three indices, with the reductions' kinds K1, K2, K3.
template <class K1, class K2, class K3>
void three_deep_all_orders() {
  three_deep<K1, K2, K3, 1, 2, 3>();
  three_deep<K1, K2, K3, 1, 3, 2>();
  three_deep<K1, K2, K3, 2, 1, 3>();
  three_deep<K1, K2, K3, 2, 3, 1>();
  three_deep<K1, K2, K3, 3, 1, 2>();
  three_deep<K1, K2, K3, 3, 2, 1>();
}

}  // namespace

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

TEST_CASE("backward: three nested sums in every index order", "[backward][sum][nested]") {
  three_deep_all_orders<sum_k, sum_k, sum_k>();
}

TEST_CASE("backward: three nested reductions, kinds mixed, in every index order",
          "[backward][sum][nested]") {
  three_deep_all_orders<max_k, sum_k, min_k>();
  three_deep_all_orders<sum_k, min_k, max_k>();
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
