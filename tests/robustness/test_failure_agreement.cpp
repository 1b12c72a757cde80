/// \file test_failure_agreement.cpp
/// Regression tests for the defects of issue 12 where some ranks fail, or disagree, and the
/// others must not be left waiting: each error is asserted on every rank, its message compared
/// between ranks, and afterwards a plan is built and run to show that no rank was left inside
/// a collective (a rank left behind hangs the test, which then fails on its CTest timeout).

#include "../mpi/mpi_test_support.hpp"

#include <memory>
#include <stdexcept>

namespace {

using namespace mpitest;
using Catch::Matchers::Contains;

/// How many times s holds `part`.
int occurrences(const std::string& s, const std::string& part) {
  int n = 0;
  for (auto at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("an init() generator that throws on one rank fails every rank", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), me = ctx.rank(), bad = P - 1;
  auto [i] = wp::indices<1>();
  constexpr index_t n = 13;
  wp::array<double, 1> x("x", {n}), y("y", {n});
  x.init([&](const std::array<index_t, 1>& g) {
    if (me == bad) throw std::runtime_error("generator broke at " + std::to_string(g[0]));
    return double(g[0]);
  });
  const std::string where = P > 1 ? "rank " + std::to_string(bad) + ": " : "";
  SECTION("an input, from run()") {
    auto plan =
        wp::distribute(wp::map("gen", wp::space(n), y(i) = x(i) + 1.0), wp::grid_shape{P}, ctx);
    const std::string msg = what_of([&] { plan.run(); });
    INFO(msg);
    REQUIRE_THROWS_AS(plan.run(), wp::error);
    REQUIRE_THAT(msg, Contains("[workpart.error] " + where) && Contains("'gen'") &&
                          Contains("init() of array 'x'") && Contains("generator broke"));
    REQUIRE(occurrences(msg, "[workpart.") == 1);
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    // and gather() after the failed scatter moves nothing and says so
    const std::string g = what_of([&] { plan.gather(); });
    REQUIRE_THAT(g, Contains("[workpart.plan_error]") && Contains("scatter() failed"));
  }
  SECTION("the old values of an output, from scatter()") {
    wp::array<double, 1> z("z", {n});
    z.init([&](const std::array<index_t, 1>& g) {
      if (me == bad) throw std::logic_error("old values broke");
      return double(g[0]);
    });
    wp::array<double, 1> v("v", {n});
    fill1(v, [](index_t a) { return double(a); });
    auto plan = wp::distribute(wp::map("old", wp::space(n), z(i) += v(i)), wp::grid_shape{P}, ctx);
    const std::string msg = what_of([&] { plan.scatter(); });
    INFO(msg);
    REQUIRE_THAT(
        msg, Contains(where) && Contains("init() of array 'z'") && Contains("old values broke"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("root failing to allocate its copy fails every rank", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i] = wp::indices<1>();
  // 2^40 doubles (8 TiB): root's copy cannot be made; each rank needs only a sliver of it
  wp::array<double, 2> big("big", {index_t(1) << 20, index_t(1) << 20});
  wp::array<double, 1> y("y", {8});
  auto plan = wp::distribute(wp::map("small", wp::space(8), y(i) = big(i, 0) * 2.0),
                             wp::grid_shape{P}, ctx);
  const std::string msg = what_of([&] { plan.run(); });
  INFO(msg);
  REQUIRE_THAT(msg, Contains("[workpart.error]") && Contains("'big'") &&
                        Contains("root cannot allocate") && Contains("1099511627776 elements"));
  REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("ranks that built different maps are refused on every rank", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  const int me = ctx.rank();
  auto [i] = wp::indices<1>();
  SECTION("a space of 10 on root and 7 elsewhere") {
    wp::array<double, 1> x("x", {10}), y("y", {10});
    fill1(x, [](index_t a) { return double(a); });
    const index_t n = me == 0 ? 10 : 7;
    auto m = wp::map("sp", wp::space(n), y(i) = x(i) * 3.0);
    if (P == 1) {  // nothing to disagree about: it runs
      wp::distribute(m, wp::grid_shape{1}, ctx).run();
      std::vector<double> want(10);
      for (index_t a = 0; a < 10; ++a) want[a] = 3.0 * double(a);
      REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
    } else {
      const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{P}, ctx); });
      INFO(msg);
      REQUIRE_THROWS_AS(wp::distribute(m, wp::grid_shape{P}, ctx), wp::plan_error);
      REQUIRE_THAT(msg, Contains("'sp'") && Contains("did not build the same map and grid"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
  }
  SECTION("an array extent that differs by rank") {
    wp::array<double, 1> x("x", {me == 0 ? 12 : 11}), y("y", {10});
    auto m = wp::map("ext", wp::space(10), y(i) = x(i + 1));
    if (P > 1) {
      const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{P}, ctx); });
      REQUIRE_THAT(msg, Contains("[workpart.plan_error]") && Contains("'ext'"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
  }
  SECTION("a grid that differs by rank") {
    wp::array<double, 1> x("x", {10}), y("y", {10});
    auto m = wp::map("grids", wp::space(10), y(i) = x(i));
    if (P > 1) {
      const index_t g = me == 0 ? P : 1;
      const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{g}, ctx); });
      REQUIRE_THAT(msg, Contains("[workpart.plan_error]") && Contains("'grids'"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
  }
  SECTION("a space that fails the bounds check on one rank only") {
    wp::array<double, 1> x("x", {10}), y("y", {10});
    const index_t n = me == int(P) - 1 ? 12 : 10;
    // One rank's map fails its bounds check; on several ranks the error waits for distribute
    const std::string msg = what_of([&] {
      auto m = wp::map("oob", wp::space(n), y(i) = x(i));
      wp::distribute(m, wp::grid_shape{P}, ctx);
    });
    INFO(msg);
    REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("'oob'") && Contains("at 11"));
    REQUIRE(occurrences(msg, "[workpart.") == 1);
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("a program's maps, agreed on together, raise the earliest map's error everywhere",
          "[robustness][programs]") {
  // A program's maps plan their blocks locally and are agreed on once (runtime/map_runtime.hpp,
  // plan_batch): the error must still be the one of the earliest map that failed or differs,
  // the same on every rank, and no rank left behind.
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  const int me = ctx.rank(), last = int(P) - 1;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {10}), y("y", {10}), z("z", {10}), w("w", {10});
  fill1(x, [](index_t a) { return double(a); });
  auto first = wp::map("first", wp::space(10), y(i) = x(i) * 2.0);
  auto last_map = wp::map("last", wp::space(10), w(i) = z(i) + 1.0);
  wp::schedule s;
  s.set("first", wp::grid_shape{P}).set("mid", wp::grid_shape{P}).set("last", wp::grid_shape{P});
  SECTION("the middle map differs by rank: it is named") {
    const index_t n = me == 0 ? 10 : 9;
    auto mid = wp::map("mid", wp::space(n), z(i) = y(i) - 1.0);
    const std::string msg = what_of(
        [&] { wp::distribute(wp::program(wp::forward_only, first, mid, last_map), s, ctx); });
    INFO(msg);
    if (P == 1) {
      REQUIRE(msg.empty());
    } else {
      REQUIRE_THAT(msg, Contains("map 'mid'") && Contains("did not build the same map and grid"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
  }
  SECTION("the middle map fails on the last rank, the last map on every rank: the middle's") {
    const index_t n = me == last ? 12 : 10;
    const std::string msg = what_of([&] {
      auto mid = wp::map("mid", wp::space(n), z(i) = y(i) - 1.0);    // out of bounds on one rank
      auto bad = wp::map("last", wp::space(11), w(i) = z(i) + 1.0);  // everywhere
      wp::distribute(wp::program(wp::forward_only, first, mid, bad), s, ctx);
    });
    INFO(msg);
    REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("'mid'"));
    REQUIRE(occurrences(msg, "[workpart.") == 1);
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("no map fails: the program runs, maps sharing group communicators") {
    auto mid = wp::map("mid", wp::space(10), z(i) = y(i) - 1.0);
    auto plan = wp::distribute(wp::program(wp::forward_only, first, mid, last_map), s, ctx);
    plan.run();
    std::vector<double> want(10);
    for (index_t a = 0; a < 10; ++a) want[std::size_t(a)] = 2.0 * double(a) - 1.0 + 1.0;
    REQUIRE(compare_on_root(ctx.comm(), w, want) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("gather() after a failed execute() commits nothing to root", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t m = 12, n = 20;
  wp::array<std::int64_t, 1> idx("idx", {m});
  wp::array<double, 1> x("x", {n}), y("y", {m});
  fill1(idx, [](index_t a) { return (a * 7) % n; });
  fill1(x, [](index_t a) { return double(a) + 0.5; });
  fill1(y, [](index_t) { return -7.0; });
  if (std::int64_t* d = idx.data()) d[m - 1] = n + 3;  // read by the last rank's block only
  auto plan = wp::distribute(wp::map("gather", wp::space(m), y(i) = x(idx(i)) * 2.0),
                             wp::grid_shape{P}, ctx);
  plan.scatter();
  const std::string msg = what_of([&] { plan.execute(); });
  INFO(msg);
  REQUIRE_THAT(msg, Contains("[workpart.shape_error] rank " + std::to_string(P - 1) + ": ") &&
                        Contains("at 23"));
  REQUIRE(occurrences(msg, "[workpart.") == 1);  // the tag is not repeated
  REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  // every other rank's block ran: gathering them would mix results into root's y
  REQUIRE_THROWS_AS(plan.gather(), wp::plan_error);
  const std::string g = what_of([&] { plan.gather(y); });
  REQUIRE_THAT(g, Contains("execute() failed") && Contains("scatter() or run()"));
  REQUIRE(same_everywhere(ctx.comm(), g) == "");
  REQUIRE(compare_on_root(ctx.comm(), y, std::vector<double>(m, -7.0)) == "");
  // repaired, the same plan runs step by step again
  if (std::int64_t* d = idx.data()) d[m - 1] = 4;
  plan.scatter();
  plan.execute();
  plan.gather();
  std::vector<double> want(m);
  for (index_t a = 0; a < m; ++a) want[a] = (double(a == m - 1 ? 4 : (a * 7) % n) + 0.5) * 2.0;
  REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
}

TEST_CASE("an array destroyed before its plan runs is refused", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i] = wp::indices<1>();
  auto x = std::make_unique<wp::array<double, 1>>("x", std::array<index_t, 1>{9});
  wp::array<double, 1> y("y", {9});
  auto plan =
      wp::distribute(wp::map("gone", wp::space(9), y(i) = (*x)(i) + 1.0), wp::grid_shape{P}, ctx);
  SECTION("before run()") {
    x.reset();
    const std::string msg = what_of([&] { plan.run(); });
    REQUIRE_THAT(msg, Contains("[workpart.plan_error]") && Contains("array 'x' was destroyed"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    REQUIRE_THROWS_AS(plan.execute(), wp::plan_error);
    REQUIRE_THROWS_AS(plan.local(y), wp::plan_error);
  }
  SECTION("between scatter() and execute()") {
    plan.scatter();
    x.reset();
    REQUIRE_THROWS_AS(plan.execute(), wp::plan_error);
    REQUIRE_THROWS_AS(plan.gather(), wp::plan_error);
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("views of overlapping root memory in one map are refused", "[robustness]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 10;
  std::vector<double> buf(ctx.is_root() ? n + 1 : 0);
  for (std::size_t a = 0; a < buf.size(); ++a) buf[a] = double(a);
  double* root = ctx.is_root() ? buf.data() : nullptr;
  wp::array<double, 1> x("x", {n}, root), y("y", {n}, root ? root + 1 : nullptr), w("w", {n}, root);
  SECTION("y(i + 1) = x(i) where y views x shifted by one") {
    const std::string msg = what_of([&] {
      wp::distribute(wp::map("alias", wp::space(n), y(i) = x(i)), wp::grid_shape{P}, ctx);
    });
    INFO(msg);
    REQUIRE_THAT(msg, Contains("[workpart.plan_error]") && Contains("'alias'") &&
                          Contains("'x' and 'y'") && Contains("overlapping memory on root"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("two read-only views of one buffer are fine") {
    wp::array<double, 1> out("out", {n});
    wp::distribute(wp::map("reads", wp::space(n), out(i) = x(i) + w(i)), wp::grid_shape{P}, ctx)
        .run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) want[a] = 2.0 * double(a);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}
