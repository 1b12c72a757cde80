/// Compile test for a misuse: an array of char.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_bad_element_type() {
#ifdef WORKPART_COMPILE_FAIL
  wp::array<char, 1> a("a", {4});
#else
  wp::array<float, 1> a("a", {4});
#endif
  (void)a;
  int m = 0;
  (void)m;
}
