/// Compile test for a misuse: wp::range binds index<0>, which already names dimension 0 of the
/// space. With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_inner_index_is_space_index() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  auto [i, r] = wp::indices<2>();
  (void)r;
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("window", wp::space(6), y(i) = wp::sum(wp::range(i, 0, 3), x(i)));
#else
  auto m = wp::map("window", wp::space(6), y(i) = wp::sum(wp::range(r, 0, 3), x(r)));
#endif
  (void)m;
}
