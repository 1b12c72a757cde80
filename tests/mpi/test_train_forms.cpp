// Training steps distributed at 1-4 ranks against plain loops (continued from
// tests/mpi/test_train.cpp): max_into's gradient with ties,
// Megatron attention's collectives, and the rest of the file's later forms.

#include "train_steps.hpp"

TEST_CASE("max_into's gradient distributed, ties shared evenly, as in plain loops",
          "[train][max]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  constexpr index_t M = 5, K = 7;
  // integer-valued entries: row i has its maximum at several columns for i = 1, 3
  auto xval = [](index_t i, index_t j) { return double((i * 3 + j * 5) % (i % 2 ? 4 : 9)); };
  wp::array<double, 2> x("x", {M, K}), dx("dx", {M, K});
  wp::array<double, 1> g("g", {M}), mx("mx", {M});
  wp::array<double, 0> L("L", {});
  std::vector<double> want(M * K, 0.0);
  for (index_t i = 0; i < M; ++i) {
    double best = -1e300;
    int ties = 0;
    for (index_t j = 0; j < K; ++j) best = std::max(best, xval(i, j));
    for (index_t j = 0; j < K; ++j) ties += xval(i, j) == best;
    for (index_t j = 0; j < K; ++j)
      if (xval(i, j) == best) want[i * K + j] = (1.0 + double(i)) / ties;
  }
  auto [i, j] = wp::indices<2>();
  auto fwd = wp::program(
      wp::map("m0", wp::space(M), mx(i) = -std::numeric_limits<double>::infinity()),
      wp::map("max", wp::space(M, K), wp::max_into(mx(i), x(i, j))),
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(M), L() += mx(i) * g(i)));
  auto step = wp::program(fwd, wp::backward(fwd, L, wp::wrt(x, dx)));
  auto check = [&](auto&& plan) {
    fill2(x, xval);
    g.init([](const std::array<index_t, 1>& q) { return 1.0 + double(q[0]); });
    plan.scatter();
    plan.execute();
    plan.gather(dx);
    REQUIRE(compare_on_root(ctx.comm(), dx, want, 1e-12) == "");
  };
  SECTION("the reduced dimension split") {
    check(wp::distribute(step, schedule_of(step, p, [](int k) { return k == 2 ? 1 : -1; }), ctx));
  }
  SECTION("the rows split") {
    check(wp::distribute(step, schedule_of(step, p, [](int k) { return k > 0 ? 0 : -1; }), ctx));
  }
  SECTION("wp::automatic") { check(wp::distribute(step, wp::automatic, ctx)); }
  // the same maximum as an inner wp::max_of: its ties counted in d<map>.sum.ties, a map over
  // the rows and the reduced index, before d<map>.sum takes the shares
  auto fwd2 = wp::program(wp::map("max", wp::space(M), mx(i) = wp::max_of(x(i, wp::all))),
                          wp::map("l0", wp::space(), L() = 0.0),
                          wp::map("loss", wp::space(M), L() += mx(i) * g(i)));
  auto step2 = wp::program(fwd2, wp::backward(fwd2, L, wp::wrt(x, dx)));
  SECTION("inner max_of, the reduced index split") {
    check(wp::distribute(step2, schedule_of(step2, p, [](int k) { return k == 2 ? 1 : -1; }), ctx));
  }
  SECTION("inner max_of, wp::automatic") { check(wp::distribute(step2, wp::automatic, ctx)); }
}

// A Megatron attention block trained with its heads split (the Q, K, V weights' head columns,
// the output projection's head rows, every map over heads split by heads). With the other
// maps on one rank (`Replicated` false; X data), the only traffic rank to rank per step is
// Megatron's forward Allreduce of the block's output Y (B x S x E, partial over the heads),
// 2 (P - 1) B S E values over all ranks (a ring's count), here as its two halves: Y reduced
// onto the rank that computes the loss, and dL/dY broadcast back to the heads. With the other
// maps replicated on every rank as Megatron runs them (`Replicated` true: the loss, and an
// input map X = tanh(Z) before the block whose gradient dZ is asked for; Q, K and V written
// as one map, as Megatron fuses them into one GEMM), the traffic is exactly Megatron's: one
// Allreduce of Y forward, one of dX (partial over the heads) backward, nothing else. The
// weights (and dZ) after two steps equal the one-process run's.
template <bool Replicated>
void megatron_attention(wp::context& ctx) {
  const int p = ctx.size();
  constexpr index_t B = 2, S = 5, NH = 4, D = 3, E = NH * D;
  const double scale = 1.0 / std::sqrt(double(D)), lr = 0.1;
  wp::array<double, 3> X("X", {B, S, E}), Y("Y", {B, S, E}), G("G", {B, S, E}), Z("Z", {B, S, E}),
      dZ("dZ", {B, S, E});
  wp::array<double, 3> WQ("WQ", {E, NH, D}), WK("WK", {E, NH, D}), WV("WV", {E, NH, D}),
      WO("WO", {NH, D, E});
  wp::array<double, 3> dWQ("dWQ", {E, NH, D}), dWK("dWK", {E, NH, D}), dWV("dWV", {E, NH, D}),
      dWO("dWO", {NH, D, E});
  wp::array<double, 4> Q("Q", {B, S, NH, D}), K("K", {B, S, NH, D}), V("V", {B, S, NH, D}),
      O("O", {B, S, NH, D}), A("A", {B, NH, S, S}), Pr("Pr", {B, NH, S, S});
  wp::array<double, 3> mx("mx", {B, NH, S}), sm("sm", {B, NH, S});
  wp::array<double, 0> L("L", {});
  const double inf = std::numeric_limits<double>::infinity();
  auto [b, s, h, d, e] = wp::indices<5>();
  auto [b4, h4, s4, t4, d4] = wp::indices<5>();
  auto [b3, h3, s3, t3] = wp::indices<4>();
  auto init = wp::program(
      wp::map("init", wp::space(B, S, NH, D), Q(b, s, h, d) = 0.0, K(b, s, h, d) = 0.0,
              V(b, s, h, d) = 0.0, O(b, s, h, d) = 0.0),
      wp::map("init2", wp::space(B, NH, S), mx(b3, h3, s3) = -inf, sm(b3, h3, s3) = 0.0),
      wp::map("init3", wp::space(B, NH, S, S), A(b3, h3, s3, t3) = 0.0),
      wp::map("y0", wp::space(B, S, E), Y(b, s, h) = 0.0));
  auto projections = [&] {
    if constexpr (Replicated)  // X from Z on every rank, then Q, K, V as one map
      return wp::program(
          wp::map("in", wp::space(B, S, E), X(b, s, h) = wp::tanh(Z(b, s, h))),
          wp::map("qkv", wp::space(B, S, NH, D, E), Q(b, s, h, d) += X(b, s, e) * WQ(e, h, d),
                  K(b, s, h, d) += X(b, s, e) * WK(e, h, d),
                  V(b, s, h, d) += X(b, s, e) * WV(e, h, d)));
    else
      return wp::program(
          wp::map("q", wp::space(B, S, NH, D, E), Q(b, s, h, d) += X(b, s, e) * WQ(e, h, d)),
          wp::map("k", wp::space(B, S, NH, D, E), K(b, s, h, d) += X(b, s, e) * WK(e, h, d)),
          wp::map("v", wp::space(B, S, NH, D, E), V(b, s, h, d) += X(b, s, e) * WV(e, h, d)));
  }();
  auto fwd = wp::program(
      init, projections,
      wp::map("scores", wp::space(B, NH, S, S, D),
              A(b4, h4, s4, t4) += Q(b4, s4, h4, d4) * K(b4, t4, h4, d4)),
      wp::map("max", wp::space(B, NH, S, S), wp::max_into(mx(b3, h3, s3), A(b3, h3, s3, t3))),
      wp::map("expsum", wp::space(B, NH, S, S),
              sm(b3, h3, s3) += wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale)),
      wp::map("norm", wp::space(B, NH, S, S),
              Pr(b3, h3, s3, t3) =
                  wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale) / sm(b3, h3, s3)),
      wp::map("values", wp::space(B, NH, S, D, S),
              O(b4, s4, h4, t4) += Pr(b4, h4, s4, d4) * V(b4, d4, h4, t4)),
      wp::map("out", wp::space(B, S, E, NH, D), Y(b, s, h) += O(b, s, d, e) * WO(d, e, h)),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(B, S, E), L() += Y(b, s, h) * G(b, s, h)));
  auto bwd = [&] {
    if constexpr (Replicated)
      return wp::backward(fwd, L, wp::wrt(WQ, dWQ), wp::wrt(WK, dWK), wp::wrt(WV, dWV),
                          wp::wrt(WO, dWO), wp::wrt(Z, dZ));
    else
      return wp::backward(fwd, L, wp::wrt(WQ, dWQ), wp::wrt(WK, dWK), wp::wrt(WV, dWV),
                          wp::wrt(WO, dWO));
  }();
  auto step = wp::program(
      fwd, bwd, wp::map("sgdq", wp::space(E, NH, D), WQ(b, s, h) = WQ(b, s, h) - lr * dWQ(b, s, h)),
      wp::map("sgdk", wp::space(E, NH, D), WK(b, s, h) = WK(b, s, h) - lr * dWK(b, s, h)),
      wp::map("sgdv", wp::space(E, NH, D), WV(b, s, h) = WV(b, s, h) - lr * dWV(b, s, h)),
      wp::map("sgdo", wp::space(NH, D, E), WO(b, s, h) = WO(b, s, h) - lr * dWO(b, s, h)));
  auto fill_all = [&] {
    int salt = 0;
    for (auto* a : {&X, &G, &WQ, &WK, &WV, &WO, &Z})
      a->init([k = ++salt](const std::array<index_t, 3>& g) {
        return 0.4 * std::sin(0.7 * double(g[0]) + 1.3 * double(g[1]) + 0.29 * double(g[2]) + k);
      });
  };
  // the reference: the same two steps on one process (the serial rules are checked against
  // finite differences in tests/unit/test_backward.cpp)
  fill_all();
  wp::run(step);
  wp::run(step);
  const auto copy = [](const wp::array<double, 3>& a) {
    return std::vector<double>(a.data(), a.data() + a.size());
  };
  const bool root = ctx.is_root();
  const std::vector<double> wq = root ? copy(WQ) : std::vector<double>(),
                            wo = root ? copy(WO) : std::vector<double>(),
                            dz = root ? copy(dZ) : std::vector<double>();

  // heads split: the first dimension of extent NH in every map that has one (no other extent
  // equals NH = 4), the rest whole on one rank or replicated on every rank
  wp::schedule heads;
  step.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    bool split = false;
    for (int k = 0; k < m.rank() && !split; ++k)
      if (m.extents()[std::size_t(k)] == NH) g[std::size_t(k)] = p, split = true;
    heads.set(m.name(), Replicated && !split ? wp::grid_shape(g).replicated(p) : wp::grid_shape(g));
  });
  fill_all();
  auto plan = wp::distribute(step, heads, ctx);
  plan.scatter();
  plan.execute();
  const index_t before = plan.stats().execute.bytes_received;
  plan.execute();
  index_t got = plan.stats().execute.bytes_received - before, total = 0;
  boost::mpi::all_reduce(ctx.comm(), got, total, std::plus<index_t>());
  const index_t bse = B * S * E * index_t(sizeof(double));
  REQUIRE(total == (Replicated ? 2 : 1) * 2 * index_t(p - 1) * bse);
  // the combines of partial sums, by array and kind (the grid dimension's name cut off)
  std::string combines;
  for (const auto& rd : plan.stats().redistributions)
    if (rd.kind.find("(sum)") != std::string::npos)
      combines += rd.array + " " + rd.kind.substr(0, rd.kind.find(" over")) + "; ";
  if (p == 1)
    REQUIRE(combines == "");
  else if (Replicated)
    REQUIRE(combines == "Y Allreduce(sum); dX Allreduce(sum); ");
  else
    REQUIRE(combines == "Y Reduce(sum); ");
  if constexpr (Replicated)
    plan.gather(WQ, WO, dZ);
  else
    plan.gather(WQ, WO);
  REQUIRE(compare_on_root(ctx.comm(), WQ, wq, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), WO, wo, 1e-12) == "");
  if constexpr (Replicated) REQUIRE(compare_on_root(ctx.comm(), dZ, dz, 1e-12) == "");
}

TEST_CASE("Megatron attention, heads split: one Allreduce of the output per step, nothing else",
          "[train][megatron]") {
  wp::context ctx(g_argc, g_argv);
  megatron_attention<false>(ctx);
}

TEST_CASE("Megatron attention, its neighbours replicated: one Allreduce forward, one backward",
          "[train][megatron]") {
  wp::context ctx(g_argc, g_argv);
  megatron_attention<true>(ctx);
}

// Two Megatron MLP blocks, X_k = X_{k-1} + tanh(X_{k-1} W1_k) W2_k, after an input map
// X_0 = tanh(Z), trained as Megatron-LM trains them (Shoeybi et al. 2019): the hidden
// dimension split (W1's columns, W2's rows: every map with a hidden index), and every other
// map -- the input map, the residual adds, the loss, and their gradients -- *replicated*
// (grid (1,...,1).replicated(P): each rank computes the whole map on its own copy). Per step
// the traffic rank to rank is then exactly Megatron's: per block, one Allreduce of its
// output's partial sums forward (the g operator) and one of its input's gradient backward
// (the f operator's), each 2 (P - 1) B S E values (a ring's count), nothing else, asserted
// from stats(); the weights and Z's gradient after two steps equal the one-process run's.
TEST_CASE(
    "Megatron MLP blocks with replicated maps between: one Allreduce forward and one "
    "backward per block, nothing else",
    "[train][megatron]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  constexpr index_t Bn = 2, S = 3, E = 5, Hn = 8;
  wp::array<double, 3> Z("Z", {Bn, S, E}), dZ("dZ", {Bn, S, E}), X0("X0", {Bn, S, E}),
      X1("X1", {Bn, S, E}), X2("X2", {Bn, S, E}), Y1("Y1", {Bn, S, E}), Y2("Y2", {Bn, S, E}),
      G("G", {Bn, S, E}), H1("H1", {Bn, S, Hn}), H2("H2", {Bn, S, Hn}), A1("A1", {Bn, S, Hn}),
      A2("A2", {Bn, S, Hn});
  wp::array<double, 2> W11("W11", {E, Hn}), W21("W21", {Hn, E}), W12("W12", {E, Hn}),
      W22("W22", {Hn, E}), dW11("dW11", {E, Hn}), dW21("dW21", {Hn, E}), dW12("dW12", {E, Hn}),
      dW22("dW22", {Hn, E});
  wp::array<double, 0> L("L", {});
  auto [b, s, h, e] = wp::indices<4>();
  auto block = [&](const std::string& k, auto& Xin, auto& H, auto& A, auto& W1, auto& Y, auto& W2,
                   auto& Xout) {
    return wp::program(
        wp::map("h0" + k, wp::space(Bn, S, Hn), H(b, s, h) = 0.0),
        wp::map("fc1" + k, wp::space(Bn, S, Hn, E), H(b, s, h) += Xin(b, s, e) * W1(e, h)),
        wp::map("act" + k, wp::space(Bn, S, Hn), A(b, s, h) = wp::tanh(H(b, s, h))),
        wp::map("y0" + k, wp::space(Bn, S, E), Y(b, s, h) = 0.0),
        wp::map("fc2" + k, wp::space(Bn, S, E, Hn), Y(b, s, h) += A(b, s, e) * W2(e, h)),
        wp::map("res" + k, wp::space(Bn, S, E), Xout(b, s, h) = Xin(b, s, h) + Y(b, s, h)));
  };
  auto fwd =
      wp::program(wp::map("in", wp::space(Bn, S, E), X0(b, s, h) = wp::tanh(Z(b, s, h))),
                  block("1", X0, H1, A1, W11, Y1, W21, X1),
                  block("2", X1, H2, A2, W12, Y2, W22, X2), wp::map("l0", wp::space(), L() = 0.0),
                  wp::map("loss", wp::space(Bn, S, E), L() += X2(b, s, h) * G(b, s, h)));
  auto sgd = [&](const std::string& n, auto& W, auto& dW) {
    const auto& shape = W.shape();
    return wp::map("sgd" + n, wp::space(shape[0], shape[1]), W(b, s) = W(b, s) - lr * dW(b, s));
  };
  auto step = wp::program(fwd,
                          wp::backward(fwd, L, wp::wrt(W11, dW11), wp::wrt(W21, dW21),
                                       wp::wrt(W12, dW12), wp::wrt(W22, dW22), wp::wrt(Z, dZ)),
                          sgd("11", W11, dW11), sgd("21", W21, dW21), sgd("12", W12, dW12),
                          sgd("22", W22, dW22));
  auto fill_all = [&] {
    fill3(Z, [](index_t x, index_t y, index_t z) { return std::sin(double(x * 15 + y * 5 + z)); });
    fill3(G, [](index_t x, index_t y, index_t z) { return std::cos(double(x * 7 + y * 3 + z)); });
    int k = 0;
    for (auto* W : {&W11, &W12})
      fill2(*W, [k = ++k](index_t x, index_t y) {
        return 0.3 * std::sin(double(x * Hn + y) + 0.5 * k);
      });
    for (auto* W : {&W21, &W22})
      fill2(*W, [k = ++k](index_t x, index_t y) {
        return 0.3 * std::cos(double(x * E + y) + 0.1 * k);
      });
  };
  fill_all();
  wp::run(step);
  wp::run(step);
  const bool root = ctx.is_root();
  auto copy = [&](const auto& a) {
    return root ? std::vector<double>(a.data(), a.data() + a.size()) : std::vector<double>();
  };
  const std::vector<double> w11 = copy(W11), w21 = copy(W21), w12 = copy(W12), w22 = copy(W22),
                            dz = copy(dZ);
  // Megatron: the hidden dimension (the only extent Hn = 8) split wherever a map has it,
  // every other map replicated on every rank
  int replicated = 0;
  auto megatron_on = [&](int P) {
    wp::schedule s;
    replicated = 0;
    step.for_each_map([&](const auto& m) {
      std::vector<index_t> g(std::size_t(m.rank()), 1);
      bool hidden = false;
      for (int k = 0; k < m.rank(); ++k)
        if (m.extents()[std::size_t(k)] == Hn) g[std::size_t(k)] = P, hidden = true;
      s.set(m.name(), hidden ? wp::grid_shape(g) : wp::grid_shape(g).replicated(P));
      replicated += hidden ? 0 : 1;
    });
    return s;
  };
  const wp::schedule megatron = megatron_on(p);
  REQUIRE(replicated >= 10);  // the input, residual, loss maps and their gradients' at least
  fill_all();
  auto plan = wp::distribute(step, megatron, ctx);
  plan.scatter();
  plan.execute();
  const index_t before = plan.stats().execute.bytes_received;
  plan.execute();
  index_t got = plan.stats().execute.bytes_received - before, total = 0;
  boost::mpi::all_reduce(ctx.comm(), got, total, std::plus<index_t>());
  // two Allreduces per block (Y_k forward, dX_{k-1} backward) of B S E doubles, each
  // 2 (P - 1) B S E values on the plan's accounting, and nothing else
  const index_t bse = Bn * S * E * index_t(sizeof(double));
  REQUIRE(total == 4 * 2 * index_t(p - 1) * bse);
  // the same on paper, and at 8 ranks (the hidden units split 8 ways, one each)
  REQUIRE(wp::plan_on_paper(step, megatron, p).rank_to_rank_later == total);
  REQUIRE(wp::plan_on_paper(step, megatron_on(8), 8).rank_to_rank_later == 4 * 2 * 7 * bse);
  std::string combines;
  for (const auto& rd : plan.stats().redistributions)
    if (rd.kind.find("(sum)") != std::string::npos)
      combines += rd.array + " " + rd.kind.substr(0, rd.kind.find(" over")) + "; ";
  REQUIRE(combines == (p == 1 ? ""
                              : "Y1 Allreduce(sum); Y2 Allreduce(sum); dX1 Allreduce(sum); "
                                "dX0 Allreduce(sum); "));
  plan.gather(W11, W21, W12, W22, dZ);
  REQUIRE(compare_on_root(ctx.comm(), W11, w11, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), W21, w21, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), W12, w12, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), W22, w22, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), dZ, dz, 1e-12) == "");
}
