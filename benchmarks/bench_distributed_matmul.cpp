// Benchmark: distributed matmul C(i,j) += A(i,k) * B(k,j) in float64, planned with
// wp::distribute over several process grids and run with plan.run() (scatter from root,
// execute, gather to root), against a one-process Eigen GEMM on root.
//
//   mpirun -np P bench_distributed_matmul [--sizes=2048,4096] [--reps=N] [--warmup=N] [--explain]
//
// For every grid that fits P among (1,1,1), (P,1,1), (1,P,1), (1,1,P) and, at P = 4, (2,2,1)
// and (1,2,2), the plan is built once ("plan" seconds: the slowest rank), then plan.run() is
// timed `reps` times. Each timed round runs, in turn: the Eigen GEMM on root alone (the other
// ranks wait without spinning), then every grid's plan.run() (the grid order rotates from
// round to round). One untimed warm-up round comes first (page faults, thread pools, MPI
// connections). C is re-zeroed on root before every run, outside the timed region.
//
// Per grid the table shows the medians over the rounds of:
//   scatter / execute / gather: the slowest rank's seconds in that phase (the max over ranks
//     of this run's plan.stats() deltas, via MPI_Reduce): the slowest rank decides;
//   total: the slowest rank's wall time for the whole plan.run();
//   scatter MB / gather MB: bytes moved in the phase, the sum over ranks of bytes received
//     (1 MB = 1e6 B); "=" when it equals the plan's prediction (predicted_total), "!" if not;
//   eff = t_eigen / (P * total) and eff(exec) = t_eigen / (P * execute), with P the number of
//     processes of the run (mpirun -np P; idle ranks of a smaller grid count too) and t_eigen
//     the median one-process Eigen GEMM on root timed in the same rounds;
//   max rel diff: max |C - C_eigen| / max |C_eigen| on root, the worst over all runs.
//
// The phases are not separated by barriers: a rank that finishes its scatter early starts its
// GEMM. With more processes than cores (P = 4 on 2 vCPUs) such ranks take the cores from those
// still receiving, so one rank's scatter can stretch while its execute shrinks (e.g. ranks 0 and
// 2 of grid (1,2,2), which hold the Bcast of A); the per-phase maxima then add up to more than
// the total. "total" is the figure to compare; the phases show where the time goes.
//
// Build (one line):
//   g++ -std=c++20 -O3 -DNDEBUG -fopenmp -DEIGEN_USE_BLAS -Wall -Wextra -Werror
//       -Iinclude -I/usr/include/eigen3 $(mpicxx --showme:compile)
//       benchmarks/bench_distributed_matmul.cpp -o bench_distributed_matmul
//       $(mpicxx --showme:link) -lboost_mpi -lboost_serialization -lopenblas
// Run with one thread per process, e.g.
//   OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpirun -np 4 ./bench_distributed_matmul

// GCC 12 at -O3 reports a false -Wrestrict inside std::string (GCC PR 105329/105651) where
// the library builds text with `"i" + std::to_string(d)` (core/affine.hpp); silenced for the
// library's headers only, so that this file builds with -Wall -Wextra -Werror.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#include <workpart/workpart.hpp>

#include "bench_common.hpp"
#pragma GCC diagnostic pop

#include <mpi.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

// OpenBLAS's thread count, where OpenBLAS is the BLAS linked in (weak: absent elsewhere).
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace wp = workpart;

namespace {

using namespace workpart_bench;

struct options {
  std::vector<std::int64_t> sizes{2048, 4096};
  int reps = 3;
  int warmup = 1;
  bool explain = false;
};

[[noreturn]] void usage(const char* prog, int rc, bool root) {
  if (root)
    std::printf(
        "usage: mpirun -np P %s [--sizes=2048,4096] [--reps=N] [--warmup=N] [--explain]\n"
        "  --sizes   square sizes n (C += A * B, all n x n, float64)\n"
        "  --reps    timed rounds (median reported); default 3\n"
        "  --warmup  untimed rounds first; default 1\n"
        "  --explain print plan.explain() of every grid\n",
        prog);
  MPI_Finalize();
  std::exit(rc);
}

options parse(int argc, char** argv, bool root) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto value = [&](const char* key) { return option_value(s, key); };
    if (const char* v = value("--sizes=")) {
      o.sizes = parse_sizes(v);
      if (o.sizes.empty()) usage(argv[0], 2, root);
    } else if (const char* r = value("--reps=")) {
      o.reps = std::atoi(r);
      if (o.reps <= 0) usage(argv[0], 2, root);
    } else if (const char* w = value("--warmup=")) {
      o.warmup = std::atoi(w);
      if (o.warmup < 0) usage(argv[0], 2, root);
    } else if (s == "--explain") {
      o.explain = true;
    } else if (s == "--help" || s == "-h") {
      usage(argv[0], 0, root);
    } else {
      if (root) std::fprintf(stderr, "unknown argument '%s'\n", s.c_str());
      usage(argv[0], 2, root);
    }
  }
  return o;
}

/// A barrier whose waiting ranks sleep instead of spinning: while root runs the one-process
/// GEMM alone, the other ranks must not take CPU time from it (MPI_Barrier busy-polls).
void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  int done = 0;
  for (;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const timespec pause{0, 200000};  // 0.2 ms
    nanosleep(&pause, nullptr);
  }
}

void eigen_gemm(std::int64_t n, const double* a, const double* b, double* c) {
  using mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const mat> am(a, n, n), bm(b, n, n);
  Eigen::Map<mat> cm(c, n, n);
  cm.noalias() += am * bm;
}

/// The grids to run with P processes, without repeats (at P = 1 they are all (1,1,1)).
std::vector<wp::grid_shape> grids_for(int P) {
  const wp::index_t p = P;
  std::vector<wp::grid_shape> all{{1, 1, 1}, {p, 1, 1}, {1, p, 1}, {1, 1, p}};
  if (P == 4) {
    all.push_back({2, 2, 1});
    all.push_back({1, 2, 2});
  }
  std::vector<wp::grid_shape> out;
  for (const auto& g : all)
    if (g.product() <= P && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " + ") + x;
  return s.empty() ? "-" : s;
}

struct grid_result {
  wp::grid_shape grid;
  double plan_seconds = 0;
  std::vector<double> scatter, execute, gather, total;  // per round, max over ranks
  long long bytes[3] = {0, 0, 0};                       // last round, sum over ranks (received)
  bool bytes_steady = true;                             // the same in every round
  long long predicted_scatter = 0, predicted_gather = 0;
  double max_rel_diff = 0;
  std::string collectives;
};

void bench_size(const wp::context& ctx, std::int64_t n, const options& opt) {
  const bool root = ctx.is_root();
  const int P = ctx.size();
  const MPI_Comm comm = ctx.comm();
  const std::size_t nn = static_cast<std::size_t>(n * n);

  // Root holds the data; the other ranks pass nullptr.
  std::vector<double> a, b, c, c_ref;
  if (root) {
    a.resize(nn);
    b.resize(nn);
    c.assign(nn, 0.0);
    c_ref.assign(nn, 0.0);
    std::mt19937_64 rng(42 + static_cast<std::uint64_t>(n));
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& v : a) v = dist(rng);
    for (auto& v : b) v = dist(rng);
  }
  wp::array<double, 2> A("A", {n, n}, root ? a.data() : nullptr);
  wp::array<double, 2> B("B", {n, n}, root ? b.data() : nullptr);
  wp::array<double, 2> C("C", {n, n}, root ? c.data() : nullptr);
  auto [i, j, k] = wp::indices<3>();
  const auto mm = wp::map("matmul", wp::space(n, n, n), C(i, j) += A(i, k) * B(k, j));

  // ---- the plans, each built once (timed: the slowest rank) ----
  using plan_t = decltype(wp::distribute(mm, wp::grid_shape{1, 1, 1}, ctx));
  const std::vector<wp::grid_shape> grids = grids_for(P);
  std::vector<std::unique_ptr<plan_t>> plans;
  std::vector<grid_result> res(grids.size());
  for (std::size_t g = 0; g < grids.size(); ++g) {
    quiet_barrier(comm);
    const double t0 = MPI_Wtime();
    plans.push_back(std::make_unique<plan_t>(wp::distribute(mm, grids[g], ctx)));
    const double dt = MPI_Wtime() - t0;
    double worst = 0;
    MPI_Reduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    res[g].grid = grids[g];
    res[g].plan_seconds = worst;
    res[g].predicted_scatter = plans[g]->predicted_total(true);
    res[g].predicted_gather = plans[g]->predicted_total(false);
    res[g].collectives = "A: " + join(plans[g]->collectives(A)) +
                         "; B: " + join(plans[g]->collectives(B)) +
                         "; C: " + join(plans[g]->collectives(C));
    if (plans[g]->runs_in_place())  // only root works: run() uses none of them, copies nothing
      res[g].collectives = "run() in place on root's arrays (stepwise: " + res[g].collectives + ")";
    if (opt.explain && root) std::printf("\n%s", plans[g]->explain().c_str());
  }

  double ref_max = 0;
  auto rel_diff = [&] {
    double d = 0;
    for (std::size_t e = 0; e < nn; ++e) d = std::max(d, std::abs(c[e] - c_ref[e]));
    return ref_max > 0 ? d / ref_max : d;
  };

  // ---- rounds: Eigen on root, then every grid (rotating order) ----
  std::vector<double> t_eigen;
  for (int round = -opt.warmup; round < opt.reps; ++round) {
    const bool timed = round >= 0;
    // One-process GEMM on root; the other ranks sleep in quiet_barrier meanwhile.
    if (root) std::fill(c_ref.begin(), c_ref.end(), 0.0);
    quiet_barrier(comm);
    if (root) {
      const double t0 = MPI_Wtime();
      eigen_gemm(n, a.data(), b.data(), c_ref.data());
      const double dt = MPI_Wtime() - t0;
      if (timed) t_eigen.push_back(dt);
      ref_max = 0;
      for (double x : c_ref) ref_max = std::max(ref_max, std::abs(x));
    }
    quiet_barrier(comm);

    for (std::size_t x = 0; x < grids.size(); ++x) {
      const std::size_t g = (x + std::size_t(std::max(round, 0))) % grids.size();
      plan_t& plan = *plans[g];
      if (root) std::fill(c.begin(), c.end(), 0.0);  // C += A*B: start from zero, untimed
      quiet_barrier(comm);
      const wp::plan_stats s0 = plan.stats();
      const double t0 = MPI_Wtime();
      plan.run();
      const double t1 = MPI_Wtime();
      const wp::plan_stats s1 = plan.stats();
      // The slowest rank's seconds per phase and in total; bytes received summed over ranks.
      const double mine[4] = {s1.scatter.seconds - s0.scatter.seconds,
                              s1.execute.seconds - s0.execute.seconds,
                              s1.gather.seconds - s0.gather.seconds, t1 - t0};
      const long long got[3] = {
          static_cast<long long>(s1.scatter.bytes_received - s0.scatter.bytes_received),
          static_cast<long long>(s1.execute.bytes_received - s0.execute.bytes_received),
          static_cast<long long>(s1.gather.bytes_received - s0.gather.bytes_received)};
      double worst[4] = {0, 0, 0, 0};
      long long sum[3] = {0, 0, 0};
      MPI_Reduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, 0, comm);
      MPI_Reduce(got, sum, 3, MPI_LONG_LONG, MPI_SUM, 0, comm);
      if (!root) continue;
      grid_result& r = res[g];
      r.max_rel_diff = std::max(r.max_rel_diff, rel_diff());
      if (round > -opt.warmup)
        for (int p = 0; p < 3; ++p) r.bytes_steady = r.bytes_steady && r.bytes[p] == sum[p];
      for (int p = 0; p < 3; ++p) r.bytes[p] = sum[p];
      if (!timed) continue;
      r.scatter.push_back(worst[0]);
      r.execute.push_back(worst[1]);
      r.gather.push_back(worst[2]);
      r.total.push_back(worst[3]);
    }
  }

  if (!root) return;
  const double te = median(t_eigen);
  const double flop = 2.0 * double(n) * double(n) * double(n);
  const auto [emin, emax] = std::minmax_element(t_eigen.begin(), t_eigen.end());
  std::printf("\nfloat64  n = %lld  P = %d  (C += A*B; %d timed round(s), median; %d warm-up)\n",
              static_cast<long long>(n), P, opt.reps, opt.warmup);
  std::printf("  one-process Eigen GEMM on root: %.3f s (min %.3f, max %.3f), %.1f GFLOP/s\n", te,
              *emin, *emax, flop / te * 1e-9);
  std::printf("  %-9s %7s %9s %9s %9s %9s %12s %12s %6s %9s %12s\n", "grid", "plan s", "scatter s",
              "execute s", "gather s", "total s", "scatter MB", "gather MB", "eff", "eff(exec)",
              "max rel diff");
  for (const auto& r : res) {
    const double ts = median(r.scatter), tx = median(r.execute), tg = median(r.gather),
                 tt = median(r.total);
    char smb[32], gmb[32];
    std::snprintf(smb, sizeof smb, "%.1f %c", double(r.bytes[0]) * 1e-6,
                  r.bytes[0] == r.predicted_scatter ? '=' : '!');
    std::snprintf(gmb, sizeof gmb, "%.1f %c", double(r.bytes[2]) * 1e-6,
                  r.bytes[2] == r.predicted_gather ? '=' : '!');
    std::printf("  %-9s %7.3f %9.3f %9.3f %9.3f %9.3f %12s %12s %6.3f %9.3f %12.2e\n",
                r.grid.str().c_str(), r.plan_seconds, ts, tx, tg, tt, smb, gmb, te / (P * tt),
                te / (P * tx), r.max_rel_diff);
  }
  for (const auto& r : res) {
    if (r.bytes[1] != 0) {
      std::printf("  note: grid %s moved %lld B in execute (expected none)\n", r.grid.str().c_str(),
                  r.bytes[1]);
    }
    if (r.bytes[0] != r.predicted_scatter || r.bytes[2] != r.predicted_gather) {
      std::printf("  note: grid %s measured bytes differ from the prediction: scatter %lld vs %lld, "
                  "gather %lld vs %lld\n",
                  r.grid.str().c_str(), r.bytes[0], r.predicted_scatter, r.bytes[2],
                  r.predicted_gather);
    }
    if (!r.bytes_steady) {
      std::printf("  note: grid %s moved different byte counts in different rounds\n",
                  r.grid.str().c_str());
    }
  }
  std::printf("  collectives per grid:\n");
  for (const auto& r : res) std::printf("    %-9s %s\n", r.grid.str().c_str(), r.collectives.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const bool root = ctx.is_root();
  const options opt = parse(argc, argv, root);
  const int P = ctx.size();
  if (root) {
    std::printf("bench_distributed_matmul: C(i,j) += A(i,k)*B(k,j), float64, wp::distribute + "
                "plan.run() vs one-process Eigen on root\n");
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string first = lib;
    first = first.substr(0, first.find_first_of(",\n"));
    std::printf("  MPI: %s; P = %d processes\n", first.c_str(), P);
    auto env = [](const char* v) {
      const char* s = std::getenv(v);
      return s ? s : "(unset)";
    };
    std::printf("  OMP_NUM_THREADS=%s OPENBLAS_NUM_THREADS=%s", env("OMP_NUM_THREADS"),
                env("OPENBLAS_NUM_THREADS"));
    if (openblas_get_num_threads) std::printf("; OpenBLAS threads: %d", openblas_get_num_threads());
#if defined(_OPENMP)
    std::printf("; OpenMP max threads: %d", omp_get_max_threads());
#endif
    std::printf("\n");
#if defined(EIGEN_USE_BLAS)
    std::printf("  Eigen %d.%d.%d with EIGEN_USE_BLAS (GEMMs, the plan's local ones included, call "
                "the BLAS)\n",
                EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
#else
    std::printf("  Eigen %d.%d.%d with its own kernels (no EIGEN_USE_BLAS)\n", EIGEN_WORLD_VERSION,
                EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
#endif
    const unsigned cpus = std::thread::hardware_concurrency();
    std::printf("  machine: %u vCPU(s) seen by this process", cpus);
    if (cpus > 0 && unsigned(P) > cpus)
      std::printf("; P = %d is oversubscribed: efficiency above %u/P = %.2f cannot be expected", P,
                  cpus, double(cpus) / P);
    std::printf("\n  (the VM this was written on has 2 vCPUs: P = 4 there is oversubscribed and "
                "efficiency above 2/P cannot be expected)\n");
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {  // the machine may be shared
      char buf[128] = {};
      if (std::fgets(buf, sizeof buf, f)) std::printf("  load average at start: %s", buf);
      std::fclose(f);
    }
    std::printf("  eff = t_eigen / (P * total), eff(exec) = t_eigen / (P * execute); phase seconds "
                "are the slowest rank's; MB = 1e6 B received, summed over ranks (= : as predicted)\n");
    std::fflush(stdout);
  }
  try {
    for (const std::int64_t n : opt.sizes) bench_size(ctx, n, opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", ctx.rank(), e.what());
    MPI_Abort(ctx.comm(), 1);
  }
  return 0;
}
