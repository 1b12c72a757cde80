/// Compile test (ok twin of a compile-fail test, must compile): the fix for matrix() called on a rank-1 array.
/// tests/compile/fail/matrix_of_vector.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_matrix_of_vector() {
  wp::array<double, 1> v("v", {6});
  wp::array<double, 2> w("w", {2, 3});
  auto m = w.matrix();
  (void)m;
}
