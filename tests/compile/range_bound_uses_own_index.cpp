/// Compile test for a misuse: the upper bound of wp::range(r, ...) is written with r.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_range_bound_uses_own_index() {
  wp::array<double, 1> x("x", {9});
  wp::array<double, 1> y("y", {6});
  auto [i, r] = wp::indices<2>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("prefix", wp::space(6), y(i) = wp::sum(wp::range(r, 0, r + 1), x(r)));
#else
  auto m = wp::map("prefix", wp::space(6), y(i) = wp::sum(wp::range(r, 0, i + 1), x(r)));
#endif
  (void)m;
}
