/// \file test_overlapping_writes.cpp
/// Backward maps whose input-gradient writes overlap between ranks, distributed with the
/// window dimension split at 1-4 ranks (uneven extents): a stride-1 sliding window (a 1-D
/// convolution, as an inner wp::sum and as `+=` over the taps), offset and reversed 2-D reads
/// on grids that split one or both dimensions, and pooling (wp::max_of over a window, and
/// max_into over the window's taps). wp::backward zeroes the gradient in a map of its own
/// before the derivative map adds into it, and an SGD map reads the gradient after it, for
/// three executes: the ranks' overlapping partial results are combined rank to rank, each
/// element's old value once. The parameters and gradients are compared on root with plain
/// loops written here (double, 1e-12 relative), every redistribution's measured bytes with
/// its prediction, and explain() names the combine.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

namespace {

using namespace mpitest;
using Catch::Matchers::Contains;

constexpr double lr = 0.05;
constexpr int steps = 3;

double xv(index_t k) { return std::sin(1.37 * double(k) + 0.3) + 0.05 * double(k); }
double wv(index_t k) { return 0.4 * std::cos(0.9 * double(k) + 0.2); }
double dyv(index_t k) { return std::cos(0.77 * double(k) + 0.1) + 0.3; }

/// A grid for every map: dimension 0 split over p0 and dimension 1 (where the map has one)
/// over p1.
template <class Prog>
wp::schedule split_schedule(const Prog& prog, index_t p0, index_t p1 = 1) {
  wp::schedule s;
  prog.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    if (m.rank() > 0) g[0] = p0;
    if (m.rank() > 1) g[1] = p1;
    s.set(m.name(), wp::grid_shape(g));
  });
  return s;
}

/// The combine of overlapping partial results of `array`, as stats() lists it: its bytes
/// received over all ranks in one later execute() (-1: not listed).
template <class Plan>
index_t overlap_combine_bytes(const Plan& plan, const boost::mpi::communicator& c,
                              const std::string& array) {
  index_t mine = -1;
  for (const auto& r : plan.stats().redistributions)
    if (r.array == array && r.kind.find("overlapping") != std::string::npos)
      mine = r.predicted_received;
  index_t total = 0;
  boost::mpi::all_reduce(c, mine < 0 ? index_t(0) : mine, total, std::plus<index_t>());
  index_t listed = 0;
  boost::mpi::all_reduce(c, index_t(mine >= 0), listed, std::plus<index_t>());
  return listed == c.size() ? total : -1;
}

/// 1-D convolution y(i) = sum_r w(r) x(i + r), seeded with dy: the loops' x, w, dx, dw after
/// `steps` SGD steps on x and w.
struct conv_reference {
  std::vector<double> x, w, dx, dw;
};
/// `accumulate`: dx starts at dx0 and the steps add to it (wp::accumulate).
conv_reference conv_serially(index_t n, index_t R, bool accumulate = false, double dx0 = 0) {
  conv_reference c;
  for (index_t k = 0; k < n + R - 1; ++k) c.x.push_back(xv(k));
  for (index_t r = 0; r < R; ++r) c.w.push_back(wv(r));
  c.dx.assign(std::size_t(n + R - 1), dx0);
  for (int s = 0; s < steps; ++s) {
    if (!accumulate) c.dx.assign(std::size_t(n + R - 1), 0.0);
    c.dw.assign(std::size_t(R), 0.0);
    for (index_t i = 0; i < n; ++i)
      for (index_t r = 0; r < R; ++r) {
        c.dx[std::size_t(i + r)] += dyv(i) * c.w[std::size_t(r)];
        c.dw[std::size_t(r)] += dyv(i) * c.x[std::size_t(i + r)];
      }
    for (std::size_t k = 0; k < c.x.size(); ++k) c.x[k] -= lr * c.dx[k];
    for (std::size_t k = 0; k < c.w.size(); ++k) c.w[k] -= lr * c.dw[k];
  }
  return c;
}

/// 1-D max pooling y(i) = max_r x(i + r), seeded with dy (distinct values: no ties).
struct pool_reference {
  std::vector<double> x, dx;
};
pool_reference pool_serially(index_t n, index_t R) {
  pool_reference c;
  for (index_t k = 0; k < n + R - 1; ++k) c.x.push_back(xv(k));
  for (int s = 0; s < steps; ++s) {
    c.dx.assign(std::size_t(n + R - 1), 0.0);
    for (index_t i = 0; i < n; ++i) {
      index_t best = 0;
      for (index_t r = 1; r < R; ++r)
        if (c.x[std::size_t(i + r)] > c.x[std::size_t(i + best)]) best = r;
      c.dx[std::size_t(i + best)] += dyv(i);
    }
    for (std::size_t k = 0; k < c.x.size(); ++k) c.x[k] -= lr * c.dx[k];
  }
  return c;
}

/// 2-D y(i, j) = w(i, j) x(i + 1, j + 1) + x(n - 1 - i, j) x(i, j) over (n, m), x of
/// (n + 1, m + 1): offset and reversed reads of x.
struct grid2_reference {
  std::vector<double> x, w, dx, dw;
};
grid2_reference grid2_serially(index_t n, index_t m) {
  grid2_reference c;
  const index_t M = m + 1;
  for (index_t k = 0; k < (n + 1) * M; ++k) c.x.push_back(xv(k));
  for (index_t k = 0; k < n * m; ++k) c.w.push_back(wv(k));
  auto X = [&](index_t a, index_t b) -> double& { return c.x[std::size_t(a * M + b)]; };
  for (int s = 0; s < steps; ++s) {
    c.dx.assign(c.x.size(), 0.0);
    c.dw.assign(c.w.size(), 0.0);
    auto DX = [&](index_t a, index_t b) -> double& { return c.dx[std::size_t(a * M + b)]; };
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < m; ++j) {
        const double d = dyv(i * m + j);
        DX(i + 1, j + 1) += d * c.w[std::size_t(i * m + j)];
        DX(n - 1 - i, j) += d * X(i, j);
        DX(i, j) += d * X(n - 1 - i, j);
        c.dw[std::size_t(i * m + j)] += d * X(i + 1, j + 1);
      }
    for (std::size_t k = 0; k < c.x.size(); ++k) c.x[k] -= lr * c.dx[k];
    for (std::size_t k = 0; k < c.w.size(); ++k) c.w[k] -= lr * c.dw[k];
  }
  return c;
}

/// The optimizer's model of the bytes that bring `array` into the maps that read it (or
/// combine into it) against the plan's prediction for the first execute(), over all ranks
/// (the combine of the overlapping partial results included): problems as text.
template <class Prog, class Plan>
std::string model_matches_plan(const boost::mpi::communicator& c, const Prog& prog,
                               const wp::schedule& s, const Plan& plan, const std::string& array) {
  index_t model = 0, predicted = 0;
  for (const auto& t : wp::modelled_transfers(prog, s, c.size()))
    if (t.array == array) model += t.bytes;
  for (const auto& r : plan.stats().redistributions)
    if (r.array == array && r.to != "root" && r.from.find("root") == std::string::npos)
      predicted += r.predicted_first_received;
  predicted = boost::mpi::all_reduce(c, predicted, std::plus<index_t>());
  if (model == predicted) return "";
  return array + ": the model prices " + std::to_string(model) + " B, the plan predicts " +
         std::to_string(predicted) + " B";
}

template <class Plan, class... A>
void run_steps(Plan&& plan, A&... gathered) {
  plan.scatter();
  for (int s = 0; s < steps; ++s) plan.execute();
  plan.gather(gathered...);
}

}  // namespace

TEST_CASE("a 1-D convolution's dx, the window dimension split: combined rank to rank",
          "[overlap]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  const index_t n = 10, R = 3;  // 10 outputs: blocks 4,3,3 at 3 ranks
  wp::array<double, 1> x("x", {n + R - 1}), dx("dx", {n + R - 1}), w("w", {R}), dw("dw", {R});
  wp::array<double, 1> y("y", {n}), dy("dy", {n});
  auto [i, r] = wp::indices<2>();
  const conv_reference want = conv_serially(n, R);
  // The step of the sum form: forward, backward (dx's gradient accumulated or not), updates.
  auto sum_step = [&](auto wrt_x) {
    auto fwd = wp::program(
        wp::map("conv", wp::space(n), y(i) = wp::sum(wp::range(r, 0, R), w(r) * x(i + r))));
    return wp::program(fwd, wp::backward(fwd, wp::seed(y, dy), wrt_x, wp::wrt(w, dw)),
                       wp::map("sgdx", wp::space(n + R - 1), x(i) = x(i) - lr * dx(i)),
                       wp::map("sgdw", wp::space(R), w(i) = w(i) - lr * dw(i)));
  };
  // `blocks`: how many blocks the derivative maps split the window dimension into
  auto check = [&](const auto& step, const wp::schedule& sch, index_t blocks) {
    auto plan = wp::distribute(step, sch, ctx);
    fill1(x, xv);
    fill1(w, wv);
    fill1(dy, dyv);
    run_steps(plan, x, w, dx, dw);
    REQUIRE(compare_on_root(ctx.comm(), dx, want.dx, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), dw, want.dw, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), x, want.x, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), w, want.w, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, steps)) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
    if (blocks > 1) {
      REQUIRE_THAT(plan.explain(), Contains("array dx: partial results of 'd"));
      REQUIRE_THAT(plan.explain(), Contains("overlapping parts"));
      // each halo of R - 1 elements between neighbouring blocks travels once
      REQUIRE(overlap_combine_bytes(plan, ctx.comm(), "dx") ==
              (blocks - 1) * (R - 1) * index_t(sizeof(double)));
    }
    // the optimizer prices the grid as the plan moves it (and does not refuse it)
    REQUIRE(model_matches_plan(ctx.comm(), step, sch, plan, "dx") == "");
  };
  SECTION("y(i) = sum(range(r, 0, R), w(r) * x(i + r))") {
    auto step = sum_step(wp::wrt(x, dx));
    check(step, split_schedule(step, p), p);
  }
  SECTION("wp::accumulate: no zeroing map; dx's old values from root, then its own") {
    auto step = sum_step(wp::accumulate(wp::wrt(x, dx)));
    auto plan = wp::distribute(step, split_schedule(step, p), ctx);
    const conv_reference acc = conv_serially(n, R, true, 0.25);
    fill1(x, xv);
    fill1(w, wv);
    fill1(dy, dyv);
    fill1(dx, [](index_t) { return 0.25; });
    run_steps(plan, x, w, dx, dw);
    REQUIRE(compare_on_root(ctx.comm(), dx, acc.dx, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), x, acc.x, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), w, acc.w, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, steps)) == "");
    REQUIRE(model_matches_plan(ctx.comm(), step, split_schedule(step, p), plan, "dx") == "");
  }
  SECTION("wp::automatic: the optimizer's grids") {
    auto step = sum_step(wp::wrt(x, dx));
    auto plan = wp::distribute(step, wp::automatic, ctx);
    fill1(x, xv);
    fill1(w, wv);
    fill1(dy, dyv);
    run_steps(plan, x, w, dx, dw);
    REQUIRE(compare_on_root(ctx.comm(), dx, want.dx, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), x, want.x, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), w, want.w, 1e-12) == "");
  }
  SECTION("the derivative maps on one rank fewer (the last one idle there)") {
    auto step = sum_step(wp::wrt(x, dx));
    wp::schedule sch = split_schedule(step, p);
    const index_t q = std::max<index_t>(1, p - 1);
    step.for_each_map([&](const auto& m) {
      if (m.name().rfind("dconv", 0) != 0) return;
      std::vector<index_t> g(std::size_t(m.rank()), 1);
      g[0] = q;
      sch.set(m.name(), wp::grid_shape(g));
    });
    check(step, sch, q);
  }
  SECTION("y(i) += x(i + r) * w(r) over (n, R)") {
    auto fwd = wp::program(wp::map("y0", wp::space(n), y(i) = 0.0),
                           wp::map("conv", wp::space(n, R), y(i) += x(i + r) * w(r)));
    auto step = wp::program(fwd, wp::backward(fwd, wp::seed(y, dy), wp::wrt(x, dx), wp::wrt(w, dw)),
                            wp::map("sgdx", wp::space(n + R - 1), x(i) = x(i) - lr * dx(i)),
                            wp::map("sgdw", wp::space(R), w(i) = w(i) - lr * dw(i)));
    check(step, split_schedule(step, p), p);
  }
}

TEST_CASE("offset and reversed 2-D reads, one or both dimensions split", "[overlap]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  const index_t n = 7, m = 5;
  wp::array<double, 2> x("x", {n + 1, m + 1}), dx("dx", {n + 1, m + 1});
  wp::array<double, 2> w("w", {n, m}), dw("dw", {n, m}), y("y", {n, m}), dy("dy", {n, m});
  auto [i, j] = wp::indices<2>();
  auto fwd = wp::program(wp::map("f", wp::space(n, m),
                                 y(i, j) = w(i, j) * x(i + 1, j + 1) + x(n - 1 - i, j) * x(i, j)));
  auto step =
      wp::program(fwd, wp::backward(fwd, wp::seed(y, dy), wp::wrt(x, dx), wp::wrt(w, dw)),
                  wp::map("sgdx", wp::space(n + 1, m + 1), x(i, j) = x(i, j) - lr * dx(i, j)),
                  wp::map("sgdw", wp::space(n, m), w(i, j) = w(i, j) - lr * dw(i, j)));
  const grid2_reference want = grid2_serially(n, m);
  auto flat = [](index_t cols) {
    return [cols](index_t a, index_t b) { return xv(a * cols + b); };
  };
  auto check = [&](index_t p0, index_t p1) {
    INFO("grid " << p0 << " x " << p1);
    fill2(x, flat(m + 1));
    fill2(w, [&](index_t a, index_t b) { return wv(a * m + b); });
    fill2(dy, [&](index_t a, index_t b) { return dyv(a * m + b); });
    auto plan = wp::distribute(step, split_schedule(step, p0, p1), ctx);
    run_steps(plan, x, w, dx, dw);
    REQUIRE(compare_on_root(ctx.comm(), dx, want.dx, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), dw, want.dw, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), x, want.x, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), w, want.w, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, steps)) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
    REQUIRE(model_matches_plan(ctx.comm(), step, split_schedule(step, p0, p1), plan, "dx") == "");
  };
  SECTION("rows split") { check(p, 1); }
  SECTION("columns split") { check(1, p); }
  SECTION("both split") {
    if (p == 4) check(2, 2);
  }
}

TEST_CASE("pooling's dx, the window dimension split: combined rank to rank", "[overlap]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  const index_t n = 11, R = 3;
  wp::array<double, 1> x("x", {n + R - 1}), dx("dx", {n + R - 1});
  wp::array<double, 1> y("y", {n}), dy("dy", {n});
  auto [i, r] = wp::indices<2>();
  const pool_reference want = pool_serially(n, R);
  auto check = [&](auto&& plan) {
    fill1(x, xv);
    fill1(dy, dyv);
    run_steps(plan, x, dx);
    REQUIRE(compare_on_root(ctx.comm(), dx, want.dx, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), x, want.x, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, steps)) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
  };
  SECTION("y(i) = max_of(range(r, 0, R), x(i + r))") {
    auto fwd =
        wp::program(wp::map("pool", wp::space(n), y(i) = wp::max_of(wp::range(r, 0, R), x(i + r))));
    auto step = wp::program(fwd, wp::backward(fwd, wp::seed(y, dy), wp::wrt(x, dx)),
                            wp::map("sgdx", wp::space(n + R - 1), x(i) = x(i) - lr * dx(i)));
    check(wp::distribute(step, split_schedule(step, p), ctx));
  }
  SECTION("max_into(y(i), x(i + r)) over (n, R)") {
    const double inf = std::numeric_limits<double>::infinity();
    auto fwd = wp::program(wp::map("y0", wp::space(n), y(i) = -inf),
                           wp::map("pool", wp::space(n, R), wp::max_into(y(i), x(i + r))));
    auto step = wp::program(fwd, wp::backward(fwd, wp::seed(y, dy), wp::wrt(x, dx)),
                            wp::map("sgdx", wp::space(n + R - 1), x(i) = x(i) - lr * dx(i)));
    check(wp::distribute(step, split_schedule(step, p), ctx));
  }
}

TEST_CASE("a split max_into and += whose write boxes overlap, between a writer and a reader",
          "[overlap]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  const index_t n = 9, R = 4;
  const double inf = std::numeric_limits<double>::infinity();
  wp::array<double, 1> x("x", {n}), s("s", {n + R - 1}), mx("mx", {n + R - 1});
  wp::array<double, 1> z("z", {n + R - 1}), c("c", {R});
  auto [i, r] = wp::indices<2>();
  // scatter-add and scatter-max of a window: s(i + r) += x(i) c(r), mx(i + r) max= x(i) - c(r)
  auto prog = wp::program(wp::map("init", wp::space(n + R - 1), s(i) = 1.0, mx(i) = -inf),
                          wp::map("spread", wp::space(n, R), s(i + r) += x(i) * c(r),
                                  wp::max_into(mx(i + r), x(i) - c(r))),
                          wp::map("use", wp::space(n + R - 1), z(i) = s(i) + 2.0 * mx(i)));
  std::vector<double> ws(std::size_t(n + R - 1), 1.0), wm(ws.size(), -inf), wz(ws.size());
  for (index_t a = 0; a < n; ++a)
    for (index_t b = 0; b < R; ++b) {
      ws[std::size_t(a + b)] += xv(a) * wv(b);
      wm[std::size_t(a + b)] = std::max(wm[std::size_t(a + b)], xv(a) - wv(b));
    }
  for (std::size_t k = 0; k < wz.size(); ++k) wz[k] = ws[k] + 2.0 * wm[k];
  fill1(x, xv);
  fill1(c, wv);
  auto plan = wp::distribute(prog, split_schedule(prog, p), ctx);
  run_steps(plan, s, mx, z);
  REQUIRE(compare_on_root(ctx.comm(), s, ws, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), mx, wm, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), z, wz, 1e-12) == "");
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, steps)) == "");
  if (p > 1) {
    REQUIRE_THAT(plan.explain(), Contains("overlapping parts(max)"));
    REQUIRE(overlap_combine_bytes(plan, ctx.comm(), "mx") ==
            (p - 1) * (R - 1) * index_t(sizeof(double)));
  }
}

TEST_CASE("overlapping partial results on a replicated grid: refused, saying what to change",
          "[overlap]") {
  wp::context ctx(g_argc, g_argv);
  if (ctx.size() != 4) return;  // a split dimension of 2, replicated twice
  const index_t n = 9, R = 4;
  wp::array<double, 1> x("x", {n}), s("s", {n + R - 1}), c("c", {R}), z("z", {n + R - 1});
  wp::array<double, 1> xw("xw", {n + R - 1}), dx("dx", {n + R - 1}), y("y", {n}), dy("dy", {n});
  auto [i, r] = wp::indices<2>();
  const wp::grid_shape rep1 = wp::grid_shape{2}.replicated(2),
                       rep2 = wp::grid_shape{2, 1}.replicated(2);
  SECTION("a later map reads the array") {
    auto prog = wp::program(wp::map("init", wp::space(n + R - 1), s(i) = 1.0),
                            wp::map("spread", wp::space(n, R), s(i + r) += x(i) * c(r)),
                            wp::map("use", wp::space(n + R - 1), z(i) = s(i)));
    wp::schedule sch;
    sch.set("init", rep1).set("spread", rep2).set("use", rep1);
    const std::string msg = what_of([&] { (void)wp::distribute(prog, sch, ctx); });
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    REQUIRE(msg ==
            "[workpart.plan_error] map 'spread': under grid " + rep2.str() +
                " the ranks' partial results of 's' overlap (rank 0 writes [0:8], rank 2 "
                "[5:12]) and the grid replicates the map, so they cannot be combined rank to "
                "rank; they could only be combined on root, but map 'init' writes 's' before "
                "it. Stop splitting dimension 0 of map 'spread' (the split that makes its write "
                "boxes of 's' overlap), or give it a grid without replicas");
    // the same grid without replicas runs
    wp::schedule ok;
    ok.set("init", wp::grid_shape{4})
        .set("spread", wp::grid_shape{4, 1})
        .set("use", wp::grid_shape{4});
    auto plan = wp::distribute(prog, ok, ctx);
    fill1(x, xv);
    fill1(c, wv);
    run_steps(plan, z);
    std::vector<double> want(std::size_t(n + R - 1), 1.0);
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b < R; ++b) want[std::size_t(a + b)] += xv(a) * wv(b);
    REQUIRE(compare_on_root(ctx.comm(), z, want, 1e-12) == "");
  }
  SECTION("wp::backward's zeroing map writes the gradient first") {
    auto fwd = wp::program(
        wp::map("conv", wp::space(n), y(i) = wp::sum(wp::range(r, 0, R), c(r) * xw(i + r))));
    auto step = wp::program(fwd, wp::backward(fwd, wp::seed(y, dy), wp::wrt(xw, dx)));
    wp::schedule sch;
    step.for_each_map([&](const auto& m) { sch.set(m.name(), m.rank() == 1 ? rep1 : rep2); });
    const std::string msg = what_of([&] { (void)wp::distribute(step, sch, ctx); });
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    REQUIRE_THAT(msg, Contains("the ranks' partial results of 'dx' overlap (rank 0 writes "));
    REQUIRE_THAT(msg, Contains("the grid replicates the map"));
    REQUIRE_THAT(msg, Contains(", which wp::backward added to zero the gradient before '"));
    REQUIRE_THAT(
        msg, Contains("' adds into it, writes 'dx' first. Stop splitting dimension 0 of map '"));
    REQUIRE_THAT(msg, !Contains("end the program"));
    REQUIRE(a_plan_still_works(ctx) == "");
  }
}
