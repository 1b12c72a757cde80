// Programs as run-time data (program/program.hpp), at 1-4 ranks: a residual MLP whose depth
// is a run-time value, built by a loop with prog.add(...), its parameters passed to
// wp::backward as a std::vector of wp::wrt, scheduled by map names made in the loop, by
// wp::automatic and on one process, trained for three steps and checked against plain loops
// (forward, hand-written backpropagation and SGD). The batch (7) and the width (5) split
// unevenly over 2, 3 and 4 ranks. Also: an empty program is refused by wp::distribute,
// wp::backward and wp::plan_on_paper alike on every rank; a program that holds a backward
// program is not differentiated again; maps and programs concatenate in order; maps added with
// wp::forward_only (the step's SGD updates, a Jacobi sweep) run as the others do, and
// wp::backward over one is refused alike on every rank, naming it.

#include "mpi_test_support.hpp"

#include <cmath>
#include <deque>
#include <string>
#include <vector>

using namespace mpitest;
using Catch::Matchers::Contains;

namespace {

constexpr index_t N = 7, H = 5;  // batch, width
constexpr double lr = 0.05;

double xv(index_t n, index_t k) { return std::sin(0.37 * double(n * H + k) + 0.1); }
double wv(int b, index_t j, index_t k) {
  return 0.4 * std::cos(0.9 * double(b) + 0.31 * double(j * H + k) + 0.2);
}

/// h[b+1](n, j) = h[b](n, j) + tanh(z[b](n, j)),  z[b](n, j) = sum_k W[b](j, k) h[b](n, k);
/// L = sum h[B]^2 / 2; each step: W[b] -= lr dL/dW[b]. Arrays in deques: their addresses
/// (their identity in a program) do not change as the network grows.
struct residual_mlp {
  int blocks;
  std::deque<wp::array<double, 2>> h, z, W, dW;
  wp::array<double, 0> L{"L", {}};
  wp::program fwd, step;
  std::vector<decltype(wp::wrt(std::declval<wp::array<double, 2>&>(),
                               std::declval<wp::array<double, 2>&>()))>
      ws;

  explicit residual_mlp(int b) : blocks(b) {
    auto [n, j, k] = wp::indices<3>();
    h.emplace_back("h0", std::array<index_t, 2>{N, H});
    for (int t = 0; t < blocks; ++t) {
      const std::string s = std::to_string(t);
      z.emplace_back("z" + s, std::array<index_t, 2>{N, H});
      W.emplace_back("W" + s, std::array<index_t, 2>{H, H});
      dW.emplace_back("dW" + s, std::array<index_t, 2>{H, H});
      h.emplace_back("h" + std::to_string(t + 1), std::array<index_t, 2>{N, H});
      auto& zt = z.back();
      auto& Wt = W.back();
      auto& in = h[std::size_t(t)];
      auto& out = h.back();
      fwd.add(wp::map("zero" + s, wp::space(N, H), zt(n, j) = 0.0))
          .add(wp::map("lin" + s, wp::space(N, H, H), zt(n, j) += Wt(j, k) * in(n, k)))
          .add(wp::map("act" + s, wp::space(N, H), out(n, j) = in(n, j) + wp::tanh(zt(n, j))));
      ws.push_back(wp::wrt(Wt, dW.back()));
    }
    fwd.add(wp::program(
        wp::map("l0", wp::space(), L() = 0.0),
        wp::map("loss", wp::space(N, H), L() += 0.5 * h.back()(n, j) * h.back()(n, j))));
    const wp::program bwd = wp::backward(fwd, L, ws);
    step = wp::program(fwd, bwd);
    for (int t = 0; t < blocks; ++t) {
      auto& Wt = W[std::size_t(t)];
      auto& g = dW[std::size_t(t)];
      // never differentiated: added without derivative maps
      step.add(wp::forward_only, wp::map("sgd" + std::to_string(t), wp::space(H, H),
                                         Wt(n, j) = Wt(n, j) - lr * g(n, j)));
    }
  }
  void fill() {
    fill2(h.front(), xv);
    for (int t = 0; t < blocks; ++t)
      fill2(W[std::size_t(t)], [&](index_t j, index_t k) { return wv(t, j, k); });
  }
};

/// The same steps in plain loops: the weights and the loss after `steps` steps.
struct reference {
  std::vector<std::vector<double>> W;  // [block][j * H + k]
  double loss = 0;
  reference(int blocks, int steps) {
    for (int t = 0; t < blocks; ++t) {
      W.emplace_back(std::size_t(H * H));
      for (index_t j = 0; j < H; ++j)
        for (index_t k = 0; k < H; ++k) W.back()[std::size_t(j * H + k)] = wv(t, j, k);
    }
    for (int s = 0; s < steps; ++s) one_step(blocks);
  }
  void one_step(int blocks) {
    std::vector<std::vector<double>> h(std::size_t(blocks + 1),
                                       std::vector<double>(std::size_t(N * H))),
        z(std::size_t(blocks), std::vector<double>(std::size_t(N * H), 0.0));
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < H; ++k) h[0][std::size_t(n * H + k)] = xv(n, k);
    for (int t = 0; t < blocks; ++t)
      for (index_t n = 0; n < N; ++n)
        for (index_t j = 0; j < H; ++j) {
          double a = 0;
          for (index_t k = 0; k < H; ++k)
            a += W[std::size_t(t)][std::size_t(j * H + k)] *
                 h[std::size_t(t)][std::size_t(n * H + k)];
          z[std::size_t(t)][std::size_t(n * H + j)] = a;
          h[std::size_t(t + 1)][std::size_t(n * H + j)] =
              h[std::size_t(t)][std::size_t(n * H + j)] + std::tanh(a);
        }
    loss = 0;
    std::vector<double> g(h.back());  // dL/dh[B] = h[B]
    for (double v : h.back()) loss += 0.5 * v * v;
    std::vector<std::vector<double>> dW(static_cast<std::size_t>(blocks));
    for (int t = blocks - 1; t >= 0; --t) {
      std::vector<double> gz(std::size_t(N * H)), gin(g);
      for (std::size_t e = 0; e < gz.size(); ++e) {
        const double th = std::tanh(z[std::size_t(t)][e]);
        gz[e] = g[e] * (1 - th * th);
      }
      dW[std::size_t(t)].assign(std::size_t(H * H), 0.0);
      for (index_t n = 0; n < N; ++n)
        for (index_t j = 0; j < H; ++j)
          for (index_t k = 0; k < H; ++k) {
            dW[std::size_t(t)][std::size_t(j * H + k)] +=
                gz[std::size_t(n * H + j)] * h[std::size_t(t)][std::size_t(n * H + k)];
            gin[std::size_t(n * H + k)] +=
                gz[std::size_t(n * H + j)] * W[std::size_t(t)][std::size_t(j * H + k)];
          }
      g = gin;
    }
    for (int t = 0; t < blocks; ++t)
      for (std::size_t e = 0; e < W[std::size_t(t)].size(); ++e)
        W[std::size_t(t)][e] -= lr * dW[std::size_t(t)][e];
  }
};

/// Trains `steps` steps under `plan`; problems as text (the same on every rank).
template <class Plan>
std::string train_and_check(const wp::context& ctx, residual_mlp& net, Plan& plan, int steps) {
  plan.scatter();
  for (int s = 0; s < steps; ++s) plan.execute();
  for (auto& w : net.W) plan.gather(w);
  plan.gather(net.L);
  // the loss of the last step is computed before its update: the reference's after steps - 1
  // updates and one more forward pass, which one_step computes before updating
  const reference ref(net.blocks, steps);
  std::string problems;
  for (int t = 0; t < net.blocks; ++t)
    problems += compare_on_root(ctx.comm(), net.W[std::size_t(t)], ref.W[std::size_t(t)], 1e-12);
  problems += compare_on_root(ctx.comm(), net.L, {ref.loss}, 1e-12);
  return problems;
}

/// The batch split over p by map name: every map with a batch dimension (all but the
/// weights' updates and the loss's zeroing) splits it; names made in the loop.
wp::schedule batch_split(const residual_mlp& net, int p) {
  wp::schedule s;
  net.step.for_each_map([&](const wp::detail::map_interface& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    if (m.rank() > 0 && m.extents()[0] == N) g[0] = p;
    s.set(m.name(), wp::grid_shape(g));
  });
  for (int t = 0; t < net.blocks; ++t)  // by name, as a user writes it
    s.set("lin" + std::to_string(t), wp::grid_shape{p, 1, 1});
  return s;
}

}  // namespace

TEST_CASE("a network whose depth is a run-time value trains as its plain loops do",
          "[programs][train]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  for (const int blocks : {1, 3, 6}) {
    residual_mlp net(blocks);
    REQUIRE(net.fwd.size() == std::size_t(3 * blocks + 2));
    SECTION("batch split by names made in the loop, " + std::to_string(blocks) + " blocks") {
      net.fill();
      auto plan = wp::distribute(net.step, batch_split(net, P), ctx);
      CHECK(train_and_check(ctx, net, plan, 3) == "");
      CHECK(explain_differs(ctx.comm(), plan) == "");
    }
    SECTION("wp::automatic, " + std::to_string(blocks) + " blocks") {
      net.fill();
      auto plan = wp::distribute(net.step, wp::automatic, ctx);
      CHECK(train_and_check(ctx, net, plan, 3) == "");
    }
    SECTION("one process (wp::run of the step on root), " + std::to_string(blocks) + " blocks") {
      net.fill();
      for (int s = 0; s < 2; ++s) wp::run(net.step);
      const reference ref(blocks, 2);
      std::string problems;
      for (int t = 0; t < blocks; ++t)
        problems +=
            compare_on_root(ctx.comm(), net.W[std::size_t(t)], ref.W[std::size_t(t)], 1e-12);
      CHECK(problems == "");
    }
  }
}

TEST_CASE("programs concatenate maps and programs in order; copies share their maps",
          "[programs]") {
  wp::context ctx(g_argc, g_argv);
  auto [i] = wp::indices<1>();
  constexpr index_t n = 9;
  wp::array<double, 1> x("x", {n}), y("y", {n});
  auto twice = wp::map("twice", wp::space(n), y(i) = 2.0 * x(i));
  auto inc = wp::map("inc", wp::space(n), y(i) += 1.0);
  wp::program p;
  REQUIRE(p.empty());
  p.add(twice);
  wp::program q(p, inc);  // a program and a map
  q.add(q);               // itself: its maps again, in order
  REQUIRE(q.names() == std::vector<std::string>{"twice", "inc", "twice", "inc"});
  REQUIRE(p.size() == 1);  // q's growth did not change p
  // two maps of one name are one schedule entry: by name, a schedule cannot tell them apart
  wp::schedule s;
  s.set("twice", wp::grid_shape{index_t(ctx.size())}).set("inc", wp::grid_shape{1});
  std::string msg;
  try {
    auto plan = wp::distribute(q, s, ctx);
  } catch (const wp::error& e) {
    msg = e.what();
  }
  REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  CHECK_THAT(msg, Contains("twice"));
  // p then inc, run: y = 2x + 1
  fill1(x, [](index_t a) { return double(a); });
  auto plan = wp::distribute(wp::program(p, inc), s, ctx);
  plan.run();
  std::vector<double> want(n);
  for (index_t a = 0; a < n; ++a) want[std::size_t(a)] = 2.0 * double(a) + 1.0;
  CHECK(compare_on_root(ctx.comm(), y, want) == "");
}

TEST_CASE("an empty program is refused on every rank; a backward program is not differentiated",
          "[programs][errors]") {
  wp::context ctx(g_argc, g_argv);
  auto caught = [&](auto&& f) {
    std::string msg;
    try {
      f();
      msg = "(accepted)";
    } catch (const wp::error& e) {
      msg = e.what();
    }
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    return msg;
  };
  const wp::program empty;
  wp::schedule s;
  CHECK_THAT(caught([&] { wp::distribute(empty, s, ctx); }),
             Contains("wp::distribute: the program has no maps"));
  CHECK_THAT(caught([&] { wp::distribute(empty, wp::automatic, ctx); }),
             Contains("wp::distribute: the program has no maps"));
  CHECK_THAT(caught([&] { wp::plan_on_paper(empty, s, 2); }),
             Contains("wp::plan_on_paper: the program has no maps"));
  wp::array<double, 0> L("L", {});
  wp::array<double, 1> w("w", {4}), dw("dw", {4}), dw2("dw2", {4});
  CHECK_THAT(caught([&] { wp::backward(empty, L, wp::wrt(w, dw)); }),
             Contains("wp::backward: the program has no maps"));

  auto [i] = wp::indices<1>();
  auto fwd = wp::program(wp::map("l0", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(4), L() += w(i) * w(i)));
  const wp::program bwd = wp::backward(fwd, L, wp::wrt(w, dw));
  CHECK_THAT(caught([&] { wp::backward(wp::program(fwd, bwd), L, wp::wrt(w, dw2)); }),
             Contains("was made by wp::backward of the loss 'L'") &&
                 Contains("second derivatives are not derived"));
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("maps added with wp::forward_only run as others do and are never differentiated",
          "[programs][errors]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // Two Jacobi sweeps of a 1-D heat equation and a sum, over 11 interior points (uneven over
  // 2, 3 and 4 ranks): u1 = avg(u0), u2 = avg(u1), s = sum u2^2.
  constexpr index_t n = 13;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> u0("u0", {n}), u1("u1", {n}), u2("u2", {n});
  wp::array<double, 0> S("S", {});
  auto sweep1 = wp::map("sweep1", wp::space({1, n - 1}),
                        u1(i) = 0.25 * u0(i - 1) + 0.5 * u0(i) + 0.25 * u0(i + 1));
  auto sweep2 = wp::map("sweep2", wp::space({1, n - 1}),
                        u2(i) = 0.25 * u1(i - 1) + 0.5 * u1(i) + 0.25 * u1(i + 1));
  auto s0 = wp::map("s0", wp::space(), S() = 0.0);
  auto sum = wp::map("sum", wp::space({1, n - 1}), S() += u2(i) * u2(i));
  wp::program prog(wp::forward_only, sweep1, wp::program(wp::forward_only, sweep2));
  prog.add(wp::forward_only, s0).add(wp::forward_only, wp::program(sum));
  REQUIRE(prog.names() == std::vector<std::string>{"sweep1", "sweep2", "s0", "sum"});

  auto u0v = [](index_t a) { return std::sin(0.7 * double(a)) + 0.1 * double(a); };
  std::vector<double> r0(n), r1(n, 0.0), r2(n, 0.0);  // the plain loops
  for (index_t a = 0; a < n; ++a) r0[std::size_t(a)] = u0v(a);
  for (index_t a = 1; a < n - 1; ++a)
    r1[std::size_t(a)] =
        0.25 * r0[std::size_t(a - 1)] + 0.5 * r0[std::size_t(a)] + 0.25 * r0[std::size_t(a + 1)];
  double rs = 0;
  for (index_t a = 1; a < n - 1; ++a) {
    r2[std::size_t(a)] =
        0.25 * r1[std::size_t(a - 1)] + 0.5 * r1[std::size_t(a)] + 0.25 * r1[std::size_t(a + 1)];
    rs += r2[std::size_t(a)] * r2[std::size_t(a)];
  }
  auto check = [&](auto& plan) {
    fill1(u0, u0v);
    fill1(u1, [](index_t) { return 0.0; });
    fill1(u2, [](index_t) { return 0.0; });
    plan.run();
    std::string problems = compare_on_root(ctx.comm(), u1, r1, 1e-14);
    problems += compare_on_root(ctx.comm(), u2, r2, 1e-14);
    problems += compare_on_root(ctx.comm(), S, {rs}, 1e-12);
    return problems;
  };
  SECTION("split over the ranks by name") {
    wp::schedule s;
    for (const char* m : {"sweep1", "sweep2", "sum"}) s.set(m, wp::grid_shape{index_t(P)});
    s.set("s0", wp::grid_shape{});
    auto plan = wp::distribute(prog, s, ctx);
    CHECK(check(plan) == "");
  }
  SECTION("wp::automatic") {
    auto plan = wp::distribute(prog, wp::automatic, ctx);
    CHECK(check(plan) == "");
  }
  SECTION("wp::backward over it names the map and the way out, on every rank") {
    std::string msg;
    wp::array<double, 1> du("du", {n});
    try {
      wp::backward(prog, S, wp::wrt(u0, du));
      msg = "(accepted)";
    } catch (const wp::plan_error& e) {
      msg = e.what();
    }
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    CHECK_THAT(msg, Contains("map 'sweep1' has no derivative") &&
                        Contains("added with wp::forward_only") &&
                        Contains("without wp::forward_only to differentiate it"));
    // the same maps added without the tag differentiate: d S / d u0 against the chain rule
    fill1(u0, u0v);
    const wp::program fwd(sweep1, sweep2, s0, sum);
    auto plan =
        wp::distribute(wp::program(fwd, wp::backward(fwd, S, wp::wrt(u0, du))), wp::automatic, ctx);
    plan.run();
    std::vector<double> g2(n, 0.0), g1(n, 0.0), g0(n, 0.0);
    for (index_t a = 1; a < n - 1; ++a) g2[std::size_t(a)] = 2 * r2[std::size_t(a)];
    for (index_t a = 1; a < n - 1; ++a)
      for (index_t d : {-1, 0, 1})
        g1[std::size_t(a + d)] += (d == 0 ? 0.5 : 0.25) * g2[std::size_t(a)];
    for (index_t a = 1; a < n - 1; ++a)
      for (index_t d : {-1, 0, 1})
        g0[std::size_t(a + d)] += (d == 0 ? 0.5 : 0.25) * g1[std::size_t(a)];
    CHECK(compare_on_root(ctx.comm(), du, g0, 1e-12) == "");
  }
}
