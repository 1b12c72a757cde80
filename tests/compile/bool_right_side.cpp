/// Compile test for a misuse: a bool assigned as the right side of a statement.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_bool_right_side() {
  wp::array<std::int32_t, 1> y("y", {6});
  auto [i] = wp::indices<1>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("fill", wp::space(6), y(i) = true);
#else
  auto m = wp::map("fill", wp::space(6), y(i) = 1);
#endif
  (void)m;
}
