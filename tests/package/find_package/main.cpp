// Built by tests/package/run_find_package.cmake against an installed workpart: a map whose
// contraction runs as a GEMM (Eigen, BLAS where found), distributed over every rank, checked
// on root against a plain loop. Prints "workpart package ok" only when the result is right.
#include <workpart/workpart.hpp>
#if defined(WORKPART_PACKAGE_NN)
#include <workpart/nn.hpp>
#endif
// OpenMP is opt-in (workpart::openmp): the other targets leave this file's flags alone.
#if defined(WORKPART_PACKAGE_NO_OPENMP) && defined(_OPENMP)
#error "workpart::workpart or workpart::compiled compiled a consumer's file with OpenMP"
#endif
#if defined(WORKPART_PACKAGE_OPENMP) && !defined(_OPENMP)
#error "workpart::openmp did not compile the consumer's file with OpenMP"
#endif

#include <cmath>
#include <cstdint>
#include <iostream>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t M = 9, N = 7, K = 5;
  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  A.init([](std::array<std::int64_t, 2> g) { return double(g[0] - 2 * g[1]); });
  B.init([](std::array<std::int64_t, 2> g) { return double(g[0] * g[1] % 3); });
  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
#if defined(WORKPART_PACKAGE_DEVICE)
  auto plan = wp::distribute(mm, wp::grid_shape{ctx.size(), 1, 1}, ctx,
                             wp::options{.backend = wp::backend::cuda});
#else
  auto plan = wp::distribute(mm, wp::grid_shape{ctx.size(), 1, 1}, ctx);
#endif
  plan.run();
  if (!ctx.is_root()) return 0;
  for (std::int64_t a = 0; a < M; ++a)
    for (std::int64_t b = 0; b < N; ++b) {
      double s = 0;
      for (std::int64_t c = 0; c < K; ++c) s += double(a - 2 * c) * double(c * b % 3);
      if (C.data()[a * N + b] != s) {
        std::cout << "workpart package: wrong C(" << a << ", " << b << ") = " << C.data()[a * N + b]
                  << ", expected " << s << std::endl;
        return 1;
      }
    }
#if defined(WORKPART_PACKAGE_NN)
  // A layer from workpart::nn_compiled: fc = b + C W, run on root, against a loop.
  auto fc = wp::nn::linear("fc", C, 3);
  wp::run(fc.program);
  auto& W = *std::get<0>(fc.params).param;
  auto& b = *std::get<1>(fc.params).param;
  for (std::int64_t a = 0; a < M; ++a)
    for (std::int64_t o = 0; o < 3; ++o) {
      double s = b.data()[o];
      for (std::int64_t c = 0; c < N; ++c) s += C.data()[a * N + c] * W.data()[c * 3 + o];
      if (std::abs(fc.out().data()[a * 3 + o] - s) > 1e-9 * (1 + std::abs(s))) {
        std::cout << "workpart package: wrong fc(" << a << ", " << o << ")" << std::endl;
        return 1;
      }
    }
#endif
  std::cout << "workpart package ok, ranks=" << ctx.size() << std::endl;
  return 0;
}
