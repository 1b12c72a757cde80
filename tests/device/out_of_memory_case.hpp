#pragma once
/// \file out_of_memory_case.hpp
/// The device backend's out-of-memory case, shared by the device test (test_device.cpp: the
/// CUDA build runs it on a GPU; under AddressSanitizer, whose shadow memory RLIMIT_AS cannot
/// bound, it is skipped) and tests/mpi/test_memory_limits.cpp (the build without sanitizers,
/// through Thrust's OpenMP system).

#include "../mpi/mpi_test_support.hpp"

namespace mpitest {

/// The device backend under a memory limit on one rank: its combines use the host buffers
/// reserved at scatter(), its mirrors are made in the agreed local phase, so a warm execute()
/// and gather() allocate nothing; a scatter() that cannot allocate fails on every rank.
inline void device_out_of_memory_case(const wp::context& ctx) {
  const wp::options device{.backend = wp::backend::cuda};
  const int p = ctx.size(), me = ctx.rank();
  if (skip_memory_limit_test(ctx)) return;
  auto [i, k] = wp::indices<2>();
  const index_t I = index_t(1) << 21, K = p;
  auto xf = [](index_t a, index_t b) { return double((a + 5 * b) % 7) - 3.0; };
  wp::array<double, 2> x("x", {I, K});
  wp::array<double, 1> w("w", {K}), t("t", {I}), y("y", {I});
  fill2(x, xf);
  fill1(w, [](index_t b) { return 1.0 + double(b); });
  fill1(y, [](index_t) { return 0.0; });
  std::vector<double> want(static_cast<std::size_t>(I), 0.0);
  for (index_t a = 0; a < I; ++a)
    for (index_t b = 0; b < K; ++b) want[std::size_t(a)] += 2.0 * xf(a, b) * (1.0 + double(b));
  auto prog = wp::program(wp::map("t0", wp::space(I), t(i) = 0.0),
                          wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k)),
                          wp::map("f", wp::space(I), y(i) = 2.0 * t(i)));
  for (bool reduce_onto_root : {false, true}) {
    INFO((reduce_onto_root ? "a Reduce onto rank 0, rank 0 limited" : "a reduce-scatter"));
    wp::schedule s;
    s.set("t0", wp::grid_shape{index_t(p)});
    s.set("matvec", wp::grid_shape{1, index_t(p)});
    s.set("f", reduce_onto_root ? wp::grid_shape{1} : wp::grid_shape{index_t(p)});
    const int limited = reduce_onto_root ? 0 : 1;
    auto plan = wp::distribute(prog, s, ctx, device);
    plan.scatter();
    plan.execute();  // warm: mirrors, threads, connections
    if (me == limited) limit_memory(std::size_t(4) << 20);
    const std::string err = what_of([&] {
      plan.execute();
      plan.gather(y);
    });
    if (me == limited) limit_memory(0);
    REQUIRE(all_problems(ctx.comm(), err) == "");
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
  }
  // a scatter() that cannot allocate its blocks: the same error on every rank, then it runs
  wp::schedule s;
  s.set("t0", wp::grid_shape{index_t(p)});
  s.set("matvec", wp::grid_shape{1, index_t(p)});
  s.set("f", wp::grid_shape{index_t(p)});
  auto plan = wp::distribute(prog, s, ctx, device);
  if (me == 1) limit_memory(std::size_t(4) << 20);
  const std::string err = what_of([&] { plan.scatter(); });
  if (me == 1) limit_memory(0);
  REQUIRE_THAT(err, Catch::Contains("rank 1: out of memory while allocating the"));
  REQUIRE(all_problems(ctx.comm(), err.empty() ? "no error" : "") == "");
  plan.run();
  REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
}

}  // namespace mpitest
