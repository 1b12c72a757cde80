#pragma once
// The forms tests/unit/test_backward_nested*.cpp differentiate: nested reductions of every
// kind and index order, run and checked against finite differences (one process).

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
