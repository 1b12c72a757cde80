// Benchmark: the device backend (wp::backend::cuda) against baselines timed in the same run.
// Built twice: with g++ against workpart::device_omp (bench_device: the device path on the
// CPU through Thrust's OpenMP system, for information) and, with WORKPART_ENABLE_CUDA, with
// nvcc against workpart::cuda (bench_device_cuda: on a GPU).
//
//   [mpirun -np P] bench_device [--matmul=N] [--elementwise=N] [--softmax=B,H,S,L]
//                               [--reps=N] [--csv FILE]
//
// Kernels, each on one process (root; the other ranks wait), data already on the device
// (after scatter() and one warm-up execute(), a repeated execute() copies nothing between
// host and device: the benchmark checks that from plan.stats()), the map's plan.execute()
// against:
//   matmul       C(i,j) += A(i,k) B(k,j), float32, N^3: under CUDA cuBLAS called directly
//                (cublasSgemm; target: the map within 5 %); in the Thrust-OpenMP build the CPU
//                backend's execute() (Eigen/BLAS GEMM), for information (the device path runs
//                the contraction as the generic kernel there).
//   elementwise  y(i) = a * x(i) + b, float32, N: a hand-written thrust::transform on device
//                vectors (target under CUDA: within 10 %); also the CPU backend.
//   softmax      y = softmax over l of x(b,h,s,l), float32, as one map of four statements:
//                a hand-written Thrust kernel (one thread per row: max, exp-sum, divide);
//                also the CPU backend.
// Neither side copies its result to the host inside the timing; each result is brought back
// once at the end and compared. Then, at the run's P,
// the distributed plans of the three maps (grid (P,1,1) etc.) from root with seconds per
// phase (scatter, execute, gather) from plan.stats().
// Rounds: one warm-up, then --reps rounds alternating map and baseline; medians.

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#include <workpart/workpart.hpp>
#pragma GCC diagnostic pop

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

#include "bench_common.hpp"
#include "bench_mpi.hpp"

namespace wp = workpart;
using workpart_bench::csv_writer;
using workpart_bench::median;

namespace {

void device_sync() {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  cudaDeviceSynchronize();
#endif
}

double seconds(const std::function<void()>& f) {
  device_sync();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  device_sync();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct axpb {
  float a, b;
  WORKPART_HD float operator()(float x) const { return a * x + b; }
};

/// One thread per row of an R x L matrix: max, exp-sum, divide (the hand-written softmax).
struct softmax_rows {
  const float* x;
  float* y;
  std::int64_t L;
  WORKPART_HD void operator()(std::int64_t r) const {
    const float* xr = x + r * L;
    float* yr = y + r * L;
    float m = xr[0];
    for (std::int64_t l = 1; l < L; ++l) m = xr[l] > m ? xr[l] : m;
    float z = 0;
    for (std::int64_t l = 0; l < L; ++l) {
      yr[l] = WORKPART_MATH(exp)(xr[l] - m);
      z += yr[l];
    }
    const float inv = 1.0f / z;
    for (std::int64_t l = 0; l < L; ++l) yr[l] *= inv;
  }
};

struct row_result {
  std::string kernel, baseline;
  double map_s = 0, base_s = 0, diff = 0;
};

/// The repeated execute()s copied nothing between host and device (only the first, after the
/// scatter, copies the blocks up): said when it is not so.
template <class Plan>
void note_copies(const char* what, const Plan& plan) {
  const auto& e = plan.stats().execute;
  std::printf(
      "  %-12s device copies over all execute()s: %lld B up, %lld B down (the first's upload "
      "only)\n",
      what, (long long)e.bytes_to_device, (long long)e.bytes_from_device);
}

double max_rel_diff(const float* a, const float* b, std::int64_t n) {
  double m = 0, s = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    m = std::max(m, double(std::abs(a[e] - b[e])));
    s = std::max(s, double(std::abs(b[e])));
  }
  return s > 0 ? m / s : m;
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const int P = ctx.size();
  std::int64_t nmat = 512, nel = std::int64_t(1) << 22;
  std::vector<std::int64_t> sm{8, 16, 64, 128};
  int reps = 5;
  std::string csv;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (const char* v = workpart_bench::option_value(s, "--matmul="))
      nmat = std::atoll(v);
    else if (const char* v2 = workpart_bench::option_value(s, "--elementwise="))
      nel = std::atoll(v2);
    else if (const char* v3 = workpart_bench::option_value(s, "--softmax="))
      sm = workpart_bench::parse_sizes(v3);
    else if (const char* v4 = workpart_bench::option_value(s, "--reps="))
      reps = std::max(1, std::atoi(v4));
    else if (const char* c = workpart_bench::csv_option(argc, argv, a))
      csv = c;
    else {
      if (ctx.is_root()) std::fprintf(stderr, "bench_device: unknown argument '%s'\n", s.c_str());
      return 2;
    }
  }
  if (sm.size() != 4) {
    if (ctx.is_root()) std::fprintf(stderr, "bench_device: --softmax takes B,H,S,L\n");
    return 2;
  }
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    if (ctx.is_root()) std::printf("bench_device_cuda: SKIPPED, no CUDA device on this machine\n");
    return 0;
  }
#endif
  csv_writer out(ctx.is_root() ? csv : std::string(),
                 {"benchmark", "system", "P", "kernel", "size", "variant", "seconds", "baseline",
                  "baseline_seconds", "ratio", "max_rel_diff"});
  const std::string sys = wp::detail::device_system_text();
  if (ctx.is_root()) {
    std::printf("bench_device: the device backend (%s)\n", sys.c_str());
    std::printf("  P = %d; kernels on root alone (medians of %d rounds); ratio = baseline / map\n",
                P, reps);
  }
  const wp::options dev{.backend = wp::backend::cuda};
  auto [i, j, k] = wp::indices<3>();
  std::vector<row_result> rows;
  // A communicator of root alone: the kernels run on one process while the others sleep.
  const boost::mpi::communicator self = ctx.comm().split(ctx.rank() == 0 ? 0 : 1);

  if (ctx.is_root()) {
    wp::context one(argc, argv, self);  // current until the end of this block
    // ---- matmul
    {
      const std::int64_t n = nmat;
      wp::array<float, 2> A("A", {n, n}), B("B", {n, n}), C("C", {n, n}), Cc("Cc", {n, n});
      for (std::int64_t e = 0; e < n * n; ++e) {
        A.data()[e] = float((e * 7) % 13) * 0.1f - 0.6f;
        B.data()[e] = float((e * 5) % 11) * 0.1f - 0.5f;
        C.data()[e] = Cc.data()[e] = 0;
      }
      auto mm = wp::map("mm", wp::space(n, n, n), C(i, j) += A(i, k) * B(k, j));
      auto mc = wp::map("mc", wp::space(n, n, n), Cc(i, j) += A(i, k) * B(k, j));
      auto pd = wp::distribute(mm, wp::grid_shape{1, 1, 1}, one, dev);
      pd.scatter();
      std::vector<double> tm, tb;
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
      thrust::device_vector<float> da(A.data(), A.data() + n * n), db(B.data(), B.data() + n * n),
          dc(static_cast<std::size_t>(n * n), 0.0f);
      std::vector<float> hc(static_cast<std::size_t>(n * n));
      cublasHandle_t h;
      cublasCreate(&h);
      const float one_f = 1.0f;
      auto base = [&] {  // C^T = B^T A^T in column-major terms: C row-major
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one_f,
                    thrust::raw_pointer_cast(db.data()), int(n),
                    thrust::raw_pointer_cast(da.data()), int(n), &one_f,
                    thrust::raw_pointer_cast(dc.data()), int(n));
      };
      const char* bname = "cuBLAS cublasSgemm";
#else
      auto pc = wp::distribute(mc, wp::grid_shape{1, 1, 1}, one);
      pc.scatter();
      auto base = [&] { pc.execute(); };
      const char* bname = "CPU backend execute()";
#endif
      for (int r = -1; r < reps; ++r) {
        const double a = seconds([&] { pd.execute(); });
        const double b = seconds(base);
        if (r >= 0) tm.push_back(a), tb.push_back(b);
      }
      note_copies("matmul", pd);
      pd.gather();
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
      thrust::copy(dc.begin(), dc.end(), hc.begin());
      cublasDestroy(h);
      const double diff = max_rel_diff(C.data(), hc.data(), n * n);
#else
      pc.gather();
      const double diff = max_rel_diff(C.data(), Cc.data(), n * n);
#endif
      rows.push_back({"matmul " + std::to_string(n) + "^3", bname, median(tm), median(tb), diff});
    }
    // ---- elementwise
    {
      const std::int64_t n = nel;
      wp::array<float, 1> x("x", {n}), y("y", {n}), yc("yc", {n});
      for (std::int64_t e = 0; e < n; ++e) x.data()[e] = float(e % 1000) * 0.001f;
      auto em = wp::map("axpb", wp::space(n), y(i) = 1.5f * x(i) + 0.25f);
      auto ec = wp::map("axpb_cpu", wp::space(n), yc(i) = 1.5f * x(i) + 0.25f);
      auto pd = wp::distribute(em, wp::grid_shape{1}, one, dev);
      auto pc = wp::distribute(ec, wp::grid_shape{1}, one);
      pd.scatter();
      pc.scatter();
      thrust::device_vector<float> dx(x.data(), x.data() + n), dy(static_cast<std::size_t>(n));
      std::vector<float> hy(static_cast<std::size_t>(n));
      auto base = [&] {
        thrust::transform(thrust::device, dx.begin(), dx.end(), dy.begin(), axpb{1.5f, 0.25f});
      };
      std::vector<double> tm, tb, tc;
      for (int r = -1; r < reps; ++r) {
        const double a = seconds([&] { pd.execute(); });
        const double b = seconds(base);
        const double cc = seconds([&] { pc.execute(); });
        if (r >= 0) tm.push_back(a), tb.push_back(b), tc.push_back(cc);
      }
      note_copies("elementwise", pd);
      pd.gather();
      pc.gather();
      thrust::copy(dy.begin(), dy.end(), hy.begin());
      rows.push_back({"elementwise " + std::to_string(n), "hand-written thrust::transform",
                      median(tm), median(tb), max_rel_diff(y.data(), hy.data(), n)});
      rows.push_back({"elementwise " + std::to_string(n), "CPU backend execute()", median(tm),
                      median(tc), max_rel_diff(y.data(), yc.data(), n)});
    }
    // ---- softmax
    {
      const std::int64_t B = sm[0], H = sm[1], S = sm[2], L = sm[3], R = B * H * S, n = R * L;
      wp::array<float, 4> x("x", {B, H, S, L}), e("e", {B, H, S, L}), y("y", {B, H, S, L});
      wp::array<float, 3> mx("mx", {B, H, S}), sum("sum", {B, H, S});
      for (std::int64_t t = 0; t < n; ++t) x.data()[t] = float((t * 37) % 101) * 0.05f - 2.5f;
      auto [b, hh, s, l] = wp::indices<4>();
      auto smap =
          wp::map("softmax", wp::space(B, H, S, L), wp::max_into(mx(b, hh, s), x(b, hh, s, l)),
                  e(b, hh, s, l) = wp::exp(x(b, hh, s, l) - mx(b, hh, s)),
                  sum(b, hh, s) += e(b, hh, s, l), y(b, hh, s, l) = e(b, hh, s, l) / sum(b, hh, s));
      wp::array<float, 4> yc("yc", {B, H, S, L}), ec("ec", {B, H, S, L});
      wp::array<float, 3> mxc("mxc", {B, H, S}), sumc("sumc", {B, H, S});
      auto cmap = wp::map(
          "softmax_cpu", wp::space(B, H, S, L), wp::max_into(mxc(b, hh, s), x(b, hh, s, l)),
          ec(b, hh, s, l) = wp::exp(x(b, hh, s, l) - mxc(b, hh, s)),
          sumc(b, hh, s) += ec(b, hh, s, l), yc(b, hh, s, l) = ec(b, hh, s, l) / sumc(b, hh, s));
      auto reset = [&] {
        std::fill(mx.data(), mx.data() + R, -INFINITY);
        std::fill(sum.data(), sum.data() + R, 0.0f);
        std::fill(mxc.data(), mxc.data() + R, -INFINITY);
        std::fill(sumc.data(), sumc.data() + R, 0.0f);
      };
      thrust::device_vector<float> dx(x.data(), x.data() + n), dy(static_cast<std::size_t>(n));
      std::vector<float> hy(static_cast<std::size_t>(n));
      auto base = [&] {
        thrust::for_each(thrust::device, thrust::counting_iterator<std::int64_t>(0),
                         thrust::counting_iterator<std::int64_t>(R),
                         softmax_rows{thrust::raw_pointer_cast(dx.data()),
                                      thrust::raw_pointer_cast(dy.data()), L});
      };
      auto pd = wp::distribute(smap, wp::grid_shape{1, 1, 1, 1}, one, dev);
      auto pc = wp::distribute(cmap, wp::grid_shape{1, 1, 1, 1}, one);
      // Timed rounds repeat execute() on the scattered values: the row sums accumulate (the
      // same work each round); the result is checked on a fresh scatter afterwards.
      reset();
      pd.scatter();
      pc.scatter();
      std::vector<double> tm, tb, tc;
      for (int r = -1; r < reps; ++r) {
        const double a = seconds([&] { pd.execute(); });
        const double bb = seconds(base);
        const double cc = seconds([&] { pc.execute(); });
        if (r >= 0) tm.push_back(a), tb.push_back(bb), tc.push_back(cc);
      }
      note_copies("softmax", pd);
      reset();
      pd.run();
      pc.run();
      thrust::copy(dy.begin(), dy.end(), hy.begin());
      char sz[96];
      std::snprintf(sz, sizeof sz, "softmax (%lld,%lld,%lld,%lld)", (long long)B, (long long)H,
                    (long long)S, (long long)L);
      rows.push_back({sz, "hand-written Thrust kernel", median(tm), median(tb),
                      max_rel_diff(y.data(), hy.data(), n)});
      rows.push_back({sz, "CPU backend execute()", median(tm), median(tc),
                      max_rel_diff(y.data(), yc.data(), n)});
    }
    std::printf("\n  %-32s %-32s %10s %10s %8s %12s\n", "kernel (map on the device)", "baseline",
                "map s", "base s", "ratio", "max rel diff");
    for (const auto& r : rows) {
      std::printf("  %-32s %-32s %10.4f %10.4f %8.2f %12.2e\n", r.kernel.c_str(),
                  r.baseline.c_str(), r.map_s, r.base_s, r.base_s / r.map_s, r.diff);
      out.row({"bench_device", sys, csv_writer::cell(P), r.kernel, r.kernel, "map execute()",
               csv_writer::cell(r.map_s), r.baseline, csv_writer::cell(r.base_s),
               csv_writer::cell(r.base_s / r.map_s), csv_writer::cell(r.diff)});
    }
  }

  workpart_bench::quiet_barrier(ctx.comm());

  // ---- distributed plans at this P, seconds per phase (the slowest rank's)
  {
    const std::int64_t n = nmat;
    wp::array<float, 2> A("A", {n, n}), B("B", {n, n}), C("C", {n, n});
    if (ctx.is_root())
      for (std::int64_t e = 0; e < n * n; ++e) {
        A.data()[e] = float((e * 7) % 13) * 0.1f - 0.6f;
        B.data()[e] = float((e * 5) % 11) * 0.1f - 0.5f;
        C.data()[e] = 0;
      }
    auto mm = wp::map("mm", wp::space(n, n, n), C(i, j) += A(i, k) * B(k, j));
    if (ctx.is_root())
      std::printf("\n  distributed matmul %lld^3 float32 at P = %d, from root (plan.run()):\n",
                  (long long)n, P);
    for (const wp::grid_shape& g :
         {wp::grid_shape{P, 1, 1}, wp::grid_shape{1, P, 1}, wp::grid_shape{1, 1, P}}) {
      auto plan = wp::distribute(mm, g, ctx, dev);
      std::vector<double> ts, te, tg;
      for (int r = -1; r < reps; ++r) {
        const auto before = plan.stats();
        plan.run();
        const auto after = plan.stats();
        auto worst = [&](double v) { return workpart_bench::slowest(v, ctx.comm()); };
        const double s = worst(after.scatter.seconds - before.scatter.seconds);
        const double e = worst(after.execute.seconds - before.execute.seconds);
        const double gg = worst(after.gather.seconds - before.gather.seconds);
        if (r >= 0) ts.push_back(s), te.push_back(e), tg.push_back(gg);
      }
      if (ctx.is_root()) {
        std::printf("    grid %-10s scatter %8.4f s  execute %8.4f s  gather %8.4f s\n",
                    g.str().c_str(), median(ts), median(te), median(tg));
        out.row({"bench_device", sys, csv_writer::cell(P), "matmul distributed", g.str(),
                 "scatter+execute+gather", csv_writer::cell(median(ts) + median(te) + median(tg)),
                 "", "", "", ""});
      }
    }
  }
  return 0;
}
