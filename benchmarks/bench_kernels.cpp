// Benchmark: single kernels written as maps and run with wp::run (the one-process CPU loop
// executor), against the same computation written as plain C++ loops and as Eigen array
// expressions (Eigen::Map over the same buffers), all compiled in this translation unit with the
// same flags (-O3 -march=native: benchmarks/CMakeLists.txt adds -march=native to this target),
// timed alternately in one run, with a memory-bandwidth floor measured in the same run.
//
//   bash scripts/bench.sh bench_kernels                 (builds build-bench/, -O3, Release)
//   build-bench/benchmarks/bench_kernels --quick        (small sizes of everything, < 1 minute)
//   build-bench/benchmarks/bench_kernels [--reps=7] [--only=axpy,exp,...] [--dtype=f32,f64]
//       [--sizes=2^16,2^25] [--big] [--matrix=R,C] [--softmax=B,H,S,L] [--layernorm=N,D]
//       [--stencil=N] [--conv1d=N,K] [--conv2d=N,C,K,H,W]
//       [--convlayer=N,C,K,H,W,R,stride,pad,groups] [--quick] [--csv FILE]
//   OMP_NUM_THREADS=1 build-bench/benchmarks/bench_kernels ...     (one thread everywhere)
//
// Kernels (--only names), their dtypes (--dtype picks among them) and size options [defaults]:
//   axpy       y(i) = a * x(i) + b   (a, b scalars)                   f32 f64  --sizes [2^16,2^25]
//   exp        y(i) = exp(x(i))                                        f32 f64  --sizes
//   tanhx      y(i) = tanh(x(i)) * x(i)                                f32 f64  --sizes
//   select     y(i) = select(x(i) > 0, x(i), 0.1 * x(i))  (leaky ReLU) f32 f64  --sizes
//   rowsum     s(i) += x(i, j)           over an R x C matrix         f32 f64  --matrix [4096,4096]
//   rowmax     max_into(m(i), x(i, j))                                 f32 f64  --matrix
//   colsum     c(j) += x(i, j)                                         f32 f64  --matrix
//   softmax    over the last axis of x(B,H,S,L) (examples/06_softmax.cpp)
//                                                               f32  --softmax [8,16,512,512]
//   layernorm  z = (x - mu) / sqrt(var + eps) * gamma + beta over the rows of x(N, D): the
//              three maps of examples/08_mlp_layernorm.cpp      f32  --layernorm [16384,1024]
//   stencil3   y(i,j) = sum_{r,s<3} w(r,s) x(i+r-1, j+s-1) over the interior of n x n
//                                                                      f64  --stencil [4096]
//   stencil5   the same with 5 x 5 weights, x(i+r-2, j+s-2)            f64  --stencil
//   conv1d     y(i) = sum_{k<K} w(k) x(i+k), i < n-K+1 (valid)          f32  --conv1d [2^24,64]
//   conv2d     out(n,k,y,x) = sum_c sum_r sum_s w(k,c,r,s) in(n,c,y+r,x+s), 3 x 3 filter,
//              VALID (no padding: out is (H-2) x (W-2))  f32  --conv2d=N,C,K,H,W [16,64,64,56,56]
//              (heavy: at N = 16 the map variants take tens of seconds per run on 2 vCPUs;
//              --conv2d=2,64,64,56,56 runs the same layer on 2 images)
//   convlayer  the three maps of a grouped, strided, zero-padded convolution layer as
//              wp::nn::conv2d (nn/conv.hpp) and its backward write them, over the space
//              (N, G, Kg, Ho, Wo, Cg, R, R) with indices n, g, k, i, j, c, r, s (Cg = C/G,
//              Kg = K/G, Ho = (H + 2 pad - R) / stride + 1), each its own case:
//                convlayer fwd  y(n, Kg g + k, i, j) += wp::padded(x, 0)(n, Cg g + c,
//                               st i + r - pad, st j + s - pad) * w(Kg g + k, c, r, s)
//                convlayer dW   dw(Kg g + k, c, r, s) += dy(n, Kg g + k, i, j) *
//                               wp::padded(x, 0)(n, Cg g + c, st i + r - pad, st j + s - pad)
//                convlayer dX   dxp(n, Cg g + c, st i + r, st j + s) += dy(n, Kg g + k, i, j) *
//                               w(Kg g + k, c, r, s), dxp over the padded extents
//                               (N, C, st (Ho-1) + R, st (Wo-1) + R)
//              f32  --convlayer=N,C,K,H,W,R,stride,pad,groups [8,64,64,28,28,3,1,1,1]
//              (C and K divisible by groups; the CSV's kernel column names the case)
// --big adds to --sizes the size whose input array is 512 MB (2^27 f32, 2^26 f64).
// --quick: sizes 2^16,2^20; matrix 1024x1024; softmax 2,4,128,256; layernorm 2048,1024;
// stencil 1024; conv1d 2^20,64; conv2d 2,16,16,28,28; convlayer 2,16,16,14,14,3,2,1,2 (stride 2,
// 2 groups) (options beside it still apply).
//
// Variants of every kernel, run alternately in the same run:
//   map...     the workpart map(s) run with wp::run. Kernels with more than one way to write
//              them have one variant per way:
//                rowsum/rowmax/colsum  "map" (+= / max_into over the 2-D space) and "map:all"
//                                      (wp::sum / wp::max_of of x(i, wp::all) over a 1-D space);
//                softmax               "map" (one map of four statements, fused over blocks),
//                                      "map:unfused" (the same map with fusion off) and
//                                      "program" (the three maps max, exp-sum, normalise);
//                layernorm             "map" (one map of three statements, fused),
//                                      "map:unfused" and "program" (three maps);
//                stencil3/5            "map:nested" (wp::sum(wp::range(r,0,K), wp::sum(wp::range(
//                                      s,0,K), w(r,s) * x(i+r-h, j+s-h)))) and "map:terms" (the
//                                      K*K products with scalar weights, added left to right);
//                conv1d                "map" (wp::sum over wp::range(k, 0, K)) and "map:+=" (k a
//                                      dimension of the space: y(i) += w(k) * x(i+k));
//                conv2d                "map" (three nested wp::range sums) and "map:+=" (c, r, s
//                                      dimensions of a 7-D space); both run as GEMMs with the
//                                      input packed as a matrix (exec/cpu/gemm_packed.hpp).
//                convlayer             "map" (the one map of each case, its output reset to 0
//                                      before every run, untimed); the library runs all three
//                                      as GEMMs: the padded input packed (im2col) for fwd and
//                                      dW, dX's GEMM result added from a buffer (col2im).
//              The first one is "the map" of the ratios in the CSV. Every form here compiles
//              and runs as written (the nested ranges too: two levels in the stencils, three in
//              conv2d); none is worked around.
//   loop       the plain C++ loop on one thread (the reference every result is checked against),
//              written as one would (accumulators in the natural order: without -ffast-math GCC
//              vectorises no sum or max reduction, where the map's vector rows reassociate);
//              select computes both arms and then chooses, which GCC vectorises (written
//              `x > 0 ? x : 0.1 * x` it keeps a branch under -ftrapping-math);
//   loop-omp   the same loop under `#pragma omp parallel for` (only when OpenMP gives more than
//              one thread: the library runs spaces of >= 2^18 points on omp_get_max_threads()
//              threads, smaller ones on one);
//   eigen      Eigen array expressions on one thread, eigen-omp the same on per-thread chunks
//              (rows); softmax: the hand-written per-row Eigen softmax of
//              bench_attention_softmax.cpp; conv2d: "eigen-gemm", im2col + one GEMM per image
//              (Eigen's GEMM; through the BLAS with EIGEN_USE_BLAS, threaded as the BLAS is);
//              convlayer: "eigen-gemm", hand-written im2col (zeros in the padding) + one GEMM
//              per image and group for fwd and dW, and for dX one GEMM per image and group into
//              a column buffer added into dxp (col2im). The loops of convlayer zero their
//              outputs inside the timed run, as conv2d's do.
// Outputs that maps combine into (+=, max_into) are reset before every run, untimed.
//
// How the figures are made: one untimed warm-up round (every variant once, page faults and
// thread start-up), then --reps timed rounds (default 7); each round runs every variant and the
// floor copies once, in an order that changes from round to round (a balanced Latin square,
// bench_common.hpp round_order). Figures are medians (min and max beside them).
//   bytes      what the kernel must stream at least: every input read once, every output
//              written once (no write-allocate, no intermediates);
//   floor      memcpy of bytes/2 into another bytes/2 (so it moves the same bytes), on one
//              thread and (with more than one OpenMP thread) split over the threads; the faster
//              median is the floor time. At large sizes glibc's memcpy uses non-temporal stores
//              (no write-allocate), which plain stores cannot: y = f(x) with ordinary stores
//              moves 3/2 of `bytes`, so ~67% of the floor is what such a loop can reach there;
//   ratios     map/loop = fastest loop variant's median / map median, map/eigen likewise (> 1:
//              the map is faster); floor% = floor time / map median;
//   targets    map >= 1.0x the fastest loop, map >= 1.0x the fastest Eigen variant, and for
//              the streaming kernels (axpy exp tanhx select rowsum rowmax colsum) map >= 70% of
//              the floor ("n/a" for the others).
// Checks: every variant's result against the one-thread loop's: exactly (0 difference) for axpy,
// select, rowmax (+ - * / select max min); for exp, tanhx, softmax the largest per-element
// relative difference; for the sums (rowsum colsum layernorm stencils convolutions) the largest
// difference over the largest |reference value|; tolerance 1e-5 (f32) / 1e-12 (f64). A result
// beyond its tolerance prints MISMATCH and the exit status is 1.
// --csv FILE writes one line per kernel x dtype x size x variant (and the floor copies):
// benchmark, kernel, dtype, elements (of the kernel's main input), bytes, variant, reps,
// median_s, min_s, max_s, ratio_vs_map (this median / the first map variant's: > 1 means the map
// is faster), floor_fraction (floor time / this median), max_err.

// GCC 12 at -O3 reports a false -Wrestrict inside std::string (GCC PR 105329/105651) where
// the library builds text with `"i" + std::to_string(d)` (core/affine.hpp); silenced for the
// library's headers only, so that this file builds with -Wall -Wextra -Werror. With AVX-512
// (-march=native) GCC 12.2 also reports the `__Y = __Y` of _mm512_undefined_ps/pd() inside
// Eigen's AVX-512 packet math (pmax, pmin, pfloor: rowwise().maxCoeff() below, pexp_float used
// by the library's vector rows) as -W(maybe-)uninitialized, a false positive in GCC's own
// intrinsics headers (GCC PR 105593): silenced for the same headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <workpart/workpart.hpp>

#include <Eigen/Core>

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
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
// The plain loops: `par` (a bool in scope) decides between one thread and all of OpenMP's.
#define BENCH_OMP_FOR_IF _Pragma("omp parallel for schedule(static) if(par)")
#define BENCH_OMP_FOR2_IF _Pragma("omp parallel for collapse(2) schedule(static) if(par)")
#else
#define BENCH_OMP_FOR_IF
#define BENCH_OMP_FOR2_IF
#endif

namespace wp = workpart;

namespace {

using namespace workpart_bench;
using clock_type = std::chrono::steady_clock;
using i64 = std::int64_t;

const std::vector<std::string> all_kernels{"axpy",     "exp",    "tanhx",   "select",    "rowsum",
                                           "rowmax",   "colsum", "softmax", "layernorm", "stencil3",
                                           "stencil5", "conv1d", "conv2d",  "convlayer"};

struct options {
  int reps = 7;
  std::vector<std::string> only;  // empty: every kernel
  bool f32 = true, f64 = true;
  std::vector<i64> sizes{i64(1) << 16, i64(1) << 25};
  bool big = false;
  i64 rows = 4096, cols = 4096;
  std::vector<i64> softmax{8, 16, 512, 512};
  i64 ln_rows = 16384, ln_cols = 1024;
  i64 stencil = 4096;
  i64 conv1d_n = i64(1) << 24, conv1d_k = 64;
  std::vector<i64> conv2d{16, 64, 64, 56, 56};                // N, C, K, H, W
  std::vector<i64> convlayer{8, 64, 64, 28, 28, 3, 1, 1, 1};  // N, C, K, H, W, R, stride, pad, G
  std::string csv;

  bool wants(const std::string& k) const {
    return only.empty() || std::find(only.begin(), only.end(), k) != only.end();
  }
};

[[noreturn]] void usage(const char* prog, int rc) {
  std::printf(
      "usage: %s [--reps=N] [--only=K1,K2,...] [--dtype=f32,f64] [--sizes=LIST] [--big]\n"
      "           [--matrix=R,C] [--softmax=B,H,S,L] [--layernorm=N,D] [--stencil=N]\n"
      "           [--conv1d=N,K] [--conv2d=N,C,K,H,W]\n"
      "           [--convlayer=N,C,K,H,W,R,stride,pad,groups] [--quick] [--csv FILE]\n"
      "  --reps       timed rounds (median reported), default 7 (after one warm-up round)\n"
      "  --only       kernels: axpy exp tanhx select rowsum rowmax colsum softmax layernorm\n"
      "               stencil3 stencil5 conv1d conv2d convlayer (default all)\n"
      "  --dtype      f32, f64 or both (default both; each kernel runs in its own dtypes)\n"
      "  --sizes      elements of the element-wise kernels, e.g. 65536,2^25 (default 2^16,2^25)\n"
      "  --big        also the size whose input is 512 MB (2^27 f32, 2^26 f64)\n"
      "  --matrix     rows, columns of rowsum/rowmax/colsum (default 4096,4096)\n"
      "  --softmax    x(B,H,S,L), default 8,16,512,512\n"
      "  --layernorm  rows, width, default 16384,1024\n"
      "  --stencil    n of the n x n grid, default 4096\n"
      "  --conv1d     points, taps, default 2^24,64\n"
      "  --conv2d     N,C,K,H,W (3 x 3 filter, valid), default 16,64,64,56,56\n"
      "  --convlayer  N,C,K,H,W,R,stride,pad,groups: an R x R filter, zero padding pad,\n"
      "               C and K divisible by groups; default 8,64,64,28,28,3,1,1,1\n"
      "  --quick      small sizes of everything (the whole run in well under a minute)\n"
      "  --csv FILE   also write one line per kernel x dtype x size x variant\n"
      "Threads: OMP_NUM_THREADS decides the library's and the -omp variants'.\n",
      prog);
  std::exit(rc);
}

/// A list of positive (with allow_zero: non-negative) sizes; items may be written 2^k.
std::vector<i64> parse_list(const std::string& list, bool allow_zero = false) {
  std::vector<i64> out;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t end = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, end - pos);
    if (!item.empty()) {
      i64 v = 0;
      if (item.compare(0, 2, "2^") == 0) {
        const int e = std::atoi(item.c_str() + 2);
        if (e < 0 || e > 40) return {};
        v = i64(1) << e;
      } else {
        v = std::atoll(item.c_str());
      }
      if (v < 0 || (v == 0 && !allow_zero)) return {};
      out.push_back(v);
    }
    pos = end + 1;
  }
  return out;
}

void set_quick(options& o) {
  o.sizes = {i64(1) << 16, i64(1) << 20};
  o.rows = o.cols = 1024;
  o.softmax = {2, 4, 128, 256};
  o.ln_rows = 2048;
  o.ln_cols = 1024;
  o.stencil = 1024;
  o.conv1d_n = i64(1) << 20;
  o.conv1d_k = 64;
  o.conv2d = {2, 16, 16, 28, 28};
  o.convlayer = {2, 16, 16, 14, 14, 3, 2, 1, 2};
}

options parse(int argc, char** argv) {
  options o;
  for (int a = 1; a < argc; ++a)  // --quick first: the options given beside it override it
    if (std::string(argv[a]) == "--quick") set_quick(o);
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto value = [&](const char* key) { return option_value(s, key); };
    auto list = [&](const char* v, std::size_t n) {
      std::vector<i64> l = parse_list(v);
      if (n != 0 && l.size() != n) usage(argv[0], 2);
      if (l.empty()) usage(argv[0], 2);
      return l;
    };
    if (const char* f = csv_option(argc, argv, a)) {
      o.csv = f;
    } else if (s == "--quick") {
    } else if (s == "--big") {
      o.big = true;
    } else if (const char* r = value("--reps=")) {
      o.reps = std::atoi(r);
      if (o.reps <= 0) usage(argv[0], 2);
    } else if (const char* k = value("--only=")) {
      o.only.clear();
      const std::string ks = k;
      std::size_t pos = 0;
      while (pos <= ks.size()) {
        const std::size_t end = std::min(ks.find(',', pos), ks.size());
        const std::string name = ks.substr(pos, end - pos);
        if (!name.empty()) {
          if (std::find(all_kernels.begin(), all_kernels.end(), name) == all_kernels.end()) {
            std::fprintf(stderr, "unknown kernel '%s'\n", name.c_str());
            usage(argv[0], 2);
          }
          o.only.push_back(name);
        }
        pos = end + 1;
      }
      if (o.only.empty()) usage(argv[0], 2);
    } else if (const char* d = value("--dtype=")) {
      const std::string ds = d;
      o.f32 = ds.find("f32") != std::string::npos;
      o.f64 = ds.find("f64") != std::string::npos;
      if (!o.f32 && !o.f64) usage(argv[0], 2);
    } else if (const char* z = value("--sizes=")) {
      o.sizes = list(z, 0);
    } else if (const char* m = value("--matrix=")) {
      const auto l = list(m, 2);
      o.rows = l[0];
      o.cols = l[1];
    } else if (const char* sm = value("--softmax=")) {
      o.softmax = list(sm, 4);
    } else if (const char* ln = value("--layernorm=")) {
      const auto l = list(ln, 2);
      o.ln_rows = l[0];
      o.ln_cols = l[1];
    } else if (const char* st = value("--stencil=")) {
      o.stencil = list(st, 1)[0];
      if (o.stencil < 8) usage(argv[0], 2);
    } else if (const char* c1 = value("--conv1d=")) {
      const auto l = list(c1, 2);
      o.conv1d_n = l[0];
      o.conv1d_k = l[1];
      if (o.conv1d_k >= o.conv1d_n) usage(argv[0], 2);
    } else if (const char* c2 = value("--conv2d=")) {
      o.conv2d = list(c2, 5);
      if (o.conv2d[3] < 3 || o.conv2d[4] < 3) usage(argv[0], 2);
    } else if (const char* cl = value("--convlayer=")) {
      const std::vector<i64> l = parse_list(cl, /*allow_zero=*/true);  // the padding may be 0
      if (l.size() != 9) usage(argv[0], 2);
      for (std::size_t e = 0; e < l.size(); ++e)
        if (e != 7 && l[e] == 0) usage(argv[0], 2);
      const i64 C = l[1], K = l[2], H = l[3], W = l[4], R = l[5], pad = l[7], G = l[8];
      if (C % G != 0 || K % G != 0) {
        std::fprintf(stderr, "--convlayer: groups %lld must divide C %lld and K %lld\n",
                     (long long)G, (long long)C, (long long)K);
        usage(argv[0], 2);
      }
      if (H + 2 * pad < R || W + 2 * pad < R) {
        std::fprintf(stderr, "--convlayer: the padded image is smaller than the filter\n");
        usage(argv[0], 2);
      }
      o.convlayer = l;
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

int max_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// f(lo, hi) over [0, n): once, or on each OpenMP thread's balanced part when `par`.
template <class F>
void in_chunks(i64 n, bool par, F&& f) {
#if defined(_OPENMP)
  if (par) {
#pragma omp parallel
    {
      const i64 nt = omp_get_num_threads(), me = omp_get_thread_num();
      const i64 lo = n * me / nt, hi = n * (me + 1) / nt;
      if (hi > lo) f(lo, hi);
    }
    return;
  }
#else
  (void)par;
#endif
  f(i64(0), n);
}

/// Deterministic values in [lo, hi) (splitmix64 of the position).
inline double hash01(std::uint64_t k) {
  k += 0x9e3779b97f4a7c15ull;
  k = (k ^ (k >> 30)) * 0xbf58476d1ce4e5b9ull;
  k = (k ^ (k >> 27)) * 0x94d049bb133111ebull;
  k ^= k >> 31;
  return double(k >> 11) * 0x1.0p-53;
}
template <class T>
std::vector<T> uniform(i64 n, double lo, double hi, std::uint64_t seed) {
  std::vector<T> v(static_cast<std::size_t>(n));
  const std::uint64_t base = seed << 40;
  for (std::size_t e = 0; e < v.size(); ++e) v[e] = T(lo + (hi - lo) * hash01(base + e));
  return v;
}

template <class T>
const char* dtype_name() {
  return sizeof(T) == 4 ? "f32" : "f64";
}

std::string human_time(double s) {
  char b[32];
  if (!(s < 1e-3))
    std::snprintf(b, sizeof b, s < 1.0 ? "%.3f ms" : "%.3f s", s < 1.0 ? s * 1e3 : s);
  else
    std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  return b;
}

std::string pow2_label(i64 n) {
  if (n > 0 && (n & (n - 1)) == 0) {
    int e = 0;
    while ((i64(1) << e) != n) ++e;
    return "2^" + std::to_string(e);
  }
  return std::to_string(n);
}

// ---------------------------------------------------------------------------------------------
// timing, checking and reporting

enum class vkind { map, loop, eigen };
enum class check_mode { exact, relative, normwise };

template <class T>
struct variant {
  std::string name;  // "map", "map:terms", "loop", "loop-omp", "eigen", ...
  vkind kind;
  std::function<void()> run;
  const T* out;                 // its result (n_out elements), checked against "loop"'s
  std::function<void()> reset;  // untimed, before every run (may be empty)
  std::vector<double> seconds{};
  double err = 0;
};

struct case_info {
  std::string kernel = {}, dtype = {}, size = {};
  i64 elements = 0;
  double bytes = 0, flops = 0;
  check_mode check = check_mode::exact;
  bool streaming = false;
  std::string explain = {};
};

struct summary_row {
  std::string kernel, dtype, size, form;
  double bytes = 0, t_map = 0, t_loop = 0, t_eigen = 0, t_floor = 0;
  std::string loop_name, eigen_name, targets;
  bool bad = false;
};

struct report {
  csv_writer csv;
  std::vector<summary_row> rows;
  std::vector<std::string> mismatches;
  int targets_total = 0, targets_met = 0;
};

template <class T>
double error_of(const T* a, const T* ref, std::size_t n, check_mode mode) {
  double worst = 0, ref_max = 0;
  for (std::size_t e = 0; e < n; ++e) {
    const double r = double(ref[e]), d = std::abs(double(a[e]) - r);
    double x = d;
    if (mode == check_mode::relative)
      x = d / std::max(std::abs(r), double(std::numeric_limits<T>::min()));
    if (!(x <= worst)) worst = x;  // a NaN sticks
    ref_max = std::max(ref_max, std::abs(r));
  }
  if (mode == check_mode::normwise && ref_max > 0) worst /= ref_max;
  return worst;
}

void copy_bytes(unsigned char* d, const unsigned char* s, i64 n, bool par) {
  in_chunks(n, par, [&](i64 lo, i64 hi) { std::memcpy(d + lo, s + lo, std::size_t(hi - lo)); });
}

/// Runs the rounds of one kernel x dtype x size, prints its block, adds its CSV lines and
/// summary rows. The variant named "loop" is the reference.
template <class T>
void measure(const case_info& c, std::vector<variant<T>>& vs, std::size_t n_out, const options& opt,
             report& rep) {
  const int threads = max_threads();
  // The floor: memcpy of bytes/2 (it reads and writes `bytes` in all).
  const i64 half = std::max<i64>(64, i64(c.bytes / 2));
  std::vector<unsigned char> src(std::size_t(half), 1), dst(std::size_t(half), 0);
  struct floor_slot {
    std::string name;
    bool par;
    std::vector<double> seconds;
  };
  std::vector<floor_slot> floors{{"floor:memcpy", false, {}}};
  if (threads > 1) floors.push_back({"floor:memcpy-omp", true, {}});
  const std::size_t slots = vs.size() + floors.size();

  auto run_slot = [&](std::size_t k, bool timed) {
    if (k < vs.size()) {
      variant<T>& v = vs[k];
      if (v.reset) v.reset();
      clobber_memory();
      const auto t0 = clock_type::now();
      v.run();
      clobber_memory();
      const double dt = std::chrono::duration<double>(clock_type::now() - t0).count();
      if (timed) v.seconds.push_back(dt);
    } else {
      floor_slot& f = floors[k - vs.size()];
      clobber_memory();
      const auto t0 = clock_type::now();
      copy_bytes(dst.data(), src.data(), half, f.par);
      clobber_memory();
      const double dt = std::chrono::duration<double>(clock_type::now() - t0).count();
      if (timed) f.seconds.push_back(dt);
    }
  };
  for (std::size_t k = 0; k < slots; ++k) run_slot(k, false);  // warm-up, in order
  for (int r = 0; r < opt.reps; ++r)
    for (const std::size_t k : round_order(r, slots)) run_slot(k, true);

  // ---- checks
  const T* ref = nullptr;
  for (const auto& v : vs)
    if (v.name == "loop") ref = v.out;
  const double tol = c.check == check_mode::exact ? 0.0 : (sizeof(T) == 4 ? 1e-5 : 1e-12);
  for (auto& v : vs) v.err = error_of(v.out, ref, n_out, c.check);

  // ---- figures
  double t_floor = 1e300;
  std::string floor_name;
  for (const auto& f : floors)
    if (median(f.seconds) < t_floor) {
      t_floor = median(f.seconds);
      floor_name = f.name;
    }
  auto best_of = [&](vkind k, std::string& name) {
    double t = 0;
    for (const auto& v : vs)
      if (v.kind == k && (t == 0 || median(v.seconds) < t)) {
        t = median(v.seconds);
        name = v.name;
      }
    return t;
  };
  std::string loop_name, eigen_name;
  const double t_loop = best_of(vkind::loop, loop_name);
  const double t_eigen = best_of(vkind::eigen, eigen_name);
  double t_map0 = 0;
  for (const auto& v : vs)
    if (v.kind == vkind::map) {
      t_map0 = median(v.seconds);
      break;
    }

  const char* check_text = c.check == check_mode::exact      ? "exact"
                           : c.check == check_mode::relative ? "relative per element"
                                                             : "max|diff| / max|ref|";
  std::printf("\n%s  %s  %s  (%lld elements; %.2f MB streamed; check: %s", c.kernel.c_str(),
              c.dtype.c_str(), c.size.c_str(), (long long)c.elements, c.bytes * 1e-6, check_text);
  if (tol > 0) std::printf(" <= %.0e", tol);
  std::printf(")\n");
  {  // explain_local, indented
    std::string e = c.explain;
    std::size_t p = 0;
    while (p < e.size()) {
      const std::size_t q = std::min(e.find('\n', p), e.size());
      std::printf("    %s\n", e.substr(p, q - p).c_str());
      p = q + 1;
    }
  }
  std::printf("  %-12s %11s %11s %11s %9s %9s %10s %9s\n", "variant", "median", "min", "max",
              c.flops > 0 ? "GFLOP/s" : "GB/s", "floor%", "max err", "t / t_map");
  for (const auto& v : vs) {
    const double t = median(v.seconds);
    const auto [lo, hi] = std::minmax_element(v.seconds.begin(), v.seconds.end());
    const double rate = c.flops > 0 ? c.flops / t * 1e-9 : c.bytes / t * 1e-9;
    const bool bad = !(v.err <= tol);
    std::printf("  %-12s %11s %11s %11s %9.2f %8.1f%% %10.2e %8.2fx%s\n", v.name.c_str(),
                human_time(t).c_str(), human_time(*lo).c_str(), human_time(*hi).c_str(), rate,
                100.0 * t_floor / t, v.err, t / t_map0, bad ? "  MISMATCH" : "");
    rep.csv.row({"bench_kernels", c.kernel, c.dtype, csv_writer::cell(c.elements),
                 csv_writer::cell(std::llround(c.bytes)), v.name, csv_writer::cell(opt.reps),
                 csv_writer::cell(t), csv_writer::cell(*lo), csv_writer::cell(*hi),
                 csv_writer::cell(t / t_map0), csv_writer::cell(t_floor / t),
                 csv_writer::cell(v.err)});
    if (bad) {
      char line[256];
      std::snprintf(line, sizeof line, "%s %s %s %s: max err %.3g > %.0e", c.kernel.c_str(),
                    c.dtype.c_str(), c.size.c_str(), v.name.c_str(), v.err, tol);
      rep.mismatches.push_back(line);
    }
  }
  for (const auto& f : floors) {
    const double t = median(f.seconds);
    const auto [lo, hi] = std::minmax_element(f.seconds.begin(), f.seconds.end());
    rep.csv.row({"bench_kernels", c.kernel, c.dtype, csv_writer::cell(c.elements),
                 csv_writer::cell(std::llround(c.bytes)), f.name, csv_writer::cell(opt.reps),
                 csv_writer::cell(t), csv_writer::cell(*lo), csv_writer::cell(*hi),
                 csv_writer::cell(t / t_map0), csv_writer::cell(t_floor / t), ""});
  }
  std::printf("  floor: %s of %.2f MB (%s) = %s, %.2f GB/s\n", floor_name.c_str(),
              double(half) * 1e-6, floors.size() > 1 ? "faster of 1 thread / omp" : "1 thread",
              human_time(t_floor).c_str(), c.bytes / t_floor * 1e-9);
  for (const auto& v : vs) {
    if (v.kind != vkind::map) continue;
    const double t = median(v.seconds);
    const double rl = t_loop / t, re = t_eigen / t, fl = t_floor / t;
    const bool ok_l = rl >= 1.0, ok_e = re >= 1.0, ok_f = fl >= 0.7;
    std::string targets = std::string("loop ") + (ok_l ? "met" : "NOT MET") + ", eigen " +
                          (ok_e ? "met" : "NOT MET") + ", floor " +
                          (c.streaming ? (ok_f ? "met" : "NOT MET") : "n/a");
    rep.targets_total += c.streaming ? 3 : 2;
    rep.targets_met += int(ok_l) + int(ok_e) + (c.streaming ? int(ok_f) : 0);
    // The best (minimum) times are less disturbed by other processes than the medians: the
    // same ratios from them, beside.
    auto fastest = [&](vkind k) {
      double m = 1e300;
      for (const auto& w : vs)
        if (w.kind == k) m = std::min(m, *std::min_element(w.seconds.begin(), w.seconds.end()));
      return m;
    };
    const double tb = *std::min_element(v.seconds.begin(), v.seconds.end());
    std::printf("  %s: %.2fx %s, %.2fx %s, %.0f%% of floor -> %s  [best times: %.2fx, %.2fx]\n",
                v.name.c_str(), rl, loop_name.c_str(), re, eigen_name.c_str(), 100.0 * fl,
                targets.c_str(), fastest(vkind::loop) / tb, fastest(vkind::eigen) / tb);
    summary_row s;
    s.kernel = c.kernel;
    s.dtype = c.dtype;
    s.size = c.size;
    s.form = v.name;
    s.bytes = c.bytes;
    s.t_map = t;
    s.t_loop = t_loop;
    s.t_eigen = t_eigen;
    s.t_floor = t_floor;
    s.loop_name = loop_name;
    s.eigen_name = eigen_name;
    s.targets = targets;
    s.bad = !(v.err <= tol);
    rep.rows.push_back(s);
  }
  std::fflush(stdout);
}

/// Adds "loop" (one thread) and, with several OpenMP threads, "loop-omp"; f(par) runs it.
template <class T>
void add_loops(std::vector<variant<T>>& vs, std::function<void(bool)> f, const T* out1,
               const T* out_omp) {
  vs.push_back({"loop", vkind::loop, [f] { f(false); }, out1, {}});
  if (max_threads() > 1) vs.push_back({"loop-omp", vkind::loop, [f] { f(true); }, out_omp, {}});
}
template <class T>
void add_eigens(std::vector<variant<T>>& vs, std::function<void(bool)> f, const T* out1,
                const T* out_omp) {
  vs.push_back({"eigen", vkind::eigen, [f] { f(false); }, out1, {}});
  if (max_threads() > 1) vs.push_back({"eigen-omp", vkind::eigen, [f] { f(true); }, out_omp, {}});
}

template <class T>
using arr_t = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using cvec = Eigen::Map<const arr_t<T>>;
template <class T>
using vec = Eigen::Map<arr_t<T>>;
template <class T>
using rarr = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The result buffers of one kernel: one per variant that writes its own.
template <class T>
struct outputs {
  std::vector<T> map, map2, loop, loop_omp, eigen, eigen_omp;
  explicit outputs(std::size_t n) : map(n), map2(n), loop(n), loop_omp(n), eigen(n), eigen_omp(n) {}
};

// ---------------------------------------------------------------------------------------------
// element-wise: axpy, exp, tanhx, select

template <class T, class F>
__attribute__((noinline)) void unary_loop(i64 n, const T* x, T* y, bool par, F f) {
  (void)par;
  BENCH_OMP_FOR_IF
  for (i64 i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <class T, class F>
__attribute__((noinline)) void unary_eigen(i64 n, const T* x, T* y, bool par, F f) {
  in_chunks(n, par, [&](i64 lo, i64 hi) {
    const cvec<T> xs(x + lo, hi - lo);
    vec<T> ys(y + lo, hi - lo);
    ys = f(xs);
  });
}

template <class T>
void bench_unary(const std::string& kernel, i64 n, const options& opt, report& rep) {
  const std::size_t un = std::size_t(n);
  std::vector<T> x = uniform<T>(n, -4.0, 4.0, 1);
  outputs<T> o(un);
  wp::array<T, 1> X("x", {n}, x.data()), Y("y", {n}, o.map.data());
  auto [i] = wp::indices<1>();
  const T a = T(1.5), b = T(0.25), slope = T(0.1);
  const T* xp = x.data();

  case_info c{kernel, dtype_name<T>(), pow2_label(n), n, 2.0 * double(n) * sizeof(T)};
  c.streaming = true;
  std::vector<variant<T>> vs;
  auto add = [&](auto m, auto scalar, auto eig) {
    c.explain = wp::explain_local(m);
    vs.push_back({"map", vkind::map, [m] { wp::run(m); }, o.map.data(), {}});
    add_loops<T>(
        vs,
        [=, &o](bool par) {
          unary_loop<T>(n, xp, par ? o.loop_omp.data() : o.loop.data(), par, scalar);
        },
        o.loop.data(), o.loop_omp.data());
    add_eigens<T>(
        vs,
        [=, &o](bool par) {
          unary_eigen<T>(n, xp, par ? o.eigen_omp.data() : o.eigen.data(), par, eig);
        },
        o.eigen.data(), o.eigen_omp.data());
  };
  if (kernel == "axpy") {
    c.check = check_mode::exact;
    add(
        wp::map("axpy", wp::space(n), Y(i) = a * X(i) + b), [a, b](T v) { return a * v + b; },
        [a, b](const auto& xs) { return a * xs + b; });
  } else if (kernel == "exp") {
    c.check = check_mode::relative;
    add(
        wp::map("exp", wp::space(n), Y(i) = wp::exp(X(i))), [](T v) { return std::exp(v); },
        [](const auto& xs) { return xs.exp(); });
  } else if (kernel == "tanhx") {
    c.check = check_mode::relative;
    add(
        wp::map("tanhx", wp::space(n), Y(i) = wp::tanh(X(i)) * X(i)),
        [](T v) { return std::tanh(v) * v; }, [](const auto& xs) { return xs.tanh() * xs; });
  } else {  // select
    c.check = check_mode::exact;
    add(
        wp::map("select", wp::space(n), Y(i) = wp::select(X(i) > T(0), X(i), slope * X(i))),
        // Both arms first, then the choice: written `v > 0 ? v : slope * v`, GCC keeps a
        // branch (under the default -ftrapping-math it may not multiply where v > 0), a
        // mispredicted one per random sign; this form gives the same values and vectorises.
        [slope](T v) {
          const T neg = slope * v;
          return v > T(0) ? v : neg;
        },
        [slope](const auto& xs) { return (xs > T(0)).select(xs, slope * xs); });
  }
  measure<T>(c, vs, un, opt, rep);
}

// ---------------------------------------------------------------------------------------------
// row sums, row maxima, column sums of an R x C row-major matrix

template <class T>
__attribute__((noinline)) void rowsum_loop(i64 R, i64 C, const T* x, T* s, bool par) {
  (void)par;
  BENCH_OMP_FOR_IF
  for (i64 i = 0; i < R; ++i) {
    T acc = 0;
    for (i64 j = 0; j < C; ++j) acc += x[i * C + j];
    s[i] = acc;
  }
}
template <class T>
__attribute__((noinline)) void rowmax_loop(i64 R, i64 C, const T* x, T* m, bool par) {
  (void)par;
  BENCH_OMP_FOR_IF
  for (i64 i = 0; i < R; ++i) {
    T acc = -std::numeric_limits<T>::infinity();
    for (i64 j = 0; j < C; ++j) acc = std::max(acc, x[i * C + j]);
    m[i] = acc;
  }
}
template <class T>
__attribute__((noinline)) void colsum_loop(i64 R, i64 C, const T* x, T* s, bool par) {
  (void)par;
  constexpr i64 block = 1024;  // columns per task (a block of s stays in L1)
  BENCH_OMP_FOR_IF
  for (i64 j0 = 0; j0 < C; j0 += block) {
    const i64 j1 = std::min(C, j0 + block);
    for (i64 j = j0; j < j1; ++j) s[j] = 0;
    for (i64 i = 0; i < R; ++i)
      for (i64 j = j0; j < j1; ++j) s[j] += x[i * C + j];
  }
}

template <class T>
__attribute__((noinline)) void rows_eigen(const std::string& kernel, i64 R, i64 C, const T* x,
                                          T* out, bool par) {
  if (kernel == "colsum") {
    in_chunks(C, par, [&](i64 lo, i64 hi) {
      const Eigen::Map<const rarr<T>, 0, Eigen::OuterStride<>> xm(x + lo, R, hi - lo,
                                                                  Eigen::OuterStride<>(C));
      vec<T> s(out + lo, hi - lo);
      s = xm.colwise().sum().transpose();
    });
    return;
  }
  const bool max = kernel == "rowmax";
  in_chunks(R, par, [&](i64 lo, i64 hi) {
    const Eigen::Map<const rarr<T>> xm(x + lo * C, hi - lo, C);
    vec<T> s(out + lo, hi - lo);
    if (max)
      s = xm.rowwise().maxCoeff();
    else
      s = xm.rowwise().sum();
  });
}

template <class T>
void bench_rows(const std::string& kernel, i64 R, i64 C, const options& opt, report& rep) {
  std::vector<T> x = uniform<T>(R * C, -1.0, 1.0, 2);
  const bool cols = kernel == "colsum", max = kernel == "rowmax";
  const i64 n_out = cols ? C : R;
  outputs<T> o{std::size_t(n_out)};
  wp::array<T, 2> X("x", {R, C}, x.data());
  wp::array<T, 1> S("s", {n_out}, o.map.data()), S2("s_all", {n_out}, o.map2.data());
  auto [i, j] = wp::indices<2>();
  const T* xp = x.data();

  case_info c{kernel, dtype_name<T>(), std::to_string(R) + "x" + std::to_string(C), R * C,
              double(R * C + n_out) * sizeof(T)};
  c.streaming = true;
  c.check = max ? check_mode::exact : check_mode::normwise;
  std::vector<variant<T>> vs;
  const T init = max ? -std::numeric_limits<T>::infinity() : T(0);
  auto reset = [&o, init] { std::fill(o.map.begin(), o.map.end(), init); };
  auto add_maps = [&](auto m1, auto m2) {
    c.explain = wp::explain_local(m1) + wp::explain_local(m2);
    vs.push_back({"map", vkind::map, [m1] { wp::run(m1); }, o.map.data(), reset});
    vs.push_back({"map:all", vkind::map, [m2] { wp::run(m2); }, o.map2.data(), {}});
  };
  if (kernel == "rowsum")
    add_maps(wp::map("rowsum", wp::space(R, C), S(i) += X(i, j)),
             wp::map("rowsum_all", wp::space(R), S2(i) = wp::sum(X(i, wp::all))));
  else if (max)
    add_maps(wp::map("rowmax", wp::space(R, C), wp::max_into(S(i), X(i, j))),
             wp::map("rowmax_all", wp::space(R), S2(i) = wp::max_of(X(i, wp::all))));
  else
    add_maps(wp::map("colsum", wp::space(R, C), S(j) += X(i, j)),
             wp::map("colsum_all", wp::space(C), S2(i) = wp::sum(X(wp::all, i))));
  add_loops<T>(
      vs,
      [=, &o](bool par) {
        T* out = par ? o.loop_omp.data() : o.loop.data();
        if (cols)
          colsum_loop<T>(R, C, xp, out, par);
        else if (max)
          rowmax_loop<T>(R, C, xp, out, par);
        else
          rowsum_loop<T>(R, C, xp, out, par);
      },
      o.loop.data(), o.loop_omp.data());
  add_eigens<T>(
      vs,
      [=, &o](bool par) {
        rows_eigen<T>(kernel, R, C, xp, par ? o.eigen_omp.data() : o.eigen.data(), par);
      },
      o.eigen.data(), o.eigen_omp.data());
  measure<T>(c, vs, std::size_t(n_out), opt, rep);
}

// ---------------------------------------------------------------------------------------------
// softmax over the last axis (float32)

/// Runs a map with fusion off: a block budget larger than any box (exec/cpu/fusion.hpp).
template <class Map>
void run_unfused(const Map& m) {
  std::size_t& budget = wp::detail::fusion_budget_bytes();
  const std::size_t saved = budget;
  budget = std::size_t(-1) / 2;
  wp::run(m);
  budget = saved;
}

__attribute__((noinline)) void softmax_loop(const float* x, float* y, i64 R, i64 L, bool par) {
  (void)par;
  BENCH_OMP_FOR_IF
  for (i64 r = 0; r < R; ++r) {
    const float* xr = x + r * L;
    float* yr = y + r * L;
    float m = -std::numeric_limits<float>::infinity();
    for (i64 l = 0; l < L; ++l) m = std::max(m, xr[l]);
    float s = 0;
    for (i64 l = 0; l < L; ++l) {
      const float e = std::exp(xr[l] - m);
      yr[l] = e;
      s += e;
    }
    for (i64 l = 0; l < L; ++l) yr[l] = yr[l] / s;
  }
}

/// bench_attention_softmax.cpp's baseline: per row maxCoeff, exp, sum, scale by 1/sum (Eigen
/// arrays, vectorised; each row in L1); rows over the threads when `par`.
__attribute__((noinline)) void softmax_eigen(const float* x, float* y, i64 R, i64 L, bool par) {
  (void)par;
  BENCH_OMP_FOR_IF
  for (i64 r = 0; r < R; ++r) {
    Eigen::Map<const Eigen::ArrayXf> xr(x + r * L, L);
    Eigen::Map<Eigen::ArrayXf> yr(y + r * L, L);
    const float m = xr.maxCoeff();
    yr = (xr - m).exp();
    yr *= 1.0f / yr.sum();
  }
}

void bench_softmax(const options& opt, report& rep) {
  const i64 B = opt.softmax[0], H = opt.softmax[1], S = opt.softmax[2], L = opt.softmax[3];
  const i64 R = B * H * S, n = R * L;
  std::vector<float> xv = uniform<float>(n, -4.0, 4.0, 3);
  outputs<float> o{std::size_t(n)};
  wp::array<float, 4> x("x", {B, H, S, L}, xv.data()), e("e", {B, H, S, L}),
      y("y", {B, H, S, L}, o.map.data()), y2("y_program", {B, H, S, L}, o.map2.data());
  wp::array<float, 3> mx("mx", {B, H, S}), sum("sum", {B, H, S});
  auto reset = [&] {  // max_into and += combine into the old values
    std::fill(mx.data(), mx.data() + mx.size(), -std::numeric_limits<float>::infinity());
    std::fill(sum.data(), sum.data() + sum.size(), 0.0f);
  };

  auto [b, h, s, l] = wp::indices<4>();
  auto sm = wp::map("softmax", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)),
                    e(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)),
                    sum(b, h, s) += e(b, h, s, l), y(b, h, s, l) = e(b, h, s, l) / sum(b, h, s));
  // the same map writing y3, run with fusion off (its statements one after another)
  std::vector<float> unfused(static_cast<std::size_t>(n));
  wp::array<float, 4> y3("y_unfused", {B, H, S, L}, unfused.data());
  auto sm3 = wp::map("softmax", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)),
                     e(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)),
                     sum(b, h, s) += e(b, h, s, l), y3(b, h, s, l) = e(b, h, s, l) / sum(b, h, s));
  auto m1 = wp::map("max", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)));
  auto m2 = wp::map("expsum", wp::space(B, H, S, L),
                    sum(b, h, s) += wp::exp(x(b, h, s, l) - mx(b, h, s)));
  auto m3 = wp::map("norm", wp::space(B, H, S, L),
                    y2(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)) / sum(b, h, s));
  auto prog = wp::program(m1, m2, m3);

  char size[96];
  std::snprintf(size, sizeof size, "(%lld,%lld,%lld,%lld)", (long long)B, (long long)H,
                (long long)S, (long long)L);
  case_info c{"softmax", "f32", size, n, 2.0 * double(n) * sizeof(float)};
  c.check = check_mode::relative;
  c.explain =
      wp::explain_local(sm) + wp::explain_local(m1) + wp::explain_local(m2) + wp::explain_local(m3);
  const float* xp = xv.data();
  std::vector<variant<float>> vs;
  vs.push_back({"map", vkind::map, [sm] { wp::run(sm); }, o.map.data(), reset});
  vs.push_back({"map:unfused", vkind::map, [sm3] { run_unfused(sm3); }, unfused.data(), reset});
  vs.push_back({"program", vkind::map, [prog] { wp::run(prog); }, o.map2.data(), reset});
  add_loops<float>(
      vs,
      [=, &o](bool par) { softmax_loop(xp, par ? o.loop_omp.data() : o.loop.data(), R, L, par); },
      o.loop.data(), o.loop_omp.data());
  add_eigens<float>(
      vs,
      [=, &o](bool par) {
        softmax_eigen(xp, par ? o.eigen_omp.data() : o.eigen.data(), R, L, par);
      },
      o.eigen.data(), o.eigen_omp.data());
  measure<float>(c, vs, std::size_t(n), opt, rep);
}

// ---------------------------------------------------------------------------------------------
// layer norm over rows (float32)

constexpr float ln_eps = 1e-5f;

__attribute__((noinline)) void layernorm_loop(const float* x, const float* g, const float* bt,
                                              float* z, i64 N, i64 D, bool par) {
  (void)par;
  const float inv_d = 1.0f / float(D);
  BENCH_OMP_FOR_IF
  for (i64 i = 0; i < N; ++i) {
    const float* xr = x + i * D;
    float* zr = z + i * D;
    float mu = 0;
    for (i64 j = 0; j < D; ++j) mu += xr[j] * inv_d;
    float var = 0;
    for (i64 j = 0; j < D; ++j) var += (xr[j] - mu) * (xr[j] - mu) * inv_d;
    const float sd = std::sqrt(var + ln_eps);
    for (i64 j = 0; j < D; ++j) zr[j] = (xr[j] - mu) / sd * g[j] + bt[j];
  }
}

__attribute__((noinline)) void layernorm_eigen(const float* x, const float* g, const float* bt,
                                               float* z, i64 N, i64 D, bool par) {
  (void)par;
  const float inv_d = 1.0f / float(D);
  const cvec<float> gm(g, D), bm(bt, D);
  BENCH_OMP_FOR_IF
  for (i64 i = 0; i < N; ++i) {
    const cvec<float> xr(x + i * D, D);
    vec<float> zr(z + i * D, D);
    const float mu = (xr * inv_d).sum();
    const float var = ((xr - mu).square() * inv_d).sum();
    zr = (xr - mu) / std::sqrt(var + ln_eps) * gm + bm;
  }
}

void bench_layernorm(const options& opt, report& rep) {
  const i64 N = opt.ln_rows, D = opt.ln_cols;
  std::vector<float> xv = uniform<float>(N * D, -2.0, 2.0, 4);
  std::vector<float> gv = uniform<float>(D, 0.5, 1.5, 5), bv = uniform<float>(D, -0.5, 0.5, 6);
  outputs<float> o{std::size_t(N * D)};
  wp::array<float, 2> x("x", {N, D}, xv.data()), z("z", {N, D}, o.map.data());
  wp::array<float, 1> mu("mu", {N}), var("var", {N}), gamma("gamma", {D}, gv.data()),
      beta("beta", {D}, bv.data());
  auto reset = [&] {
    std::fill(mu.data(), mu.data() + N, 0.0f);
    std::fill(var.data(), var.data() + N, 0.0f);
  };
  auto [i, n] = wp::indices<2>();
  const float inv_d = 1.0f / float(D), eps = ln_eps;
  auto mean = wp::map("mean", wp::space(N, D), mu(i) += x(i, n) * inv_d);
  auto vari =
      wp::map("var", wp::space(N, D), var(i) += (x(i, n) - mu(i)) * (x(i, n) - mu(i)) * inv_d);
  auto norm = wp::map("norm", wp::space(N, D),
                      z(i, n) = (x(i, n) - mu(i)) / wp::sqrt(var(i) + eps) * gamma(n) + beta(n));
  auto prog = wp::program(mean, vari, norm);
  // the same three statements as one map (fused), writing z1
  std::vector<float> one(static_cast<std::size_t>(N * D));
  wp::array<float, 2> z1("z_one_map", {N, D}, one.data());
  auto ln = wp::map("layernorm", wp::space(N, D), mu(i) += x(i, n) * inv_d,
                    var(i) += (x(i, n) - mu(i)) * (x(i, n) - mu(i)) * inv_d,
                    z1(i, n) = (x(i, n) - mu(i)) / wp::sqrt(var(i) + eps) * gamma(n) + beta(n));
  wp::array<float, 2> z3("z_unfused", {N, D}, o.map2.data());  // run with fusion off
  auto ln3 = wp::map("layernorm", wp::space(N, D), mu(i) += x(i, n) * inv_d,
                     var(i) += (x(i, n) - mu(i)) * (x(i, n) - mu(i)) * inv_d,
                     z3(i, n) = (x(i, n) - mu(i)) / wp::sqrt(var(i) + eps) * gamma(n) + beta(n));

  case_info c{"layernorm", "f32", std::to_string(N) + "x" + std::to_string(D), N * D,
              double(2 * N * D + 2 * D) * sizeof(float)};
  c.check = check_mode::normwise;
  c.explain = wp::explain_local(ln) + wp::explain_local(mean) + wp::explain_local(vari) +
              wp::explain_local(norm);
  const float *xp = xv.data(), *gp = gv.data(), *bp = bv.data();
  std::vector<variant<float>> vs;
  vs.push_back({"map", vkind::map, [ln] { wp::run(ln); }, one.data(), reset});
  vs.push_back({"map:unfused", vkind::map, [ln3] { run_unfused(ln3); }, o.map2.data(), reset});
  vs.push_back({"program", vkind::map, [prog] { wp::run(prog); }, o.map.data(), reset});
  add_loops<float>(
      vs,
      [=, &o](bool par) {
        layernorm_loop(xp, gp, bp, par ? o.loop_omp.data() : o.loop.data(), N, D, par);
      },
      o.loop.data(), o.loop_omp.data());
  add_eigens<float>(
      vs,
      [=, &o](bool par) {
        layernorm_eigen(xp, gp, bp, par ? o.eigen_omp.data() : o.eigen.data(), N, D, par);
      },
      o.eigen.data(), o.eigen_omp.data());
  measure<float>(c, vs, std::size_t(N * D), opt, rep);
}

// ---------------------------------------------------------------------------------------------
// weighted K x K stencils over the interior of an n x n grid (float64)

template <int K>
__attribute__((noinline)) void stencil_loop(const double* x, const double* w, double* y, i64 n,
                                            bool par) {
  (void)par;
  constexpr int h = K / 2;
  double c[K * K];
  for (int e = 0; e < K * K; ++e) c[e] = w[e];
  BENCH_OMP_FOR_IF
  for (i64 i = h; i < n - h; ++i)
    for (i64 j = h; j < n - h; ++j) {
      double acc = 0;
      for (int r = 0; r < K; ++r)
        for (int s = 0; s < K; ++s) acc += c[r * K + s] * x[(i + r - h) * n + j + s - h];
      y[i * n + j] = acc;
    }
}

/// Rows [lo, hi) of the interior as one Eigen expression of K*K shifted blocks.
template <int K, std::size_t... E>
void stencil_eigen_rows(const double* x, const double* c, double* y, i64 n, i64 lo, i64 hi,
                        std::index_sequence<E...>) {
  constexpr int h = K / 2;
  const i64 m = n - 2 * h, rows = hi - lo;
  const Eigen::Map<const rarr<double>> X(x, n, n);
  Eigen::Map<rarr<double>> Y(y, n, n);
  Y.block(lo, h, rows, m) = (... + (c[E] * X.block(lo - h + i64(E) / K, i64(E) % K, rows, m)));
}

template <int K>
__attribute__((noinline)) void stencil_eigen(const double* x, const double* w, double* y, i64 n,
                                             bool par) {
  constexpr int h = K / 2;
  in_chunks(n - 2 * h, par, [&](i64 lo, i64 hi) {
    stencil_eigen_rows<K>(x, w, y, n, lo + h, hi + h, std::make_index_sequence<K * K>{});
  });
}

/// The K*K terms spelled out as one sum, c[0] * x(i-h, j-h) + c[1] * x(i-h, j-h+1) + ...,
/// added left to right (for K = 3 the very expression bench_stencil<3> writes by hand).
template <int K, class A, class I, class J, std::size_t... E>
auto stencil_terms(const A& X, I i, J j, const double* c, std::index_sequence<E...>) {
  return (... + (c[E] * X(i + (int(E) / K - K / 2), j + (int(E) % K - K / 2))));
}

template <int K>
void bench_stencil(const options& opt, report& rep) {
  constexpr int h = K / 2;
  const i64 n = opt.stencil, m = n - 2 * h;
  std::vector<double> xv = uniform<double>(n * n, -1.0, 1.0, 7);
  std::vector<double> wv = uniform<double>(K * K, -1.0, 1.0, 8);
  outputs<double> o{std::size_t(n * n)};
  wp::array<double, 2> X("x", {n, n}, xv.data()), W("w", {K, K}, wv.data()),
      Yn("y_nested", {n, n}, o.map.data()), Yt("y_terms", {n, n}, o.map2.data());
  auto [i, j, r, s] = wp::indices<4>();
  const double* c = wv.data();
  // Nested inner ranges, as the issue writes them.
  auto nested =
      wp::map("stencil_nested", wp::space({h, n - h}, {h, n - h}),
              Yn(i, j) = wp::sum(wp::range(r, 0, K),
                                 wp::sum(wp::range(s, 0, K), W(r, s) * X(i + r - h, j + s - h))));
  auto terms = [&] {
    if constexpr (K == 3)  // spelled out by hand
      return wp::map("stencil_terms", wp::space({1, n - 1}, {1, n - 1}),
                     Yt(i, j) = c[0] * X(i - 1, j - 1) + c[1] * X(i - 1, j) +
                                c[2] * X(i - 1, j + 1) + c[3] * X(i, j - 1) + c[4] * X(i, j) +
                                c[5] * X(i, j + 1) + c[6] * X(i + 1, j - 1) + c[7] * X(i + 1, j) +
                                c[8] * X(i + 1, j + 1));
    else  // the same form with 25 terms, generated
      return wp::map("stencil_terms", wp::space({h, n - h}, {h, n - h}),
                     Yt(i, j) = stencil_terms<K>(X, i, j, c, std::make_index_sequence<K * K>{}));
  }();

  case_info c_{"stencil" + std::to_string(K), "f64", std::to_string(n) + "x" + std::to_string(n),
               n * n, double(n * n + m * m) * sizeof(double)};
  c_.flops = 2.0 * K * K * double(m * m);
  c_.check = check_mode::normwise;
  c_.explain = wp::explain_local(nested) + wp::explain_local(terms);
  const double *xp = xv.data(), *wp_ = wv.data();
  std::vector<variant<double>> vs;
  vs.push_back({"map:nested", vkind::map, [nested] { wp::run(nested); }, o.map.data(), {}});
  vs.push_back({"map:terms", vkind::map, [terms] { wp::run(terms); }, o.map2.data(), {}});
  add_loops<double>(
      vs,
      [=, &o](bool par) {
        stencil_loop<K>(xp, wp_, par ? o.loop_omp.data() : o.loop.data(), n, par);
      },
      o.loop.data(), o.loop_omp.data());
  add_eigens<double>(
      vs,
      [=, &o](bool par) {
        stencil_eigen<K>(xp, wp_, par ? o.eigen_omp.data() : o.eigen.data(), n, par);
      },
      o.eigen.data(), o.eigen_omp.data());
  measure<double>(c_, vs, std::size_t(n * n), opt, rep);
}

// ---------------------------------------------------------------------------------------------
// 1-D convolution, K taps, valid (float32)

__attribute__((noinline)) void conv1d_loop(const float* x, const float* w, float* y, i64 m, i64 K,
                                           bool par) {
  (void)par;
  BENCH_OMP_FOR_IF
  for (i64 i = 0; i < m; ++i) {
    float acc = 0;
    for (i64 k = 0; k < K; ++k) acc += w[k] * x[i + k];
    y[i] = acc;
  }
}

/// Blocks of 4096 outputs (in L1): y = w(0) x[b..] + w(1) x[b+1..] + ... as K vector updates.
__attribute__((noinline)) void conv1d_eigen(const float* x, const float* w, float* y, i64 m, i64 K,
                                            bool par) {
  in_chunks(m, par, [&](i64 lo, i64 hi) {
    for (i64 b0 = lo; b0 < hi; b0 += 4096) {
      const i64 len = std::min<i64>(4096, hi - b0);
      vec<float> ys(y + b0, len);
      ys = w[0] * cvec<float>(x + b0, len);
      for (i64 k = 1; k < K; ++k) ys += w[k] * cvec<float>(x + b0 + k, len);
    }
  });
}

void bench_conv1d(const options& opt, report& rep) {
  const i64 n = opt.conv1d_n, K = opt.conv1d_k, m = n - K + 1;
  std::vector<float> xv = uniform<float>(n, -1.0, 1.0, 9), wv = uniform<float>(K, -1.0, 1.0, 10);
  outputs<float> o{std::size_t(m)};
  wp::array<float, 1> X("x", {n}, xv.data()), W("w", {K}, wv.data()), Y("y", {m}, o.map.data()),
      Y2("y_acc", {m}, o.map2.data());
  auto [i, k] = wp::indices<2>();
  auto inner = wp::map("conv1d", wp::space(m), Y(i) = wp::sum(wp::range(k, 0, K), W(k) * X(i + k)));
  auto acc = wp::map("conv1d_acc", wp::space(m, K), Y2(i) += W(k) * X(i + k));

  case_info c{"conv1d", "f32", pow2_label(n) + " K=" + std::to_string(K), n,
              double(n + m + K) * sizeof(float)};
  c.flops = 2.0 * double(K) * double(m);
  c.check = check_mode::normwise;
  c.explain = wp::explain_local(inner) + wp::explain_local(acc);
  const float *xp = xv.data(), *wp_ = wv.data();
  std::vector<variant<float>> vs;
  vs.push_back({"map", vkind::map, [inner] { wp::run(inner); }, o.map.data(), {}});
  vs.push_back({"map:+=", vkind::map, [acc] { wp::run(acc); }, o.map2.data(),
                [&o] { std::fill(o.map2.begin(), o.map2.end(), 0.0f); }});
  add_loops<float>(
      vs,
      [=, &o](bool par) {
        conv1d_loop(xp, wp_, par ? o.loop_omp.data() : o.loop.data(), m, K, par);
      },
      o.loop.data(), o.loop_omp.data());
  add_eigens<float>(
      vs,
      [=, &o](bool par) {
        conv1d_eigen(xp, wp_, par ? o.eigen_omp.data() : o.eigen.data(), m, K, par);
      },
      o.eigen.data(), o.eigen_omp.data());
  measure<float>(c, vs, std::size_t(m), opt, rep);
}

// ---------------------------------------------------------------------------------------------
// 2-D convolution, 3 x 3, valid (float32): out(n,k,y,x) = sum_c,r,s w(k,c,r,s) in(n,c,y+r,x+s)

__attribute__((noinline)) void conv2d_loop(const float* in, const float* w, float* out, i64 N,
                                           i64 C, i64 K, i64 H, i64 W, bool par) {
  (void)par;
  const i64 OH = H - 2, OW = W - 2;
  BENCH_OMP_FOR2_IF
  for (i64 n = 0; n < N; ++n)
    for (i64 k = 0; k < K; ++k) {
      float* o = out + (n * K + k) * OH * OW;
      for (i64 e = 0; e < OH * OW; ++e) o[e] = 0;
      for (i64 c = 0; c < C; ++c)
        for (i64 r = 0; r < 3; ++r)
          for (i64 s = 0; s < 3; ++s) {
            const float wv = w[((k * C + c) * 3 + r) * 3 + s];
            const float* ip = in + ((n * C + c) * H + r) * W + s;
            for (i64 y = 0; y < OH; ++y)
              for (i64 x = 0; x < OW; ++x) o[y * OW + x] += wv * ip[y * W + x];
          }
    }
}

using rmatf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// im2col + GEMM per image: out_n (K x OH*OW) = W (K x 9C) * patches (9C x OH*OW).
struct conv2d_gemm {
  i64 N, C, K, H, W, OH, OW;
  rmatf patches;  // allocated once, outside the timed region
  conv2d_gemm(i64 n, i64 c, i64 k, i64 h, i64 w)
      : N(n), C(c), K(k), H(h), W(w), OH(h - 2), OW(w - 2), patches(9 * c, (h - 2) * (w - 2)) {}
  void operator()(const float* in, const float* w, float* out) {
    const Eigen::Map<const rmatf> wm(w, K, 9 * C);
    for (i64 n = 0; n < N; ++n) {
      for (i64 c = 0; c < C; ++c)
        for (i64 r = 0; r < 3; ++r)
          for (i64 s = 0; s < 3; ++s) {
            float* p = patches.data() + ((c * 3 + r) * 3 + s) * OH * OW;
            const float* ip = in + ((n * C + c) * H + r) * W + s;
            for (i64 y = 0; y < OH; ++y) std::memcpy(p + y * OW, ip + y * W, sizeof(float) * OW);
          }
      Eigen::Map<rmatf> on(out + n * K * OH * OW, K, OH * OW);
      on.noalias() = wm * patches;
    }
  }
};

void bench_conv2d(const options& opt, report& rep) {
  const i64 N = opt.conv2d[0], C = opt.conv2d[1], K = opt.conv2d[2], H = opt.conv2d[3],
            W = opt.conv2d[4], OH = H - 2, OW = W - 2;
  const i64 n_in = N * C * H * W, n_w = K * C * 9, n_out = N * K * OH * OW;
  std::vector<float> iv = uniform<float>(n_in, -1.0, 1.0, 11),
                     wv = uniform<float>(n_w, -0.1, 0.1, 12);
  outputs<float> o{std::size_t(n_out)};
  wp::array<float, 4> In("in", {N, C, H, W}, iv.data()), Wt("w", {K, C, 3, 3}, wv.data()),
      O("out", {N, K, OH, OW}, o.map.data()), O2("out_acc", {N, K, OH, OW}, o.map2.data());
  auto [n, k, y, x, c, r, s] = wp::indices<7>();
  auto nested =
      wp::map("conv2d", wp::space(N, K, OH, OW),
              O(n, k, y, x) = wp::sum(
                  wp::range(c, 0, C),
                  wp::sum(wp::range(r, 0, 3),
                          wp::sum(wp::range(s, 0, 3), Wt(k, c, r, s) * In(n, c, y + r, x + s)))));
  auto acc = wp::map("conv2d_acc", wp::space(N, K, OH, OW, C, 3, 3),
                     O2(n, k, y, x) += Wt(k, c, r, s) * In(n, c, y + r, x + s));

  char size[96];
  std::snprintf(size, sizeof size, "N%lld C%lld K%lld %lldx%lld", (long long)N, (long long)C,
                (long long)K, (long long)H, (long long)W);
  case_info ci{"conv2d", "f32", size, n_in, double(n_in + n_w + n_out) * sizeof(float)};
  ci.flops = 2.0 * double(n_out) * double(9 * C);
  ci.check = check_mode::normwise;
  ci.explain = wp::explain_local(nested) + wp::explain_local(acc);
  const float *ip = iv.data(), *wp_ = wv.data();
  auto gemm = std::make_shared<conv2d_gemm>(N, C, K, H, W);
  std::vector<variant<float>> vs;
  vs.push_back({"map", vkind::map, [nested] { wp::run(nested); }, o.map.data(), {}});
  vs.push_back({"map:+=", vkind::map, [acc] { wp::run(acc); }, o.map2.data(),
                [&o] { std::fill(o.map2.begin(), o.map2.end(), 0.0f); }});
  add_loops<float>(
      vs,
      [=, &o](bool par) {
        conv2d_loop(ip, wp_, par ? o.loop_omp.data() : o.loop.data(), N, C, K, H, W, par);
      },
      o.loop.data(), o.loop_omp.data());
  vs.push_back({"eigen-gemm",
                vkind::eigen,
                [=, &o] { (*gemm)(ip, wp_, o.eigen.data()); },
                o.eigen.data(),
                {}});
  measure<float>(ci, vs, std::size_t(n_out), opt, rep);
}

// ---------------------------------------------------------------------------------------------
// a convolution layer (float32): grouped, strided, zero-padded, its three maps as wp::nn::conv2d
// and its backward write them

/// x (N, C, H, W), w (K, Cg, R, R), y and dy (N, K, Ho, Wo), dw as w, and the input gradient
/// over the padded extents, dxp (N, C, Hp, Wp): every row and column a window reads.
struct conv_shape {
  i64 N, C, K, H, W, R, st, p, G;
  i64 Cg() const { return C / G; }
  i64 Kg() const { return K / G; }
  i64 Ho() const { return (H + 2 * p - R) / st + 1; }
  i64 Wo() const { return (W + 2 * p - R) / st + 1; }
  i64 Hp() const { return st * (Ho() - 1) + R; }
  i64 Wp() const { return st * (Wo() - 1) + R; }
};

/// y(n, k, i, j) = sum_{c, r, s} x(n, g Cg + c, st i + r - p, st j + s - p) w(k, c, r, s),
/// g = k / Kg; rows of the window outside the image skipped, columns tested per element.
__attribute__((noinline)) void convlayer_fwd_loop(const conv_shape& q, const float* x,
                                                  const float* w, float* y, bool par) {
  (void)par;
  const i64 N = q.N, C = q.C, K = q.K, H = q.H, W = q.W, R = q.R, st = q.st, p = q.p;
  const i64 Cg = q.Cg(), Kg = q.Kg(), Ho = q.Ho(), Wo = q.Wo();
  BENCH_OMP_FOR2_IF
  for (i64 n = 0; n < N; ++n)
    for (i64 k = 0; k < K; ++k) {
      const i64 g = k / Kg;
      float* o = y + (n * K + k) * Ho * Wo;
      for (i64 e = 0; e < Ho * Wo; ++e) o[e] = 0;
      for (i64 c = 0; c < Cg; ++c) {
        const float* xc = x + (n * C + g * Cg + c) * H * W;
        for (i64 r = 0; r < R; ++r)
          for (i64 s = 0; s < R; ++s) {
            const float wv = w[((k * Cg + c) * R + r) * R + s];
            for (i64 i = 0; i < Ho; ++i) {
              const i64 yy = st * i + r - p;
              if (yy < 0 || yy >= H) continue;  // a padding row: zeros
              for (i64 j = 0; j < Wo; ++j) {
                const i64 xx = st * j + s - p;
                if (xx >= 0 && xx < W) o[i * Wo + j] += wv * xc[yy * W + xx];
              }
            }
          }
      }
    }
}

/// dw(k, c, r, s) = sum_{n, i, j} dy(n, k, i, j) x(n, g Cg + c, st i + r - p, st j + s - p):
/// each image's sum first, then added (one float sum over all N Ho Wo terms would lose digits).
__attribute__((noinline)) void convlayer_dw_loop(const conv_shape& q, const float* x,
                                                 const float* dy, float* dw, bool par) {
  (void)par;
  const i64 N = q.N, C = q.C, K = q.K, H = q.H, W = q.W, R = q.R, st = q.st, p = q.p;
  const i64 Cg = q.Cg(), Kg = q.Kg(), Ho = q.Ho(), Wo = q.Wo();
  BENCH_OMP_FOR2_IF
  for (i64 k = 0; k < K; ++k)
    for (i64 c = 0; c < Cg; ++c) {
      const i64 g = k / Kg;
      for (i64 r = 0; r < R; ++r)
        for (i64 s = 0; s < R; ++s) {
          float acc = 0;
          for (i64 n = 0; n < N; ++n) {
            const float* d = dy + (n * K + k) * Ho * Wo;
            const float* xc = x + (n * C + g * Cg + c) * H * W;
            float part = 0;
            for (i64 i = 0; i < Ho; ++i) {
              const i64 yy = st * i + r - p;
              if (yy < 0 || yy >= H) continue;
              for (i64 j = 0; j < Wo; ++j) {
                const i64 xx = st * j + s - p;
                if (xx >= 0 && xx < W) part += d[i * Wo + j] * xc[yy * W + xx];
              }
            }
            acc += part;
          }
          dw[((k * Cg + c) * R + r) * R + s] = acc;
        }
    }
}

/// dxp(n, g Cg + c, st i + r, st j + s) += dy(n, g Kg + k, i, j) w(g Kg + k, c, r, s): each
/// (image, channel) plane zeroed, then every window's products added into it.
__attribute__((noinline)) void convlayer_dx_loop(const conv_shape& q, const float* w,
                                                 const float* dy, float* dxp, bool par) {
  (void)par;
  const i64 N = q.N, C = q.C, K = q.K, R = q.R, st = q.st;
  const i64 Cg = q.Cg(), Kg = q.Kg(), Ho = q.Ho(), Wo = q.Wo(), Hp = q.Hp(), Wp = q.Wp();
  BENCH_OMP_FOR2_IF
  for (i64 n = 0; n < N; ++n)
    for (i64 cc = 0; cc < C; ++cc) {
      const i64 g = cc / Cg, c = cc % Cg;
      float* d = dxp + (n * C + cc) * Hp * Wp;
      for (i64 e = 0; e < Hp * Wp; ++e) d[e] = 0;
      for (i64 k = g * Kg; k < (g + 1) * Kg; ++k) {
        const float* dk = dy + (n * K + k) * Ho * Wo;
        for (i64 r = 0; r < R; ++r)
          for (i64 s = 0; s < R; ++s) {
            const float wv = w[((k * Cg + c) * R + r) * R + s];
            for (i64 i = 0; i < Ho; ++i)
              for (i64 j = 0; j < Wo; ++j) d[(st * i + r) * Wp + st * j + s] += wv * dk[i * Wo + j];
          }
      }
    }
}

/// im2col + one GEMM per image and group (Eigen's; the BLAS's with EIGEN_USE_BLAS):
///   fwd  y_ng (Kg x Ho Wo) = w_g (Kg x Cg R R) * cols (Cg R R x Ho Wo)
///   dW   dw_g (Kg x Cg R R) += dy_ng (Kg x Ho Wo) * cols^T
///   dX   cols = w_g^T * dy_ng, then added into dxp window by window (col2im).
struct convlayer_gemm {
  conv_shape q;
  i64 Cg, Kg, Ho, Wo, Hp, Wp, CRR, HW;
  rmatf cols;  // one image's and group's patches, allocated once, outside the timed region
  explicit convlayer_gemm(const conv_shape& s)
      : q(s),
        Cg(s.Cg()),
        Kg(s.Kg()),
        Ho(s.Ho()),
        Wo(s.Wo()),
        Hp(s.Hp()),
        Wp(s.Wp()),
        CRR(s.Cg() * s.R * s.R),
        HW(s.Ho() * s.Wo()),
        cols(CRR, HW) {}

  /// cols = the windows of image n, group g: row (c, r, s), column (i, j); zeros in the padding.
  void im2col(const float* x, i64 n, i64 g) {
    const i64 C = q.C, H = q.H, W = q.W, R = q.R, st = q.st, p = q.p;
    for (i64 c = 0; c < Cg; ++c) {
      const float* xc = x + (n * C + g * Cg + c) * H * W;
      for (i64 r = 0; r < R; ++r)
        for (i64 s = 0; s < R; ++s) {
          float* row = cols.data() + ((c * R + r) * R + s) * HW;
          for (i64 i = 0; i < Ho; ++i) {
            float* o = row + i * Wo;
            const i64 yy = st * i + r - p;
            if (yy < 0 || yy >= H) {
              std::fill(o, o + Wo, 0.0f);
              continue;
            }
            for (i64 j = 0; j < Wo; ++j) {
              const i64 xx = st * j + s - p;
              o[j] = xx >= 0 && xx < W ? xc[yy * W + xx] : 0.0f;
            }
          }
        }
    }
  }
  void forward(const float* x, const float* w, float* y) {
    for (i64 n = 0; n < q.N; ++n)
      for (i64 g = 0; g < q.G; ++g) {
        im2col(x, n, g);
        const Eigen::Map<const rmatf> wg(w + g * Kg * CRR, Kg, CRR);
        Eigen::Map<rmatf> yg(y + (n * q.K + g * Kg) * HW, Kg, HW);
        yg.noalias() = wg * cols;
      }
  }
  void weight_gradient(const float* x, const float* dy, float* dw) {
    for (i64 n = 0; n < q.N; ++n)
      for (i64 g = 0; g < q.G; ++g) {
        im2col(x, n, g);
        const Eigen::Map<const rmatf> dyg(dy + (n * q.K + g * Kg) * HW, Kg, HW);
        Eigen::Map<rmatf> dwg(dw + g * Kg * CRR, Kg, CRR);
        if (n == 0)
          dwg.noalias() = dyg * cols.transpose();
        else
          dwg.noalias() += dyg * cols.transpose();
      }
  }
  void input_gradient(const float* w, const float* dy, float* dxp) {
    const i64 C = q.C, R = q.R, st = q.st;
    std::fill(dxp, dxp + q.N * C * Hp * Wp, 0.0f);
    for (i64 n = 0; n < q.N; ++n)
      for (i64 g = 0; g < q.G; ++g) {
        const Eigen::Map<const rmatf> wg(w + g * Kg * CRR, Kg, CRR);
        const Eigen::Map<const rmatf> dyg(dy + (n * q.K + g * Kg) * HW, Kg, HW);
        cols.noalias() = wg.transpose() * dyg;
        for (i64 c = 0; c < Cg; ++c) {  // col2im
          float* d = dxp + (n * C + g * Cg + c) * Hp * Wp;
          for (i64 r = 0; r < R; ++r)
            for (i64 s = 0; s < R; ++s) {
              const float* row = cols.data() + ((c * R + r) * R + s) * HW;
              for (i64 i = 0; i < Ho; ++i)
                for (i64 j = 0; j < Wo; ++j) d[(st * i + r) * Wp + st * j + s] += row[i * Wo + j];
            }
        }
      }
  }
};

void bench_convlayer(const options& opt, report& rep) {
  const std::vector<i64>& v = opt.convlayer;
  const conv_shape q{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
  const i64 N = q.N, C = q.C, K = q.K, H = q.H, W = q.W, R = q.R, st = q.st, p = q.p, G = q.G;
  const i64 Cg = q.Cg(), Kg = q.Kg(), Ho = q.Ho(), Wo = q.Wo(), Hp = q.Hp(), Wp = q.Wp();
  const i64 n_x = N * C * H * W, n_w = K * Cg * R * R, n_y = N * K * Ho * Wo,
            n_dxp = N * C * Hp * Wp;
  std::vector<float> xv = uniform<float>(n_x, -1.0, 1.0, 13),
                     wv = uniform<float>(n_w, -0.1, 0.1, 14),
                     dyv = uniform<float>(n_y, -1.0, 1.0, 15);
  outputs<float> oy{std::size_t(n_y)}, odw{std::size_t(n_w)}, odx{std::size_t(n_dxp)};
  wp::array<float, 4> X("x", {N, C, H, W}, xv.data()), Wt("w", {K, Cg, R, R}, wv.data()),
      DY("dy", {N, K, Ho, Wo}, dyv.data()), Y("y", {N, K, Ho, Wo}, oy.map.data()),
      DW("dw", {K, Cg, R, R}, odw.map.data()), DXP("dxp", {N, C, Hp, Wp}, odx.map.data());
  auto [n, g, k, i, j, c, r, s] = wp::indices<8>();
  const auto space = wp::space(N, G, Kg, Ho, Wo, Cg, R, R);
  auto xp = wp::padded(X, 0.0f);
  auto fwd = wp::map("convlayer", space,
                     Y(n, Kg * g + k, i, j) +=
                     xp(n, Cg * g + c, st * i + r - p, st * j + s - p) * Wt(Kg * g + k, c, r, s));
  auto dwm = wp::map(
      "convlayer.dw", space,
      DW(Kg * g + k, c, r, s) +=
      DY(n, Kg * g + k, i, j) * wp::padded(X, 0.0f)(n, Cg * g + c, st * i + r - p, st * j + s - p));
  auto dxm = wp::map("convlayer.dx", space,
                     DXP(n, Cg * g + c, st * i + r, st * j + s) +=
                     DY(n, Kg * g + k, i, j) * Wt(Kg * g + k, c, r, s));

  char size[128];
  std::snprintf(size, sizeof size, "N%lld C%lld K%lld %lldx%lld R%lld s%lld p%lld g%lld",
                (long long)N, (long long)C, (long long)K, (long long)H, (long long)W, (long long)R,
                (long long)st, (long long)p, (long long)G);
  const double flops = 2.0 * double(n_y) * double(Cg * R * R);
  const float *xp_ = xv.data(), *wp_ = wv.data(), *dyp = dyv.data();
  auto gemm = std::make_shared<convlayer_gemm>(q);
  // One case per map: its kernel name (the CSV's kernel column), main input, bytes, map, the
  // loop f(out, par) and the Eigen GEMM f(out), the result's elements.
  auto one_case = [&](const char* kernel, i64 elements, i64 bytes_elements, const auto& m,
                      outputs<float>& o, std::function<void(float*, bool)> loop,
                      std::function<void(float*)> eig) {
    case_info ci{kernel, "f32", size, elements, double(bytes_elements) * sizeof(float)};
    ci.flops = flops;
    ci.check = check_mode::normwise;
    ci.explain = wp::explain_local(m);
    std::vector<variant<float>> vs;
    vs.push_back({"map", vkind::map, [m] { wp::run(m); }, o.map.data(),
                  [&o] { std::fill(o.map.begin(), o.map.end(), 0.0f); }});
    add_loops<float>(
        vs, [loop, &o](bool par) { loop(par ? o.loop_omp.data() : o.loop.data(), par); },
        o.loop.data(), o.loop_omp.data());
    vs.push_back(
        {"eigen-gemm", vkind::eigen, [eig, &o] { eig(o.eigen.data()); }, o.eigen.data(), {}});
    measure<float>(ci, vs, o.map.size(), opt, rep);
  };
  one_case(
      "convlayer fwd", n_x, n_x + n_w + n_y, fwd, oy,
      [=](float* out, bool par) { convlayer_fwd_loop(q, xp_, wp_, out, par); },
      [=](float* out) { gemm->forward(xp_, wp_, out); });
  one_case(
      "convlayer dW", n_x, n_y + n_x + n_w, dwm, odw,
      [=](float* out, bool par) { convlayer_dw_loop(q, xp_, dyp, out, par); },
      [=](float* out) { gemm->weight_gradient(xp_, dyp, out); });
  one_case(
      "convlayer dX", n_y, n_y + n_w + n_dxp, dxm, odx,
      [=](float* out, bool par) { convlayer_dx_loop(q, wp_, dyp, out, par); },
      [=](float* out) { gemm->input_gradient(wp_, dyp, out); });
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  std::printf("bench_kernels: maps via wp::run vs plain loops vs Eigen, one process\n");
  print_threads();
  std::printf("  vector ISA compiled for: %s; Eigen %d.%d.%d%s\n",
#if defined(__AVX512F__)
              "AVX-512",
#elif defined(__AVX2__)
              "AVX2",
#elif defined(__AVX__)
              "AVX",
#else
              "SSE2 (no -march=native?)",
#endif
              EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
#if defined(EIGEN_USE_BLAS)
              " with EIGEN_USE_BLAS"
#else
              ""
#endif
  );
  {
    const double load = print_load_average();
    const unsigned cpus = std::thread::hardware_concurrency();
    if (cpus > 0 && load > double(cpus) - 0.5)
      std::printf(
          "  NOTE: the machine is busy (load %.1f on %u vCPUs): a run on several threads waits "
          "for cores (stalls of ~10 ms); compare the min column, the [best times] ratios, or "
          "OMP_NUM_THREADS=1\n",
          load, cpus);
  }
  std::printf(
      "  %d timed rounds after one warm-up, medians; t / t_map > 1 and ratios > 1: the map is "
      "faster; floor%% = floor time / this time\n",
      opt.reps);

  report rep;
  try {
    rep.csv = csv_writer(
        opt.csv, {"benchmark", "kernel", "dtype", "elements", "bytes", "variant", "reps",
                  "median_s", "min_s", "max_s", "ratio_vs_map", "floor_fraction", "max_err"});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kernels: %s\n", e.what());
    return 1;
  }

  try {
    for (const char* k : {"axpy", "exp", "tanhx", "select"}) {
      if (!opt.wants(k)) continue;
      if (opt.f32) {
        std::vector<i64> sz = opt.sizes;
        if (opt.big) sz.push_back(i64(1) << 27);
        for (const i64 n : sz) bench_unary<float>(k, n, opt, rep);
      }
      if (opt.f64) {
        std::vector<i64> sz = opt.sizes;
        if (opt.big) sz.push_back(i64(1) << 26);
        for (const i64 n : sz) bench_unary<double>(k, n, opt, rep);
      }
    }
    for (const char* k : {"rowsum", "rowmax", "colsum"}) {
      if (!opt.wants(k)) continue;
      if (opt.f32) bench_rows<float>(k, opt.rows, opt.cols, opt, rep);
      if (opt.f64) bench_rows<double>(k, opt.rows, opt.cols, opt, rep);
    }
    std::vector<std::string> skipped;
    auto f32_only = [&](const char* k, void (*f)(const options&, report&)) {
      if (!opt.wants(k)) return;
      if (opt.f32)
        f(opt, rep);
      else
        skipped.push_back(std::string(k) + " (f32 only)");
    };
    f32_only("softmax", bench_softmax);
    f32_only("layernorm", bench_layernorm);
    for (const char* k : {"stencil3", "stencil5"}) {
      if (!opt.wants(k)) continue;
      if (!opt.f64) {
        skipped.push_back(std::string(k) + " (f64 only)");
        continue;
      }
      if (std::string(k) == "stencil3")
        bench_stencil<3>(opt, rep);
      else
        bench_stencil<5>(opt, rep);
    }
    f32_only("conv1d", bench_conv1d);
    f32_only("conv2d", bench_conv2d);
    f32_only("convlayer", bench_convlayer);
    for (const auto& s : skipped) std::printf("\nskipped by --dtype: %s\n", s.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kernels: %s\n", e.what());
    return 1;
  }

  std::printf(
      "\nsummary (medians; map/loop = fastest loop / map, map/eigen = fastest Eigen / map: > 1 "
      "means the map is faster; floor%% = floor / map)\n");
  std::printf("  %-13s %-5s %-20s %9s %-10s %10s %10s %-9s %10s %-10s %8s %9s %6s  %s\n", "kernel",
              "dtype", "size", "MB", "map form", "map", "loop", "(which)", "eigen", "(which)",
              "map/loop", "map/eigen", "floor%", "targets");
  for (const auto& s : rep.rows)
    std::printf(
        "  %-13s %-5s %-20s %9.2f %-10s %10s %10s %-9s %10s %-10s %7.2fx %8.2fx %5.0f%%  %s%s\n",
        s.kernel.c_str(), s.dtype.c_str(), s.size.c_str(), s.bytes * 1e-6, s.form.c_str(),
        human_time(s.t_map).c_str(), human_time(s.t_loop).c_str(), s.loop_name.c_str(),
        human_time(s.t_eigen).c_str(), s.eigen_name.c_str(), s.t_loop / s.t_map,
        s.t_eigen / s.t_map, 100.0 * s.t_floor / s.t_map, s.targets.c_str(),
        s.bad ? "  MISMATCH" : "");
  std::printf("  targets met: %d of %d\n", rep.targets_met, rep.targets_total);
  if (!rep.mismatches.empty()) {
    for (const auto& m : rep.mismatches) std::printf("MISMATCH: %s\n", m.c_str());
    return 1;
  }
  std::printf("all results agree with the plain loop within tolerance\n");
  return 0;
}
