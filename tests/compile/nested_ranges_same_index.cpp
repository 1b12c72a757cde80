/// Compile test for a misuse: two nested wp::range bind the same index variable.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_nested_ranges_same_index() {
  wp::array<double, 1> x("x", {9});
  wp::array<double, 1> y("y", {4});
  auto [i, r, q] = wp::indices<3>();
  (void)q;
  auto m = wp::map("box", wp::space(4),
#ifdef WORKPART_COMPILE_FAIL
                   y(i) = wp::sum(wp::range(r, 0, 3), wp::sum(wp::range(r, 0, 2), x(i + r))));
#else
                   y(i) = wp::sum(wp::range(r, 0, 3), wp::sum(wp::range(q, 0, 2), x(i + r + q))));
#endif
  (void)m;
}
