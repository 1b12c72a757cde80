// Built by nvcc against workpart::cuda (as CUDA). Where no CUDA device is (CI, a laptop), a
// CUDA-built program still runs its CPU plans, and asking for the CUDA backend is the same
// wp::backend_error on every rank before any data moves, naming the call that found no
// device. On a machine with a GPU there is nothing here to test: it exits 77 (a skip).
#include "../mpi/mpi_test_support.hpp"

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

using namespace mpitest;
using Catch::Matchers::Contains;

static_assert(WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA, "this test is compiled by nvcc");

namespace {
const bool g_no_device = [] {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    std::printf(
        "SKIPPED: this machine has %d CUDA device(s); the refusal is tested where there is none\n",
        n);
    std::fflush(stdout);
    std::exit(77);
  }
  return true;
}();
}  // namespace

TEST_CASE("CUDA build without a device: CPU plans run, the CUDA backend is refused on every rank",
          "[cuda]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t n = 17;
  wp::array<double, 1> x("x", {n}), y("y", {n});
  fill1(x, [](index_t t) { return double(t * 3 % 5) - 1.5; });
  auto [i] = wp::indices<1>();
  auto m = wp::map("axpb", wp::space(n), y(i) = 2.0 * x(i) + 1.0);
  wp::distribute(m, wp::grid_shape{p}, ctx).run();
  std::vector<double> want;
  for (index_t t = 0; t < n; ++t) want.push_back(2.0 * (double(t * 3 % 5) - 1.5) + 1.0);
  REQUIRE(compare_on_root(ctx.comm(), y, want) == "");

  const std::string msg = what_of([&] {
    wp::distribute(m, wp::grid_shape{p}, ctx, wp::options{.backend = wp::backend::cuda});
  });
  REQUIRE_THAT(msg, Contains("[workpart.backend_error]") && Contains("'axpb'") &&
                        Contains("no CUDA device") && Contains("cudaGetDeviceCount") &&
                        Contains("backend::cpu"));
  REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  // the refusal left nothing half made: the same map plans and runs on the CPU again
  fill1(y, [](index_t) { return 0.0; });
  wp::distribute(m, wp::grid_shape{p}, ctx).run();
  REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
}
