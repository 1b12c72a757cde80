// Training steps (forward, wp::backward, SGD) distributed at 1-4 ranks: the parameters and
// the loss after three steps equal a plain serial loop's (double, 1e-10 relative), under a
// data-parallel schedule (the batch split: weight gradients are split reductions combined
// rank to rank), a hidden-split schedule, and wp::automatic. Uneven extents throughout.
#include "mpi_test_support.hpp"
#include "../conv_train_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

using namespace mpitest;

namespace {

constexpr index_t B = 7, I = 5, H = 6, O = 3;
constexpr double lr = 0.05;
constexpr int steps = 3;

double xv(index_t b, index_t k) { return std::sin(0.3 * double(b * I + k) + 0.1); }
double tv(index_t b, index_t o) { return std::cos(0.7 * double(b * O + o)); }
double w1v(index_t k, index_t h) { return 0.2 * std::sin(double(k * H + h) + 0.5); }
double w2v(index_t h, index_t o) { return 0.3 * std::cos(double(h * O + o) + 0.2); }

/// The same steps in plain loops: W1, W2 after `steps` SGD steps, and the last loss.
struct reference {
  std::vector<double> w1, w2;
  double loss = 0;
};
reference train_serially() {
  reference r;
  for (index_t k = 0; k < I; ++k)
    for (index_t h = 0; h < H; ++h) r.w1.push_back(w1v(k, h));
  for (index_t h = 0; h < H; ++h)
    for (index_t o = 0; o < O; ++o) r.w2.push_back(w2v(h, o));
  for (int s = 0; s < steps; ++s) {
    std::vector<double> a(B * H), d_out(B * O), dw1(I * H, 0.0), dw2(H * O, 0.0), da(B * H, 0.0);
    r.loss = 0;
    for (index_t b = 0; b < B; ++b)
      for (index_t h = 0; h < H; ++h) {
        double z = 0;
        for (index_t k = 0; k < I; ++k) z += xv(b, k) * r.w1[k * H + h];
        a[b * H + h] = std::tanh(z);
      }
    for (index_t b = 0; b < B; ++b)
      for (index_t o = 0; o < O; ++o) {
        double y = 0;
        for (index_t h = 0; h < H; ++h) y += a[b * H + h] * r.w2[h * O + o];
        d_out[b * O + o] = y - tv(b, o);
        r.loss += 0.5 * d_out[b * O + o] * d_out[b * O + o];
      }
    for (index_t b = 0; b < B; ++b)
      for (index_t h = 0; h < H; ++h)
        for (index_t o = 0; o < O; ++o) {
          dw2[h * O + o] += a[b * H + h] * d_out[b * O + o];
          da[b * H + h] += d_out[b * O + o] * r.w2[h * O + o];
        }
    for (index_t b = 0; b < B; ++b)
      for (index_t h = 0; h < H; ++h) {
        const double dz = da[b * H + h] * (1 - a[b * H + h] * a[b * H + h]);
        for (index_t k = 0; k < I; ++k) dw1[k * H + h] += xv(b, k) * dz;
      }
    for (std::size_t e = 0; e < dw1.size(); ++e) r.w1[e] -= lr * dw1[e];
    for (std::size_t e = 0; e < dw2.size(); ++e) r.w2[e] -= lr * dw2[e];
  }
  return r;
}

/// A grid for every map of the program: `split` picks the dimension split over p (or none).
template <class Prog, class Split>
wp::schedule schedule_of(const Prog& prog, int p, Split split) {
  wp::schedule s;
  prog.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    const int d = split(m.rank());
    if (d >= 0) g[std::size_t(d)] = p;
    s.set(m.name(), wp::grid_shape(g));
  });
  return s;
}

/// The MLP's arrays and its training step (forward, backward, SGD), built once per test.
struct mlp {
  index_t nb = B, ni = I, nh = H, no = O;  // batch, input, hidden, output
  wp::array<double, 2> X{"X", {nb, ni}}, T{"T", {nb, no}}, W1{"W1", {ni, nh}}, W2{"W2", {nh, no}};
  wp::array<double, 2> Hd{"H", {nb, nh}}, A{"A", {nb, nh}}, Out{"Out", {nb, no}};
  wp::array<double, 2> dW1{"dW1", {ni, nh}}, dW2{"dW2", {nh, no}};
  wp::array<double, 0> L{"L", {}};

  mlp() = default;
  mlp(index_t b, index_t i, index_t h, index_t o) : nb(b), ni(i), nh(h), no(o) {}

  auto step() {
    auto [b, h, k] = wp::indices<3>();
    auto fwd = wp::program(wp::map("h0", wp::space(nb, nh), Hd(b, h) = 0.0),
                           wp::map("h", wp::space(nb, nh, ni), Hd(b, h) += X(b, k) * W1(k, h)),
                           wp::map("act", wp::space(nb, nh), A(b, h) = wp::tanh(Hd(b, h))),
                           wp::map("o0", wp::space(nb, no), Out(b, h) = 0.0),
                           wp::map("o", wp::space(nb, no, nh), Out(b, h) += A(b, k) * W2(k, h)),
                           wp::map("l0", wp::space(), L() = 0.0),
                           wp::map("loss", wp::space(nb, no),
                                   L() += 0.5 * (Out(b, h) - T(b, h)) * (Out(b, h) - T(b, h))));
    return wp::program(fwd, wp::backward(fwd, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2)),
                       wp::map("sgd1", wp::space(ni, nh), W1(b, h) = W1(b, h) - lr * dW1(b, h)),
                       wp::map("sgd2", wp::space(nh, no), W2(b, h) = W2(b, h) - lr * dW2(b, h)));
  }
  void fill() {
    fill2(X, xv);
    fill2(T, tv);
    fill2(W1, w1v);
    fill2(W2, w2v);
  }
};

}  // namespace

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
