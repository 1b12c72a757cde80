// wp::backward of whole blocks against central finite differences (double, relative error
// <= 1e-6): softmax cross-entropy and layer norm, a multi-head attention block, indirect reads
// (gathers, embeddings), and the refusals of max_into over values written again; programs
// concatenated. tests/unit/test_backward.cpp has the rules one at a time. One process.

#include "backward_checks.hpp"

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
