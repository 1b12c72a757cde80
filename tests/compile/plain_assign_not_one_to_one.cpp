/// Compile test for a misuse: a plain '=' into out(i + j) sends several points (i, j) to one
/// element. With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_plain_assign_not_one_to_one() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> out("out", {8});
  auto [i, j] = wp::indices<2>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("diag", wp::space(4, 5), out(i + j) = x(i, j));
#else
  auto m = wp::map("diag", wp::space(4, 5), out(i + j) += x(i, j));
#endif
  (void)m;
}
