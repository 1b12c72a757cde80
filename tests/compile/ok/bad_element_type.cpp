/// Compile test (ok twin of a compile-fail test, must compile): the fix for an array of char.
/// tests/compile/fail/bad_element_type.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_bad_element_type() {
  wp::array<float, 1> a("a", {4});
  (void)a;
  int m = 0;
  (void)m;
}
