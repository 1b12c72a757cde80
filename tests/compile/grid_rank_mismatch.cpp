/// Compile test for a misuse: a compile-time grid of rank 2 for a space of rank 3.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_grid_rank_mismatch(const wp::context& ctx) {
  wp::array<double, 2> A("A", {4, 5});
  wp::array<double, 2> B("B", {5, 6});
  wp::array<double, 2> C("C", {4, 6});
  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("matmul", wp::space(4, 6, 5), C(i, j) += A(i, k) * B(k, j));
#ifdef WORKPART_COMPILE_FAIL
  auto plan = wp::distribute(mm, wp::grid<2, 1>, ctx);
#else
  auto plan = wp::distribute(mm, wp::grid<2, 1, 1>, ctx);
#endif
  (void)plan;
}
