/// \file test_optimize.cpp
/// The optimizer against the plans, at every communicator size: the bytes the cost model
/// prices for each array passed between maps equal what the program plan of the same
/// schedule predicts and moves, for every pair of candidate grids; and
/// wp::distribute(prog, wp::automatic, ctx) runs programs to the values of plain loops.

#include <workpart/workpart.hpp>  // the one header: the optimizer and wp::automatic too

#include <boost/mpi/collectives/all_reduce.hpp>

#include <cmath>
#include <map>

#include "mpi_test_support.hpp"

namespace {

using namespace mpitest;

double xv_opt(index_t a, index_t b) { return double((a * 7 + b * 3) % 17) - 8.0; }

/// For every schedule of two maps over their candidate grids: the model's bytes per
/// (array, reader) against the plan's prediction for the first execute() and its measurement,
/// summed over the ranks (a split reduction's combine included).
template <class M1, class M2>
std::string model_matches_plans(wp::context& ctx, const M1& m1, const M2& m2) {
  const int P = ctx.size();
  auto prog = wp::program(m1, m2);
  const auto tables = wp::program_costs(prog, P);
  std::string problems;
  int schedules = 0;
  index_t moved = 0;  // over all schedules: the comparison is not vacuous
  for (const auto& g1 : tables.grids[0])
    for (const auto& g2 : tables.grids[1]) {
      wp::schedule s;
      s.set(m1, g1).set(m2, g2);
      ++schedules;
      std::map<std::string, index_t> model;
      for (const auto& t : wp::modelled_transfers(prog, s, P)) model[t.array] += t.bytes;
      auto plan = wp::distribute(prog, s, ctx);
      plan.run();
      std::map<std::string, index_t> predicted, measured;
      for (const auto& r : plan.stats().redistributions) {
        // the partial combines (Allreduce, reduce-scatter, Reduce) count with the array: the
        // model prices them on the edge to the map that reads the combined values
        if (r.to == "root" || r.from.find("root") != std::string::npos) continue;
        predicted[r.array] += r.predicted_first_received;
        measured[r.array] += r.measured.bytes_received;
      }
      for (auto& [a, b] : predicted)
        b = boost::mpi::all_reduce(ctx.comm(), b, std::plus<index_t>());
      for (auto& [a, b] : measured) b = boost::mpi::all_reduce(ctx.comm(), b, std::plus<index_t>());
      for (const auto& [a, b] : model) {
        moved += b;
        const index_t want = predicted.count(a) ? predicted[a] : 0;
        const index_t got = measured.count(a) ? measured[a] : 0;
        if (b != want || b != got)
          problems += "schedule " + s.str() + ", array " + a + ": model " + std::to_string(b) +
                      " B, plan predicts " + std::to_string(want) + " B, moved " +
                      std::to_string(got) + " B; ";
      }
    }
  if (schedules < (P > 1 ? 2 : 1)) problems += "too few candidate schedules; ";
  if (P > 1 && moved == 0) problems += "no schedule moved anything between the maps; ";
  return problems;
}

}  // namespace

TEST_CASE("optimize: the model's bytes between maps are the plan's, for every pair of grids",
          "[mpi][optimize]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j] = wp::indices<2>();
  SECTION("a 2-D array passed between any two layouts") {
    constexpr index_t I = 7, J = 5;
    wp::array<double, 2> x("x", {I, J}), y("y", {I, J}), z("z", {I, J});
    fill2(x, xv_opt);
    auto m1 = wp::map("first", wp::space(I, J), y(i, j) = x(i, j) + 1.0);
    auto m2 = wp::map("second", wp::space(I, J), z(i, j) = y(i, j) * 3.0);
    REQUIRE(model_matches_plans(ctx, m1, m2) == "");
  }
  SECTION("a stencil's halo") {
    constexpr index_t n = 13;
    wp::array<double, 1> x("x", {n}), y("y", {n}), z("z", {n});
    fill1(x, [](index_t a) { return double(a % 5); });
    auto m1 = wp::map("make", wp::space(n), y(i) = x(i) * 2.0);
    auto m2 = wp::map("smooth", wp::space({1, n - 1}), z(i) = y(i - 1) + y(i + 1));
    REQUIRE(model_matches_plans(ctx, m1, m2) == "");
  }
  SECTION("partial results of a split reduction, combined for the next map") {
    // every combine the plans choose appears among the grid pairs: Allreduce (the reader
    // needs all of h on every rank), reduce-scatter (its rows), Reduce (one rank reads it)
    constexpr index_t I = 7, K = 6, J = 5;
    wp::array<double, 2> x("x", {I, K}), z("z", {I, J});
    wp::array<double, 1> h("h", {I});
    fill2(x, xv_opt);
    auto m1 = wp::map("sum_k", wp::space(I, K), h(i) += x(i, j));
    auto m2 = wp::map("use_h", wp::space(I, J), z(i, j) = h(i) * 2.0);
    REQUIRE(model_matches_plans(ctx, m1, m2) == "");
  }
  SECTION("old values of an array a later map adds into") {
    constexpr index_t I = 5, J = 6;
    wp::array<double, 2> x("x", {I, J}), w("w", {I, J}), y("y", {I, J});
    fill2(x, xv_opt);
    fill2(w, [](index_t a, index_t b) { return double(a + b); });
    auto m1 = wp::map("set", wp::space(I, J), y(i, j) = x(i, j) * 2.0);
    auto m2 = wp::map("add", wp::space(I, J), y(i, j) += w(i, j));
    REQUIRE(model_matches_plans(ctx, m1, m2) == "");
  }
}

TEST_CASE("optimize: distribute(prog, wp::automatic, ctx) runs programs to the loops' values",
          "[mpi][optimize]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t B = 6, D = 5, H = 11;
  wp::array<double, 2> x("x", {B, D}), W1("W1", {D, H}), h("h", {B, H}), a("a", {B, H}),
      W2("W2", {H, D}), y("y", {B, D});
  fill2(x, [](index_t p, index_t q) { return double((p * 3 + q) % 7) - 3.0; });
  fill2(W1, [](index_t p, index_t q) { return double((p + 2 * q) % 5) - 2.0; });
  fill2(W2, [](index_t p, index_t q) { return double((3 * p + q) % 4) - 1.5; });
  auto fc1 = wp::map("fc1", wp::space(B, H, D), h(i, j) += x(i, k) * W1(k, j));
  auto relu = wp::map("relu", wp::space(B, H), a(i, j) = wp::max(h(i, j), 0.0));
  auto fc2 = wp::map("fc2", wp::space(B, D, H), y(i, j) += a(i, k) * W2(k, j));
  auto prog = wp::program(fc1, relu, fc2);
  // a machine where arithmetic is slow and messages cheap: the optimizer splits the work
  const wp::machine_model slow_cpu{.flops = 1e3, .alpha = 1e-9, .beta = 1e-12};
  for (const wp::machine_model& mm : {wp::machine_model{}, slow_cpu}) {
    auto plan = wp::distribute(prog, wp::automatic_t{.model = mm}, ctx);
    plan.run();
    std::vector<double> hw(B * H, 0.0), aw(B * H), yw(B * D, 0.0);
    for (index_t p = 0; p < B; ++p)
      for (index_t q = 0; q < H; ++q) {
        for (index_t r = 0; r < D; ++r)
          hw[std::size_t(p * H + q)] +=
              (double((p * 3 + r) % 7) - 3.0) * (double((r + 2 * q) % 5) - 2.0);
        aw[std::size_t(p * H + q)] = std::max(hw[std::size_t(p * H + q)], 0.0);
      }
    for (index_t p = 0; p < B; ++p)
      for (index_t q = 0; q < D; ++q)
        for (index_t r = 0; r < H; ++r)
          yw[std::size_t(p * D + q)] +=
              aw[std::size_t(p * H + r)] * (double((3 * r + q) % 4) - 1.5);
    REQUIRE(compare_on_root(ctx.comm(), h, hw) == "");
    REQUIRE(compare_on_root(ctx.comm(), a, aw) == "");
    REQUIRE(compare_on_root(ctx.comm(), y, yw) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
    const auto r = wp::optimize(prog, ctx.size(), mm);
    REQUIRE(r.proven_optimal);
    if (mm.flops < 1e4 && ctx.size() > 1) {  // slow arithmetic: some map uses several ranks
      bool split = false;
      for (const auto& c : r.maps) split = split || c.grid.product() > 1;
      REQUIRE(split);
    }
    // h, a and y were written: start the next model from zeros
    fill2(h, [](index_t, index_t) { return 0.0; });
    fill2(y, [](index_t, index_t) { return 0.0; });
  }
}

TEST_CASE("optimize: wp::automatic on softmax maps and on statements that read each other's writes",
          "[mpi][optimize]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 5, L = 13;
  wp::array<double, 2> x("x", {R, L}), y("y", {R, L}), e("e", {R, L});
  wp::array<double, 1> mx("mx", {R}), sm("sm", {R}), s("s", {R});
  fill2(x, [](index_t p, index_t q) { return double((p * 5 + q * 3) % 11) - 5.0; });
  auto xval = [](index_t p, index_t q) { return double((p * 5 + q * 3) % 11) - 5.0; };
  // softmax along j as three maps, then a map whose second statement reads the first's
  // writes mirrored along j: only grids that keep j whole may run it
  auto m1 = wp::map("max", wp::space(R, L), wp::max_into(mx(i), x(i, j)));
  auto m2 = wp::map("expsum", wp::space(R, L), sm(i) += wp::exp(x(i, j) - mx(i)));
  auto m3 = wp::map("norm", wp::space(R, L), y(i, j) = wp::exp(x(i, j) - mx(i)) / sm(i));
  auto m4 = wp::map("mirror", wp::space(R, L), e(i, j) = y(i, j) * 2.0,
                    s(i) += e(i, L - 1 - j) * double(1));
  auto prog = wp::program(m1, m2, m3, m4);
  const wp::machine_model slow_cpu{.flops = 1e3, .alpha = 1e-9, .beta = 1e-12};
  for (const wp::machine_model& mm : {wp::machine_model{}, slow_cpu}) {
    fill1(mx, [](index_t) { return -1e300; });
    fill1(sm, [](index_t) { return 0.0; });
    fill1(s, [](index_t) { return 0.0; });
    const auto r = wp::optimize(prog, ctx.size(), mm);
    REQUIRE(r.schedule.find("mirror")->dims[1] == 1);
    auto plan = wp::distribute(prog, wp::automatic_t{.model = mm}, ctx);
    plan.run();
    std::vector<double> yw(R * L), ew(R * L), sw(R, 0.0), mw(R, -1e300), smw(R, 0.0);
    for (index_t p = 0; p < R; ++p) {
      for (index_t q = 0; q < L; ++q) mw[std::size_t(p)] = std::max(mw[std::size_t(p)], xval(p, q));
      for (index_t q = 0; q < L; ++q)
        smw[std::size_t(p)] += std::exp(xval(p, q) - mw[std::size_t(p)]);
      for (index_t q = 0; q < L; ++q) {
        yw[std::size_t(p * L + q)] =
            std::exp(xval(p, q) - mw[std::size_t(p)]) / smw[std::size_t(p)];
        ew[std::size_t(p * L + q)] = yw[std::size_t(p * L + q)] * 2.0;
      }
      for (index_t q = 0; q < L; ++q) sw[std::size_t(p)] += ew[std::size_t(p * L + (L - 1 - q))];
    }
    REQUIRE(compare_on_root(ctx.comm(), y, yw, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), e, ew, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), s, sw, 1e-12) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
  }
}

TEST_CASE("optimize: wp::automatic on lesson 2's matmul and a single map", "[mpi][optimize]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t M = 37, N = 41, K = 29;  // examples/02_distribute's extents
  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill2(A, [](index_t r, index_t t) { return std::sin(double(r + 2 * t)); });
  fill2(B, [](index_t t, index_t s) { return std::cos(double(3 * t - s)); });
  auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
  const wp::machine_model slow_cpu{.flops = 1e3, .alpha = 1e-9, .beta = 1e-12};
  for (const wp::machine_model& model : {wp::machine_model{}, slow_cpu}) {
    fill2(C, [](index_t, index_t) { return 0.0; });
    auto plan = wp::distribute(mm, wp::automatic_t{.model = model}, ctx);
    plan.run();
    std::vector<double> want(M * N, 0.0);
    for (index_t r = 0; r < M; ++r)
      for (index_t s = 0; s < N; ++s)
        for (index_t t = 0; t < K; ++t)
          want[std::size_t(r * N + s)] += std::sin(double(r + 2 * t)) * std::cos(double(3 * t - s));
    REQUIRE(compare_on_root(ctx.comm(), C, want, 1e-12) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
    // the same without naming the context (the world's), and the chosen grid as a schedule
    fill2(C, [](index_t, index_t) { return 0.0; });
    auto world = wp::distribute(mm, wp::automatic_t{.model = model});
    world.run();
    REQUIRE(compare_on_root(ctx.comm(), C, want, 1e-12) == "");
    const wp::optimized r = wp::optimize(mm, ctx.size(), model);
    fill2(C, [](index_t, index_t) { return 0.0; });
    auto scheduled = wp::distribute(mm, r.schedule, ctx);
    scheduled.run();
    REQUIRE(compare_on_root(ctx.comm(), C, want, 1e-12) == "");
    REQUIRE(scheduled.explain() == plan.explain());
  }
}

TEST_CASE("plan_on_paper: every rank's predicted bytes are the plan's, for every grid",
          "[mpi][optimize]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), me = ctx.rank();
  auto [i, k, j] = wp::indices<3>();
  constexpr index_t M = 7, K = 5, N = 9;  // uneven
  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill2(A, [](index_t r, index_t t) { return double(r - t); });
  B.init([](std::array<index_t, 2> g) { return double(g[0] + 2 * g[1]); });  // generated in place
  auto mm = wp::map("matmul", wp::space(M, K, N), C(i, j) += A(i, k) * B(k, j));
  wp::array<double, 2> x("x", {M, N}), e("e", {M, N});
  wp::array<double, 1> s("s", {M});
  fill2(x, [](index_t r, index_t t) { return double((r * 3 + t) % 5); });
  auto [p, q] = wp::indices<2>();
  auto rows = wp::map("rows", wp::space(M, N), e(p, q) = x(p, q) * 2.0, s(p) += e(p, q));
  auto check = [&](const auto& m, const wp::grid_shape& g) {
    INFO("map " << m.name() << " grid " << g.str() << " on " << P << " ranks");
    const wp::paper_plan paper = wp::plan_on_paper(m, g, P);
    auto plan = wp::distribute(m, g, ctx);
    const auto st = plan.stats();
    REQUIRE(paper.bytes(me, true, true) == st.predicted_scatter_sent);
    REQUIRE(paper.bytes(me, true, false) == st.predicted_scatter_received);
    REQUIRE(paper.bytes(me, false, true) == st.predicted_gather_sent);
    REQUIRE(paper.bytes(me, false, false) == st.predicted_gather_received);
    plan.run();  // and the plan moves what it predicted
    REQUIRE(plan.stats().scatter.bytes_received == st.predicted_scatter_received);
    REQUIRE(plan.stats().gather.bytes_sent == st.predicted_gather_sent);
    REQUIRE(paper.seconds({}) >= 0);
  };
  for (const auto& g : wp::detail::grid_configurations({M, K, N}, P, {})) check(mm, g);
  for (const auto& g : wp::detail::grid_configurations({M, N}, P, {})) check(rows, g);
  // what distribute() refuses, plan_on_paper refuses alike
  REQUIRE_THROWS_AS(wp::plan_on_paper(mm, wp::grid_shape{P + 1, 1, 1}, P), wp::grid_error);
  REQUIRE_THROWS_AS(wp::plan_on_paper(mm, wp::grid_shape{1, 1}, P), wp::grid_error);
  REQUIRE_THROWS_AS(wp::plan_on_paper(mm, wp::grid_shape{1, 1, 1}, 0), wp::grid_error);
}
