// The device backend (wp::backend::cuda). Built twice: with g++ against workpart::device_omp
// (Thrust's OpenMP device system: the same kernels, device buffers and dispatch as under
// CUDA, on the CPU; every machine runs it at 1-4 ranks), and with nvcc against workpart::cuda
// (tests/cuda: run on a GPU; without one it exits 77, which CTest counts as skipped). Every
// result is checked against a plain serial loop on root, with uneven extents; the matmul
// also against the CPU backend's. Under nvcc the same executable also holds the other way
// round ([cuda_refusal], run by CTest with WORKPART_TEST_CUDA_REFUSAL=1): where no GPU is, a
// CUDA-built program runs its CPU plans and refuses backend::cuda on every rank; with a GPU,
// that one is the skip.
#include "../mpi/mpi_test_support.hpp"
#include "out_of_memory_case.hpp"

#include <cstdio>
#include <cstdlib>

using namespace mpitest;
using Catch::Matchers::Contains;

namespace {

static_assert(wp::detail::has_device_system,
              "this test is built against workpart::device_omp (g++) or workpart::cuda (nvcc)");
constexpr bool on_cuda = WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA;

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
// Before MPI starts: the device tests need a device, the refusal test needs none; what the
// machine lacks is a skip (exit 77), never a pass.
const bool g_have_device = [] {
  int n = 0;
  const cudaError_t s = cudaGetDeviceCount(&n);
  const bool have = s == cudaSuccess && n > 0;
  const char* refusal = std::getenv("WORKPART_TEST_CUDA_REFUSAL");
  if (refusal != nullptr && refusal[0] == '1') {
    if (have) {
      std::printf(
          "SKIPPED: this machine has %d CUDA device(s); the refusal is tested where there is "
          "none\n",
          n);
      std::fflush(stdout);
      std::exit(77);
    }
  } else if (!have) {
    std::printf("SKIPPED: no CUDA device on this machine (cudaGetDeviceCount: %s)\n",
                s != cudaSuccess ? cudaGetErrorName(s) : "0 devices");
    std::fflush(stdout);
    std::exit(77);
  }
  return have;
}();
#endif

const wp::options device{.backend = wp::backend::cuda};

struct counts {
  long kernels, contractions;
};
counts now() {
  const auto& c = wp::detail::counters();
  return {c.device_kernels.load(), c.device_contractions.load()};
}

/// A grid of two factors of p over the first two dimensions (p = 4: 2 x 2), else p x 1.
std::vector<index_t> two_way(int p, int rank) {
  std::vector<index_t> g(std::size_t(rank), 1);
  if (p % 2 == 0 && p > 2) {
    g[0] = 2;
    g[1] = p / 2;
  } else {
    g[0] = p;
  }
  return g;
}

double f_a(index_t x, index_t y) { return double((x * 7 + y * 3) % 11) - 5.0; }
double f_b(index_t x, index_t y) { return double((x * 5 + y * 2) % 9) * 0.5 - 2.0; }

}  // namespace

TEST_CASE("device backend: matmul schedules against a plain loop and the CPU backend", "[device]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t M = 13, N = 11, K = 7;
  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N}), Cc("Cc", {M, N});
  fill2(A, f_a);
  fill2(B, f_b);
  std::vector<double> want(std::size_t(M * N), 0.0);
  for (index_t i = 0; i < M; ++i)
    for (index_t j = 0; j < N; ++j)
      for (index_t k = 0; k < K; ++k) want[std::size_t(i * N + j)] += f_a(i, k) * f_b(k, j);
  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("mm", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
  auto mc = wp::map("mc", wp::space(M, N, K), Cc(i, j) += A(i, k) * B(k, j));
  for (const auto& g : {std::vector<index_t>{p, 1, 1}, std::vector<index_t>{1, p, 1},
                        std::vector<index_t>{1, 1, p}, two_way(p, 3)}) {
    const wp::grid_shape grid(g);
    INFO("grid " << grid.str());
    fill2(C, [](index_t, index_t) { return 0.0; });
    fill2(Cc, [](index_t, index_t) { return 0.0; });
    const counts before = now();
    auto plan = wp::distribute(mm, grid, ctx, device);
    plan.run();
    const counts after = now();
    wp::distribute(mc, grid, ctx).run();
    REQUIRE(compare_on_root(ctx.comm(), C, want, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), Cc, want, 1e-12) == "");
    // recognised as a contraction: cuBLAS under CUDA, the kernel in the Thrust-OpenMP build
    REQUIRE(after.contractions - before.contractions == 1);
    REQUIRE(after.kernels - before.kernels == (on_cuda ? 0 : 1));
    REQUIRE_THAT(plan.explain(),
                 Contains("device gemm") && Contains(on_cuda ? "CUDA" : "OpenMP device system"));
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  }
}

TEST_CASE("device backend: broadcast add, row max and row sum", "[device]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t R = 9, L = 14;
  wp::array<float, 2> x("x", {R, L}), out("out", {R, L});
  wp::array<float, 1> bias("bias", {L}), rmax("rmax", {R}), rsum("rsum", {R});
  fill2(x, [](index_t a, index_t b) { return float((a * 13 + b * 7) % 17) - 8.0f; });
  fill1(bias, [](index_t b) { return float(b) * 0.25f; });
  std::vector<double> w_out, w_max(static_cast<std::size_t>(R)),
      w_sum(static_cast<std::size_t>(R), 0.0);
  for (index_t a = 0; a < R; ++a) {
    double mx = -1e300;
    for (index_t b = 0; b < L; ++b) {
      const double v = double((a * 13 + b * 7) % 17) - 8.0;
      w_out.push_back(v + double(b) * 0.25);
      mx = std::max(mx, v);
      w_sum[std::size_t(a)] += v;
    }
    w_max[std::size_t(a)] = mx;
  }
  auto [i, j] = wp::indices<2>();
  auto add = wp::map("bias", wp::space(R, L), out(i, j) = x(i, j) + bias(j));
  auto red = wp::map("rows", wp::space(R, L), wp::max_into(rmax(i), x(i, j)), rsum(i) += x(i, j));
  for (const wp::grid_shape& g :
       {wp::grid_shape{p, 1}, wp::grid_shape{1, p}, wp::grid_shape(two_way(p, 2))}) {
    INFO("grid " << g.str());
    fill1(rmax, [](index_t) { return -1e30f; });
    fill1(rsum, [](index_t) { return 0.0f; });
    wp::distribute(add, g, ctx, device).run();
    auto plan = wp::distribute(red, g, ctx, device);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), out, w_out, 1e-6) == "");
    REQUIRE(compare_on_root(ctx.comm(), rmax, w_max) == "");
    REQUIRE(compare_on_root(ctx.comm(), rsum, w_sum, 1e-6) == "");
    // the reduced index runs in order in each device thread (a segmented reduction)
    REQUIRE_THAT(plan.explain(),
                 Contains("in order over i1 (a reduction per thread, written once)"));
  }
}

TEST_CASE("device backend: softmax as one map and as a program of three", "[device]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t B = 3, S = 5, L = 7;
  wp::array<double, 3> x("x", {B, S, L}), e("e", {B, S, L}), y("y", {B, S, L}), y3("y3", {B, S, L});
  wp::array<double, 2> mx("mx", {B, S}), sm("sm", {B, S}), mx3("mx3", {B, S}), sm3("sm3", {B, S});
  fill3(x, [](index_t a, index_t b, index_t c) {
    return double((a * 11 + b * 5 + c * 3) % 13) * 0.3 - 1.5;
  });
  std::vector<double> want;
  for (index_t a = 0; a < B; ++a)
    for (index_t b = 0; b < S; ++b) {
      double m = -1e300, z = 0;
      for (index_t c = 0; c < L; ++c)
        m = std::max(m, double((a * 11 + b * 5 + c * 3) % 13) * 0.3 - 1.5);
      for (index_t c = 0; c < L; ++c)
        z += std::exp(double((a * 11 + b * 5 + c * 3) % 13) * 0.3 - 1.5 - m);
      for (index_t c = 0; c < L; ++c)
        want.push_back(std::exp(double((a * 11 + b * 5 + c * 3) % 13) * 0.3 - 1.5 - m) / z);
    }
  auto [b, s, l] = wp::indices<3>();
  auto one = wp::map("softmax", wp::space(B, S, L), wp::max_into(mx(b, s), x(b, s, l)),
                     e(b, s, l) = wp::exp(x(b, s, l) - mx(b, s)), sm(b, s) += e(b, s, l),
                     y(b, s, l) = e(b, s, l) / sm(b, s));
  auto m1 = wp::map("max", wp::space(B, S, L), wp::max_into(mx3(b, s), x(b, s, l)));
  auto m2 = wp::map("expsum", wp::space(B, S, L), sm3(b, s) += wp::exp(x(b, s, l) - mx3(b, s)));
  auto m3 = wp::map("norm", wp::space(B, S, L),
                    y3(b, s, l) = wp::exp(x(b, s, l) - mx3(b, s)) / sm3(b, s));
  for (const wp::grid_shape& g : {wp::grid_shape{p, 1, 1}, wp::grid_shape(two_way(p, 3))}) {
    INFO("grid " << g.str());
    auto reset = [&] {
      fill2(mx, [](index_t, index_t) { return -1e300; });
      fill2(mx3, [](index_t, index_t) { return -1e300; });
      fill2(sm, [](index_t, index_t) { return 0.0; });
      fill2(sm3, [](index_t, index_t) { return 0.0; });
    };
    reset();
    wp::distribute(one, g, ctx, device).run();
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
    wp::schedule sc;
    sc.set(m1, g).set(m2, g).set(m3, g);
    auto prog = wp::distribute(wp::program(m1, m2, m3), sc, ctx, device);
    prog.run();
    REQUIRE(compare_on_root(ctx.comm(), y3, want, 1e-12) == "");
  }
  // the last axis split: the row max and sum are combined across ranks (Reduce/Allreduce)
  {
    wp::schedule sc;
    const wp::grid_shape g{1, 1, p};
    sc.set(m1, g).set(m2, g).set(m3, g);
    fill2(mx3, [](index_t, index_t) { return -1e300; });
    fill2(sm3, [](index_t, index_t) { return 0.0; });
    wp::distribute(wp::program(m1, m2, m3), sc, ctx, device).run();
    REQUIRE(compare_on_root(ctx.comm(), y3, want, 1e-12) == "");
  }
}

TEST_CASE("device backend: CSR SpMV with data-dependent ranges and indirect reads", "[device]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t rows = 17, cols = 12;
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int64_t> cidx;
  std::vector<double> vals;
  for (index_t r = 0; r < rows; ++r) {
    const index_t len = (r * r) % 5 + (r % 4 == 0 ? 4 : 0);  // uneven, some empty
    for (index_t t = 0; t < len; ++t) {
      cidx.push_back((r * 3 + t * 5) % cols);
      vals.push_back(double(r + 1) * 0.5 - double(t));
    }
    ptr.push_back(std::int64_t(cidx.size()));
  }
  const index_t nnz = index_t(vals.size());
  wp::array<std::int64_t, 1> row("row", {rows + 1}), col("col", {nnz});
  wp::array<double, 1> val("val", {nnz}), x("x", {cols}), y("y", {rows});
  fill1(row, [&](index_t t) { return ptr[std::size_t(t)]; });
  fill1(col, [&](index_t t) { return cidx[std::size_t(t)]; });
  fill1(val, [&](index_t t) { return vals[std::size_t(t)]; });
  fill1(x, [](index_t t) { return double(t % 7) - 2.0; });
  std::vector<double> want(std::size_t(rows), 0.0);
  for (index_t r = 0; r < rows; ++r)
    for (std::int64_t t = ptr[std::size_t(r)]; t < ptr[std::size_t(r) + 1]; ++t)
      want[std::size_t(r)] += vals[std::size_t(t)] * (double(cidx[std::size_t(t)] % 7) - 2.0);
  auto [i, jj] = wp::indices<2>();
  auto spmv = wp::map("spmv", wp::space(rows),
                      y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj))));
  auto plan = wp::distribute(spmv, wp::grid_shape{p}, ctx, device);
  plan.run();
  REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");

  SECTION("an indirect subscript out of bounds is a shape_error on every rank") {
    if (ctx.rank() == 0) col.data()[nnz - 1] = cols + 3;  // inside the plan's ranges, outside x
    const std::string msg = what_of([&] { plan.run(); });
    REQUIRE_THAT(msg, Contains("shape_error") && Contains("'spmv'") && Contains("x(") &&
                          Contains(std::to_string(cols + 3)) &&
                          Contains("outside [0, " + std::to_string(cols) + ")"));
    REQUIRE(all_problems(ctx.comm(), msg.empty() ? "no error" : "") == "");
  }
}

TEST_CASE("device backend: a scatter-add dE(tok(b, s), d) += g (an embedding's gradient)",
          "[device][scatter]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t B = 5, S = 6, D = 7, V = 9;  // tokens repeat; 8 never occurs
  wp::array<std::int32_t, 2> tok("tok", {B, S});
  wp::array<double, 3> g("g", {B, S, D});
  wp::array<double, 2> dE("dE", {V, D});
  auto tf = [](index_t a, index_t b) { return std::int32_t((a * 3 + b * b) % 8); };
  auto gf = [](index_t a, index_t b, index_t c) { return double((a * 5 + b * 3 + c) % 11) - 5.0; };
  fill2(tok, tf);
  fill3(g, gf);
  std::vector<double> want(std::size_t(V * D), 1.0);
  for (index_t a = 0; a < B; ++a)
    for (index_t b = 0; b < S; ++b)
      for (index_t c = 0; c < D; ++c) want[std::size_t(tf(a, b) * D + c)] += gf(a, b, c);
  auto [i, j, k] = wp::indices<3>();
  auto m = wp::map("demb", wp::space(B, S, D), dE(tok(i, j), k) += g(i, j, k));
  for (const wp::grid_shape& gr :
       {wp::grid_shape{p, 1, 1}, wp::grid_shape{1, 1, p}, wp::grid_shape{1, p, 1}}) {
    INFO("grid " << gr.str());
    fill2(dE, [](index_t, index_t) { return 1.0; });
    auto plan = wp::distribute(m, gr, ctx, device);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), dE, want, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    // a thread per column d (the left side's affine axis), tokens in order in each
    REQUIRE_THAT(plan.explain(),
                 Contains("device kernel: a thread per point of i2, in order over i0, i1"));
  }
  SECTION("a token outside the table is a shape_error on every rank") {
    if (ctx.rank() == 0) tok.data()[3] = std::int32_t(V);
    auto plan = wp::distribute(m, wp::grid_shape{p, 1, 1}, ctx, device);
    const std::string msg = what_of([&] { plan.run(); });
    REQUIRE_THAT(msg, Contains("shape_error") && Contains("'demb'") &&
                          Contains("outside [0, " + std::to_string(V) + ")"));
    REQUIRE(all_problems(ctx.comm(), msg.empty() ? "no error" : "") == "");
  }
}

TEST_CASE("device backend: local() after a reduce-scatter shows only combined values",
          "[device][local]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size(), me = ctx.rank();
  const index_t I = 11, K = 5;
  wp::array<double, 2> x("x", {I, K});
  wp::array<double, 1> w("w", {K}), t("t", {I}), y("y", {I});
  auto xf = [](index_t a, index_t b) { return double((a * 3 + b * 7) % 9) - 4.0; };
  fill2(x, xf);
  fill1(w, [](index_t b) { return double(b % 4) - 1.5; });
  std::vector<double> tw(std::size_t(I), 0.0);
  for (index_t a = 0; a < I; ++a)
    for (index_t b = 0; b < K; ++b) tw[std::size_t(a)] += xf(a, b) * (double(b % 4) - 1.5);
  auto [i, k] = wp::indices<2>();
  auto prog = wp::program(wp::map("t0", wp::space(I), t(i) = 0.0),
                          wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k)),
                          wp::map("f", wp::space(I), y(i) = t(i) * t(i)));
  wp::schedule s;
  s.set("t0", wp::grid_shape{index_t(p)});
  s.set("matvec", wp::grid_shape{1, index_t(p)});  // k split: partials of all of t
  s.set("f", wp::grid_shape{index_t(p)});          // read by rows: a reduce-scatter
  auto plan = wp::distribute(prog, s, ctx, device);
  plan.run();
  const auto lb = plan.local(t);
  const block want = block_of(I, p, me);  // the reader's rows: this rank's combined part
  std::string problems;
  if (lb.empty() || lb.offset[0] != want.start || lb.extent[0] != want.size) {
    problems =
        "local(t) is [" + std::to_string(lb.offset[0]) + ", +" + std::to_string(lb.extent[0]) + ")";
  } else {
    for (index_t a = want.start; a < want.end(); ++a)
      if (std::abs(lb({a}) - tw[std::size_t(a)]) > 1e-12)
        problems += "t(" + std::to_string(a) + ") ";
  }
  REQUIRE(all_problems(ctx.comm(), problems) == "");
  if (p > 1) REQUIRE_THAT(plan.explain(), Contains("reduce-scatter(sum)"));
}

TEST_CASE("device backend: a rank out of memory fails every rank alike, nothing hangs",
          "[device][memory]") {
  wp::context ctx(g_argc, g_argv);
  device_out_of_memory_case(ctx);
}

TEST_CASE("device backend: a Jacobi stencil iterated with halos, repeated execute()", "[device]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t n = 11, m = 9;
  const int iters = 4;
  wp::array<double, 2> u("u", {n, m}), un("un", {n, m});
  auto f0 = [](index_t a, index_t b) { return double((a * 13 + b * 5) % 11); };
  fill2(u, f0);
  fill2(un, f0);
  std::vector<double> cur(std::size_t(n * m)), nxt;
  for (index_t a = 0; a < n; ++a)
    for (index_t c = 0; c < m; ++c) cur[std::size_t(a * m + c)] = f0(a, c);
  for (int t = 0; t < iters; ++t) {
    nxt = cur;
    for (index_t a = 1; a < n - 1; ++a)
      for (index_t c = 1; c < m - 1; ++c)
        nxt[std::size_t(a * m + c)] =
            (cur[std::size_t((a - 1) * m + c)] + cur[std::size_t((a + 1) * m + c)] +
             cur[std::size_t(a * m + c - 1)] + cur[std::size_t(a * m + c + 1)]) *
            0.25;
    cur = nxt;
  }
  auto [i, j] = wp::indices<2>();
  auto step = wp::map("step", wp::space({1, n - 1}, {1, m - 1}),
                      un(i, j) = (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1)) * 0.25);
  auto copy = wp::map("copy", wp::space({1, n - 1}, {1, m - 1}), u(i, j) = un(i, j));
  for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape(two_way(p, 2))}) {
    INFO("grid " << g.str());
    fill2(u, f0);
    fill2(un, f0);
    wp::schedule s;
    s.set(step, g).set(copy, g);
    auto plan = wp::distribute(wp::program(step, copy), s, ctx, device);
    plan.scatter();
    for (int t = 0; t < iters; ++t) plan.execute();
    plan.gather(u);
    REQUIRE(compare_on_root(ctx.comm(), u, cur, 1e-12) == "");
  }
}

TEST_CASE("device backend: repeated execute() of one map accumulates on the device", "[device]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t n = 23;
  wp::array<std::int64_t, 1> x("x", {n}), acc("acc", {n});
  fill1(x, [](index_t t) { return t * 3 - 7; });
  fill1(acc, [](index_t t) { return t; });
  auto [i] = wp::indices<1>();
  auto plan = wp::distribute(wp::map("acc", wp::space(n), acc(i) += x(i) * 2), wp::grid_shape{p},
                             ctx, device);
  // this rank's block: balanced, the first n % p blocks one larger
  const index_t mine = (n / p + (ctx.rank() < n % p ? 1 : 0)) * index_t(sizeof(std::int64_t));
  plan.scatter();
  std::string moved;
  auto expect = [&](const char* when, index_t got, index_t want_bytes) {
    if (got != want_bytes && moved.empty())
      moved = std::string(when) + ": " + std::to_string(got) + " B, expected " +
              std::to_string(want_bytes);
  };
  for (int t = 0; t < 3; ++t) {
    plan.execute();
    // the first execute() copies the block of x and of acc up; later ones copy nothing
    expect("to the device after execute", plan.stats().execute.bytes_to_device, 2 * mine);
    expect("from the device after execute", plan.stats().execute.bytes_from_device, 0);
  }
  plan.gather();
  expect("from the device in gather", plan.stats().gather.bytes_from_device,
         mine);  // acc's block only
  REQUIRE(all_problems(ctx.comm(), moved) == "");
  std::vector<double> want;
  for (index_t t = 0; t < n; ++t) want.push_back(double(t + 3 * 2 * (t * 3 - 7)));
  REQUIRE(compare_on_root(ctx.comm(), acc, want) == "");
  // and the block seen through local() is the device's result
  auto lb = plan.local(acc);
  auto check_local = [&](int runs) {
    std::string bad;
    for (index_t t = 0; t < lb.extent[0]; ++t) {
      const index_t g = lb.offset[0] + t;
      if (lb.data[t * lb.stride[0]] != g + runs * 2 * (g * 3 - 7))
        bad = "local block differs at " + std::to_string(g) + " after " + std::to_string(runs) +
              " runs";
    }
    return bad;
  };
  REQUIRE(all_problems(ctx.comm(), check_local(3)) == "");
  // with a local() view out, every execute() brings the written block back, so the view held
  // from before shows the new values; what the caller writes through it goes up
  const auto before = plan.stats().execute;
  plan.execute();
  REQUIRE(all_problems(ctx.comm(), check_local(4)) == "");
  expect("from the device with a view out",
         plan.stats().execute.bytes_from_device - before.bytes_from_device, mine);
  REQUIRE(all_problems(ctx.comm(), moved) == "");
  for (index_t t = 0; t < lb.extent[0]; ++t)
    lb.data[t * lb.stride[0]] -= 2 * (lb.offset[0] + t) * 3 - 14;
  plan.execute();  // undoes one run through the view, then runs once more: four runs' worth
  REQUIRE(all_problems(ctx.comm(), check_local(4)) == "");
  // the CPU backend copies nothing to a device
  auto cpu =
      wp::distribute(wp::map("acc_cpu", wp::space(n), acc(i) += x(i) * 2), wp::grid_shape{p}, ctx);
  cpu.run();
  REQUIRE(cpu.stats().execute.bytes_to_device + cpu.stats().execute.bytes_from_device == 0);
}

TEST_CASE("device backend: a program's blocks cross to the host only where the plan moves them",
          "[device]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  const index_t B = 3, S = 5, L = 7;
  wp::array<double, 3> x("x", {B, S, L}), y("y", {B, S, L});
  wp::array<double, 2> mx("mx", {B, S}), sm("sm", {B, S});
  fill3(x, [](index_t a, index_t b, index_t c) {
    return double((a * 7 + b * 3 + c * 5) % 11) * 0.25;
  });
  auto [b, s, l] = wp::indices<3>();
  auto m1 = wp::map("max", wp::space(B, S, L), wp::max_into(mx(b, s), x(b, s, l)));
  auto m2 = wp::map("expsum", wp::space(B, S, L), sm(b, s) += wp::exp(x(b, s, l) - mx(b, s)));
  auto m3 =
      wp::map("norm", wp::space(B, S, L), y(b, s, l) = wp::exp(x(b, s, l) - mx(b, s)) / sm(b, s));
  std::vector<double> want;
  for (index_t a = 0; a < B; ++a)
    for (index_t q = 0; q < S; ++q) {
      double m = -1e300, z = 0;
      auto v = [&](index_t c) { return double((a * 7 + q * 3 + c * 5) % 11) * 0.25; };
      for (index_t c = 0; c < L; ++c) m = std::max(m, v(c));
      for (index_t c = 0; c < L; ++c) z += std::exp(v(c) - m);
      // three execute()s: sm accumulates three sums (+= combines with what sm holds)
      for (index_t c = 0; c < L; ++c) want.push_back(std::exp(v(c) - m) / (3 * z));
    }
  const index_t rows_bytes = B * S * index_t(sizeof(double));
  for (const bool split_last : {false, true}) {
    const wp::grid_shape g = split_last ? wp::grid_shape{1, 1, p} : wp::grid_shape{p, 1, 1};
    INFO("grid " << g.str());
    fill2(mx, [](index_t, index_t) { return -1e300; });
    fill2(sm, [](index_t, index_t) { return 0.0; });
    wp::schedule sc;
    sc.set(m1, g).set(m2, g).set(m3, g);
    auto plan = wp::distribute(wp::program(m1, m2, m3), sc, ctx, device);
    plan.scatter();
    plan.execute();
    std::string moved;
    for (int t = 0; t < 2; ++t) {
      const auto before = plan.stats().execute;
      plan.execute();
      const auto after = plan.stats().execute;
      const index_t up = after.bytes_to_device - before.bytes_to_device;
      const index_t down = after.bytes_from_device - before.bytes_from_device;
      // rows split: every array stays in the same layout, so a later execute() copies nothing
      // between host and device (mx and sm pass from map to map on the device). The last
      // axis split: only the partial maxima and sums come down, to be combined across ranks.
      const index_t want_down = split_last && p > 1 ? 2 * rows_bytes : 0;
      if (down != want_down || (!split_last && up != 0))
        moved = "execute " + std::to_string(t + 2) + ": " + std::to_string(up) + " B up, " +
                std::to_string(down) + " B down (expected " + std::to_string(want_down) +
                " B down)";
    }
    REQUIRE(all_problems(ctx.comm(), moved) == "");
    plan.gather();
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
  }
}

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
// Where no CUDA device is (CI, a laptop), a CUDA-built program still runs its CPU plans, and
// asking for the CUDA backend is the same wp::backend_error on every rank before any data
// moves, naming the call that found no device.
TEST_CASE("CUDA build without a device: CPU plans run, the CUDA backend is refused on every rank",
          "[cuda_refusal]") {
  REQUIRE_FALSE(g_have_device);
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
#endif
