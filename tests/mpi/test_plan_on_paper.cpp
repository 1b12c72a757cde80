/// \file test_plan_on_paper.cpp
/// The program solver (plan/program.hpp) on paper against the program plan that runs it: for
/// chains whose layout turns, a halo, each of the three combines of partial results
/// (Allreduce, reduce-scatter, Reduce), and root's remainders, every rank's bytes per phase
/// from wp::plan_on_paper(program, schedule, P) equal what that rank's plan predicts and what
/// its collectives moved (a scatter, two executes and a gather), and the results equal plain
/// loops.

#include <workpart/workpart.hpp>

#include "mpi_test_support.hpp"

namespace {

using namespace mpitest;

/// Rank r's measured and predicted bytes against its paper plan: problems as text.
template <class Plan>
std::string paper_matches(const Plan& plan, const wp::paper_program& paper, int r) {
  const auto st = plan.stats();
  const auto& b = paper.ranks[std::size_t(r)];
  std::string bad;
  auto check = [&](const char* what, index_t got, index_t want) {
    if (got != want)
      bad += std::string(what) + ": " + std::to_string(got) + " B, on paper " +
             std::to_string(want) + " B; ";
  };
  check("scatter sent", st.scatter.bytes_sent, b.scatter_sent);
  check("scatter received", st.scatter.bytes_received, b.scatter_received);
  check("predicted scatter sent", st.predicted_scatter_sent, b.scatter_sent);
  check("predicted scatter received", st.predicted_scatter_received, b.scatter_received);
  // two executes after the scatter: the first, then a later one
  check("execute sent", st.execute.bytes_sent, b.first_sent + b.steady_sent);
  check("execute received", st.execute.bytes_received, b.first_received + b.steady_received);
  check("gather sent", st.gather.bytes_sent, b.gather_sent);
  check("gather received", st.gather.bytes_received, b.gather_received);
  check("predicted gather received", st.predicted_gather_received, b.gather_received);
  index_t first = 0;
  for (const auto& rd : st.redistributions)
    if (rd.to != "root") first += rd.predicted_first_received;
  check("redistributions' first execute()", first, b.first_received);
  if (plan.predicted_rank_bytes(true) != paper.rank_to_rank_first)
    bad += "rank to rank (first execute()): plan " +
           std::to_string(plan.predicted_rank_bytes(true)) + " B, on paper " +
           std::to_string(paper.rank_to_rank_first) + " B; ";
  return bad;
}

template <class Prog>
std::string run_against_paper(wp::context& ctx, const Prog& prog, const wp::schedule& s) {
  const wp::paper_program paper = wp::plan_on_paper(prog, s, ctx.size());
  auto plan = wp::distribute(prog, s, ctx);
  plan.scatter();
  plan.execute();
  plan.execute();
  plan.gather();
  return all_problems(ctx.comm(), paper_matches(plan, paper, ctx.rank()));
}

}  // namespace

TEST_CASE("plan_on_paper(program): a chain whose layout turns", "[mpi][plan]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  constexpr index_t I = 7, J = 5;
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> x("x", {I, J}), y("y", {I, J}), z("z", {I, J});
  fill2(x, [](index_t a, index_t b) { return double(a * J + b); });
  auto m1 = wp::map("rows", wp::space(I, J), y(i, j) = x(i, j) + 1.0);
  auto m2 = wp::map("cols", wp::space(I, J), z(i, j) = y(i, j) * 3.0);
  wp::schedule s;
  s.set(m1, wp::grid_shape{P, 1}).set(m2, wp::grid_shape{1, P});
  REQUIRE(run_against_paper(ctx, wp::program(m1, m2), s) == "");
  std::vector<double> want(I * J);
  for (index_t e = 0; e < I * J; ++e) want[std::size_t(e)] = (double(e) + 1.0) * 3.0;
  REQUIRE(compare_on_root(ctx.comm(), z, want) == "");
}

TEST_CASE("plan_on_paper(program): a stencil's halo", "[mpi][plan]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  constexpr index_t n = 13;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n}), y("y", {n}), z("z", {n});
  fill1(x, [](index_t a) { return double(a % 5); });
  fill1(z, [](index_t) { return -1.0; });
  auto m1 = wp::map("make", wp::space(n), y(i) = x(i) * 2.0);
  auto m2 = wp::map("smooth", wp::space({1, n - 1}), z(i) = y(i - 1) + y(i + 1));
  wp::schedule s;
  s.set(m1, wp::grid_shape{P}).set(m2, wp::grid_shape{P});
  REQUIRE(run_against_paper(ctx, wp::program(m1, m2), s) == "");
  std::vector<double> want(n, -1.0);
  for (index_t a = 1; a < n - 1; ++a)
    want[std::size_t(a)] = double((a - 1) % 5) * 2.0 + double((a + 1) % 5) * 2.0;
  REQUIRE(compare_on_root(ctx.comm(), z, want) == "");
}

TEST_CASE("plan_on_paper(program): the three combines of partial results", "[mpi][plan]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  constexpr index_t I = 7, K = 6, J = 5;
  auto [i, k] = wp::indices<2>();
  wp::array<double, 2> x("x", {I, K}), z("z", {I, J});
  wp::array<double, 1> h("h", {I});
  fill2(x, [](index_t a, index_t b) { return double((a * 3 + b) % 7) - 3.0; });
  auto sum_k = wp::map("sum_k", wp::space(I, K), h(i) += x(i, k));
  auto use_h = wp::map("use_h", wp::space(I, J), z(i, k) = h(i) * 2.0);
  const wp::grid_shape readers[] = {wp::grid_shape{1, P}, wp::grid_shape{P, 1},
                                    wp::grid_shape{1, 1}};
  for (const auto& g : readers) {
    INFO("reader grid " << g.str());
    fill1(h, [](index_t a) { return double(a); });
    wp::schedule s;
    s.set(sum_k, wp::grid_shape{1, P}).set(use_h, g);
    REQUIRE(run_against_paper(ctx, wp::program(sum_k, use_h), s) == "");
    // two executes: h holds its old values plus the row sums twice
    std::vector<double> hw(I), zw(I * J);
    for (index_t a = 0; a < I; ++a) {
      double rs = 0;
      for (index_t b = 0; b < K; ++b) rs += double((a * 3 + b) % 7) - 3.0;
      hw[std::size_t(a)] = double(a) + 2 * rs;
      for (index_t c = 0; c < J; ++c) zw[std::size_t(a * J + c)] = hw[std::size_t(a)] * 2.0;
    }
    REQUIRE(compare_on_root(ctx.comm(), h, hw) == "");
    REQUIRE(compare_on_root(ctx.comm(), z, zw) == "");
  }
}

TEST_CASE("plan_on_paper(program): root sends only what no earlier map wrote", "[mpi][plan]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  constexpr index_t n = 17, half = 8;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n}), y("y", {n}), z("z", {n});
  fill1(x, [](index_t a) { return double(a); });
  fill1(y, [](index_t a) { return 100.0 + double(a); });
  auto part = wp::map("part", wp::space(half), y(i) = x(i) * 2.0);
  auto all = wp::map("all", wp::space(n), z(i) = y(i) + 1.0);
  wp::schedule s;
  s.set(part, wp::grid_shape{P}).set(all, wp::grid_shape{P});
  REQUIRE(run_against_paper(ctx, wp::program(part, all), s) == "");
  std::vector<double> want(n);
  for (index_t a = 0; a < n; ++a)
    want[std::size_t(a)] = (a < half ? double(a) * 2.0 : 100.0 + double(a)) + 1.0;
  REQUIRE(compare_on_root(ctx.comm(), z, want) == "");
}
