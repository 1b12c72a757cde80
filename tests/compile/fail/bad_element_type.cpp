/// Compile-fail test (must not compile): an array of char.
/// tests/compile/ok/bad_element_type.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_bad_element_type() {
  wp::array<char, 1> a("a", {4});
  (void)a;
  int m = 0;
  (void)m;
}
