/// Compile test for a misuse: an access passed to wp::map where a statement belongs.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_map_argument_not_statement() {
  wp::array<double, 1> y("y", {6});
  auto [i] = wp::indices<1>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("nothing", wp::space(6), y(i));
#else
  auto m = wp::map("nothing", wp::space(6), y(i) = 0.0);
#endif
  (void)m;
}
