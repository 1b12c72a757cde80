/// Compile test for a misuse: matrix() called on a rank-1 array.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_matrix_of_vector() {
  wp::array<double, 1> v("v", {6});
  wp::array<double, 2> w("w", {2, 3});
#ifdef WORKPART_COMPILE_FAIL
  auto m = v.matrix();
#else
  auto m = w.matrix();
#endif
  (void)m;
}
