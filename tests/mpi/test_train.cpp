// Training steps (forward, wp::backward, SGD) distributed at 1-4 ranks: the parameters and
// the loss after three steps equal a plain serial loop's (double, 1e-10 relative), under a
// data-parallel schedule (the batch split: weight gradients are split reductions combined
// rank to rank), a hidden-split schedule, and wp::automatic. Uneven extents throughout.
#include "train_steps.hpp"

TEST_CASE("a training step distributed equals the serial loop after three steps", "[train]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  mlp net;
  auto step = net.step();
  const reference want = train_serially();

  auto train = [&](auto&& plan) {
    net.fill();
    plan.scatter();
    for (int s = 0; s < steps; ++s) plan.execute();
    plan.gather(net.W1, net.W2, net.L);
    REQUIRE(compare_on_root(ctx.comm(), net.W1, want.w1, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), net.W2, want.w2, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), net.L, {want.loss}, 1e-10) == "");
  };
  SECTION("data-parallel: every map's first dimension split") {
    train(wp::distribute(step, schedule_of(step, p, [](int r) { return r > 0 ? 0 : -1; }), ctx));
  }
  SECTION("hidden split: every map's second dimension split where it has one") {
    train(wp::distribute(step, schedule_of(step, p, [](int r) { return r > 1 ? 1 : r - 1; }), ctx));
  }
  SECTION("wp::automatic") { train(wp::distribute(step, wp::automatic, ctx)); }
}

// Data-parallel: every map splits its first dimension, so the batch is split in the forward
// and backward maps and each rank holds partial sums of both weight gradients; the update maps
// split the weights' rows, so the plans combine each gradient by a reduce-scatter: rank r
// sends every other rank's rows of its partial sums and receives its own rows from the P - 1
// others. The bytes are computed here from the array sizes.
TEST_CASE("data-parallel step: weight gradients combined by reduce-scatter, bytes as sized",
          "[train]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size(), me = ctx.rank();
  mlp net;
  net.fill();
  auto step = net.step();
  auto plan = wp::distribute(step, schedule_of(step, p, [](int r) { return r > 0 ? 0 : -1; }), ctx);
  plan.scatter();
  plan.execute();
  // rank r's rows of a rows x cols array of doubles split over p ranks, in bytes
  auto owned = [&](index_t rows, index_t cols, int r) {
    return (rows / p + (r < rows % p ? 1 : 0)) * cols * index_t(sizeof(double));
  };
  std::string problems;
  for (const auto& [name, rows, cols] :
       {std::tuple<std::string, index_t, index_t>{"dW1", I, H}, {"dW2", H, O}}) {
    int combines = 0;
    for (const auto& rd : plan.stats().redistributions) {
      if (rd.array != name || rd.kind.find("(sum)") == std::string::npos) continue;
      ++combines;
      const index_t n = rows * cols * index_t(sizeof(double));
      const index_t sent = n - owned(rows, cols, me), received = (p - 1) * owned(rows, cols, me);
      if (rd.kind.rfind("reduce-scatter(sum)", 0) != 0)
        problems += name + " combined by " + rd.kind + "; ";
      if (rd.measured.bytes_sent != sent || rd.measured.bytes_received != received)
        problems += name + ": " + std::to_string(rd.measured.bytes_sent) + "/" +
                    std::to_string(rd.measured.bytes_received) + " B sent/received, expected " +
                    std::to_string(sent) + "/" + std::to_string(received) + "; ";
    }
    if (combines != (p > 1 ? 1 : 0))
      problems += name + ": " + std::to_string(combines) + " combines; ";
  }
  REQUIRE(all_problems(ctx.comm(), problems) == "");

  // the optimizer's model prices the same combine: (p - 1) x the gradient's bytes received
  // over all ranks, into the update map
  const auto modelled =
      wp::modelled_transfers(step, schedule_of(step, p, [](int r) { return r > 0 ? 0 : -1; }), p);
  for (const auto& [name, to, n] : {std::tuple<std::string, std::string, index_t>{
                                        "dW1", "sgd1", I * H * index_t(sizeof(double))},
                                    {"dW2", "sgd2", H * O * index_t(sizeof(double))}}) {
    index_t bytes = -1;
    for (const auto& t : modelled)
      if (t.array == name && t.to == to) bytes = t.bytes;
    INFO(name);
    REQUIRE(bytes == (p - 1) * n);
  }
}

// The optimizer prices a training step per execute() (its update carries the weights into the
// next one; config_options::executions): with large weights and a small batch, moving the
// weights' gradients costs more than moving activations, so the weight-bearing maps keep the
// batch whole and split the hidden units (tensor-parallel); with a large batch and small
// weights they split the batch (data-parallel).
TEST_CASE(
    "the optimizer chooses tensor-parallel for large weights, data-parallel for a large "
    "batch",
    "[train][optimize]") {
  // no MPI: the same on every rank and at every rank count, so checked once, at np 1 (the
  // pricing for 8 ranks takes seconds under the sanitizers, on each rank)
  wp::context ctx(g_argc, g_argv);
  if (ctx.size() > 1) return;
  const wp::machine_model model{.flops = 5e10, .alpha = 2e-6, .beta = 1e-10};
  const std::vector<std::string> weighty = {"h", "o", "dh", "do"};
  auto grids_of = [&](const wp::optimized& r) {
    std::string s;
    for (const auto& m : r.maps)
      if (std::find(weighty.begin(), weighty.end(), m.map) != weighty.end())
        s += m.map + " " + m.grid.str() + "; ";
    return s;
  };
  SECTION("batch 8, 256-1024-256: tensor-parallel") {
    mlp big(8, 256, 1024, 256);
    auto step = big.step();
#if defined(__SANITIZE_ADDRESS__)
    const std::vector<int> counts = {4};  // the sanitizers' pass: pricing for 8 takes ~25 s
#else
    const std::vector<int> counts = {4, 8};
#endif
    for (int p : counts) {
      const wp::optimized r = wp::optimize(step, p, model);
      INFO(p << " ranks: " << grids_of(r));
      for (const auto& m : r.maps)
        if (std::find(weighty.begin(), weighty.end(), m.map) != weighty.end()) {
          REQUIRE(m.grid.dims[0] == 1);    // the batch whole
          REQUIRE(m.grid.product() == p);  // the rest split over every rank
        }
    }
  }
  SECTION("batch 4096, 32-64-32: data-parallel") {
    mlp wide(4096, 32, 64, 32);
    auto step = wide.step();
    const wp::optimized r = wp::optimize(step, 4, model);
    INFO(grids_of(r));
    for (const auto& m : r.maps)
      if (std::find(weighty.begin(), weighty.end(), m.map) != weighty.end())
        REQUIRE(m.grid == wp::grid_shape{4, 1, 1});
  }
}

// A convolution written with an inner sum: its backward runs the sum's body over the space
// extended by the sum's index (d<map>.sum, include/workpart/autodiff/rules.hpp). Trained three
// steps under a filter split, an output-position split (the filter gradient is then a split
// reduction over the positions) and wp::automatic, against plain loops.
TEST_CASE("a convolution with an inner sum trains distributed as in plain loops", "[train][sum]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  constexpr index_t C = 2, Tn = 13, F = 3, R = 3, To = (Tn - R) / 2 + 1;  // stride 2: To = 6
  auto xval = [](index_t c, index_t t) { return std::sin(0.4 * double(c * Tn + t) + 0.3); };
  auto tval = [](index_t f, index_t i) { return 0.5 * std::cos(0.9 * double(f * To + i)); };
  auto wval = [](index_t f, index_t c, index_t r) {
    return 0.3 * std::sin(double((f * C + c) * R + r) + 0.7);
  };

  std::vector<double> want_w, y(F * To), dy(F * To);
  for (index_t f = 0; f < F; ++f)
    for (index_t c = 0; c < C; ++c)
      for (index_t r = 0; r < R; ++r) want_w.push_back(wval(f, c, r));
  double want_loss = 0;
  for (int s = 0; s < steps; ++s) {
    std::vector<double> dw(want_w.size(), 0.0);
    want_loss = 0;
    for (index_t f = 0; f < F; ++f)
      for (index_t i = 0; i < To; ++i) {
        double z = 0;
        for (index_t c = 0; c < C; ++c)
          for (index_t r = 0; r < R; ++r) z += want_w[(f * C + c) * R + r] * xval(c, 2 * i + r);
        const double a = std::tanh(z), e = a - tval(f, i);
        want_loss += 0.5 * e * e;
        dy[f * To + i] = e * (1 - a * a);
      }
    for (index_t f = 0; f < F; ++f)
      for (index_t i = 0; i < To; ++i)
        for (index_t c = 0; c < C; ++c)
          for (index_t r = 0; r < R; ++r)
            dw[(f * C + c) * R + r] += dy[f * To + i] * xval(c, 2 * i + r);
    for (std::size_t e = 0; e < dw.size(); ++e) want_w[e] -= lr * dw[e];
  }

  testprog::conv_train_step prog(C, Tn, F, R);
  auto &x = prog.x, &t = prog.t;
  auto& w = prog.w;
  auto& L = prog.L;
  auto step = prog.step(lr);
  auto train = [&](auto&& plan) {
    fill2(x, xval);
    fill2(t, tval);
    w.init([&](const std::array<index_t, 3>& g) { return wval(g[0], g[1], g[2]); });
    plan.scatter();
    for (int s = 0; s < steps; ++s) plan.execute();
    plan.gather(w, L);
    REQUIRE(compare_on_root(ctx.comm(), w, want_w, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), L, {want_loss}, 1e-10) == "");
  };
  SECTION("filters split") {
    train(wp::distribute(step, schedule_of(step, p, [](int k) { return k > 0 ? 0 : -1; }), ctx));
  }
  SECTION("output positions split: the filter gradient a split reduction") {
    train(wp::distribute(step, schedule_of(step, p, [](int k) { return k > 1 ? 1 : k - 1; }), ctx));
  }
  SECTION("wp::automatic") { train(wp::distribute(step, wp::automatic, ctx)); }
}

// An embedding lookup: its gradient is a scatter-add dE(tok(b, s), d) += ..., whose written
// axis is data-dependent, so under a batch split every rank holds partial sums of the whole
// table, combined like any split reduction (here into the update map's rows of E).
TEST_CASE("an embedding lookup trains distributed as in plain loops", "[train][indirect]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size(), me = ctx.rank();
  constexpr index_t Bn = 5, S = 3, V = 7, D = 4, On = 2;  // token 6 never occurs
  auto tokv = [](index_t b, index_t s) { return std::int32_t((b * 2 + s * s) % 6); };
  auto ev = [](index_t v, index_t d) { return 0.4 * std::sin(double(v * D + d) + 0.2); };
  auto wv = [](index_t d, index_t o) { return 0.3 * std::cos(double(d * On + o) + 0.9); };
  auto tval = [](index_t b, index_t o) { return 0.5 * std::sin(double(b * On + o)); };

  std::vector<double> want_e, want_w;
  for (index_t v = 0; v < V; ++v)
    for (index_t d = 0; d < D; ++d) want_e.push_back(ev(v, d));
  for (index_t d = 0; d < D; ++d)
    for (index_t o = 0; o < On; ++o) want_w.push_back(wv(d, o));
  double want_loss = 0;
  for (int st = 0; st < steps; ++st) {
    std::vector<double> de(want_e.size(), 0.0), dw(want_w.size(), 0.0), dy(Bn * On);
    want_loss = 0;
    for (index_t b = 0; b < Bn; ++b)
      for (index_t o = 0; o < On; ++o) {
        double y = 0;
        for (index_t s = 0; s < S; ++s)
          for (index_t d = 0; d < D; ++d) y += want_e[tokv(b, s) * D + d] * want_w[d * On + o];
        dy[b * On + o] = std::tanh(y) - tval(b, o);
        want_loss += 0.5 * dy[b * On + o] * dy[b * On + o];
        dy[b * On + o] *= 1 - std::tanh(y) * std::tanh(y);
      }
    for (index_t b = 0; b < Bn; ++b)
      for (index_t o = 0; o < On; ++o)
        for (index_t s = 0; s < S; ++s)
          for (index_t d = 0; d < D; ++d) {
            dw[d * On + o] += want_e[tokv(b, s) * D + d] * dy[b * On + o];
            de[tokv(b, s) * D + d] += want_w[d * On + o] * dy[b * On + o];
          }
    for (std::size_t e = 0; e < de.size(); ++e) want_e[e] -= lr * de[e];
    for (std::size_t e = 0; e < dw.size(); ++e) want_w[e] -= lr * dw[e];
  }

  wp::array<std::int32_t, 2> tok("tok", {Bn, S});
  wp::array<double, 2> E("E", {V, D}), W("W", {D, On}), dE("dE", {V, D}), dW("dW", {D, On});
  wp::array<double, 3> Emb("Emb", {Bn, S, D});
  wp::array<double, 2> Y("Y", {Bn, On}), A("A", {Bn, On}), T("T", {Bn, On});
  wp::array<double, 0> L("L", {});
  auto [b, x1, x2, x3] = wp::indices<4>();
  auto fwd =
      wp::program(wp::map("emb", wp::space(Bn, S, D), Emb(b, x1, x2) = E(tok(b, x1), x2)),
                  wp::map("y0", wp::space(Bn, On), Y(b, x1) = 0.0),
                  wp::map("y", wp::space(Bn, On, S, D), Y(b, x1) += Emb(b, x2, x3) * W(x3, x1)),
                  wp::map("act", wp::space(Bn, On), A(b, x1) = wp::tanh(Y(b, x1))),
                  wp::map("l0", wp::space(), L() = 0.0),
                  wp::map("loss", wp::space(Bn, On),
                          L() += 0.5 * (A(b, x1) - T(b, x1)) * (A(b, x1) - T(b, x1))));
  auto step = wp::program(fwd, wp::backward(fwd, L, wp::wrt(E, dE), wp::wrt(W, dW)),
                          wp::map("sgdE", wp::space(V, D), E(b, x1) = E(b, x1) - lr * dE(b, x1)),
                          wp::map("sgdW", wp::space(D, On), W(b, x1) = W(b, x1) - lr * dW(b, x1)));
  auto train = [&](auto&& plan) {
    fill2(tok, tokv);
    fill2(E, ev);
    fill2(W, wv);
    fill2(T, tval);
    plan.scatter();
    for (int st = 0; st < steps; ++st) plan.execute();
    plan.gather(E, W, L);
    REQUIRE(compare_on_root(ctx.comm(), E, want_e, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), W, want_w, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), L, {want_loss}, 1e-10) == "");
    return std::move(plan);
  };
  SECTION("data-parallel: the table's gradient reduce-scattered into the update's rows") {
    auto plan = train(
        wp::distribute(step, schedule_of(step, p, [](int k) { return k > 0 ? 0 : -1; }), ctx));
    // per execute(), rank r sends the other ranks' rows of its partial dE and receives its own
    // rows from each of the p - 1 others (rows of V split over p, by the documented rule)
    const index_t mine = block_of(V, p, me).size * D * index_t(sizeof(double));
    const index_t sent = V * D * index_t(sizeof(double)) - mine, received = (p - 1) * mine;
    std::string problems;
    int combines = 0;
    for (const auto& rd : plan.stats().redistributions) {
      if (rd.array != "dE" || rd.kind.find("(sum)") == std::string::npos) continue;
      ++combines;
      if (rd.kind.rfind("reduce-scatter(sum)", 0) != 0) problems += "dE by " + rd.kind + "; ";
      if (rd.measured.bytes_sent != steps * sent || rd.measured.bytes_received != steps * received)
        problems += "dE: " + std::to_string(rd.measured.bytes_sent) + "/" +
                    std::to_string(rd.measured.bytes_received) + " B, expected " +
                    std::to_string(steps * sent) + "/" + std::to_string(steps * received) + "; ";
    }
    if (combines != (p > 1 ? 1 : 0)) problems += std::to_string(combines) + " combines of dE; ";
    REQUIRE(all_problems(ctx.comm(), problems) == "");
  }
  SECTION("the model dimension split: the scatter-add split by columns, nothing combined") {
    train(
        wp::distribute(step, schedule_of(step, p, [](int k) { return k > 2 ? k - 1 : -1; }), ctx));
  }
  SECTION("wp::automatic") { train(wp::distribute(step, wp::automatic, ctx)); }
}

// A causal filter: z(f, i) = sum_{r <= i} w(f, r) x(r), an inner sum whose range grows with
// i. Its derivative runs over the hull of the ranges, masked to each point's own range by
// global coordinates, so every grid gives the serial loop's weights.
TEST_CASE("a causal inner sum (a triangle) trains distributed as in plain loops",
          "[train][sum][affine]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  constexpr index_t F = 3, Tn = 7;
  auto xval = [](index_t t) { return std::sin(0.9 * double(t) + 0.4); };
  auto tval = [](index_t f, index_t i) { return 0.4 * std::cos(double(f * Tn + i)); };
  auto wval = [](index_t f, index_t r) { return 0.3 * std::sin(double(f * Tn + r) + 0.3); };
  std::vector<double> want_w;
  for (index_t f = 0; f < F; ++f)
    for (index_t r = 0; r < Tn; ++r) want_w.push_back(wval(f, r));
  double want_loss = 0;
  for (int st = 0; st < steps; ++st) {
    std::vector<double> dw(want_w.size(), 0.0);
    want_loss = 0;
    for (index_t f = 0; f < F; ++f)
      for (index_t i = 0; i < Tn; ++i) {
        double z = 0;
        for (index_t r = 0; r <= i; ++r) z += want_w[f * Tn + r] * xval(r);
        const double a = std::tanh(z), e = a - tval(f, i);
        want_loss += 0.5 * e * e;
        for (index_t r = 0; r <= i; ++r) dw[f * Tn + r] += e * (1 - a * a) * xval(r);
      }
    for (std::size_t e = 0; e < dw.size(); ++e) want_w[e] -= lr * dw[e];
  }
  wp::array<double, 1> x("x", {Tn});
  wp::array<double, 2> w("w", {F, Tn}), dw("dw", {F, Tn}), t("t", {F, Tn}), z("z", {F, Tn}),
      a("a", {F, Tn});
  wp::array<double, 0> L("L", {});
  auto [f, i, r] = wp::indices<3>();
  auto fwd = wp::program(
      wp::map("causal", wp::space(F, Tn),
              z(f, i) = wp::sum(wp::range(r, 0, i + 1), w(f, r) * x(r))),
      wp::map("act", wp::space(F, Tn), a(f, i) = wp::tanh(z(f, i))),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(F, Tn), L() += 0.5 * (a(f, i) - t(f, i)) * (a(f, i) - t(f, i))));
  auto step = wp::program(fwd, wp::backward(fwd, L, wp::wrt(w, dw)),
                          wp::map("sgd", wp::space(F, Tn), w(f, i) = w(f, i) - lr * dw(f, i)));
  auto train = [&](auto&& plan) {
    fill1(x, xval);
    fill2(t, tval);
    fill2(w, wval);
    plan.scatter();
    for (int st = 0; st < steps; ++st) plan.execute();
    plan.gather(w, L);
    REQUIRE(compare_on_root(ctx.comm(), w, want_w, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), L, {want_loss}, 1e-10) == "");
  };
  SECTION("positions split (the hull's index too, in the derivative map)") {
    train(
        wp::distribute(step, schedule_of(step, p, [](int k) { return k > 1 ? k - 1 : -1; }), ctx));
  }
  SECTION("filters split") {
    train(wp::distribute(step, schedule_of(step, p, [](int k) { return k > 1 ? 0 : -1; }), ctx));
  }
  SECTION("wp::automatic") { train(wp::distribute(step, wp::automatic, ctx)); }
}

// Nested inner reductions whose indices are numbered inner-below-outer (`auto [f, i, c, r]`
// with the sum over r outermost: the outer reduction's derivative runs over the space extended
// by r, which there is index 2 -- c's number). Until the indices were exchanged rather than
// renamed, dw came out wrong at every rank count and schedule (off-diagonal entries 0).

TEST_CASE("a convolution written tap-outermost (nested sums, inner index below) trains as loops",
          "[train][sum][nested]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  constexpr index_t F = 3, C = 2, R = 3, To = 5, Tn = To + R - 1;
  auto xval = [](index_t c, index_t t) { return std::sin(0.4 * double(c * Tn + t) + 0.3); };
  auto tval = [](index_t f, index_t i) { return 0.5 * std::cos(0.9 * double(f * To + i)); };
  auto wval = [](index_t f, index_t c, index_t r) {
    return 0.3 * std::sin(1.7 * double((f * C + c) * R + r) + 0.7);
  };
  // pooled: z(f, i) = max_r sum_c w(f, c, r) x(c, i + r - pad), else the sum over r too;
  // x is 0 outside [0, Tn) (read with wp::padded where pad > 0)
  auto xpad = [&](index_t c, index_t t) { return t >= 0 && t < Tn ? xval(c, t) : 0.0; };
  auto train_serially = [&](bool pooled, index_t pad) {
    std::vector<double> w;
    for (index_t f = 0; f < F; ++f)
      for (index_t c = 0; c < C; ++c)
        for (index_t r = 0; r < R; ++r) w.push_back(wval(f, c, r));
    double loss = 0;
    for (int s = 0; s < steps; ++s) {
      std::vector<double> dw(w.size(), 0.0);
      loss = 0;
      for (index_t f = 0; f < F; ++f)
        for (index_t i = 0; i < To; ++i) {
          std::vector<double> tap(R, 0.0);
          for (index_t r = 0; r < R; ++r)
            for (index_t c = 0; c < C; ++c) tap[r] += w[(f * C + c) * R + r] * xpad(c, i + r - pad);
          index_t best = 0;
          double z = 0;
          for (index_t r = 0; r < R; ++r) {
            z += tap[r];
            if (tap[r] > tap[best]) best = r;
          }
          if (pooled) z = tap[best];
          const double a = std::tanh(z), e = a - tval(f, i), dz = e * (1 - a * a);
          loss += 0.5 * e * e;
          for (index_t r = 0; r < R; ++r)
            if (!pooled || r == best)
              for (index_t c = 0; c < C; ++c) dw[(f * C + c) * R + r] += dz * xpad(c, i + r - pad);
        }
      for (std::size_t e = 0; e < dw.size(); ++e) w[e] -= lr * dw[e];
    }
    return std::pair{w, loss};
  };
  wp::array<double, 2> x("x", {C, Tn}), t("t", {F, To}), z("z", {F, To}), a("a", {F, To});
  wp::array<double, 3> w("w", {F, C, R}), dw("dw", {F, C, R});
  wp::array<double, 0> L("L", {});
  auto [f, i, c, r] = wp::indices<4>();
  auto channels = wp::sum(wp::range(c, 0, C), w(f, c, r) * x(c, i + r));
  auto step_of = [&](auto conv) {
    auto fwd = wp::program(
        conv, wp::map("act", wp::space(F, To), a(f, i) = wp::tanh(z(f, i))),
        wp::map("l0", wp::space(), L() = 0.0),
        wp::map("loss", wp::space(F, To), L() += 0.5 * (a(f, i) - t(f, i)) * (a(f, i) - t(f, i))));
    return wp::program(
        fwd, wp::backward(fwd, L, wp::wrt(w, dw)),
        wp::map("sgd", wp::space(F, C, R), w(f, i, c) = w(f, i, c) - lr * dw(f, i, c)));
  };
  auto check = [&](auto&& step, bool pooled, index_t pad = 0) {
    const auto [want_w, want_loss] = train_serially(pooled, pad);
    auto train = [&](auto&& plan) {
      fill2(x, xval);
      fill2(t, tval);
      fill3(w, wval);
      plan.scatter();
      for (int s = 0; s < steps; ++s) plan.execute();
      plan.gather(w, L);
      REQUIRE(compare_on_root(ctx.comm(), w, want_w, 1e-10) == "");
      REQUIRE(compare_on_root(ctx.comm(), L, {want_loss}, 1e-10) == "");
    };
    train(wp::distribute(step, schedule_of(step, p, [](int k) { return k > 0 ? 0 : -1; }), ctx));
    train(wp::distribute(step, schedule_of(step, p, [](int k) { return k > 1 ? 1 : -1; }), ctx));
    train(wp::distribute(step, wp::automatic, ctx));
  };
  SECTION("two nested sums") {
    check(
        step_of(wp::map("conv", wp::space(F, To), z(f, i) = wp::sum(wp::range(r, 0, R), channels))),
        false);
  }
  SECTION("a max over the taps of a sum over the channels (used not to compile)") {
    check(step_of(wp::map("conv", wp::space(F, To),
                          z(f, i) = wp::max_of(wp::range(r, 0, R), channels))),
          true);
  }
  SECTION("two nested sums over a padded read (used not to compile)") {
    check(
        step_of(wp::map("conv", wp::space(F, To),
                        z(f, i) = wp::sum(wp::range(r, 0, R),
                                          wp::sum(wp::range(c, 0, C),
                                                  w(f, c, r) * wp::padded(x, 0.0)(c, i + r - 1))))),
        false, 1);
  }
}

// max_into's gradient goes to the points whose value is the maximum, ties shared evenly: the
// ties are counted over the reduced dimension before any point takes its share, whatever the
// grid (split over the reduced dimension, the counts are partial on each rank until combined).
