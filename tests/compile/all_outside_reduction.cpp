/// Compile test for a misuse: wp::all read where a single value is needed.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_all_outside_reduction() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> y("y", {4});
  auto [i] = wp::indices<1>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("rows", wp::space(4), y(i) = x(i, wp::all));
#else
  auto m = wp::map("rows", wp::space(4), y(i) = wp::sum(x(i, wp::all)));
#endif
  (void)m;
}
