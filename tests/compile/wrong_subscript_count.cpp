/// Compile test for a misuse: a rank-2 array subscripted with one index.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_wrong_subscript_count() {
  wp::array<double, 2> A("A", {4, 5});
  wp::array<double, 2> out("out", {4, 5});
  auto [i, j] = wp::indices<2>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("copy", wp::space(4, 5), out(i, j) = A(i));
#else
  auto m = wp::map("copy", wp::space(4, 5), out(i, j) = A(i, j));
#endif
  (void)m;
}
