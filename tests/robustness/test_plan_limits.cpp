/// \file test_plan_limits.cpp
/// Regression tests for the defects of issue 12 in grids, combine rules, plan and context
/// lifetimes and element types, at every communicator size. Results are compared with plain
/// loops written here.

#include "../mpi/mpi_test_support.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <utility>

namespace {

using namespace mpitest;
using Catch::Matchers::Contains;

/// NaN-propagating max and min, written out (the documented rule).
double ref_max(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
}
double ref_min(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b);
}

/// Root's data against `want`, NaN equal to NaN; every rank gets root's verdict.
std::string compare_nan(const boost::mpi::communicator& c, wp::array<double, 1>& a,
                        const std::vector<double>& want) {
  std::string msg;
  if (c.rank() == 0)
    for (index_t e = 0; e < a.size(); ++e) {
      const double g = a.data()[e];
      if (!(std::isnan(g) ? std::isnan(want[e]) : g == want[e]))
        msg += a.name() + "[" + std::to_string(e) + "] = " + std::to_string(g) + " expected " +
               std::to_string(want[e]) + "; ";
    }
  return from_root(c, msg);
}

}  // namespace

TEST_CASE("grids whose product overflows are refused", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> x("x", {6, 5}), y("y", {6, 5});
  auto m = wp::map("g", wp::space(6, 5), y(i, j) = x(i, j) + 1.0);
  for (const wp::grid_shape& g :
       {wp::grid_shape{index_t(1) << 62, 4}, wp::grid_shape{index_t(1) << 32, index_t(1) << 32},
        wp::grid_shape{std::numeric_limits<index_t>::max(), 2}}) {
    INFO("grid " << g.str());
    const std::string msg = what_of([&] { wp::distribute(m, g, ctx); });
    REQUIRE_THAT(msg, Contains("[workpart.grid_error]") && Contains("'g'") &&
                          Contains("more than 2^63 - 1 ranks"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  // a grid that fits still runs
  fill2(x, [](index_t a, index_t b) { return double(a * 5 + b); });
  wp::distribute(m, wp::grid_shape{index_t(ctx.size()), 1}, ctx).run();
  std::vector<double> want(30);
  for (index_t e = 0; e < 30; ++e) want[e] = double(e) + 1.0;
  REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
}

TEST_CASE("max_into, min_into and max_of give the same NaN results on every grid", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 4, C = 7;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto xv = [&](index_t a, index_t b) {
    if (a == 1 && b == 5) return nan;  // one NaN in row 1
    if (a == 2) return nan;            // row 2 all NaN
    return double((a * 3 + b * 5) % 11) - 4.0;
  };
  std::vector<double> old_m = {nan, 2.0, 1.0, 100.0}, old_l = {-1.0, nan, 1.0, -100.0};
  std::vector<double> want_m(old_m), want_l(old_l), want_r(R);
  for (index_t a = 0; a < R; ++a) {
    want_r[a] = -std::numeric_limits<double>::infinity();
    for (index_t b = 0; b < C; ++b) {
      want_m[a] = ref_max(want_m[a], xv(a, b));
      want_l[a] = ref_min(want_l[a], xv(a, b));
      want_r[a] = ref_max(want_r[a], xv(a, b));
    }
  }
  REQUIRE(std::isnan(want_r[2]));
  for (index_t g1 = 1; g1 <= std::min<index_t>(P, 4); ++g1)
    for (index_t g0 : {index_t(1), std::min<index_t>(P / g1, 2)}) {
      if (g0 < 1 || g0 * g1 > P) continue;
      INFO("grid (" << g0 << "," << g1 << ") of " << P);
      wp::array<double, 2> x("x", {R, C});
      wp::array<double, 1> mx("mx", {R}), mn("mn", {R}), r("r", {R});
      fill2(x, xv);
      fill1(mx, [&](index_t a) { return old_m[a]; });
      fill1(mn, [&](index_t a) { return old_l[a]; });
      auto both = wp::map("rowmax", wp::space(R, C), wp::max_into(mx(i), x(i, j)));
      auto lo = wp::map("rowmin", wp::space(R, C), wp::min_into(mn(i), x(i, j)));
      wp::distribute(both, wp::grid_shape{g0, g1}, ctx).run();
      wp::distribute(lo, wp::grid_shape{g0, g1}, ctx).run();
      REQUIRE(compare_nan(ctx.comm(), mx, want_m) == "");
      REQUIRE(compare_nan(ctx.comm(), mn, want_l) == "");
      auto [k] = wp::indices<1>();
      wp::distribute(wp::map("maxof", wp::space(R), r(k) = wp::max_of(x(k, wp::all))),
                     wp::grid_shape{std::min<index_t>(P, R)}, ctx)
          .run();
      REQUIRE(compare_nan(ctx.comm(), r, want_r) == "");
    }
}

TEST_CASE("a moved-from plan raises wp::error; MPI failures are wp::comm_error", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {9}), y("y", {9});
  fill1(x, [](index_t a) { return double(a); });
  auto plan =
      wp::distribute(wp::map("mv", wp::space(9), y(i) = x(i) * 2.0), wp::grid_shape{P}, ctx);
  auto moved = std::move(plan);
  REQUIRE_THROWS_AS(plan.run(), wp::error);
  REQUIRE_THAT(what_of([&] { plan.run(); }), Contains("moved from"));
  REQUIRE_THROWS_AS(plan.scatter(), wp::error);
  REQUIRE_THROWS_AS(plan.execute(), wp::error);
  REQUIRE_THROWS_AS(plan.gather(), wp::error);
  REQUIRE_THROWS_AS(plan.local(y), wp::error);
  moved.run();
  std::vector<double> want(9);
  for (index_t a = 0; a < 9; ++a) want[a] = 2.0 * double(a);
  REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
  // an MPI return code other than success is a comm_error naming the routine and the code
  try {
    wp::detail::check_mpi(MPI_ERR_COUNT, "MPI_Alltoallw");
    FAIL("no comm_error");
  } catch (const wp::comm_error& e) {
    REQUIRE(e.routine() == "MPI_Alltoallw");
    REQUIRE(e.result_code() == MPI_ERR_COUNT);
    REQUIRE_THAT(std::string(e.what()), Contains("[workpart.comm_error] MPI_Alltoallw"));
  }
}

TEST_CASE("contexts destroyed out of creation order leave a live current context", "[robustness]") {
  wp::context world(g_argc, g_argv);
  const int P = world.size();
  auto [i] = wp::indices<1>();
  for (int order = 0; order < 2; ++order) {
    INFO("destruction order " << order);
    auto a = std::make_unique<wp::context>(g_argc, g_argv);
    auto b = std::make_unique<wp::context>(g_argc, g_argv, world.comm().split(0));
    if (order == 0) {
      a.reset();  // out of creation order
      b.reset();
    } else {
      b.reset();
      a.reset();
    }
    // the current context is `world` again: only its rank 0 is root
    wp::array<double, 1> x("x", {6}), y("y", {6});
    REQUIRE((x.data() != nullptr) == world.is_root());
    fill1(x, [](index_t v) { return double(v) - 1.0; });
    wp::distribute(wp::map("after", wp::space(6), y(i) = x(i) * x(i)), wp::grid_shape{index_t(P)})
        .run();
    std::vector<double> want(6);
    for (index_t v = 0; v < 6; ++v) want[v] = double(v - 1) * double(v - 1);
    REQUIRE(compare_on_root(world.comm(), y, want) == "");
  }
}

TEST_CASE("long long arrays distribute, partial sums included", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 5, C = 11;
  wp::array<long long, 2> a("a", {R, C});
  wp::array<long long, 1> s("s", {R});
  fill2(a, [](index_t x, index_t y) { return (1LL << 35) + x * 100 + y; });
  fill1(s, [](index_t x) { return x; });
  wp::distribute(wp::map("rowsum", wp::space(R, C), s(i) += a(i, j) * 3LL), wp::grid_shape{1, P},
                 ctx)
      .run();
  std::vector<double> want(R);
  for (index_t x = 0; x < R; ++x) {
    long long t = x;
    for (index_t y = 0; y < C; ++y) t += ((1LL << 35) + x * 100 + y) * 3;
    want[x] = double(t);
  }
  REQUIRE(compare_on_root(ctx.comm(), s, want) == "");
}

TEST_CASE("a subscript beyond 64 bits is refused on every rank, not read", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {16}), y("y", {4});
  fill1(y, [](index_t) { return -1.0; });
  // 3 * 2^62 wraps to a small offset in 64 bits: np 1 read x[0], np >= 2 crashed
  const std::string msg = what_of([&] {
    auto m = wp::map("huge", wp::space(4), y(i) = x((std::int64_t(1) << 62) * i));
    wp::distribute(m, wp::grid_shape{std::min<index_t>(P, 4)}, ctx).run();
  });
  INFO(msg);
  REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("'huge'") &&
                        Contains("13835058055282163712"));
  REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  REQUIRE(compare_on_root(ctx.comm(), y, std::vector<double>(4, -1.0)) == "");
}
