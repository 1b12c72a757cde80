/// Compile test for a misuse: index<1> read in a space of rank 1.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_index_beyond_rank() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  auto [i, j] = wp::indices<2>();
  (void)j;
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("copy", wp::space(6), y(i) = x(j));
#else
  auto m = wp::map("copy", wp::space(6), y(i) = x(i));
#endif
  (void)m;
}
