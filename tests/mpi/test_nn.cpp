/// \file test_nn.cpp
/// A small CNN of <workpart/nn.hpp> layers trained at 1 to 4 ranks against plain loops:
/// conv2d (3x3, padding 1, stride 2) -> relu -> max_pool2d (2x2) -> flatten -> linear ->
/// softmax cross-entropy, two SGD steps (nn::backward, nn::sgd), uneven extents. The
/// parameters and the loss after the steps equal the loops' (double, 1e-10 relative) under a
/// batch split and wp::automatic. Dropout (nn::dropout) draws the same mask on every grid,
/// forward and backward, as the documented generator in plain loops; an LSTM (nn::lstm) gives
/// the loops' outputs and the central differences of their loss as gradients. The optimizer's
/// bytes between the CNN step's maps equal the plan's for a sample of mixed schedules.

#include "mpi_test_support.hpp"

#include "../random_uniform_reference.hpp"

#include <workpart/nn.hpp>
#include <workpart/optimize/describe.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <cstdio>
#include <map>
#include <set>
#include <string>

using namespace mpitest;

namespace {

constexpr index_t N = 5, C = 2, H = 9, W = 7, K = 3, R = 3, Cls = 4;
constexpr index_t Ho = (H + 2 - R) / 2 + 1, Wo = (W + 2 - R) / 2 + 1;  // 5 x 4
constexpr index_t Po = Ho / 2, Qo = Wo / 2;                            // 2 x 2
constexpr index_t F = K * Po * Qo;
constexpr double lr = 0.2;
constexpr int steps = 2;

double xv(index_t n, index_t c, index_t h, index_t w) {
  return std::sin(0.37 * double(((n * C + c) * H + h) * W + w) + 0.1);
}
std::int32_t label_of(index_t n) { return std::int32_t((n * 3 + 1) % Cls); }

/// The parameters as flat row-major vectors, trained in plain loops.
struct params {
  std::vector<double> w, b, fw, fb;  // conv (K, C, R, R), (K); linear (F, Cls), (Cls)
  double loss = 0;
};

void train_in_loops(params& p) {
  auto X = [&](index_t n, index_t c, index_t h, index_t w) {
    return h < 0 || h >= H || w < 0 || w >= W ? 0.0 : xv(n, c, h, w);
  };
  for (int step = 0; step < steps; ++step) {
    std::vector<double> z(N * K * Ho * Wo), pool(N * F), arg(N * F), logit(N * Cls);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t i = 0; i < Ho; ++i)
          for (index_t j = 0; j < Wo; ++j) {
            double s = p.b[k];
            for (index_t c = 0; c < C; ++c)
              for (index_t r = 0; r < R; ++r)
                for (index_t q = 0; q < R; ++q)
                  s += X(n, c, 2 * i + r - 1, 2 * j + q - 1) * p.w[((k * C + c) * R + r) * R + q];
            z[((n * K + k) * Ho + i) * Wo + j] = s;
          }
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t u = 0; u < Po; ++u)
          for (index_t v = 0; v < Qo; ++v) {
            double best = -std::numeric_limits<double>::infinity();
            index_t at = 0;
            for (index_t r = 0; r < 2; ++r)
              for (index_t q = 0; q < 2; ++q) {
                const index_t e = ((n * K + k) * Ho + 2 * u + r) * Wo + 2 * v + q;
                const double a = std::max(z[e], 0.0);
                if (a > best) best = a, at = e;
              }
            const index_t f = (k * Po + u) * Qo + v;
            pool[n * F + f] = best;
            arg[n * F + f] = double(at);
          }
    p.loss = 0;
    std::vector<double> dlogit(N * Cls);
    for (index_t n = 0; n < N; ++n) {
      double mx = -std::numeric_limits<double>::infinity(), s = 0;
      for (index_t o = 0; o < Cls; ++o) {
        double y = p.fb[o];
        for (index_t f = 0; f < F; ++f) y += pool[n * F + f] * p.fw[f * Cls + o];
        logit[n * Cls + o] = y;
        mx = std::max(mx, y);
      }
      for (index_t o = 0; o < Cls; ++o) s += std::exp(logit[n * Cls + o] - mx);
      p.loss += (std::log(s) + mx - logit[n * Cls + label_of(n)]) / double(N);
      for (index_t o = 0; o < Cls; ++o)
        dlogit[n * Cls + o] =
            (std::exp(logit[n * Cls + o] - mx) / s - (o == label_of(n) ? 1.0 : 0.0)) / double(N);
    }
    std::vector<double> dfw(F * Cls, 0.0), dfb(Cls, 0.0), dpool(N * F, 0.0), dz(z.size(), 0.0);
    std::vector<double> dw(p.w.size(), 0.0), db(K, 0.0);
    for (index_t n = 0; n < N; ++n)
      for (index_t o = 0; o < Cls; ++o) {
        dfb[o] += dlogit[n * Cls + o];
        for (index_t f = 0; f < F; ++f) {
          dfw[f * Cls + o] += pool[n * F + f] * dlogit[n * Cls + o];
          dpool[n * F + f] += p.fw[f * Cls + o] * dlogit[n * Cls + o];
        }
      }
    for (index_t e = 0; e < N * F; ++e) {
      const auto at = std::size_t(arg[e]);
      if (z[at] > 0) dz[at] += dpool[e];  // relu'(z) = 1 where z > 0 (the values avoid 0)
    }
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t i = 0; i < Ho; ++i)
          for (index_t j = 0; j < Wo; ++j) {
            const double g = dz[((n * K + k) * Ho + i) * Wo + j];
            db[k] += g;
            for (index_t c = 0; c < C; ++c)
              for (index_t r = 0; r < R; ++r)
                for (index_t q = 0; q < R; ++q)
                  dw[((k * C + c) * R + r) * R + q] += g * X(n, c, 2 * i + r - 1, 2 * j + q - 1);
          }
    for (std::size_t e = 0; e < dw.size(); ++e) p.w[e] -= lr * dw[e];
    for (index_t k = 0; k < K; ++k) p.b[k] -= lr * db[k];
    for (std::size_t e = 0; e < dfw.size(); ++e) p.fw[e] -= lr * dfw[e];
    for (index_t o = 0; o < Cls; ++o) p.fb[o] -= lr * dfb[o];
  }
}

/// Every map's first dimension (the batch) over the P ranks.
template <class Program>
wp::schedule batch_split(const Program& prog, int P) {
  wp::schedule sch;
  prog.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    if (m.rank() > 0) g[0] = P;
    sch.set(m.name(), wp::grid_shape(g));
  });
  return sch;
}

/// An array's initial values, from its generator (the layer's init), flattened.
template <int D>
std::vector<double> initial_values(const wp::array<double, D>& a) {
  std::vector<double> v;
  std::array<index_t, std::size_t(D)> g{};
  for (index_t e = 0; e < a.size(); ++e) {
    index_t rest = e;
    for (int d = D - 1; d >= 0; --d) {
      g[std::size_t(d)] = rest % a.extent(d);
      rest /= a.extent(d);
    }
    v.push_back(a.get_generator()(g));
  }
  return v;
}

}  // namespace

TEST_CASE("nn: a small CNN trains distributed as in plain loops", "[nn][train]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  wp::array<double, 4> x("x", {N, C, H, W});
  wp::array<std::int32_t, 1> label("label", {N});
  auto conv = wp::nn::conv2d("conv", x, K, R, {.stride = 2, .padding = 1});
  auto act = wp::nn::relu("relu", conv.out());
  auto pool = wp::nn::max_pool2d("pool", act.out(), 2);
  auto flat = wp::nn::flatten("flat", pool.out());
  auto fc = wp::nn::linear("fc", flat.out(), Cls);
  auto ce = wp::nn::softmax_cross_entropy("ce", fc.out(), label);
  auto fwd =
      wp::program(conv.program, act.program, pool.program, flat.program, fc.program, ce.program);
  auto step =
      wp::program(fwd, wp::nn::backward(fwd, ce.out(), conv, fc), wp::nn::sgd(lr, conv, fc));
  auto& w = *std::get<0>(conv.params).param;
  auto& b = *std::get<1>(conv.params).param;
  auto& fw = *std::get<0>(fc.params).param;
  auto& fb = *std::get<1>(fc.params).param;

  params want{initial_values(w), initial_values(b), initial_values(fw), initial_values(fb)};
  train_in_loops(want);

  auto train = [&](auto&& plan) {
    x.init([](const std::array<index_t, 4>& g) { return xv(g[0], g[1], g[2], g[3]); });
    label.init([](const std::array<index_t, 1>& g) { return label_of(g[0]); });
    w.init(w.get_generator());  // the initial values again, for every schedule
    b.init(b.get_generator());
    fw.init(fw.get_generator());
    fb.init(fb.get_generator());
    plan.scatter();
    for (int s = 0; s < steps; ++s) plan.execute();
    plan.gather(w, b, fw, fb, ce.out());
    REQUIRE(compare_on_root(ctx.comm(), w, want.w, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), b, want.b, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), fw, want.fw, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), fb, want.fb, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), ce.out(), {want.loss}, 1e-10) == "");
  };
  SECTION("batch split: every map's first dimension over the P ranks") {
    train(wp::distribute(step, batch_split(step, P), ctx));
  }
  SECTION("wp::automatic") { train(wp::distribute(step, wp::automatic, ctx)); }
  SECTION("the model's bytes between maps are the plan's, for a sample of schedules") {
    // Map m on its candidate grid number (m + 1) s + m, for s = 0 .. 7: each sample mixes
    // grids across the layers, forward, backward (the gradients' combines) and update alike.
    // The model prices pairwise (optimize/pricer.hpp): a reader's need from its array's last
    // writer alone, a later reader of a combined array from the writer's leaders. Arrays one
    // map writes and one map reads are priced exactly: their bytes must equal the plan's.
    // Arrays of several writers (a zeroing map and a '+=', a bias then a product) or readers
    // are not (the plan also fetches what an older writer holds, and later readers fetch from
    // wherever the chosen combine left the values): their gaps are printed, not asserted
    // (README, "Choosing grids").
    const auto tables = wp::program_costs(step, P);
    std::map<std::string, std::set<std::string>> writers, readers;
    for (const auto& m : wp::describe(step).maps)
      for (const auto& a : m.accesses)
        (a.mode == wp::access_mode::read ? readers : writers)[a.array].insert(m.name);
    auto pairwise = [&](const std::string& a) {
      return writers[a].size() == 1 && readers[a].size() == 1;
    };
    int compared = 0, others = 0;
    index_t moved = 0;  // over all samples: the comparison is not vacuous
    double worst = 0;   // the largest relative gap outside the pairwise arrays
    std::string problems, worst_at;
    for (std::size_t s = 0; s < 8; ++s) {
      wp::schedule sch;
      for (std::size_t m = 0; m < tables.maps.size(); ++m)
        sch.set(tables.maps[m], tables.grids[m][(s * (m + 1) + m) % tables.grids[m].size()]);
      std::map<std::string, index_t> model, predicted, measured;
      for (const auto& t : wp::modelled_transfers(step, sch, P)) model[t.array] += t.bytes;
      auto plan = wp::distribute(step, sch, ctx);
      x.init([](const std::array<index_t, 4>& g) { return xv(g[0], g[1], g[2], g[3]); });
      label.init([](const std::array<index_t, 1>& g) { return label_of(g[0]); });
      plan.scatter();
      plan.execute();  // the first execute(): what the model prices between the maps
      for (const auto& r : plan.stats().redistributions) {
        // root's scatter and gather are the edges to the source and the sink, not between maps
        if (r.to == "root" || r.from.find("root") != std::string::npos) continue;
        predicted[r.array] += r.predicted_first_received;
        measured[r.array] += r.measured.bytes_received;
      }
      for (auto* sums : {&predicted, &measured})
        for (auto& [a, bytes] : *sums)
          bytes = boost::mpi::all_reduce(ctx.comm(), bytes, std::plus<index_t>());
      for (const auto& [a, bytes] : model) {
        const index_t want = predicted.count(a) ? predicted[a] : 0;
        const index_t got = measured.count(a) ? measured[a] : 0;
        REQUIRE(want == got);  // the plan moves what it predicts, every array
        if (!pairwise(a)) {
          ++others;
          const double gap = double(std::abs(bytes - want)) / double(std::max<index_t>(want, 1));
          if (gap > worst) worst = gap, worst_at = a;
          continue;
        }
        ++compared;
        moved += bytes;
        if (bytes != want)
          problems += "schedule " + sch.str() + ", array " + a + ": model " +
                      std::to_string(bytes) + " B, plan predicts and moves " +
                      std::to_string(want) + " B; ";
      }
    }
    if (ctx.is_root())
      std::printf(
          "np %d: %d pairwise array transfers equal the plan's; %d others, largest gap "
          "%.0f %% ('%s')\n",
          P, compared, others, 100 * worst, worst_at.c_str());
    REQUIRE(problems == "");
    REQUIRE(compared >= 8);
    if (P > 1) REQUIRE(moved > 0);
  }
}

TEST_CASE("nn::dropout: the same mask on every grid, forward and backward", "[nn][dropout]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  constexpr index_t B = 13, E = 11;
  constexpr double p = 0.4;
  constexpr std::int64_t k = 7;
  wp::array<double, 2> x("x", {B, E}), g("g", {B, E}), dx("dx", {B, E});
  wp::array<double, 0> L("L", {});
  wp::array<std::int64_t, 0> step("step", {});
  auto dr = wp::nn::dropout("drop", x, p, step);
  auto [i, j] = wp::indices<2>();
  auto fwd = wp::program(dr.program, wp::map("l0", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(B, E), L() += dr.out()(i, j) * g(i, j)));
  auto prog = wp::program(fwd, wp::backward(fwd, L, wp::wrt(x, dx)));

  std::vector<double> want_y, want_dx;
  for (index_t b = 0; b < B; ++b)
    for (index_t e = 0; e < E; ++e) {
      const bool keep =
          ref::uniform(ref::hash(ref::hash(ref::hash(ref::name_seed("drop"), k), b), e)) >= p;
      const double xv = std::cos(0.3 * double(b * E + e)), gv = 1.0 + 0.01 * double(b - e);
      want_y.push_back(keep ? xv / (1 - p) : 0.0);
      want_dx.push_back(keep ? gv / (1 - p) : 0.0);
    }
  auto check = [&](auto&& plan) {
    x.init([](const std::array<index_t, 2>& q) { return std::cos(0.3 * double(q[0] * E + q[1])); });
    g.init([](const std::array<index_t, 2>& q) { return 1.0 + 0.01 * double(q[0] - q[1]); });
    step.init([](const std::array<index_t, 0>&) { return k; });
    plan.scatter();
    plan.execute();
    plan.gather(dr.out(), dx);
    REQUIRE(compare_on_root(ctx.comm(), dr.out(), want_y, 1e-14) == "");
    REQUIRE(compare_on_root(ctx.comm(), dx, want_dx, 1e-14) == "");
  };
  auto split = [&](std::vector<index_t> two_d) {
    wp::schedule sch;
    prog.for_each_map([&](const auto& m) {
      std::vector<index_t> s(std::size_t(m.rank()), 1);
      for (std::size_t d = 0; d < s.size() && d < two_d.size(); ++d) s[d] = two_d[d];
      sch.set(m.name(), wp::grid_shape(s));
    });
    return sch;
  };
  SECTION("next_step: each execute() draws the next step's mask") {
    auto steps = wp::program(prog, wp::nn::next_step(step));
    auto plan = wp::distribute(steps, wp::automatic, ctx);
    x.init([](const std::array<index_t, 2>& q) { return std::cos(0.3 * double(q[0] * E + q[1])); });
    g.init([](const std::array<index_t, 2>& q) { return 1.0 + 0.01 * double(q[0] - q[1]); });
    step.init([](const std::array<index_t, 0>&) { return k - 1; });
    plan.scatter();
    plan.execute();  // step k - 1
    plan.execute();  // step k: the mask want_y was made with
    plan.gather(dr.out(), dx, step);
    REQUIRE(compare_on_root(ctx.comm(), dr.out(), want_y, 1e-14) == "");
    REQUIRE(compare_on_root(ctx.comm(), dx, want_dx, 1e-14) == "");
    REQUIRE(compare_on_root(ctx.comm(), step, {double(k + 1)}) == "");
  }
  SECTION("rows over the ranks") { check(wp::distribute(prog, split({index_t(P), 1}), ctx)); }
  SECTION("columns over the ranks") { check(wp::distribute(prog, split({1, index_t(P)}), ctx)); }
  SECTION("wp::automatic") { check(wp::distribute(prog, wp::automatic, ctx)); }
}

namespace {
/// An LSTM (PyTorch's cell, h_0 = c_0 = 0) in plain loops: y (b, t, k) flattened, and the loss
/// sum y * g. Parameters flattened row-major: Wx (I, 4, H), Wh (H, 4, H), b (4, H).
struct lstm_loops {
  index_t B, S, I, H;
  std::vector<double> x, g;
  double loss(const std::vector<double>& Wx, const std::vector<double>& Wh,
              const std::vector<double>& b, std::vector<double>* y = nullptr) const {
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    std::vector<double> h(std::size_t(B * H), 0.0), c(h);
    double L = 0;
    for (index_t t = 0; t < S; ++t) {
      std::vector<double> hn(h.size()), cn(c.size());
      for (index_t n = 0; n < B; ++n)
        for (index_t k = 0; k < H; ++k) {
          double z[4];
          for (index_t q = 0; q < 4; ++q) {
            z[q] = b[std::size_t(q * H + k)];
            for (index_t r = 0; r < I; ++r)
              z[q] += x[std::size_t((n * S + t) * I + r)] * Wx[std::size_t((r * 4 + q) * H + k)];
            for (index_t r = 0; r < H; ++r)
              z[q] += h[std::size_t(n * H + r)] * Wh[std::size_t((r * 4 + q) * H + k)];
          }
          const std::size_t e = std::size_t(n * H + k);
          cn[e] = sig(z[1]) * c[e] + sig(z[0]) * std::tanh(z[2]);
          hn[e] = sig(z[3]) * std::tanh(cn[e]);
          const std::size_t o = std::size_t((n * S + t) * H + k);
          L += hn[e] * g[o];
          if (y) (*y)[o] = hn[e];
        }
      h = hn;
      c = cn;
    }
    return L;
  }
};
/// Central differences of the loops' loss along each element of `which` (0: Wx, 1: Wh, 2: b).
std::vector<double> lstm_fd(const lstm_loops& m, std::vector<double> p[3], int which) {
  std::vector<double> d;
  for (std::size_t e = 0; e < p[which].size(); ++e) {
    const double v = p[which][e], h = 1e-6;
    p[which][e] = v + h;
    const double up = m.loss(p[0], p[1], p[2]);
    p[which][e] = v - h;
    const double down = m.loss(p[0], p[1], p[2]);
    p[which][e] = v;
    d.push_back((up - down) / (2 * h));
  }
  return d;
}
}  // namespace

TEST_CASE("nn::lstm: outputs and gradients distributed as in plain loops", "[nn][lstm]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  constexpr index_t B = 5, S = 3, I = 3, H = 4;
  wp::array<double, 3> x("x", {B, S, I}), g("g", {B, S, H});
  wp::array<double, 0> L("L", {});
  auto ls = wp::nn::lstm<S>("lstm", x, H);
  auto [n, t, k] = wp::indices<3>();
  auto fwd =
      wp::program(ls.program, wp::map("l0", wp::space(), L() = 0.0),
                  wp::map("loss", wp::space(B, S, H), L() += ls.out()(n, t, k) * g(n, t, k)));
  auto prog = wp::program(fwd, wp::nn::backward(fwd, L, ls));
  auto& Wx = *std::get<0>(ls.params).param;
  auto& Wh = *std::get<1>(ls.params).param;
  auto& b = *std::get<2>(ls.params).param;

  auto xv = [](index_t a, index_t s, index_t r) {
    return std::sin(0.7 * double((a * S + s) * I + r) + 0.2);
  };
  auto gv = [](index_t a, index_t s, index_t q) {
    return 1.0 - 0.05 * double((a * S + s) * H + q);
  };
  lstm_loops m{B, S, I, H, {}, {}};
  for (index_t a = 0; a < B; ++a)
    for (index_t s = 0; s < S; ++s) {
      for (index_t r = 0; r < I; ++r) m.x.push_back(xv(a, s, r));
      for (index_t q = 0; q < H; ++q) m.g.push_back(gv(a, s, q));
    }
  std::vector<double> p[3] = {initial_values(Wx), initial_values(Wh), initial_values(b)};
  std::vector<double> want_y(std::size_t(B * S * H));
  const double want_L = m.loss(p[0], p[1], p[2], &want_y);
  const std::vector<double> want_d[3] = {lstm_fd(m, p, 0), lstm_fd(m, p, 1), lstm_fd(m, p, 2)};

  auto check = [&](auto&& plan) {
    x.init([&](const std::array<index_t, 3>& q) { return xv(q[0], q[1], q[2]); });
    g.init([&](const std::array<index_t, 3>& q) { return gv(q[0], q[1], q[2]); });
    plan.scatter();
    plan.execute();
    auto& dWx = *std::get<0>(ls.params).grad;
    auto& dWh = *std::get<1>(ls.params).grad;
    auto& db = *std::get<2>(ls.params).grad;
    plan.gather(ls.out(), L, dWx, dWh, db);
    REQUIRE(compare_on_root(ctx.comm(), ls.out(), want_y, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), L, {want_L}, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), dWx, want_d[0], 1e-6) == "");
    REQUIRE(compare_on_root(ctx.comm(), dWh, want_d[1], 1e-6) == "");
    REQUIRE(compare_on_root(ctx.comm(), db, want_d[2], 1e-6) == "");
  };
  SECTION("batch split") { check(wp::distribute(prog, batch_split(prog, P), ctx)); }
  SECTION("wp::automatic") { check(wp::distribute(prog, wp::automatic, ctx)); }
}
