// Benchmark: element-wise maps run with wp::run (the CPU loop executor) against the same loops
// written by hand, compiled in this translation unit with the same flags.
//
//   axpy       out(i) = a * x(i) + y(i)            over 2^24 floats        (12 bytes / point)
//   broadcast  out(i, j) = x(i, j) + y(j)          over 4096 x 4096 floats ( 8 bytes / point)
//   stencil    out(i) = x(i - 1) + x(i + 1)        over [1, 2^24 - 1)      ( 8 bytes / point)
//
//   bench_elementwise [--reps=N] [--log2n=24] [--n2=4096] [--only=axpy,broadcast,stencil]
//                     [--csv FILE]
//
// Each kernel has three variants: the map, a hand loop (one thread) and the hand loop under
// `#pragma omp parallel for` (the library runs large spaces on OpenMP threads, so this is the
// fair comparison when OMP_NUM_THREADS > 1). Run it twice:
//   OMP_NUM_THREADS=1 bench_elementwise      and      bench_elementwise
// Figures are medians of `reps` timed runs (default 11), the variants timed alternately in an
// order that changes from round to round (a balanced Latin square), after one untimed warm-up
// round. Bandwidth counts the bytes each point must move (reads + writes, no write-allocate),
// so GB/s compare like for like. The results must agree exactly with the one-thread loop.
//
// --csv FILE also writes the table's rows as CSV, one line per (kernel, variant): benchmark,
// kernel, points (of the space), bytes (moved per run), P (1: one process), threads (OpenMP's),
// variant, reps, median_s, min_s, max_s, gb_per_s, map_over_this, max_abs_diff.
//
// Build (one line):
//   g++ -std=c++20 -O3 -DNDEBUG -fopenmp -DWORKPART_HAVE_BLAS=1 -DEIGEN_USE_BLAS -Wall -Wextra
//   -Werror
//       -Iinclude -I/usr/include/eigen3 -I/usr/include/x86_64-linux-gnu/openblas-pthread
//       $(mpicxx --showme:compile) benchmarks/bench_elementwise.cpp -o bench_elementwise
//       $(mpicxx --showme:link) -lboost_mpi -lboost_serialization -lopenblas

// GCC 12 at -O3 reports a false -Wrestrict inside std::string (GCC PR 105329/105651) where
// the library builds text with `"i" + std::to_string(d)` (core/affine.hpp); silenced for the
// library's headers only, so that this file builds with -Wall -Wextra -Werror.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#include <workpart/workpart.hpp>

#include "bench_common.hpp"
#pragma GCC diagnostic pop

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#define BENCH_OMP_FOR _Pragma("omp parallel for schedule(static)")
#else
#define BENCH_OMP_FOR
#endif

namespace wp = workpart;

namespace {

using namespace workpart_bench;

using clock_type = std::chrono::steady_clock;

struct options {
  int reps = 11;
  int log2n = 24;
  std::int64_t n2 = 4096;
  bool axpy = true, broadcast = true, stencil = true;
  std::string csv;
};

[[noreturn]] void usage(const char* prog, int rc) {
  std::printf(
      "usage: %s [--reps=N] [--log2n=24] [--n2=4096] [--only=axpy,broadcast,stencil]\n"
      "           [--csv FILE]\n"
      "  --reps   timed runs per variant (median reported), default 11\n"
      "  --log2n  1-D kernels run over 2^log2n floats, default 24\n"
      "  --n2     the 2-D kernel runs over n2 x n2 floats, default 4096\n"
      "  --only   kernels to run (comma separated)\n"
      "  --csv    also write the rows as CSV\n"
      "Threads: OMP_NUM_THREADS decides both the library's and the omp hand loop's.\n",
      prog);
  std::exit(rc);
}

options parse(int argc, char** argv) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto value = [&](const char* key) { return option_value(s, key); };
    if (const char* f = csv_option(argc, argv, a)) {
      o.csv = f;
    } else if (const char* r = value("--reps=")) {
      o.reps = std::atoi(r);
      if (o.reps <= 0) usage(argv[0], 2);
    } else if (const char* l = value("--log2n=")) {
      o.log2n = std::atoi(l);
      if (o.log2n < 4 || o.log2n > 30) usage(argv[0], 2);
    } else if (const char* m = value("--n2=")) {
      o.n2 = std::atoll(m);
      if (o.n2 <= 0) usage(argv[0], 2);
    } else if (const char* k = value("--only=")) {
      const std::string ks = k;
      o.axpy = ks.find("axpy") != std::string::npos;
      o.broadcast = ks.find("broadcast") != std::string::npos;
      o.stencil = ks.find("stencil") != std::string::npos;
      if (!o.axpy && !o.broadcast && !o.stencil) usage(argv[0], 2);
    } else if (s == "--help" || s == "-h") {
      usage(argv[0], 0);
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", s.c_str());
      usage(argv[0], 2);
    }
  }
  return o;
}

/// Tells the compiler that memory may be read here, so stores before it are kept.
inline void clobber_memory() { asm volatile("" : : : "memory"); }

// ---- hand-written loops (noinline: each is a real call the compiler cannot drop) ----
__attribute__((noinline)) void axpy_hand(std::int64_t n, float a, const float* x, const float* y,
                                         float* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
}
__attribute__((noinline)) void axpy_omp(std::int64_t n, float a, const float* x, const float* y,
                                        float* out) {
  BENCH_OMP_FOR
  for (std::int64_t i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
}
__attribute__((noinline)) void broadcast_hand(std::int64_t n, const float* x, const float* y,
                                              float* out) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) out[i * n + j] = x[i * n + j] + y[j];
}
__attribute__((noinline)) void broadcast_omp(std::int64_t n, const float* x, const float* y,
                                             float* out) {
  BENCH_OMP_FOR
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) out[i * n + j] = x[i * n + j] + y[j];
}
__attribute__((noinline)) void stencil_hand(std::int64_t n, const float* x, float* out) {
  for (std::int64_t i = 1; i < n - 1; ++i) out[i] = x[i - 1] + x[i + 1];
}
__attribute__((noinline)) void stencil_omp(std::int64_t n, const float* x, float* out) {
  BENCH_OMP_FOR
  for (std::int64_t i = 1; i < n - 1; ++i) out[i] = x[i - 1] + x[i + 1];
}

struct variant {
  std::string name;
  std::function<void()> run;
  std::vector<float>* out;
  std::vector<double> seconds;
};

struct summary_line {
  std::string text;
  bool met;
};

/// The threads a parallel region gets (1 without OpenMP).
int max_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// Times the variants alternately; variant 0 is the map, the others hand loops. `kind` and
/// `points` (the kernel's name and its space's size) are for the CSV rows.
summary_line measure(const std::string& kernel, const char* kind, std::int64_t points,
                     const std::string& explain, double bytes, std::vector<variant>& vs,
                     const options& opt, csv_writer& csv) {
  for (auto& v : vs) {  // warm-up: page faults, OpenMP thread start
    v.run();
    clobber_memory();
  }
  // Alternating in a balanced order (round_order): no variant always follows the same one
  // (OpenMP workers still spinning after a parallel loop take a core from the next one).
  for (int r = 0; r < opt.reps; ++r)
    for (const std::size_t x : round_order(r, vs.size())) {
      variant& v = vs[x];
      const auto t0 = clock_type::now();
      v.run();
      clobber_memory();
      const auto t1 = clock_type::now();
      v.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    }

  // Results must agree with the one-thread hand loop (the same arithmetic, so exactly).
  const std::vector<float>& ref = *vs[1].out;
  auto diff = [&](const std::vector<float>& o) {
    double d = 0;
    for (std::size_t e = 0; e < o.size(); ++e)
      d = std::max(d, std::abs(double(o[e]) - double(ref[e])));
    return d;
  };

  std::printf("\n%s  (%.0f MB moved per run, %d timed runs per variant; min..max in ms)\n",
              kernel.c_str(), bytes * 1e-6, opt.reps);
  std::printf("%s", explain.c_str());
  std::printf("  %-30s %10s %17s %8s %11s %13s\n", "variant", "median ms", "min..max ms", "GB/s",
              "map / this", "max abs diff");
  const double t_map = median(vs[0].seconds);
  double best_hand = 1e300;
  for (std::size_t x = 1; x < vs.size(); ++x)
    best_hand = std::min(best_hand, median(vs[x].seconds));
  for (const auto& v : vs) {
    const double t = median(v.seconds);
    const auto [lo, hi] = std::minmax_element(v.seconds.begin(), v.seconds.end());
    char range[64];
    std::snprintf(range, sizeof range, "%.3f..%.3f", *lo * 1e3, *hi * 1e3);
    const double d = diff(*v.out);
    std::printf("  %-30s %10.3f %17s %8.2f %10.3fx %13.2e\n", v.name.c_str(), t * 1e3, range,
                bytes / t * 1e-9, t_map / t, d);
    csv.row({"bench_elementwise", kind, csv_writer::cell(points),
             csv_writer::cell(std::llround(bytes)), "1", csv_writer::cell(max_threads()), v.name,
             csv_writer::cell(opt.reps), csv_writer::cell(t), csv_writer::cell(*lo),
             csv_writer::cell(*hi), csv_writer::cell(bytes / t * 1e-9), csv_writer::cell(t_map / t),
             csv_writer::cell(d)});
  }
  const double pct = (t_map / best_hand - 1.0) * 100.0;
  const bool met = pct <= 10.0;
  // The best times are less disturbed by other processes than the medians: shown beside them.
  auto best = [](const variant& v) {
    return *std::min_element(v.seconds.begin(), v.seconds.end());
  };
  double best_hand_min = 1e300;
  for (std::size_t x = 1; x < vs.size(); ++x) best_hand_min = std::min(best_hand_min, best(vs[x]));
  const double pct_min = (best(vs[0]) / best_hand_min - 1.0) * 100.0;
  char line[260];
  std::snprintf(
      line, sizeof line,
      "%s: map within %+.1f%% of fastest hand loop (target 10%%)%s  [best times: %+.1f%%]",
      kernel.c_str(), pct, met ? "" : "  <-- MISSED", pct_min);
  std::printf("  %s\n", line);
  std::fflush(stdout);
  return {line, met};
}

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t e = 0; e < n; ++e) v[e] = scale * float(e % 1009) - 3.0f;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  std::printf("bench_elementwise: element-wise maps via wp::run vs hand-written loops\n");
  print_threads();
  print_load_average();

  csv_writer csv;
  try {
    csv = csv_writer(opt.csv,
                     {"benchmark", "kernel", "points", "bytes", "P", "threads", "variant", "reps",
                      "median_s", "min_s", "max_s", "gb_per_s", "map_over_this", "max_abs_diff"});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_elementwise: %s\n", e.what());
    return 1;
  }

  auto [i, j] = wp::indices<2>();
  std::vector<summary_line> lines;

  if (opt.axpy || opt.stencil) {
    const std::int64_t n = std::int64_t(1) << opt.log2n;
    const std::size_t un = static_cast<std::size_t>(n);
    std::vector<float> x = ramp(un, 0.5f), y = ramp(un, 0.25f);
    std::vector<float> o_map(un, 0.0f), o_hand(un, 0.0f), o_omp(un, 0.0f);
    wp::array<float, 1> X("x", {n}, x.data()), Y("y", {n}, y.data()), O("out", {n}, o_map.data());

    if (opt.axpy) {
      const float a = 1.5f;
      const auto m = wp::map("axpy", wp::space(n), O(i) = a * X(i) + Y(i));
      std::vector<variant> vs{{"map (wp::run)", [&] { wp::run(m); }, &o_map, {}},
                              {"hand loop (1 thread)",
                               [&] { axpy_hand(n, a, x.data(), y.data(), o_hand.data()); },
                               &o_hand,
                               {}},
                              {"hand loop (omp parallel for)",
                               [&] { axpy_omp(n, a, x.data(), y.data(), o_omp.data()); },
                               &o_omp,
                               {}}};
      lines.push_back(measure("axpy n=2^" + std::to_string(opt.log2n), "axpy", n,
                              wp::explain_local(m), 12.0 * double(n), vs, opt, csv));
    }
    if (opt.stencil) {
      std::fill(o_map.begin(), o_map.end(), 0.0f);
      std::fill(o_hand.begin(), o_hand.end(), 0.0f);
      std::fill(o_omp.begin(), o_omp.end(), 0.0f);
      const auto m = wp::map("stencil", wp::space({1, n - 1}), O(i) = X(i - 1) + X(i + 1));
      std::vector<variant> vs{
          {"map (wp::run)", [&] { wp::run(m); }, &o_map, {}},
          {"hand loop (1 thread)", [&] { stencil_hand(n, x.data(), o_hand.data()); }, &o_hand, {}},
          {"hand loop (omp parallel for)",
           [&] { stencil_omp(n, x.data(), o_omp.data()); },
           &o_omp,
           {}}};
      lines.push_back(measure("stencil n=2^" + std::to_string(opt.log2n), "stencil", n - 2,
                              wp::explain_local(m), 8.0 * double(n - 2), vs, opt, csv));
    }
  }

  if (opt.broadcast) {
    const std::int64_t n = opt.n2;
    const std::size_t nn = static_cast<std::size_t>(n * n);
    std::vector<float> x = ramp(nn, 0.5f), y = ramp(static_cast<std::size_t>(n), 0.25f);
    std::vector<float> o_map(nn, 0.0f), o_hand(nn, 0.0f), o_omp(nn, 0.0f);
    wp::array<float, 2> X("x", {n, n}, x.data()), O("out", {n, n}, o_map.data());
    wp::array<float, 1> Y("y", {n}, y.data());
    const auto m = wp::map("broadcast", wp::space(n, n), O(i, j) = X(i, j) + Y(j));
    std::vector<variant> vs{{"map (wp::run)", [&] { wp::run(m); }, &o_map, {}},
                            {"hand loop (1 thread)",
                             [&] { broadcast_hand(n, x.data(), y.data(), o_hand.data()); },
                             &o_hand,
                             {}},
                            {"hand loop (omp parallel for)",
                             [&] { broadcast_omp(n, x.data(), y.data(), o_omp.data()); },
                             &o_omp,
                             {}}};
    lines.push_back(measure("broadcast " + std::to_string(n) + "x" + std::to_string(n), "broadcast",
                            n * n, wp::explain_local(m), (8.0 * double(n) + 4.0) * double(n), vs,
                            opt, csv));
  }

  const char* env_threads = std::getenv("OMP_NUM_THREADS");
  std::printf("\nsummary (threads: %s)\n", env_threads ? env_threads : "default");
  int missed = 0;
  for (const auto& l : lines) {
    std::printf("  %s\n", l.text.c_str());
    missed += l.met ? 0 : 1;
  }
  std::printf("  %d of %zu within target\n", int(lines.size()) - missed, lines.size());
  return 0;
}
