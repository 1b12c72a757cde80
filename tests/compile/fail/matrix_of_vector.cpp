/// Compile-fail test (must not compile): matrix() called on a rank-1 array.
/// tests/compile/ok/matrix_of_vector.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_matrix_of_vector() {
  wp::array<double, 1> v("v", {6});
  wp::array<double, 2> w("w", {2, 3});
  auto m = v.matrix();
  (void)m;
}
