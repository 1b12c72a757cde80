// Lesson 11: the device backend. The same maps and grids as on the CPU, with
// wp::options{.backend = wp::backend::cuda}: each rank runs its block on its device.
//
//   mpirun -np 4 ./11_device [n rows cols]      (default 512 4096 1024, float32)
//
// Built with g++ against workpart::device_omp, the device code runs on the CPU through
// Thrust's OpenMP system; built with nvcc against workpart::cuda (11_device_cuda), on a GPU
// per rank (it says so and exits 77 where there is none). Two maps:
//   - a matmul C(i,j) += A(i,k) B(k,j), n^3, rows split (P,1,1): the contraction goes to
//     cuBLAS under CUDA (the kernel on the CPU system);
//   - a softmax over the last axis of x(rows, cols), one map of four statements, rows split:
//     row max and row sum are reductions held per device thread (no atomics).
// Each prints its explain() (the device strategy per statement and the device system), the
// bytes each rank received beside the prediction, and a check against a plain loop on root,
// and the same map on the CPU backend for comparison of the seconds per phase.
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
#include <cuda_runtime.h>
#endif

namespace wp = workpart;
using wp::phase_stats;

namespace {
template <class Plan>
void phases(const char* what, const Plan& plan, const wp::context& ctx) {
  const auto& st = plan.stats();
  if (!ctx.is_root()) return;
  std::printf("  %-22s root: scatter %.4f s, execute %.4f s, gather %.4f s\n", what,
              st.scatter.seconds, st.execute.seconds, st.gather.seconds);
  // what crossed between root's memory and its device (0 on the CPU backend): the blocks go up
  // once before the kernels run and the written ones come down once for the gather
  const phase_stats* ph[] = {&st.scatter, &st.execute, &st.gather};
  long long up = 0, down = 0;
  for (const auto* p : ph) {
    up += p->bytes_to_device;
    down += p->bytes_from_device;
  }
  if (up + down > 0)
    std::printf("  %-22s root's device copies: %lld B up, %lld B down\n", "", up, down);
}
}  // namespace

int main(int argc, char** argv) {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("11_device_cuda: SKIPPED, no CUDA device on this machine\n");
    return 77;
  }
#endif
  wp::context ctx(argc, argv);
  const std::int64_t n = argc > 3 ? std::atoll(argv[1]) : 512;
  const std::int64_t R = argc > 3 ? std::atoll(argv[2]) : 4096;
  const std::int64_t L = argc > 3 ? std::atoll(argv[3]) : 1024;
  const std::int64_t P = ctx.size();
  const wp::options dev{.backend = wp::backend::cuda};
  int status = 0;
  auto agree = [&](bool ok) {
    return boost::mpi::all_reduce(ctx.comm(), ok ? 0 : 1, boost::mpi::maximum<int>());
  };
  auto bytes_ok = [&](const auto& plan) {
    const auto& st = plan.stats();
    return st.scatter.bytes_received == st.predicted_scatter_received &&
           st.gather.bytes_sent == st.predicted_gather_sent;
  };

  {  // matmul
    wp::array<float, 2> A("A", {n, n}), B("B", {n, n}), C("C", {n, n});
    auto fa = [](std::int64_t x, std::int64_t y) {
      return float((x * 7 + y * 3) % 13) * 0.1f - 0.6f;
    };
    auto fb = [](std::int64_t x, std::int64_t y) {
      return float((x * 5 + y * 2) % 11) * 0.1f - 0.5f;
    };
    if (ctx.is_root())
      for (std::int64_t x = 0; x < n; ++x)
        for (std::int64_t y = 0; y < n; ++y) {
          A.data()[x * n + y] = fa(x, y);
          B.data()[x * n + y] = fb(x, y);
          C.data()[x * n + y] = 0;
        }
    auto [i, j, k] = wp::indices<3>();
    auto mm = wp::map("matmul", wp::space(n, n, n), C(i, j) += A(i, k) * B(k, j));
    auto plan = wp::distribute(mm, wp::grid_shape{P, 1, 1}, ctx, dev);
    if (ctx.is_root())
      std::cout << "=== matmul " << n << "^3 float32 on the device ===\n" << plan.explain();
    plan.run();
    bool ok = true;
    if (ctx.is_root()) {
      double worst = 0;
      for (std::int64_t x = 0; x < n; x += std::max<std::int64_t>(1, n / 61))
        for (std::int64_t y = 0; y < n; ++y) {
          double s = 0;
          for (std::int64_t z = 0; z < n; ++z) s += double(fa(x, z)) * double(fb(z, y));
          worst = std::max(worst,
                           std::abs(s - double(C.data()[x * n + y])) / std::max(1.0, std::abs(s)));
        }
      ok = worst < 1e-3;
      std::printf("  check against a plain loop (sampled rows): max rel diff %.2e %s\n", worst,
                  ok ? "ok" : "WRONG");
    }
    status |= agree(ok && bytes_ok(plan));
    phases("device backend", plan, ctx);
    if (ctx.is_root()) std::fill(C.data(), C.data() + n * n, 0.0f);
    auto cpu = wp::distribute(mm, wp::grid_shape{P, 1, 1}, ctx);
    cpu.run();
    phases("CPU backend", cpu, ctx);
  }

  {  // softmax
    wp::array<float, 2> x("x", {R, L}), e("e", {R, L}), y("y", {R, L});
    wp::array<float, 1> mx("mx", {R}), sum("sum", {R});
    auto fx = [](std::int64_t r, std::int64_t c) {
      return float((r * 37 + c * 11) % 101) * 0.05f - 2.5f;
    };
    if (ctx.is_root()) {
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t c = 0; c < L; ++c) x.data()[r * L + c] = fx(r, c);
      std::fill(mx.data(), mx.data() + R, -INFINITY);
      std::fill(sum.data(), sum.data() + R, 0.0f);
    }
    auto [r, c] = wp::indices<2>();
    auto sm =
        wp::map("softmax", wp::space(R, L), wp::max_into(mx(r), x(r, c)),
                e(r, c) = wp::exp(x(r, c) - mx(r)), sum(r) += e(r, c), y(r, c) = e(r, c) / sum(r));
    auto plan = wp::distribute(sm, wp::grid_shape{P, 1}, ctx, dev);
    if (ctx.is_root())
      std::cout << "\n=== softmax (" << R << ", " << L << ") float32 on the device ===\n"
                << plan.explain();
    plan.run();
    bool ok = true;
    if (ctx.is_root()) {
      double worst = 0;
      for (std::int64_t a = 0; a < R; ++a) {
        double m = -1e300, z = 0;
        for (std::int64_t b = 0; b < L; ++b) m = std::max(m, double(fx(a, b)));
        for (std::int64_t b = 0; b < L; ++b) z += std::exp(double(fx(a, b)) - m);
        for (std::int64_t b = 0; b < L; ++b)
          worst = std::max(
              worst, std::abs(std::exp(double(fx(a, b)) - m) / z - double(y.data()[a * L + b])));
      }
      ok = worst < 1e-5;
      std::printf("  check against a plain loop: max abs diff %.2e %s\n", worst,
                  ok ? "ok" : "WRONG");
    }
    status |= agree(ok && bytes_ok(plan));
    phases("device backend", plan, ctx);
  }
  if (ctx.is_root())
    std::printf("\n%s\n", status ? "11_device: FAILED" : "11_device: all checks passed");
  return status;
}
