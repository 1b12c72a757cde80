// wp::backward (include/workpart/autodiff/): every gradient the backward program writes is
// compared with central finite differences of the forward program (double, relative error
// <= 1e-6), one rule at a time and for whole programs, with uneven extents; the errors are
// checked too. One process (wp::run); tests/mpi/test_train.cpp distributes training steps.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <workpart/workpart.hpp>

#include "finite_differences.hpp"

namespace wp = workpart;
using Catch::Matchers::Contains;
using namespace fd;

namespace {

/// L = sum_i f(x(i), y(i)) over an uneven extent; dL/dx and dL/dy against differences.
template <class F>
void check_rule(F f, double shift = 0.0) {
  const wp::index_t n = 7;
  wp::array<double, 1> x("x", {n}), y("y", {n}), dx("dx", {n}), dy("dy", {n});
  wp::array<double, 0> L("L", {});
  fill(x, 1, shift);
  fill(y, 2, shift);
  auto [i] = wp::indices<1>();
  auto fwd = wp::program(wp::map("zero", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(n), L() += f(x(i), y(i), i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(y, dy));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, x, dx);
  require_gradient(fwd, L, y, dy);
}

/// Every map of a program as text (its name, space and statements).
template <class Prog>
std::string maps_text(const Prog& prog) {
  std::string t;
  prog.for_each_map([&](const auto& m) { t += m.str() + "\n"; });
  return t;
}

}  // namespace

TEST_CASE("backward: each expression rule against finite differences", "[backward]") {
  SECTION("+ - * / and negation") {
    check_rule([](auto x, auto y, auto) { return x + y * 2.0 - (-y) * x; });
    check_rule([](auto x, auto y, auto) { return x / y - y / (x * x + 1.0); }, 2.0);
  }
  SECTION("exp log sqrt tanh") {
    check_rule([](auto x, auto y, auto) { return wp::exp(x * y) + wp::tanh(x - y); });
    check_rule([](auto x, auto y, auto) { return wp::log(x) * wp::sqrt(y); }, 2.0);
  }
  SECTION("erf sigmoid log1p expm1 pow") {
    check_rule([](auto x, auto y, auto) { return wp::erf(x * y) + wp::sigmoid(x - 2.0 * y); });
    check_rule([](auto x, auto y, auto) { return wp::log1p(x) * wp::expm1(0.5 * y); }, 2.0);
    check_rule([](auto x, auto y, auto) { return wp::pow(x, y) + wp::pow(y, 3.0); }, 2.0);
  }
  SECTION("abs, wp::max, wp::min away from ties") {
    check_rule([](auto x, auto y, auto) { return wp::abs(x - 0.5 * y) * y; });
    check_rule([](auto x, auto y, auto) { return wp::max(x, y) * 3.0 + wp::min(x * y, 0.1); });
  }
  SECTION("select and comparisons are gates; scalars and wp::val are constants") {
    check_rule([](auto x, auto y, auto i) {
      return wp::select(x < y, x * y, y - x) + (x > 0.0) * 5.0 + wp::val(i) * x;
    });
  }
}

TEST_CASE("backward: a '=' of the wrong kind of loss or input is refused", "[backward][errors]") {
  const wp::index_t n = 5;
  wp::array<double, 1> x("x", {n}), t("t", {n}), dx("dx", {n}), d4("d4", {4});
  wp::array<double, 0> L("L", {}), M("M", {});
  fill(x, 1);
  auto [i] = wp::indices<1>();
  auto zero = wp::map("zero", wp::space(), L() = 0.0);
  auto loss = wp::map("loss", wp::space(n), L() += x(i) * x(i));

  SECTION("in-place update of a value the derivative needs") {
    auto fwd = wp::program(zero, loss, wp::map("scale", wp::space(n), x(i) = x(i) * 2.0));
    REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(x, dx)), Contains("[workpart.plan_error]") &&
                                                                  Contains("'scale' writes 'x'") &&
                                                                  Contains("in-place"));
  }
  SECTION("'=' after another write") {
    auto fwd = wp::program(wp::map("t1", wp::space(n), t(i) = x(i)),
                           wp::map("t2", wp::space(n), t(i) = 2.0 * x(i)), zero,
                           wp::map("loss", wp::space(n), L() += t(i)));
    REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(x, dx)),
                        Contains("'t2' assigns 't' with '=' after map 't1'"));
    // '='s of disjoint parts are each a first write (wp::nn::concat's); one that overlaps
    // another's part by one element is refused
    auto parts = wp::program(wp::map("t1", wp::space(2), t(i) = x(i)),
                             wp::map("t2", wp::space(3), t(i + 2) = 2.0 * x(i + 2)), zero,
                             wp::map("loss", wp::space(n), L() += t(i)));
    REQUIRE_NOTHROW(wp::backward(parts, L, wp::wrt(x, dx)));
    auto overlap = wp::program(wp::map("t1", wp::space(3), t(i) = x(i)),
                               wp::map("t2", wp::space(3), t(i + 2) = 2.0 * x(i + 2)), zero,
                               wp::map("loss", wp::space(n), L() += t(i)));
    REQUIRE_THROWS_WITH(wp::backward(overlap, L, wp::wrt(x, dx)),
                        Contains("'t2' assigns 't' with '=' after map 't1'"));
  }
  SECTION("a loss the program does not write, a parameter it does not use, a wrong shape") {
    auto fwd = wp::program(zero, loss);
    REQUIRE_THROWS_WITH(wp::backward(fwd, M, wp::wrt(x, dx)), Contains("does not write 'M'"));
    REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(t, dx)),
                        Contains("no map of the program reads or writes 't'"));
    REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(x, d4)),
                        Contains("[workpart.shape_error]") && Contains("'d4' must have the shape"));
    REQUIRE_THROWS_WITH(wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(x, dx)),
                        Contains("named in two wp::wrt"));
  }
}

TEST_CASE("backward: reads that broadcast, transpose, stride, shift and reverse", "[backward]") {
  const wp::index_t m = 5, n = 3;
  wp::array<double, 2> X("X", {m, n}), A("A", {n, m}), dX("dX", {m, n}), dA("dA", {n, m});
  wp::array<double, 1> w("w", {n}), z("z", {2 * m + 1}), dw("dw", {n}), dz("dz", {2 * m + 1});
  wp::array<double, 2> Y("Y", {m, n});
  wp::array<double, 0> L("L", {});
  fill(X, 1);
  fill(A, 2);
  fill(w, 3);
  fill(z, 4);
  auto [i, j] = wp::indices<2>();
  auto fwd = wp::program(
      wp::map("y", wp::space(m, n),
              Y(i, j) = w(j) * X(i, j) + A(j, i) * z(2 * i + 1) - z(2 * m - 2 * i) * X(i, j)),
      wp::map("zero", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(m, n), L() += Y(i, j) * Y(i, j) * wp::val(j)));
  auto bwd = wp::backward(fwd, L, wp::wrt(X, dX), wp::wrt(A, dA), wp::wrt(w, dw), wp::wrt(z, dz));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, X, dX);
  require_gradient(fwd, L, A, dA);
  require_gradient(fwd, L, w, dw);  // a broadcast read: summed over i
  require_gradient(fwd, L, z, dz);  // strided and reversed reads of one array
}

TEST_CASE("backward: a two-layer MLP with a squared loss, and gradients from a seed",
          "[backward]") {
  const wp::index_t B = 5, I = 4, H = 6, O = 3;
  wp::array<double, 2> X("X", {B, I}), W1("W1", {I, H}), Hd("H", {B, H}), Ac("A", {B, H});
  wp::array<double, 2> W2("W2", {H, O}), Out("Out", {B, O}), T("T", {B, O});
  wp::array<double, 1> b1("b1", {H});
  wp::array<double, 2> dW1("dW1", {I, H}), dW2("dW2", {H, O}), dX("dX", {B, I});
  wp::array<double, 1> db1("db1", {H});
  wp::array<double, 0> L("L", {});
  fill(X, 1);
  fill(W1, 2);
  fill(W2, 3);
  fill(T, 4);
  fill(b1, 5);
  auto [b, h, k] = wp::indices<3>();
  auto fwd = wp::program(
      wp::map("h0", wp::space(B, H), Hd(b, h) = b1(h)),
      wp::map("h", wp::space(B, H, I), Hd(b, h) += X(b, k) * W1(k, h)),
      wp::map("act", wp::space(B, H), Ac(b, h) = wp::tanh(Hd(b, h))),
      wp::map("o0", wp::space(B, O), Out(b, h) = 0.0),
      wp::map("o", wp::space(B, O, H), Out(b, h) += Ac(b, k) * W2(k, h)),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(B, O), L() += 0.5 * (Out(b, h) - T(b, h)) * (Out(b, h) - T(b, h))));

  SECTION("loss") {
    auto bwd =
        wp::backward(fwd, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2), wp::wrt(b1, db1), wp::wrt(X, dX));
    // intermediates' gradients are the program's own arrays
    REQUIRE(bwd.owned_arrays().size() >= 4);
    auto step = wp::program(fwd, bwd);
    wp::run(step);
    require_gradient(fwd, L, W1, dW1);
    require_gradient(fwd, L, W2, dW2);
    require_gradient(fwd, L, b1, db1);
    require_gradient(fwd, L, X, dX);
    // every execution writes the gradients afresh (nothing accumulates across steps)
    const double g0 = dW1.data()[3];
    wp::run(step);
    REQUIRE(dW1.data()[3] == g0);
  }
  SECTION("wp::accumulate adds to what the gradient holds") {
    auto bwd = wp::backward(fwd, L, wp::accumulate(wp::wrt(W2, dW2)), wp::wrt(W1, dW1));
    auto step = wp::program(fwd, bwd);
    std::fill(dW2.data(), dW2.data() + dW2.size(), 0.0);
    wp::run(step);
    std::vector<double> once(dW2.data(), dW2.data() + dW2.size());
    const double w1 = dW1.data()[5];
    wp::run(step);
    for (wp::index_t e = 0; e < dW2.size(); ++e)
      REQUIRE(dW2.data()[e] == Approx(2 * once[std::size_t(e)]).epsilon(1e-12));
    REQUIRE(dW1.data()[5] == w1);  // not accumulated
  }
  SECTION("seed: dL/dOut given, the same gradients as the loss map gives") {
    wp::array<double, 2> dOut("dOut", {B, O});
    wp::run(fwd);
    dOut.init([&](const std::array<wp::index_t, 2>& g) { return Out.at(g) - T.at(g); });
    auto net = wp::program(wp::map("h0", wp::space(B, H), Hd(b, h) = b1(h)),
                           wp::map("h", wp::space(B, H, I), Hd(b, h) += X(b, k) * W1(k, h)),
                           wp::map("act", wp::space(B, H), Ac(b, h) = wp::tanh(Hd(b, h))),
                           wp::map("o0", wp::space(B, O), Out(b, h) = 0.0),
                           wp::map("o", wp::space(B, O, H), Out(b, h) += Ac(b, k) * W2(k, h)));
    auto bwd = wp::backward(net, wp::seed(Out, dOut), wp::wrt(W1, dW1), wp::wrt(W2, dW2));
    wp::run(wp::program(net, bwd));
    require_gradient(fwd, L, W1, dW1);
    require_gradient(fwd, L, W2, dW2);
  }
  SECTION("gradients nothing asked for are pruned: they neither run nor move") {
    auto text = [](const auto& prog) {
      std::string t;
      prog.for_each_map([&](const auto& m) { t += m.str() + "\n"; });
      return t;
    };
    // only W2: nothing flows back into the first layer
    auto only2 = wp::backward(fwd, L, wp::wrt(W2, dW2));
    const std::string t2 = text(only2);
    for (const char* g : {"dX(", "dW1(", "dH(", "dA(", "db1("}) {
      INFO(g << " in\n" << t2);
      REQUIRE(t2.find(g) == std::string::npos);
    }
    REQUIRE(t2.find("pruned") != std::string::npos);
    wp::run(wp::program(fwd, only2));
    require_gradient(fwd, L, W2, dW2);
    // W1 and b1: the data's gradient is not computed, the hidden layer's is
    auto only1 = wp::backward(fwd, L, wp::wrt(W1, dW1), wp::wrt(b1, db1));
    const std::string t1 = text(only1);
    INFO(t1);
    REQUIRE(t1.find("dX(") == std::string::npos);
    REQUIRE(t1.find("dA(") != std::string::npos);
    wp::run(wp::program(fwd, only1));
    require_gradient(fwd, L, W1, dW1);
    require_gradient(fwd, L, b1, db1);
  }
  SECTION("zeroing: only buffers whose first write does not cover them once are zeroed") {
    auto bwd = wp::backward(fwd, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2), wp::wrt(b1, db1));
    std::vector<std::string> zeroed;
    bwd.for_each_map([&](const auto& m) {
      if (m.name().rfind("zero.", 0) == 0 && m.str().find("= 0.0") != std::string::npos)
        zeroed.push_back(m.name().substr(0, m.name().find('.', 5)));
    });
    std::sort(zeroed.begin(), zeroed.end());
    // dL (set by the seed) and dH (tanh's, elementwise) are written with '='; the sums over
    // the batch or the hidden units are not, nor is dOut, written twice by the loss map (the
    // two factors of the square), so their buffers are zeroed, each once
    REQUIRE(zeroed ==
            std::vector<std::string>{"zero.dA", "zero.dOut", "zero.dW1", "zero.dW2", "zero.db1"});
    wp::run(wp::program(fwd, bwd));
    require_gradient(fwd, L, W1, dW1);
    require_gradient(fwd, L, b1, db1);
  }
  SECTION("a parameter that does not reach the loss gets a zero gradient") {
    wp::array<double, 1> u("u", {H}), v("v", {H}), dv("dv", {H});
    fill(v, 6);
    std::fill(dv.data(), dv.data() + dv.size(), 7.0);
    auto side = wp::program(fwd, wp::map("side", wp::space(H), u(b) = v(b) * 2.0));
    wp::run(wp::program(side, wp::backward(side, L, wp::wrt(v, dv))));
    for (wp::index_t e = 0; e < H; ++e) REQUIRE(dv.data()[e] == 0.0);
  }
}

TEST_CASE("backward: max_into / min_into send the gradient to the winners, ties shared evenly",
          "[backward]") {
  const wp::index_t B = 4, J = 5;
  wp::array<double, 2> x("x", {B, J}), dx("dx", {B, J});
  wp::array<double, 1> w("w", {B}), mx("mx", {B}), mn("mn", {B});
  wp::array<double, 0> L("L", {});
  fill(x, 1);
  fill(w, 2);
  auto [b, j] = wp::indices<2>();
  const double inf = std::numeric_limits<double>::infinity();
  auto fwd = wp::program(wp::map("init", wp::space(B), mx(b) = -inf, mn(b) = inf),
                         wp::map("ext", wp::space(B, J), wp::max_into(mx(b), x(b, j) * 2.0),
                                 wp::min_into(mn(b), wp::exp(x(b, j)))),
                         wp::map("l0", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(B), L() += w(b) * mx(b) + mn(b) * mn(b)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx));
  SECTION("distinct values: finite differences") {
    wp::run(wp::program(fwd, bwd));
    require_gradient(fwd, L, x, dx);
  }
  SECTION("ties: each of k equal winners gets 1/k of the gradient") {
    x.init([](const std::array<wp::index_t, 2>& g) { return g[1] % 2 == 0 ? 1.0 : 0.5; });
    wp::run(wp::program(fwd, bwd));  // row max 2.0 at j = 0, 2, 4; row min e^0.5 at j = 1, 3
    for (wp::index_t r = 0; r < B; ++r)
      for (wp::index_t c = 0; c < J; ++c) {
        const double want =
            c % 2 == 0 ? w.at({r}) * 2.0 / 3.0 : 2.0 * std::exp(0.5) * std::exp(0.5) / 2.0;
        REQUIRE(dx.at({r, c}) == Approx(want).epsilon(1e-12));
      }
  }
}

TEST_CASE("backward: softmax cross-entropy with a numerically stable max, and layer norm",
          "[backward]") {
  const wp::index_t B = 5, K = 4, C = 3;
  wp::array<double, 2> X("X", {B, K}), W("W", {K, C}), Z("Z", {B, C}), Y("Y", {B, C});
  wp::array<double, 2> dW("dW", {K, C}), dX("dX", {B, K});
  wp::array<double, 1> mx("mx", {B}), se("se", {B}), mean("mean", {B}), var("var", {B});
  wp::array<double, 2> N("N", {B, K}), G("G", {B, K});
  wp::array<double, 1> gamma("gamma", {K}), dgamma("dgamma", {K});
  wp::array<double, 0> L("L", {});
  fill(X, 1);
  fill(W, 2);
  fill(G, 3);
  fill(gamma, 4);
  Y.init([](const std::array<wp::index_t, 2>& g) { return g[1] == (g[0] * 2) % 3 ? 1.0 : 0.0; });
  auto [b, c, k] = wp::indices<3>();
  const double inf = std::numeric_limits<double>::infinity();
  SECTION("softmax cross-entropy") {
    auto fwd = wp::program(
        wp::map("z0", wp::space(B, C), Z(b, c) = 0.0),
        wp::map("z", wp::space(B, C, K), Z(b, c) += X(b, k) * W(k, c)),
        wp::map("stats", wp::space(B, C), wp::max_into(mx(b), Z(b, c))),
        wp::map("s0", wp::space(B), se(b) = 0.0),
        wp::map("sum", wp::space(B, C), se(b) += wp::exp(Z(b, c) - mx(b))),
        wp::map("l0", wp::space(), L() = 0.0),
        wp::map("ce", wp::space(B, C), L() += Y(b, c) * (wp::log(se(b)) + mx(b) - Z(b, c))));
    // mx starts from a constant
    auto prog = wp::program(wp::map("m0", wp::space(B), mx(b) = -inf), fwd);
    auto bwd = wp::backward(prog, L, wp::wrt(W, dW), wp::wrt(X, dX));
    wp::run(wp::program(prog, bwd));
    require_gradient(prog, L, W, dW);
    require_gradient(prog, L, X, dX);
  }
  SECTION("layer norm over the rows, scaled by gamma") {
    auto fwd = wp::program(
        wp::map("m0", wp::space(B), mean(b) = 0.0, var(b) = 0.0),
        wp::map("mean", wp::space(B, K), mean(b) += X(b, c) * (1.0 / double(K))),
        wp::map("var", wp::space(B, K),
                var(b) += (X(b, c) - mean(b)) * (X(b, c) - mean(b)) * (1.0 / double(K))),
        wp::map("norm", wp::space(B, K),
                N(b, c) = gamma(c) * (X(b, c) - mean(b)) / wp::sqrt(var(b) + 1e-5)),
        wp::map("l0", wp::space(), L() = 0.0),
        wp::map("loss", wp::space(B, K), L() += N(b, c) * G(b, c)));
    auto bwd = wp::backward(fwd, L, wp::wrt(X, dX), wp::wrt(gamma, dgamma));
    wp::run(wp::program(fwd, bwd));
    require_gradient(fwd, L, X, dX);
    require_gradient(fwd, L, gamma, dgamma);
  }
}

TEST_CASE("backward: a multi-head attention block (example 07's maps) against finite differences",
          "[backward]") {
  const wp::index_t B = 2, S = 3, H = 2, D = 2, E = 3;
  const double scale = 1.0 / std::sqrt(double(D));
  wp::array<double, 3> X("X", {B, S, E}), Y("Y", {B, S, E}), G("G", {B, S, E});
  wp::array<double, 3> WQ("WQ", {E, H, D}), WK("WK", {E, H, D}), WV("WV", {E, H, D}),
      WO("WO", {H, D, E});
  wp::array<double, 4> Q("Q", {B, S, H, D}), K("K", {B, S, H, D}), V("V", {B, S, H, D}),
      O("O", {B, S, H, D});
  wp::array<double, 4> A("A", {B, H, S, S}), Pr("Pr", {B, H, S, S});
  wp::array<double, 3> mx("mx", {B, H, S}), sm("sm", {B, H, S});
  wp::array<double, 3> dX("dX", {B, S, E}), dWQ("dWQ", {E, H, D}), dWK("dWK", {E, H, D}),
      dWV("dWV", {E, H, D}), dWO("dWO", {H, D, E});
  wp::array<double, 0> L("L", {});
  int salt = 0;
  for (auto* w : {&X, &G, &WQ, &WK, &WV, &WO}) fill(*w, ++salt);
  const double inf = std::numeric_limits<double>::infinity();
  auto [b, s, h, d, e] = wp::indices<5>();
  auto [b4, h4, s4, t4, d4] = wp::indices<5>();
  auto [b3, h3, s3, t3] = wp::indices<4>();
  auto fwd = wp::program(
      wp::map("init", wp::space(B, S, H, D), Q(b, s, h, d) = 0.0, K(b, s, h, d) = 0.0,
              V(b, s, h, d) = 0.0, O(b, s, h, d) = 0.0),
      wp::map("init2", wp::space(B, H, S), mx(b3, h3, s3) = -inf, sm(b3, h3, s3) = 0.0),
      wp::map("init3", wp::space(B, H, S, S), A(b3, h3, s3, t3) = 0.0),
      wp::map("y0", wp::space(B, S, E), Y(b, s, h) = 0.0),
      wp::map("q", wp::space(B, S, H, D, E), Q(b, s, h, d) += X(b, s, e) * WQ(e, h, d)),
      wp::map("k", wp::space(B, S, H, D, E), K(b, s, h, d) += X(b, s, e) * WK(e, h, d)),
      wp::map("v", wp::space(B, S, H, D, E), V(b, s, h, d) += X(b, s, e) * WV(e, h, d)),
      wp::map("scores", wp::space(B, H, S, S, D),
              A(b4, h4, s4, t4) += Q(b4, s4, h4, d4) * K(b4, t4, h4, d4)),
      wp::map("max", wp::space(B, H, S, S), wp::max_into(mx(b3, h3, s3), A(b3, h3, s3, t3))),
      wp::map("expsum", wp::space(B, H, S, S),
              sm(b3, h3, s3) += wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale)),
      wp::map("norm", wp::space(B, H, S, S),
              Pr(b3, h3, s3, t3) =
                  wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale) / sm(b3, h3, s3)),
      wp::map("values", wp::space(B, H, S, D, S),
              O(b4, s4, h4, t4) += Pr(b4, h4, s4, d4) * V(b4, d4, h4, t4)),
      wp::map("out", wp::space(B, S, E, H, D), Y(b, s, h) += O(b, s, d, e) * WO(d, e, h)),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(B, S, E), L() += Y(b, s, h) * G(b, s, h)));
  auto bwd = wp::backward(fwd, L, wp::wrt(X, dX), wp::wrt(WQ, dWQ), wp::wrt(WK, dWK),
                          wp::wrt(WV, dWV), wp::wrt(WO, dWO));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, X, dX);
  require_gradient(fwd, L, WQ, dWQ);
  require_gradient(fwd, L, WK, dWK);
  require_gradient(fwd, L, WV, dWV);
  require_gradient(fwd, L, WO, dWO);
}

TEST_CASE("backward: an indirect read's gradient is a scatter-add (gathers, embeddings)",
          "[backward][indirect]") {
  auto [i, j, k] = wp::indices<3>();
  wp::array<double, 0> L("L", {});
  SECTION("one statement: y(i) = x(idx(i)) * w(i), repeated and unused indices") {
    const wp::index_t n = 9, m = 6;
    wp::array<std::int32_t, 1> idx("idx", {n});
    wp::array<double, 1> x("x", {m}), w("w", {n}), y("y", {n}), dx("dx", {m}), dw("dw", {n});
    for (wp::index_t t = 0; t < n; ++t) idx.data()[t] = std::int32_t((t * 2) % 5);  // 5 unused
    fill(x, 1);
    fill(w, 2);
    auto fwd = wp::program(wp::map("y", wp::space(n), y(i) = x(idx(i)) * w(i) + x(idx(i))),
                           wp::map("l0", wp::space(), L() = 0.0),
                           wp::map("loss", wp::space(n), L() += y(i) * y(i)));
    auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(w, dw));
    // the scatter-add cannot cover dx: it is zeroed first, then added into
    REQUIRE_THAT(maps_text(bwd), Contains("zero.dx"));
    wp::run(wp::program(fwd, bwd));
    require_gradient(fwd, L, x, dx);
    require_gradient(fwd, L, w, dw);
    REQUIRE(dx.data()[5] == 0.0);
  }
  SECTION("an embedding lookup, a layer and a squared loss") {
    // Emb(b, s, d) = E(tok(b, s), d); H(b, s, h) = tanh(sum_d Emb * W(d, h)); L = sum H^2
    const wp::index_t B = 3, S = 4, D = 5, Hd = 3, V = 7;
    wp::array<std::int64_t, 2> tok("tok", {B, S});
    wp::array<double, 2> E("E", {V, D}), W("W", {D, Hd}), dE("dE", {V, D}), dW("dW", {D, Hd});
    wp::array<double, 3> Emb("Emb", {B, S, D}), Hp("Hp", {B, S, Hd}), H("H", {B, S, Hd});
    for (wp::index_t t = 0; t < B * S; ++t) tok.data()[t] = (t * t + 1) % 6;  // token 6 unused
    fill(E, 3);
    fill(W, 4);
    auto [b, s, x2, x3] = wp::indices<4>();  // x2: d in emb, h in fc; x3: d in fc
    auto fwd = wp::program(
        wp::map("emb", wp::space(B, S, D), Emb(b, s, x2) = E(tok(b, s), x2)),
        wp::map("hp0", wp::space(B, S, Hd), Hp(b, s, x2) = 0.0),
        wp::map("fc", wp::space(B, S, Hd, D), Hp(b, s, x2) += Emb(b, s, x3) * W(x3, x2)),
        wp::map("act", wp::space(B, S, Hd), H(b, s, x2) = wp::tanh(Hp(b, s, x2))),
        wp::map("l0", wp::space(), L() = 0.0),
        wp::map("loss", wp::space(B, S, Hd), L() += H(b, s, x2) * H(b, s, x2)));
    auto bwd = wp::backward(fwd, L, wp::wrt(E, dE), wp::wrt(W, dW));
    REQUIRE_THAT(maps_text(bwd), Contains("dE(tok(i0, i1), i2) +="));
    wp::run(wp::program(fwd, bwd));
    require_gradient(fwd, L, E, dE);
    require_gradient(fwd, L, W, dW);
    for (wp::index_t e = 0; e < D; ++e) REQUIRE(dE.data()[6 * D + e] == 0.0);  // unused token
  }
  (void)i;
  (void)j;
  (void)k;
}

TEST_CASE("backward: max_into over values computed before, or written again, is refused",
          "[backward][errors]") {
  wp::array<double, 1> x("x", {4}), m("m", {1}), dx("dx", {4});
  wp::array<double, 0> L("L", {});
  auto [i] = wp::indices<1>();
  auto tail = wp::program(wp::map("l0", wp::space(), L() = 0.0),
                          wp::map("loss", wp::space(1), L() += m(i)));
  auto from_data = wp::program(wp::map("m0", wp::space(1), m(i) = x(i)),
                               wp::map("mx", wp::space(4), wp::max_into(m(0), x(i))), tail);
  REQUIRE_THROWS_WITH(wp::backward(from_data, L, wp::wrt(x, dx)),
                      Contains("start it from a constant"));
  auto twice = wp::program(wp::map("m0", wp::space(1), m(i) = 0.0),
                           wp::map("mx", wp::space(4), wp::max_into(m(0), x(i))),
                           wp::map("mx2", wp::space(4), wp::max_into(m(0), 2.0 * x(i))), tail);
  REQUIRE_THROWS_WITH(wp::backward(twice, L, wp::wrt(x, dx)),
                      Contains("'mx2' writes 'm' after the max_into/min_into of map 'mx'"));
}

TEST_CASE("programs concatenate: maps and programs in order", "[backward]") {
  wp::array<double, 1> x("x", {4}), y("y", {4});
  auto [i] = wp::indices<1>();
  auto m1 = wp::map("m1", wp::space(4), y(i) = x(i) + 1.0);
  auto m2 = wp::map("m2", wp::space(4), y(i) += 2.0 * x(i));
  auto p = wp::program(m1, wp::program(m2, m1), m2);
  REQUIRE(p.size() == 4);
  std::vector<std::string> names;
  p.for_each_map([&](const auto& m) { names.push_back(m.name()); });
  REQUIRE(names == std::vector<std::string>{"m1", "m2", "m1", "m2"});
  fill(x, 1);
  wp::run(p);
  for (wp::index_t e = 0; e < 4; ++e) REQUIRE(y.data()[e] == Approx(x.data()[e] * 3.0 + 1.0));
}
