/// \file test_memory_limits.cpp
/// A rank out of memory (RLIMIT_AS on one rank): every rank fails alike, nothing hangs, and
/// the same context plans and runs afterwards -- on the host and, where Thrust is, the device
/// backend through its OpenMP system. Built without sanitizers only (NOT_SANITIZED):
/// AddressSanitizer reserves its shadow memory up front, which RLIMIT_AS cannot bound.

#include "mpi_test_support.hpp"
#if WORKPART_TEST_DEVICE_MEMORY
#include "../device/out_of_memory_case.hpp"
#endif

#include <malloc.h>

#include <vector>

using namespace mpitest;

namespace {
// glibc raises its mmap threshold when a large mmapped block is freed, so the next cases'
// blocks would come from heap the earlier cases left free, under any limit: a fixed threshold
// maps every large block afresh, as each case's limit assumes (each ran in a process of its
// own before).
const int g_fixed_mmap_threshold = mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}  // namespace

// A rank that runs out of memory: every allocation a phase makes comes before its first
// collective, under the failure agreement. The reduce-scatter's receive buffer used to be
// allocated inside the collective: the rank that failed left execute() while the others
// waited in it until the job was killed. Now it is reserved at scatter(), so an execute()
// under a tight limit allocates nothing; a scatter() under it fails on every rank alike,
// naming the rank and what it was allocating, and the same context plans and runs afterwards.
TEST_CASE("memory: a rank out of memory fails every rank alike, and nothing hangs",
          "[mpi][distribute][errors][memory]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), me = ctx.rank();
  if (skip_memory_limit_test(ctx)) return;
  auto [i, k] = wp::indices<2>();
  const index_t I = index_t(1) << 22, K = P;  // each rank's partial of t: 32 MB
  auto xf = [](index_t a, index_t b) { return double((a + 3 * b) % 7) - 3.0; };
  auto wf = [](index_t b) { return 0.5 + double(b); };
  wp::array<double, 2> x("x", {I, K});
  wp::array<double, 1> w("w", {K}), t("t", {I}), y("y", {I});
  fill2(x, xf);
  fill1(w, wf);
  std::vector<double> want(static_cast<std::size_t>(I));
  for (index_t a = 0; a < I; ++a) {
    double s = 0;
    for (index_t b = 0; b < K; ++b) s += xf(a, b) * wf(b);
    want[std::size_t(a)] = 2 * s;
  }
  auto prog = wp::program(wp::map("t0", wp::space(I), t(i) = 0.0),
                          wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k)),
                          wp::map("f", wp::space(I), y(i) = 2.0 * t(i)));
  wp::schedule s;
  s.set("t0", wp::grid_shape{index_t(P)});
  s.set("matvec", wp::grid_shape{1, index_t(P)});  // k split: a partial of all of t per rank
  s.set("f", wp::grid_shape{index_t(P)});          // read by rows: a reduce-scatter
  // less than any receive buffer below: the reduce-scatter's (>= 16 MB), a Reduce's (8 MB)
  const std::size_t margin = std::size_t(4) << 20;
  // A plan run once, then again with rank `limited` under the limit: the second execute()
  // and the gather allocate nothing, so they run (each of these hung before).
  // (root's copies of the outputs are made before: a limit on root would stop them first)
  fill1(y, [](index_t) { return 0.0; });
  auto runs_under_limit = [&](auto&& plan, int limited, auto&& gather) {
    plan.scatter();
    plan.execute();  // warm: threads, connections, datatypes
    if (me == limited) limit_memory(margin);
    const std::string err = what_of([&] {
      plan.execute();
      gather();
    });
    if (me == limited) limit_memory(0);
    REQUIRE(all_problems(ctx.comm(), err) == "");
  };
  SECTION("a reduce-scatter (rank 1 limited)") {
    auto plan = wp::distribute(prog, s, ctx);
    REQUIRE_THAT(plan.explain(), Catch::Contains("reduce-scatter(sum)"));
    runs_under_limit(plan, 1, [&] { plan.gather(y); });
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
  }
  SECTION("a Reduce onto the one reader (rank 0 limited)") {
    s.set("f", wp::grid_shape{1});
    auto plan = wp::distribute(prog, s, ctx);
    REQUIRE_THAT(plan.explain(), Catch::Contains("Reduce(sum)"));
    runs_under_limit(plan, 0, [&] { plan.gather(y); });
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
  }
  SECTION("an Allreduce for readers that need all of t (rank 0 limited)") {
    wp::array<double, 2> z("z", {I, K});
    fill2(z, [](index_t, index_t) { return 0.0; });
    auto prog2 = wp::program(wp::map("t0", wp::space(I), t(i) = 0.0),
                             wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k)),
                             wp::map("g", wp::space(I, K), z(i, k) = t(i) * 0.0 + 2.0 * t(i)));
    wp::schedule s2;
    s2.set("t0", wp::grid_shape{index_t(P)});
    s2.set("matvec", wp::grid_shape{1, index_t(P)});
    s2.set("g", wp::grid_shape{1, index_t(P)});  // every rank reads all of t
    auto plan = wp::distribute(prog2, s2, ctx);
    REQUIRE_THAT(plan.explain(), Catch::Contains("Allreduce(sum)"));
    runs_under_limit(plan, 0, [&] { plan.gather(z); });
    std::vector<double> zw;
    for (index_t a = 0; a < I; ++a)
      for (index_t b = 0; b < K; ++b) zw.push_back(want[std::size_t(a)]);
    REQUIRE(compare_on_root(ctx.comm(), z, zw, 1e-12) == "");
  }
  SECTION("a one-map plan's gather, reduced onto root (rank 0 limited)") {
    fill1(t, [](index_t) { return 0.0; });
    auto plan = wp::distribute(wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k)),
                               wp::grid_shape{1, index_t(P)}, ctx);
    runs_under_limit(plan, 0, [&] { plan.gather(); });
    REQUIRE(compare_on_root(ctx.comm(), t, want, 1e-12) == "");  // two runs: 2 x the sums
  }
  SECTION("a redistribution between transposed grids (rank 1 limited)") {
    wp::array<double, 2> A("A", {I, K}), Bm("Bm", {I, K});
    fill2(A, [](index_t, index_t) { return 0.0; });
    fill2(Bm, [](index_t, index_t) { return 0.0; });
    auto prog3 = wp::program(wp::map("a", wp::space(I, K), A(i, k) = x(i, k)),
                             wp::map("b", wp::space(I, K), Bm(i, k) = A(i, k) * 2.0));
    wp::schedule s3;
    s3.set("a", wp::grid_shape{index_t(P), 1});
    s3.set("b", wp::grid_shape{1, index_t(P)});
    auto plan = wp::distribute(prog3, s3, ctx);
    runs_under_limit(plan, 1, [&] { plan.gather(Bm); });
    std::vector<double> bw;
    for (index_t a = 0; a < I; ++a)
      for (index_t b = 0; b < K; ++b) bw.push_back(2.0 * xf(a, b));
    REQUIRE(compare_on_root(ctx.comm(), Bm, bw, 1e-12) == "");
  }
  SECTION("a halo exchange between two maps on one grid (rank 1 limited)") {
    wp::array<double, 1> A("A", {I}), Bv("Bv", {I});
    fill1(A, [](index_t) { return 0.0; });
    fill1(Bv, [](index_t) { return 0.0; });
    auto prog4 = wp::program(wp::map("a", wp::space(I), A(i) = w(0) * 0.0 + 1.0 * double(K)),
                             wp::map("b", wp::space(I - 2), Bv(i + 1) = A(i) + A(i + 2)));
    wp::schedule s4;
    s4.set("a", wp::grid_shape{index_t(P)});
    s4.set("b", wp::grid_shape{index_t(P)});
    auto plan = wp::distribute(prog4, s4, ctx);
    REQUIRE_THAT(plan.explain(), Catch::Contains("halo exchange"));
    runs_under_limit(plan, 1, [&] { plan.gather(Bv); });
    std::vector<double> bw(static_cast<std::size_t>(I), 0.0);
    for (index_t a = 1; a + 1 < I; ++a) bw[std::size_t(a)] = 2.0 * double(K);
    REQUIRE(compare_on_root(ctx.comm(), Bv, bw, 1e-12) == "");
  }
  SECTION("a scatter() that cannot allocate fails on every rank; the context goes on") {
    auto plan = wp::distribute(prog, s, ctx);
    if (me == 1) limit_memory(margin);
    const std::string err = what_of([&] { plan.scatter(); });
    if (me == 1) limit_memory(0);
    REQUIRE_THAT(err, Catch::Contains("rank 1: out of memory while allocating the") &&
                          Catch::Contains("for map '"));
    REQUIRE(all_problems(ctx.comm(), err.empty() ? "no error" : "") == "");
    // the same plan and context, the limit lifted: it runs
    fill1(y, [](index_t) { return -1.0; });
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
  }
}

#if WORKPART_TEST_DEVICE_MEMORY
TEST_CASE("memory: the device backend, a rank out of memory", "[device][memory]") {
  wp::context ctx(g_argc, g_argv);
  device_out_of_memory_case(ctx);
}
#endif
