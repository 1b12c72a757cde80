// wp::backward of whole network layers against central finite differences (double, relative
// error <= 1e-6, uneven extents): strided convolutions in one and two dimensions, whose input
// gradient is the transposed convolution (a '+=' through the strided subscript) and whose
// filter gradient sums over the output positions. One process (wp::run).

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>

#include "finite_differences.hpp"

namespace wp = workpart;
using namespace fd;

TEST_CASE("backward: 1-D convolution, stride 2, channels, bias and tanh", "[backward][conv]") {
  const wp::index_t C = 2, T = 14, F = 3, R = 3, S = 2, To = (T - R) / S + 1;  // To = 6
  wp::array<double, 2> x("x", {C, T}), dx("dx", {C, T}), y("y", {F, To}), z("z", {F, To});
  wp::array<double, 2> g("g", {F, To});
  wp::array<double, 3> w("w", {F, C, R}), dw("dw", {F, C, R});
  wp::array<double, 1> bias("bias", {F}), dbias("dbias", {F});
  wp::array<double, 0> L("L", {});
  fill(x, 1);
  fill(w, 2);
  fill(bias, 3);
  fill(g, 4);
  auto [f, i, c, r] = wp::indices<4>();
  auto fwd =
      wp::program(wp::map("y0", wp::space(F, To), y(f, i) = bias(f)),
                  wp::map("conv", wp::space(F, To, C, R), y(f, i) += w(f, c, r) * x(c, S * i + r)),
                  wp::map("act", wp::space(F, To), z(f, i) = wp::tanh(y(f, i))),
                  wp::map("l0", wp::space(), L() = 0.0),
                  wp::map("loss", wp::space(F, To), L() += z(f, i) * g(f, i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(w, dw), wp::wrt(bias, dbias), wp::wrt(x, dx));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, w, dw);
  require_gradient(fwd, L, bias, dbias);
  require_gradient(fwd, L, x, dx);  // the transposed convolution
  // the last input column, which no window reaches (13 > 2 * 5 + 2), has a zero gradient
  REQUIRE(dx.at({0, T - 1}) == 0.0);
}

TEST_CASE("backward: 2-D convolution, strides 2 and 1, two layers", "[backward][conv]") {
  const wp::index_t C = 2, U = 9, V = 8, F = 2, R = 3, Q = 2;
  const wp::index_t Uo = (U - R) / 2 + 1, Vo = V - Q + 1;  // 4 x 7
  const wp::index_t G = 3, Uo2 = Uo - 1, Vo2 = Vo - 2;     // 3 x 5: a 2 x 3 second layer
  wp::array<double, 3> x("x", {C, U, V}), dx("dx", {C, U, V});
  wp::array<double, 3> y("y", {F, Uo, Vo}), a("a", {F, Uo, Vo}), y2("y2", {G, Uo2, Vo2});
  wp::array<double, 4> w("w", {F, C, R, Q}), dw("dw", {F, C, R, Q});
  wp::array<double, 4> w2("w2", {G, F, 2, 3}), dw2("dw2", {G, F, 2, 3});
  wp::array<double, 0> L("L", {});
  fill(x, 5);
  fill(w, 6);
  fill(w2, 7);
  auto [f, u, v, c, r, q] = wp::indices<6>();
  auto fwd = wp::program(
      wp::map("y0", wp::space(F, Uo, Vo), y(f, u, v) = 0.0),
      wp::map("conv1", wp::space(F, Uo, Vo, C, R, Q),
              y(f, u, v) += w(f, c, r, q) * x(c, 2 * u + r, v + q)),
      wp::map("act", wp::space(F, Uo, Vo), a(f, u, v) = wp::max(y(f, u, v), 0.1 * y(f, u, v))),
      wp::map("y20", wp::space(G, Uo2, Vo2), y2(f, u, v) = 0.0),
      wp::map("conv2", wp::space(G, Uo2, Vo2, F, 2, 3),
              y2(f, u, v) += w2(f, c, r, q) * a(c, u + r, v + q)),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(G, Uo2, Vo2), L() += 0.5 * y2(f, u, v) * y2(f, u, v)));
  auto bwd = wp::backward(fwd, L, wp::wrt(w, dw), wp::wrt(w2, dw2), wp::wrt(x, dx));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, w, dw);
  require_gradient(fwd, L, w2, dw2);
  require_gradient(fwd, L, x, dx);
}
