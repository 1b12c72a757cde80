// Benchmark: distributed matmul C(i,j) += A(i,k) * B(k,j), float64 and float32, planned with
// wp::distribute over several process grids, against a one-process Eigen GEMM on root and,
// when the build found it, ScaLAPACK's p?gemm on the same processes (block size 128).
//
//   mpirun -np P bench_distributed_matmul [--sizes=2048,4096] [--types=f64,f32] [--reps=N]
//                                         [--warmup=N] [--nb=128] [--no-scalapack] [--explain]
//                                         [--csv FILE]
//
// For every grid that fits P among (1,1,1), (P,1,1), (1,P,1), (1,1,P) and, at P = 4, (2,2,1)
// and (1,2,2), the plan is built once ("plan" seconds: the slowest rank). Then come rounds
// (one untimed warm-up round first: page faults, thread pools, MPI connections). Each round
// runs, in an order that changes from round to round (a balanced Latin square): the Eigen GEMM
// on root alone (the other ranks sleep), every grid, and ScaLAPACK. Per grid:
//   total:   plan.run() — scatter from root, execute, gather to root — the slowest rank's wall
//            time; scatter / execute / gather are its phases (plan.stats() deltas, slowest rank);
//   compute: plan.execute() alone, the inputs already on the ranks (after the run above) —
//            the slowest rank's wall time. A grid that splits k leaves partial C blocks that
//            are summed in gather(): its compute figure omits that Reduce (marked "*").
// ScaLAPACK (process grid pr x pc, pr the largest divisor of P not above sqrt(P); all three
// matrices nb x nb block-cyclic):
//   total:   p?gemr2d of A, B and C from root (a 1x1 BLACS grid) to the pr x pc grid, p?gemm,
//            p?gemr2d of C back to root — the same work as plan.run() of C += A*B;
//   compute: p?gemm alone on the distributed matrices (its own SUMMA broadcasts included).
// Root's matrices are row-major; ScaLAPACK is column-major, so it computes C^T = B^T A^T on the
// same buffers (no transposition is timed or needed).
//
// Columns: vs SL(a) = ScaLAPACK compute / workpart compute, vs SL(b) = ScaLAPACK total /
// workpart total (above 1: workpart faster); eff = t_eigen / (P * total); MB = 1e6 B received,
// summed over ranks ("=" when equal to the plan's prediction); max rel diff = max|C - C_eigen| /
// max|C_eigen| on root over all runs (ScaLAPACK's result is checked the same way).
//
// The phases are not separated by barriers: with more processes than cores (P = 4 on 2 vCPUs)
// a rank that finishes its scatter early takes a core from one still receiving, so the phase
// maxima can add up to more than the total. "total" is the figure to compare.
//
// Run with one thread per process, e.g.
//   OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpirun -np 4 ./bench_distributed_matmul --csv m.csv

// GCC 12 at -O3 reports a false -Wrestrict inside std::string (GCC PR 105329/105651) where
// the library builds text with `"i" + std::to_string(d)` (core/affine.hpp); silenced for the
// library's headers only, so that this file builds with -Wall -Wextra -Werror.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#include <workpart/workpart.hpp>

#include "bench_common.hpp"
#pragma GCC diagnostic pop
#include "bench_mpi.hpp"

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
#include <type_traits>
#include <vector>

#if defined(WORKPART_HAVE_SCALAPACK)
// BLACS and ScaLAPACK (Debian libscalapack-openmpi-dev ships no C header). The PBLAS and
// redistribution routines take every argument by pointer; the trailing lengths are gfortran's
// hidden string lengths (ignored by the C-written PBLAS, correct for a Fortran one).
extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ctxt, const int* lld, int* info);
void pdgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc, std::size_t, std::size_t);
void psgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
             const float* alpha, const float* a, const int* ia, const int* ja, const int* desca,
             const float* b, const int* ib, const int* jb, const int* descb, const float* beta,
             float* c, const int* ic, const int* jc, const int* descc, std::size_t, std::size_t);
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja,
               const int* desca, double* b, const int* ib, const int* jb, const int* descb,
               const int* ctxt);
void psgemr2d_(const int* m, const int* n, const float* a, const int* ia, const int* ja,
               const int* desca, float* b, const int* ib, const int* jb, const int* descb,
               const int* ctxt);
}
#endif

namespace wp = workpart;

namespace {

using namespace workpart_bench;

struct options {
  std::vector<std::int64_t> sizes{2048, 4096};
  bool f64 = true, f32 = true;
  int reps = 3;
  int warmup = 1;
  int nb = 128;
  bool scalapack = true;
  bool explain = false;
  std::string csv;
};

[[noreturn]] void usage(const char* prog, int rc, bool root) {
  if (root)
    std::printf(
        "usage: mpirun -np P %s [--sizes=2048,4096] [--types=f64,f32] [--reps=N] [--warmup=N]\n"
        "           [--nb=128] [--no-scalapack] [--explain] [--csv FILE]\n"
        "  --sizes        square sizes n (C += A * B, all n x n)\n"
        "  --types        element types: f64, f32 or both; default both\n"
        "  --reps         timed rounds (median reported); default 3\n"
        "  --warmup       untimed rounds first; default 1\n"
        "  --nb           ScaLAPACK block size; default 128\n"
        "  --no-scalapack leave ScaLAPACK out (it is left out anyway when not built in)\n"
        "  --explain      print plan.explain() of every grid\n"
        "  --csv FILE     also write the rows as CSV\n",
        prog);
  MPI_Finalize();
  std::exit(rc);
}

options parse(int argc, char** argv, bool root) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto value = [&](const char* key) { return option_value(s, key); };
    if (const char* f = csv_option(argc, argv, a)) {
      o.csv = f;
    } else if (const char* v = value("--sizes=")) {
      o.sizes = parse_sizes(v);
      if (o.sizes.empty()) usage(argv[0], 2, root);
    } else if (const char* t = value("--types=")) {
      const std::string ts = t;
      o.f64 = ts.find("f64") != std::string::npos;
      o.f32 = ts.find("f32") != std::string::npos;
      if (!o.f64 && !o.f32) usage(argv[0], 2, root);
    } else if (const char* r = value("--reps=")) {
      o.reps = std::atoi(r);
      if (o.reps <= 0) usage(argv[0], 2, root);
    } else if (const char* w = value("--warmup=")) {
      o.warmup = std::atoi(w);
      if (o.warmup < 0) usage(argv[0], 2, root);
    } else if (const char* b = value("--nb=")) {
      o.nb = std::atoi(b);
      if (o.nb <= 0) usage(argv[0], 2, root);
    } else if (s == "--no-scalapack") {
      o.scalapack = false;
    } else if (s == "--explain") {
      o.explain = true;
    } else if (s == "--help" || s == "-h") {
      usage(argv[0], 0, root);
    } else {
      if (root) std::fprintf(stderr, "unknown argument '%s'\n", s.c_str());
      usage(argv[0], 2, root);
    }
  }
#if !defined(WORKPART_HAVE_SCALAPACK)
  o.scalapack = false;
#endif
  return o;
}

template <class T>
void eigen_gemm(std::int64_t n, const T* a, const T* b, T* c) {
  using mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
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
  std::string name;      // "(2,2,1)" or "ScaLAPACK 2x2"
  bool partial = false;  // compute leaves partial sums (k split): the Reduce is not in it
  double plan_seconds = 0;
  std::vector<double> scatter, execute, gather, total, compute;  // per round, slowest rank
  long long bytes[3] = {0, 0, 0};                           // last round, sum over ranks (received)
  bool bytes_steady = true;                                 // the same in every round
  long long predicted_scatter = -1, predicted_gather = -1;  // -1: no prediction (ScaLAPACK)
  double max_rel_diff = 0;
  std::string collectives;
};

#if defined(WORKPART_HAVE_SCALAPACK)
/// ScaLAPACK's side: a pr x pc BLACS grid over every process, a 1x1 one holding root, the
/// three matrices nb x nb block-cyclic on the first and whole on the second.
template <class T>
class scalapack_gemm {
 public:
  scalapack_gemm(int P, std::int64_t n, int nb, T* a, T* b, T* c)
      : n_(int(n)), a_(a), b_(b), c_(c) {
    pr_ = 1;
    for (int d = 1; d * d <= P; ++d)
      if (P % d == 0) pr_ = d;
    pc_ = P / pr_;
    Cblacs_get(0, 0, &grid_);
    Cblacs_gridinit(&grid_, "Row", pr_, pc_);
    Cblacs_get(0, 0, &root_grid_);
    Cblacs_gridinit(&root_grid_, "Row", 1, 1);
    int r = 0, c0 = 0, myrow = -1, mycol = -1;
    Cblacs_gridinfo(grid_, &r, &c0, &myrow, &mycol);
    const int zero = 0;
    const int mloc = numroc_(&n_, &nb, &myrow, &zero, &pr_);
    const int nloc = numroc_(&n_, &nb, &mycol, &zero, &pc_);
    const int lld = std::max(1, mloc);
    int info = 0;
    descinit_(dist_desc_, &n_, &n_, &nb, &nb, &zero, &zero, &grid_, &lld, &info);
    if (info != 0) throw std::runtime_error("descinit_ failed: info " + std::to_string(info));
    const std::size_t local =
        static_cast<std::size_t>(std::max(1, mloc)) * std::size_t(std::max(1, nloc));
    da_.assign(local, T(0));
    db_.assign(local, T(0));
    dc_.assign(local, T(0));
    int rr = -1, rc = -1, rrow = -1, rcol = -1;
    Cblacs_gridinfo(root_grid_, &rr, &rc, &rrow, &rcol);
    if (rrow == 0 && rcol == 0) {
      descinit_(root_desc_, &n_, &n_, &nb, &nb, &zero, &zero, &root_grid_, &n_, &info);
      if (info != 0)
        throw std::runtime_error("descinit_ (root) failed: info " + std::to_string(info));
    } else {
      std::fill(std::begin(root_desc_), std::end(root_desc_), 0);
      root_desc_[1] = -1;  // not in the root grid: p?gemr2d wants CTXT = -1
    }
  }
  scalapack_gemm(const scalapack_gemm&) = delete;
  scalapack_gemm& operator=(const scalapack_gemm&) = delete;
  ~scalapack_gemm() {
    if (root_grid_ >= 0) Cblacs_gridexit(root_grid_);  // -1 on the ranks outside it
    if (grid_ >= 0) Cblacs_gridexit(grid_);
  }

  std::string name() const {
    return "ScaLAPACK " + std::to_string(pr_) + "x" + std::to_string(pc_);
  }

  /// Root's A, B, C to the grid (as A^T, B^T, C^T: column-major views of row-major data).
  void distribute() {
    redistribute(a_, root_desc_, da_.data(), dist_desc_);
    redistribute(b_, root_desc_, db_.data(), dist_desc_);
    redistribute(c_, root_desc_, dc_.data(), dist_desc_);
  }
  /// C^T += B^T A^T on the grid.
  void multiply() {
    const int one = 1;
    const T alpha = 1, beta = 1;
    if constexpr (std::is_same_v<T, double>)
      pdgemm_("N", "N", &n_, &n_, &n_, &alpha, db_.data(), &one, &one, dist_desc_, da_.data(), &one,
              &one, dist_desc_, &beta, dc_.data(), &one, &one, dist_desc_, 1, 1);
    else
      psgemm_("N", "N", &n_, &n_, &n_, &alpha, db_.data(), &one, &one, dist_desc_, da_.data(), &one,
              &one, dist_desc_, &beta, dc_.data(), &one, &one, dist_desc_, 1, 1);
  }
  /// The grid's C to root.
  void collect() { redistribute(dc_.data(), dist_desc_, c_, root_desc_); }

 private:
  void redistribute(const T* from, const int* from_desc, T* to, const int* to_desc) {
    const int one = 1;
    T dummy = 0;  // ranks outside the root grid pass no data there
    const T* src = from ? from : &dummy;
    T* dst = to ? to : &dummy;
    if constexpr (std::is_same_v<T, double>)
      pdgemr2d_(&n_, &n_, src, &one, &one, from_desc, dst, &one, &one, to_desc, &grid_);
    else
      psgemr2d_(&n_, &n_, src, &one, &one, from_desc, dst, &one, &one, to_desc, &grid_);
  }

  int n_;
  int pr_ = 1, pc_ = 1;
  int grid_ = -1, root_grid_ = -1;
  int dist_desc_[9] = {};
  int root_desc_[9] = {};
  T *a_, *b_, *c_;  // root's row-major matrices (null elsewhere)
  std::vector<T> da_, db_, dc_;
};
#endif

template <class T>
void bench_size(const wp::context& ctx, std::int64_t n, const options& opt, csv_writer& csv) {
  const bool root = ctx.is_root();
  const int P = ctx.size();
  const MPI_Comm comm = ctx.comm();
  const std::size_t nn = static_cast<std::size_t>(n * n);
  const char* type = std::is_same_v<T, double> ? "float64" : "float32";

  // Root holds the data; the other ranks pass nullptr.
  std::vector<T> a, b, c, c_ref;
  if (root) {
    a.resize(nn);
    b.resize(nn);
    c.assign(nn, T(0));
    c_ref.assign(nn, T(0));
    std::mt19937_64 rng(42 + static_cast<std::uint64_t>(n));
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& v : a) v = T(dist(rng));
    for (auto& v : b) v = T(dist(rng));
  }
  wp::array<T, 2> A("A", {n, n}, root ? a.data() : nullptr);
  wp::array<T, 2> B("B", {n, n}, root ? b.data() : nullptr);
  wp::array<T, 2> C("C", {n, n}, root ? c.data() : nullptr);
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
    res[g].plan_seconds = slowest(MPI_Wtime() - t0, comm);
    res[g].name = grids[g].str();
    res[g].partial = grids[g].dims[2] > 1;
    res[g].predicted_scatter = plans[g]->predicted_total(true);
    res[g].predicted_gather = plans[g]->predicted_total(false);
    res[g].collectives = "A: " + join(plans[g]->collectives(A)) +
                         "; B: " + join(plans[g]->collectives(B)) +
                         "; C: " + join(plans[g]->collectives(C));
    if (plans[g]->runs_in_place())  // only root works: run() uses none of them, copies nothing
      res[g].collectives = "run() in place on root's arrays (stepwise: " + res[g].collectives + ")";
    if (opt.explain && root) std::printf("\n%s", plans[g]->explain().c_str());
  }

#if defined(WORKPART_HAVE_SCALAPACK)
  std::unique_ptr<scalapack_gemm<T>> sl;
  if (opt.scalapack) {
    quiet_barrier(comm);
    const double t0 = MPI_Wtime();
    sl = std::make_unique<scalapack_gemm<T>>(P, n, opt.nb, root ? a.data() : nullptr,
                                             root ? b.data() : nullptr, root ? c.data() : nullptr);
    grid_result r;
    r.name = sl->name();
    r.plan_seconds = slowest(MPI_Wtime() - t0, comm);
    r.collectives = "p?gemr2d A, B, C to the grid; p?gemm (nb = " + std::to_string(opt.nb) +
                    "); p?gemr2d C to root";
    res.push_back(r);
  }
#endif
  const std::size_t n_variants = res.size() + 1;  // the grids, ScaLAPACK, Eigen on root

  double ref_max = 0;
  auto rel_diff = [&] {
    double d = 0;
    for (std::size_t e = 0; e < nn; ++e) d = std::max(d, double(std::abs(c[e] - c_ref[e])));
    return ref_max > 0 ? d / ref_max : d;
  };

  std::vector<double> t_eigen;
  auto run_eigen = [&](bool timed) {
    if (root) std::fill(c_ref.begin(), c_ref.end(), T(0));
    quiet_barrier(comm);  // the other ranks sleep while root works alone
    if (root) {
      const double t0 = MPI_Wtime();
      eigen_gemm<T>(n, a.data(), b.data(), c_ref.data());
      const double dt = MPI_Wtime() - t0;
      if (timed) t_eigen.push_back(dt);
      ref_max = 0;
      for (T x : c_ref) ref_max = std::max(ref_max, double(std::abs(x)));
    }
    quiet_barrier(comm);
  };

  auto run_grid = [&](std::size_t g, bool timed, bool first) {
    plan_t& plan = *plans[g];
    if (root) std::fill(c.begin(), c.end(), T(0));  // C += A*B: start from zero, untimed
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
    grid_result& r = res[g];
    if (root) {
      r.max_rel_diff = std::max(r.max_rel_diff, rel_diff());
      if (!first)
        for (int p = 0; p < 3; ++p) r.bytes_steady = r.bytes_steady && r.bytes[p] == sum[p];
      for (int p = 0; p < 3; ++p) r.bytes[p] = sum[p];
      if (timed) {
        r.scatter.push_back(worst[0]);
        r.execute.push_back(worst[1]);
        r.gather.push_back(worst[2]);
        r.total.push_back(worst[3]);
      }
    }
    // Compute only: the inputs are on the ranks now; execute() runs the local work again.
    quiet_barrier(comm);
    const double t2 = MPI_Wtime();
    plan.execute();
    const double compute = slowest(MPI_Wtime() - t2, comm);
    if (root && timed) r.compute.push_back(compute);
  };

#if defined(WORKPART_HAVE_SCALAPACK)
  auto run_scalapack = [&](grid_result& r, bool timed) {
    if (root) std::fill(c.begin(), c.end(), T(0));
    quiet_barrier(comm);
    const double t0 = MPI_Wtime();
    sl->distribute();
    const double t1 = MPI_Wtime();
    sl->multiply();
    const double t2 = MPI_Wtime();
    sl->collect();
    const double t3 = MPI_Wtime();
    const double mine[4] = {t1 - t0, t2 - t1, t3 - t2, t3 - t0};
    double worst[4] = {0, 0, 0, 0};
    MPI_Reduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (root) {
      r.max_rel_diff = std::max(r.max_rel_diff, rel_diff());
      if (timed) {
        r.scatter.push_back(worst[0]);
        r.execute.push_back(worst[1]);
        r.gather.push_back(worst[2]);
        r.total.push_back(worst[3]);
      }
    }
    quiet_barrier(comm);  // compute only: p?gemm on the matrices already distributed
    const double t4 = MPI_Wtime();
    sl->multiply();
    const double compute = slowest(MPI_Wtime() - t4, comm);
    if (root && timed) r.compute.push_back(compute);
  };
#endif

  // ---- rounds: every variant once per round, in a changing order ----
  if (opt.warmup == 0) run_eigen(false);  // the reference, before anything is checked against it
  for (int round = -opt.warmup; round < opt.reps; ++round) {
    const bool timed = round >= 0;
    // Eigen first in the warm-up round: its result is what the others are checked against.
    std::vector<std::size_t> order =
        timed ? round_order(round, n_variants) : std::vector<std::size_t>{};
    if (!timed) {
      order.push_back(res.size());
      for (std::size_t v = 0; v < res.size(); ++v) order.push_back(v);
    }
    for (const std::size_t v : order) {
      if (v == res.size()) {
        run_eigen(timed);
      } else if (v < grids.size()) {
        run_grid(v, timed, round == -opt.warmup);
      } else {
#if defined(WORKPART_HAVE_SCALAPACK)
        run_scalapack(res[v], timed);
#endif
      }
    }
  }

  if (!root) return;
  const double te = median(t_eigen);
  const double flop = 2.0 * double(n) * double(n) * double(n);
  const auto [emin, emax] = std::minmax_element(t_eigen.begin(), t_eigen.end());
  std::printf("\n%s  n = %lld  P = %d  (C += A*B; %d timed round(s), median; %d warm-up)\n", type,
              static_cast<long long>(n), P, opt.reps, opt.warmup);
  std::printf("  one-process Eigen GEMM on root: %.3f s (min %.3f, max %.3f), %.1f GFLOP/s\n", te,
              *emin, *emax, flop / te * 1e-9);
  const grid_result* slr = opt.scalapack ? &res.back() : nullptr;
  const double sl_compute = slr ? median(slr->compute) : 0, sl_total = slr ? median(slr->total) : 0;
  std::printf("  %-15s %7s %9s %9s %9s %9s %10s %12s %12s %6s %8s %8s %12s\n", "variant", "plan s",
              "scatter s", "execute s", "gather s", "total s", "compute s", "scatter MB",
              "gather MB", "eff", "vs SL(a)", "vs SL(b)", "max rel diff");
  for (const auto& r : res) {
    const double ts = median(r.scatter), tx = median(r.execute), tg = median(r.gather),
                 tt = median(r.total), tc = median(r.compute);
    const bool is_sl = &r == slr;
    char smb[32] = "-", gmb[32] = "-", vsa[32] = "-", vsb[32] = "-", comp[32];
    if (!is_sl) {
      std::snprintf(smb, sizeof smb, "%.1f %c", double(r.bytes[0]) * 1e-6,
                    r.bytes[0] == r.predicted_scatter ? '=' : '!');
      std::snprintf(gmb, sizeof gmb, "%.1f %c", double(r.bytes[2]) * 1e-6,
                    r.bytes[2] == r.predicted_gather ? '=' : '!');
      if (slr) {
        std::snprintf(vsa, sizeof vsa, "%.2f%s", sl_compute / tc, r.partial ? "*" : "");
        std::snprintf(vsb, sizeof vsb, "%.2f", sl_total / tt);
      }
    }
    std::snprintf(comp, sizeof comp, "%.3f%s", tc, r.partial ? "*" : "");
    std::printf("  %-15s %7.3f %9.3f %9.3f %9.3f %9.3f %10s %12s %12s %6.3f %8s %8s %12.2e\n",
                r.name.c_str(), r.plan_seconds, ts, tx, tg, tt, comp, smb, gmb, te / (P * tt), vsa,
                vsb, r.max_rel_diff);
    csv.row({"bench_distributed_matmul",
             type,
             csv_writer::cell(n),
             csv_writer::cell(P),
             is_sl ? "scalapack" : "workpart",
             r.name,
             csv_writer::cell(r.plan_seconds),
             csv_writer::cell(ts),
             csv_writer::cell(tx),
             csv_writer::cell(tg),
             csv_writer::cell(tt),
             csv_writer::cell(tc),
             r.partial ? "1" : "0",
             is_sl ? "" : csv_writer::cell(r.bytes[0]),
             is_sl ? "" : csv_writer::cell(r.predicted_scatter),
             is_sl ? "" : csv_writer::cell(r.bytes[2]),
             is_sl ? "" : csv_writer::cell(r.predicted_gather),
             csv_writer::cell(te),
             slr ? csv_writer::cell(sl_compute) : "",
             slr ? csv_writer::cell(sl_total) : "",
             csv_writer::cell(r.max_rel_diff)});
  }
  if (slr) {
    // The best workpart grid on each measure (compute: among grids whose compute is whole).
    double best_c = 0, best_t = 0;
    std::string best_cn, best_tn;
    for (const auto& r : res) {
      if (&r == slr) continue;
      const double tc = median(r.compute), tt = median(r.total);
      if (!r.partial && (best_c == 0 || tc < best_c)) best_c = tc, best_cn = r.name;
      if (best_t == 0 || tt < best_t) best_t = tt, best_tn = r.name;
    }
    std::printf(
        "  workpart vs %s: (a) compute only %.2fx (best grid %s: %.3f s vs %.3f s); "
        "(b) end to end from root %.2fx (best grid %s: %.3f s vs %.3f s)\n",
        slr->name.c_str(), sl_compute / best_c, best_cn.c_str(), best_c, sl_compute,
        sl_total / best_t, best_tn.c_str(), best_t, sl_total);
  }
  std::printf(
      "  (* the grid splits k: its compute leaves partial C blocks, summed by the Reduce "
      "in gather(), which is not in that figure)\n");
  for (const auto& r : res) {
    if (&r == slr) continue;
    if (r.bytes[1] != 0) {
      std::printf("  note: grid %s moved %lld B in execute (expected none)\n", r.name.c_str(),
                  r.bytes[1]);
    }
    if (r.bytes[0] != r.predicted_scatter || r.bytes[2] != r.predicted_gather) {
      std::printf(
          "  note: grid %s measured bytes differ from the prediction: scatter %lld vs %lld, "
          "gather %lld vs %lld\n",
          r.name.c_str(), r.bytes[0], r.predicted_scatter, r.bytes[2], r.predicted_gather);
    }
    if (!r.bytes_steady) {
      std::printf("  note: grid %s moved different byte counts in different rounds\n",
                  r.name.c_str());
    }
  }
  std::printf("  collectives per variant:\n");
  for (const auto& r : res) std::printf("    %-15s %s\n", r.name.c_str(), r.collectives.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const bool root = ctx.is_root();
  const options opt = parse(argc, argv, root);
  const int P = ctx.size();
  if (root) {
    std::printf(
        "bench_distributed_matmul: C(i,j) += A(i,k)*B(k,j), wp::distribute + plan.run() "
        "vs one-process Eigen on root%s\n",
        opt.scalapack ? " and ScaLAPACK p?gemm" : "");
#if !defined(WORKPART_HAVE_SCALAPACK)
    std::printf(
        "  ScaLAPACK: not built in (apt-get install libscalapack-openmpi-dev, reconfigure)\n");
#endif
    print_run_environment(P);
    std::printf(
        "  phase seconds are the slowest rank's; MB = 1e6 B received, summed over ranks "
        "(= : as predicted); vs SL: ScaLAPACK seconds / workpart seconds\n");
    std::fflush(stdout);
  }
  try {
    csv_writer csv;
    if (root)
      csv = csv_writer(opt.csv, {"benchmark",
                                 "type",
                                 "n",
                                 "P",
                                 "library",
                                 "variant",
                                 "plan_s",
                                 "scatter_s",
                                 "execute_s",
                                 "gather_s",
                                 "total_s",
                                 "compute_s",
                                 "compute_partial",
                                 "scatter_bytes",
                                 "predicted_scatter_bytes",
                                 "gather_bytes",
                                 "predicted_gather_bytes",
                                 "eigen_s",
                                 "scalapack_compute_s",
                                 "scalapack_total_s",
                                 "max_rel_diff"});
    for (const std::int64_t n : opt.sizes) {
      if (opt.f64) bench_size<double>(ctx, n, opt, csv);
      if (opt.f32) bench_size<float>(ctx, n, opt, csv);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", ctx.rank(), e.what());
    MPI_Abort(ctx.comm(), 1);
  }
#if defined(WORKPART_HAVE_SCALAPACK)
  if (opt.scalapack) Cblacs_exit(1);  // BLACS lets go; MPI stays up for wp::context to finalize
#endif
  return 0;
}
