// Lesson 1: a matmul written once as a map, run on one process.
//
//   mpirun -np 2 ./01_matmul [n]
//
// Every rank builds the same map; wp::run executes it on root over root's arrays (the other
// ranks hold no global data and return at once).
#include <workpart/workpart.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 300;
  const std::int64_t M = n, N = n + 7, K = n - 3;  // extents need not match or divide

  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  A.init([](std::array<std::int64_t, 2> g) { return std::sin(double(g[0] + 2 * g[1])); });
  B.init([](std::array<std::int64_t, 2> g) { return std::cos(double(3 * g[0] - g[1])); });

  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));

  if (ctx.is_root()) std::printf("%s", wp::explain_local(mm).c_str());
  wp::run(mm);

  if (ctx.is_root()) {
    // Check against a plain loop.
    double worst = 0;
    const double* a = A.data();
    const double* b = B.data();
    const double* c = C.data();
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t s = 0; s < N; ++s) {
        double ref = 0;
        for (std::int64_t t = 0; t < K; ++t) ref += a[r * K + t] * b[t * N + s];
        worst = std::max(worst, std::abs(ref - c[r * N + s]));
      }
    std::printf("C = A * B for %lld x %lld x %lld on %d rank(s): max |error| = %.3g -> %s\n",
                (long long)M, (long long)N, (long long)K, ctx.size(), worst,
                worst < 1e-9 * double(K) ? "ok" : "WRONG");
    return worst < 1e-9 * double(K) ? 0 : 1;
  }
  return 0;
}
