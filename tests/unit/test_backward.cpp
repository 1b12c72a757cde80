// wp::backward (include/workpart/autodiff/): every gradient the backward program writes is
// compared with central finite differences of the forward program (double, relative error
// <= 1e-6), one rule at a time and for whole programs, with uneven extents; the errors are
// checked too. One process (wp::run); tests/mpi/test_train.cpp distributes training steps.

#include "backward_checks.hpp"

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
