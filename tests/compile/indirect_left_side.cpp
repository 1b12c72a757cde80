/// Compile test for a misuse: a plain '=' writes through a data-dependent subscript (several
/// points may write one element; a scatter takes '+=').
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_indirect_left_side() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  wp::array<std::int32_t, 1> col("col", {6});
  auto [i] = wp::indices<1>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("scatter", wp::space(6), y(col(i)) = x(i));
#else
  auto m = wp::map("scatter", wp::space(6), y(col(i)) += x(i));
#endif
  (void)m;
}
