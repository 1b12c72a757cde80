/// Compile test for a misuse: indices<9>().
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_too_many_indices() {
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::indices<9>();
#else
  auto m = wp::indices<8>();
#endif
  (void)m;
}
