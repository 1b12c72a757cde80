/// Compile test for a misuse: a subscript computed from a float array.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_real_indirect_subscript() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  wp::array<float, 1> where("where", {6});
  wp::array<std::int32_t, 1> iwhere("iwhere", {6});
  auto [i] = wp::indices<1>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("gather", wp::space(6), y(i) = x(where(i)));
#else
  auto m = wp::map("gather", wp::space(6), y(i) = x(iwhere(i)));
#endif
  (void)m;
}
