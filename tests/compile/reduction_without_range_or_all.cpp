/// Compile test for a misuse: wp::sum of an expression that has nothing to iterate.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_reduction_without_range_or_all() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> y("y", {4});
  auto [i, j] = wp::indices<2>();
  (void)j;
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("rows", wp::space(4), y(i) = wp::sum(x(i, j)));
#else
  auto m = wp::map("rows", wp::space(4), y(i) = wp::sum(x(i, wp::all)));
#endif
  (void)m;
}
