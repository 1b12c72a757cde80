// Benchmark: softmax over the last axis and Megatron multi-head self-attention, float32,
// planned with wp::distribute and run from root at any P, against one process (root) running
// the same computation written by hand with Eigen (its GEMMs through the BLAS when the build
// defines EIGEN_USE_BLAS), in the same run.
//
//   mpirun -np P bench_attention_softmax [--softmax=B,H,S,L] [--attention=B,S,E,H]
//                                        [--workloads=softmax,attention] [--gather=all,out]
//                                        [--reps=N] [--warmup=N] [--explain] [--csv FILE]
//
// Workloads (defaults: softmax x(8,16,512,512); attention B=8, S=512, E=1024, H=16):
//   softmax    y = softmax over l of x(b,h,s,l), as in examples/06_softmax.cpp:
//              "one map"       one map of four statements (row max, exp, row sum, divide); only
//                              grids that keep each row on one rank may run it: (P,1,1,1);
//              "program"       three maps (max, exp-sum, normalise), every one on (P,1,1,1);
//              "program L/P"   the same three maps on (1,1,1,P): partial row maxima and sums,
//                              combined between the maps (at P > 1 only).
//              Baseline: per row of the R x L matrix (R = B*H*S) maxCoeff, exp, sum, scale by
//              1/sum, each row in L1 (Eigen arrays, vectorised).
//   attention  the program of examples/07_attention.cpp without its "next" map: Q, K, V
//              projections with the head axis explicit, scores, scaled softmax (three maps),
//              values, output projection Y(b,s,f); every map splits the heads over the ranks
//              (H need not divide by P, but H >= P: a rank with no head is refused).
//              Baseline: Q, K, V = X W as three (B*S x E) x (E x E) GEMMs; per (b,h) the
//              S x S scores Q_bh K_bh^T (strided views, no copies), rowwise exp((a - max) *
//              scale) in place, O_bh = P_bh V_bh scaled by 1/rowsum; Y = O W_O as one GEMM.
//              Its buffers are allocated once, outside the timed region.
//
// Every variant is run two ways (--gather picks): "run()" is plan.run() — scatter from root,
// execute, gather of every array the plan writes (the intermediates e, mx, sum; Q, K, V, the
// scores A, the probabilities P, ...) to root; "gather(y)" is plan.scatter(), plan.execute(),
// plan.gather(y) — only the output the baseline produces comes back (a single map that runs
// in place on root, at P = 1, uses run()). Outputs combined with max_into / += are
// re-initialised on root before every run, outside the timed region.
//
// Rounds: one untimed warm-up round first (baseline first: every result is checked against
// it), then --reps timed rounds, each running the baseline and every variant once in an order
// that changes from round to round (a balanced Latin square). Figures are medians.
//   total s    the slowest rank's wall time of the run (MPI_Reduce MAX); for the baseline,
//              root's time while the other ranks sleep (a polling Ibarrier with nanosleep);
//   execute s  the slowest rank's execute-phase seconds (plan.stats() deltas), the
//              redistributions between a program's maps included;
//   speed-up   t_baseline / total (above 1: workpart from root is faster than one process);
//   MB         1e6 B received over all ranks in one run (scatter + execute + gather), and of
//              it rank to rank (execute);
//   max rel diff  max|out - out_baseline| / max|out_baseline| on root over all runs; above
//              1e-3 the program exits with status 1.
// Under each table, for every program plan: root's execute seconds per map (mean per run),
// which shows where a program's time goes; then any variant the library refused to plan.
//
// With more processes than cores (P = 4 on 2 vCPUs) the ranks share cores: a speed-up above
// the number of cores cannot be expected. Run with one thread per process, e.g.
//   OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpirun -np 4 ./bench_attention_softmax --csv as.csv

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
#include <ctime>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace wp = workpart;

namespace {

using namespace workpart_bench;

constexpr double tolerance = 1e-3;

struct options {
  std::vector<std::int64_t> softmax{8, 16, 512, 512};     // B, H, S, L
  std::vector<std::int64_t> attention{8, 512, 1024, 16};  // B, S, E, H
  bool run_softmax = true, run_attention = true;
  bool gather_all = true, gather_out = true;
  int reps = 3;
  int warmup = 1;
  bool explain = false;
  std::string csv;
};

[[noreturn]] void usage(const char* prog, int rc, bool root) {
  if (root)
    std::printf(
        "usage: mpirun -np P %s [--softmax=B,H,S,L] [--attention=B,S,E,H]\n"
        "           [--workloads=softmax,attention] [--gather=all,out] [--reps=N] [--warmup=N]\n"
        "           [--explain] [--csv FILE]\n"
        "  --softmax    x(B,H,S,L), softmax over L; default 8,16,512,512\n"
        "  --attention  batch B, sequence S, embedding E, heads H (E divisible by H);\n"
        "               default 8,512,1024,16\n"
        "  --workloads  which to run: softmax, attention or both; default both\n"
        "  --gather     all: time plan.run() (every written array back to root); out: scatter,\n"
        "               execute, gather of the output alone; default both\n"
        "  --reps       timed rounds (median reported); default 3\n"
        "  --warmup     untimed rounds first; default 1\n"
        "  --explain    print plan.explain() of every plan\n"
        "  --csv FILE   also write the rows as CSV\n",
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
    } else if (const char* v = value("--softmax=")) {
      o.softmax = parse_sizes(v);
      if (o.softmax.size() != 4) usage(argv[0], 2, root);
    } else if (const char* at = value("--attention=")) {
      o.attention = parse_sizes(at);
      if (o.attention.size() != 4 || o.attention[2] % o.attention[3] != 0) {
        if (root) std::fprintf(stderr, "--attention=B,S,E,H: four sizes, E divisible by H\n");
        usage(argv[0], 2, root);
      }
    } else if (const char* w = value("--workloads=")) {
      const std::string ws = w;
      o.run_softmax = ws.find("softmax") != std::string::npos;
      o.run_attention = ws.find("attention") != std::string::npos;
      if (!o.run_softmax && !o.run_attention) usage(argv[0], 2, root);
    } else if (const char* g = value("--gather=")) {
      const std::string gs = g;
      o.gather_all = gs.find("all") != std::string::npos;
      o.gather_out = gs.find("out") != std::string::npos;
      if (!o.gather_all && !o.gather_out) usage(argv[0], 2, root);
    } else if (const char* r = value("--reps=")) {
      o.reps = std::atoi(r);
      if (o.reps <= 0) usage(argv[0], 2, root);
    } else if (const char* wu = value("--warmup=")) {
      o.warmup = std::atoi(wu);
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

/// What a plan's stats() say at one moment: execute seconds, bytes received per phase.
struct snapshot {
  double execute = 0;
  long long received[3] = {0, 0, 0};  // scatter, execute (rank to rank), gather
};

template <class Stats>
snapshot snap(const Stats& s) {
  snapshot x;
  x.execute = s.execute.seconds;
  x.received[0] = static_cast<long long>(s.scatter.bytes_received);
  x.received[1] = static_cast<long long>(s.execute.bytes_received);
  x.received[2] = static_cast<long long>(s.gather.bytes_received);
  return x;
}

/// One workpart variant: a plan (shared by its run() and gather(out) forms) behind closures.
struct variant {
  std::string name;  // "one map, run()"
  std::string grid;  // "(4,1,1,1)"
  std::function<void()> run;
  std::function<snapshot()> stats;
  std::vector<double> total, execute;  // per timed round, slowest rank
  long long bytes[3] = {0, 0, 0};      // last run, summed over ranks
  double max_rel_diff = 0;
  // A program's maps: this rank's execute seconds per map, mean over every run of the plan
  // (its run() and gather(out) variants together); empty for a single map.
  std::function<std::string()> per_map;
};

/// The run() and gather(out) variants of one plan, as --gather asks.
template <class Plan, class Out>
void add_variants(std::vector<variant>& vs, const options& opt, const std::string& name,
                  const std::string& grid, std::shared_ptr<Plan> plan, const Out& out,
                  const std::string& out_name, std::vector<std::string> map_names = {}) {
  auto stats = [plan] { return snap(plan->stats()); };
  std::function<std::string()> per_map;
  if constexpr (requires { plan->stats().maps; })
    per_map = [plan, names = map_names] {
      const auto st = plan->stats();
      std::string t;
      for (std::size_t m = 0; m < st.maps.size(); ++m) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s %.4f", m ? ", " : "",
                      m < names.size() ? names[m].c_str() : "?",
                      st.maps[m].execute.seconds / std::max(1, st.maps[m].runs));
        t += buf;
      }
      return t;
    };
  const std::size_t first = vs.size();
  if (opt.gather_all)
    vs.push_back({name + ", run()", grid, [plan] { plan->run(); }, stats, {}, {}, {}, 0, {}});
  if (opt.gather_out)
    vs.push_back({name + ", gather(" + out_name + ")",
                  grid,
                  [plan, &out] {
                    if (plan->runs_in_place()) {  // root alone: in place, nothing to copy
                      plan->run();
                    } else {
                      plan->scatter();
                      plan->execute();
                      plan->gather(out);
                    }
                  },
                  stats,
                  {},
                  {},
                  {},
                  0,
                  {}});
  if (vs.size() > first) vs[first].per_map = per_map;  // printed once per plan
}

/// Builds a plan on every rank; a plan_error (raised on every rank alike) is reported on root
/// and gives null.
template <class Make>
auto try_plan(const wp::context& ctx, const std::string& what, std::vector<std::string>& refused,
              const options& opt, Make make) {
  using plan_t = decltype(make());
  std::shared_ptr<plan_t> p;
  try {
    p = std::make_shared<plan_t>(make());
    if (opt.explain && ctx.is_root()) std::printf("\n%s: %s", what.c_str(), p->explain().c_str());
  } catch (const wp::error& e) {
    refused.push_back(what + ": " + e.what());
  }
  return p;
}

/// Runs the rounds of one workload and prints / writes its rows; returns nonzero (on root)
/// when a variant's result differs from the baseline's by more than the tolerance.
int measure(const wp::context& ctx, const std::string& workload, const std::string& title,
            std::vector<variant>& vs, const std::vector<std::string>& refused,
            const std::function<void()>& reset, const std::function<void()>& baseline,
            const float* out, const float* ref, std::size_t n_out, const options& opt,
            csv_writer& csv) {
  const bool root = ctx.is_root();
  const int P = ctx.size();
  const MPI_Comm comm = ctx.comm();
  std::vector<double> t_base;
  double ref_max = 0;

  auto run_baseline = [&](bool timed) {
    quiet_barrier(comm);  // the other ranks sleep while root works alone
    if (root) {
      const double t0 = MPI_Wtime();
      baseline();
      const double dt = MPI_Wtime() - t0;
      if (timed) t_base.push_back(dt);
      ref_max = 0;
      for (std::size_t e = 0; e < n_out; ++e) ref_max = std::max(ref_max, double(std::abs(ref[e])));
    }
    quiet_barrier(comm);
  };
  auto rel_diff = [&] {
    double d = 0;
    for (std::size_t e = 0; e < n_out; ++e) {
      const double x = std::abs(double(out[e]) - double(ref[e]));
      if (!(x <= d)) d = x;  // a NaN sticks
    }
    return ref_max > 0 ? d / ref_max : d;
  };
  auto run_variant = [&](variant& v, bool timed) {
    if (root) reset();  // max_into / += targets back to their identities, untimed
    quiet_barrier(comm);
    const snapshot s0 = v.stats();
    const double t0 = MPI_Wtime();
    v.run();
    const double t1 = MPI_Wtime();
    const snapshot s1 = v.stats();
    const double mine[2] = {s1.execute - s0.execute, t1 - t0};
    long long got[3];
    for (int p = 0; p < 3; ++p) got[p] = s1.received[p] - s0.received[p];
    double worst[2] = {0, 0};
    long long sum[3] = {0, 0, 0};
    MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(got, sum, 3, MPI_LONG_LONG, MPI_SUM, 0, comm);
    if (root) {
      const double d = rel_diff();
      if (!(d <= v.max_rel_diff)) v.max_rel_diff = d;
      for (int p = 0; p < 3; ++p) v.bytes[p] = sum[p];
      if (timed) {
        v.execute.push_back(worst[0]);
        v.total.push_back(worst[1]);
      }
    }
  };

  const std::size_t n_variants = vs.size() + 1;  // index 0: the baseline
  if (opt.warmup == 0) run_baseline(false);      // the reference, before anything is checked
  for (int round = -opt.warmup; round < opt.reps; ++round) {
    const bool timed = round >= 0;
    std::vector<std::size_t> order;
    if (timed) {
      order = round_order(round, n_variants);
    } else {
      for (std::size_t v = 0; v < n_variants; ++v) order.push_back(v);  // baseline first
    }
    for (const std::size_t v : order) {
      if (v == 0)
        run_baseline(timed);
      else
        run_variant(vs[v - 1], timed);
    }
  }

  int status = 0;
  if (root) {
    const double tb = median(t_base);
    const auto [bmin, bmax] = std::minmax_element(t_base.begin(), t_base.end());
    std::printf("\n%s  P = %d  (%d timed round(s), median; %d warm-up)\n", title.c_str(), P,
                opt.reps, opt.warmup);
    std::printf("  one-process baseline (Eigen by hand, root alone): %.4f s (min %.4f, max %.4f)\n",
                tb, *bmin, *bmax);
    std::printf("  %-30s %9s %9s %8s %10s %10s %12s  %s\n", "variant", "total s", "execute s",
                "speed-up", "MB moved", "rank-rank", "max rel diff", "grid(s)");
    std::printf("  %-30s %9.4f %9.4f %8.2f %10.1f %10.1f %12.2e  %s\n",
                "baseline: Eigen, 1 process", tb, tb, 1.0, 0.0, 0.0, 0.0, "-");
    csv.row({"bench_attention_softmax", workload, "baseline: Eigen, 1 process", csv_writer::cell(P),
             "-", csv_writer::cell(tb), csv_writer::cell(tb), csv_writer::cell(tb),
             csv_writer::cell(1.0), csv_writer::cell(0), csv_writer::cell(0.0)});
    for (const auto& v : vs) {
      const double tt = median(v.total), tx = median(v.execute);
      const long long bytes = v.bytes[0] + v.bytes[1] + v.bytes[2];
      const bool bad = !(v.max_rel_diff <= tolerance);
      std::printf("  %-30s %9.4f %9.4f %8.2f %10.1f %10.1f %12.2e%s  %s\n", v.name.c_str(), tt, tx,
                  tb / tt, double(bytes) * 1e-6, double(v.bytes[1]) * 1e-6, v.max_rel_diff,
                  bad ? " FAILED" : "", v.grid.c_str());
      csv.row({"bench_attention_softmax", workload, v.name, csv_writer::cell(P), v.grid,
               csv_writer::cell(tt), csv_writer::cell(tx), csv_writer::cell(tb),
               csv_writer::cell(tb / tt), csv_writer::cell(bytes),
               csv_writer::cell(v.max_rel_diff)});
      if (bad) {
        std::fprintf(stderr, "bench_attention_softmax: %s, %s: max rel diff %.3g exceeds %.0e\n",
                     workload.c_str(), v.name.c_str(), v.max_rel_diff, tolerance);
        status = 1;
      }
    }
    for (const auto& v : vs)
      if (v.per_map)
        std::printf("  %s: per-map execute s on root, mean per run: %s\n", v.name.c_str(),
                    v.per_map().c_str());
    for (const auto& r : refused) std::printf("  REFUSED by the library: %s\n", r.c_str());
    std::fflush(stdout);
  }
  return status;
}

// ---------------------------------------------------------------------------------------------
// softmax

/// The baseline: y = softmax of each row of the R x L row-major x. Row by row, so that the
/// three passes (max, exp + sum, scale) read a row that is in L1.
void softmax_by_hand(const float* x, float* y, std::int64_t R, std::int64_t L) {
  for (std::int64_t r = 0; r < R; ++r) {
    Eigen::Map<const Eigen::ArrayXf> xr(x + r * L, L);
    Eigen::Map<Eigen::ArrayXf> yr(y + r * L, L);
    const float m = xr.maxCoeff();
    yr = (xr - m).exp();
    yr *= 1.0f / yr.sum();
  }
}

int bench_softmax(const wp::context& ctx, const options& opt, csv_writer& csv) {
  const bool root = ctx.is_root();
  const std::int64_t B = opt.softmax[0], H = opt.softmax[1], S = opt.softmax[2], L = opt.softmax[3];
  const std::int64_t P = ctx.size(), R = B * H * S;

  wp::array<float, 4> x("x", {B, H, S, L}), e("e", {B, H, S, L}), y("y", {B, H, S, L});
  wp::array<float, 3> mx("mx", {B, H, S}), sum("sum", {B, H, S});
  std::vector<float> y_ref;
  if (root) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    for (std::int64_t n = 0; n < x.size(); ++n) x.data()[n] = dist(rng);
    y_ref.assign(std::size_t(R * L), 0.0f);
  }
  auto reset = [&] {  // max_into and += combine into root's values
    std::fill(mx.data(), mx.data() + mx.size(), -std::numeric_limits<float>::infinity());
    std::fill(sum.data(), sum.data() + sum.size(), 0.0f);
    std::fill(y.data(), y.data() + y.size(), 0.0f);  // so that a stale y cannot pass the check
  };

  auto [b, h, s, l] = wp::indices<4>();
  std::vector<variant> vs;
  std::vector<std::string> refused;
  const wp::grid_shape rows{P, 1, 1, 1}, cols{1, 1, 1, P};

  auto sm = wp::map("softmax", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)),
                    e(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)),
                    sum(b, h, s) += e(b, h, s, l), y(b, h, s, l) = e(b, h, s, l) / sum(b, h, s));
  if (auto p = try_plan(ctx, "one map on " + rows.str(), refused, opt,
                        [&] { return wp::distribute(sm, rows, ctx); }))
    add_variants(vs, opt, "one map", rows.str(), p, y, "y");

  auto m1 = wp::map("max", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)));
  auto m2 = wp::map("expsum", wp::space(B, H, S, L),
                    sum(b, h, s) += wp::exp(x(b, h, s, l) - mx(b, h, s)));
  auto m3 = wp::map("norm", wp::space(B, H, S, L),
                    y(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)) / sum(b, h, s));
  std::vector<std::pair<std::string, wp::grid_shape>> program_grids{{"program", rows}};
  if (P > 1) program_grids.push_back({"program L/P", cols});
  for (const auto& [name, g] : program_grids) {
    auto p = try_plan(ctx, name + " (3 maps) on " + g.str(), refused, opt, [&] {
      wp::schedule sc;
      sc.set(m1, g).set(m2, g).set(m3, g);
      return wp::distribute(wp::program(m1, m2, m3), sc, ctx);
    });
    if (p) add_variants(vs, opt, name, "3 maps " + g.str(), p, y, "y", {"max", "expsum", "norm"});
  }

  char title[160];
  std::snprintf(title, sizeof title, "softmax  x(%lld,%lld,%lld,%lld) float32, over the last axis",
                (long long)B, (long long)H, (long long)S, (long long)L);
  return measure(
      ctx, "softmax", title, vs, refused, reset,
      [&] { softmax_by_hand(x.data(), y_ref.data(), R, L); }, y.data(), y_ref.data(),
      std::size_t(R * L), opt, csv);
}

// ---------------------------------------------------------------------------------------------
// attention

using rowmajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using cview = Eigen::Map<const rowmajor, 0, Eigen::OuterStride<>>;
using view = Eigen::Map<rowmajor, 0, Eigen::OuterStride<>>;

/// The baseline's buffers, allocated once (outside the timed region).
struct attention_by_hand {
  std::int64_t B, S, E, H, D;
  float scale;
  rowmajor q, k, v, o, a;  // (B*S) x E four times; one S x S score block
  Eigen::VectorXf inv;     // 1 / row sums of one (b,h)

  attention_by_hand(std::int64_t b, std::int64_t s, std::int64_t e, std::int64_t h)
      : B(b),
        S(s),
        E(e),
        H(h),
        D(e / h),
        scale(1.0f / std::sqrt(float(e / h))),
        q(b * s, e),
        k(b * s, e),
        v(b * s, e),
        o(b * s, e),
        a(s, s),
        inv(s) {}

  /// Y = softmax((X W_Q)_h (X W_K)_h^T / sqrt(D)) (X W_V)_h, heads concatenated, times W_O.
  void operator()(const float* X, const float* WQ, const float* WK, const float* WV,
                  const float* WO, float* Y) {
    const Eigen::Map<const rowmajor> x(X, B * S, E), wq(WQ, E, E), wk(WK, E, E), wv(WV, E, E),
        wo(WO, E, E);
    q.noalias() = x * wq;  // Q(b,s,h,d): row b*S+s, column h*D+d
    k.noalias() = x * wk;
    v.noalias() = x * wv;
    for (std::int64_t bb = 0; bb < B; ++bb)
      for (std::int64_t hh = 0; hh < H; ++hh) {
        const std::int64_t off = bb * S * E + hh * D;
        const cview qh(q.data() + off, S, D, Eigen::OuterStride<>(E));
        const cview kh(k.data() + off, S, D, Eigen::OuterStride<>(E));
        const cview vh(v.data() + off, S, D, Eigen::OuterStride<>(E));
        view oh(o.data() + off, S, D, Eigen::OuterStride<>(E));
        a.noalias() = qh * kh.transpose();
        for (std::int64_t r = 0; r < S; ++r) {  // exp((a - max) * scale) in place, row in L1
          auto row = a.row(r).array();
          const float m = row.maxCoeff();
          row = ((row - m) * scale).exp();
          inv[r] = 1.0f / row.sum();
        }
        oh.noalias() = a * vh;
        for (std::int64_t r = 0; r < S; ++r) oh.row(r) *= inv[r];  // normalise S x D, not S x S
      }
    Eigen::Map<rowmajor> y(Y, B * S, E);
    y.noalias() = o * wo;  // O(b,s,h,d) as (B*S) x (H*D), W_O(h,d,f) as (H*D) x E
  }
};

int bench_attention(const wp::context& ctx, const options& opt, csv_writer& csv) {
  const bool root = ctx.is_root();
  const std::int64_t B = opt.attention[0], S = opt.attention[1], E = opt.attention[2],
                     H = opt.attention[3], D = E / H, P = ctx.size();
  const float scale = 1.0f / std::sqrt(float(D));

  wp::array<float, 3> X("X", {B, S, E}), WQ("W_Q", {E, H, D}), WK("W_K", {E, H, D}),
      WV("W_V", {E, H, D}), WO("W_O", {H, D, E}), Y("Y", {B, S, E});
  wp::array<float, 4> Q("Q", {B, S, H, D}), K("K", {B, S, H, D}), V("V", {B, S, H, D}),
      A("A", {B, H, S, S}), Pr("P", {B, H, S, S}), O("O", {B, S, H, D});
  wp::array<float, 3> mx("mx", {B, H, S}), sm("sum", {B, H, S});
  std::vector<float> y_ref;
  std::unique_ptr<attention_by_hand> by_hand;
  if (root) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::int64_t n = 0; n < X.size(); ++n) X.data()[n] = dist(rng);
    const float w = 1.0f / std::sqrt(float(E));  // keeps the activations of order one
    for (auto* m : {&WQ, &WK, &WV, &WO})
      for (std::int64_t n = 0; n < m->size(); ++n) m->data()[n] = w * dist(rng);
    y_ref.assign(std::size_t(B * S * E), 0.0f);
    by_hand = std::make_unique<attention_by_hand>(B, S, E, H);
  }
  auto reset = [&] {  // every += / max_into target back to its identity
    for (auto* t : {&Q, &K, &V, &A, &O}) std::fill(t->data(), t->data() + t->size(), 0.0f);
    std::fill(Y.data(), Y.data() + Y.size(), 0.0f);
    std::fill(sm.data(), sm.data() + sm.size(), 0.0f);
    std::fill(mx.data(), mx.data() + mx.size(), -std::numeric_limits<float>::infinity());
  };

  auto [b, s, h, d, e] = wp::indices<5>();
  auto q = wp::map("q", wp::space(B, S, H, D, E), Q(b, s, h, d) += X(b, s, e) * WQ(e, h, d));
  auto k = wp::map("k", wp::space(B, S, H, D, E), K(b, s, h, d) += X(b, s, e) * WK(e, h, d));
  auto v = wp::map("v", wp::space(B, S, H, D, E), V(b, s, h, d) += X(b, s, e) * WV(e, h, d));
  // spaces below are (b, h, s, t, d) and the like; the index names are positions
  auto [b4, h4, s4, t4, d4] = wp::indices<5>();
  auto scores = wp::map("scores", wp::space(B, H, S, S, D),
                        A(b4, h4, s4, t4) += Q(b4, s4, h4, d4) * K(b4, t4, h4, d4));
  auto [b3, h3, s3, t3] = wp::indices<4>();
  auto rmax =
      wp::map("max", wp::space(B, H, S, S), wp::max_into(mx(b3, h3, s3), A(b3, h3, s3, t3)));
  auto rsum = wp::map("expsum", wp::space(B, H, S, S),
                      sm(b3, h3, s3) += wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale));
  auto norm = wp::map(
      "norm", wp::space(B, H, S, S),
      Pr(b3, h3, s3, t3) = wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale) / sm(b3, h3, s3));
  auto pv = wp::map("values", wp::space(B, H, S, D, S),
                    O(b4, s4, h4, t4) += Pr(b4, h4, s4, d4) * V(b4, d4, h4, t4));
  auto out = wp::map("out", wp::space(B, S, E, H, D), Y(b, s, h) += O(b, s, d, e) * WO(d, e, h));

  const wp::grid_shape g_proj{1, 1, P, 1, 1}, g_bh5{1, P, 1, 1, 1}, g_bh4{1, P, 1, 1},
      g_out{1, 1, 1, P, 1};
  const std::string grids = "heads: q,k,v " + g_proj.str() + "; scores,values " + g_bh5.str() +
                            "; softmax " + g_bh4.str() + "; out " + g_out.str();
  std::vector<variant> vs;
  std::vector<std::string> refused;
  auto p = try_plan(ctx, "attention program (8 maps), heads split", refused, opt, [&] {
    wp::schedule sc;  // heads over the ranks, everywhere (examples/07_attention.cpp)
    sc.set(q, g_proj).set(k, g_proj).set(v, g_proj);
    sc.set(scores, g_bh5);
    sc.set(rmax, g_bh4).set(rsum, g_bh4).set(norm, g_bh4);
    sc.set(pv, g_bh5);
    sc.set(out, g_out);
    return wp::distribute(wp::program(q, k, v, scores, rmax, rsum, norm, pv, out), sc, ctx);
  });
  if (p)
    add_variants(vs, opt, "program, heads", grids, p, Y, "Y",
                 {"q", "k", "v", "scores", "max", "expsum", "norm", "values", "out"});

  char title[200];
  std::snprintf(title, sizeof title,
                "attention  B=%lld S=%lld E=%lld H=%lld (D=%lld) float32, Y = MHA(X) with W_O",
                (long long)B, (long long)S, (long long)E, (long long)H, (long long)D);
  return measure(
      ctx, "attention", title, vs, refused, reset,
      [&] { (*by_hand)(X.data(), WQ.data(), WK.data(), WV.data(), WO.data(), y_ref.data()); },
      Y.data(), y_ref.data(), std::size_t(B * S * E), opt, csv);
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const bool root = ctx.is_root();
  const options opt = parse(argc, argv, root);
  const int P = ctx.size();
  if (root) {
    std::printf(
        "bench_attention_softmax: softmax and multi-head attention, wp::distribute + "
        "plan.run() from root vs one process with Eigen by hand\n");
    print_run_environment(P);
    std::printf(
        "  seconds are the slowest rank's; speed-up = baseline s / total s; MB = 1e6 B "
        "received, summed over ranks\n");
    std::fflush(stdout);
  }
  int status = 0;
  try {
    csv_writer csv;
    if (root)
      csv = csv_writer(opt.csv, {"benchmark", "workload", "variant", "P", "grid", "total_s",
                                 "execute_s", "baseline_s", "speedup", "bytes", "max_rel_diff"});
    if (opt.run_softmax) status |= bench_softmax(ctx, opt, csv);
    if (opt.run_attention) status |= bench_attention(ctx, opt, csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", ctx.rank(), e.what());
    MPI_Abort(ctx.comm(), 1);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, ctx.comm());
  if (root && status)
    std::printf("FAILED: a result differs from the baseline's by more than %.0e (relative)\n",
                tolerance);
  return status;
}
