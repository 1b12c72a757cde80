/// Compile test for a misuse: a data-dependent range bound read from a float array.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_real_range_bound() {
  wp::array<double, 1> x("x", {9});
  wp::array<double, 1> y("y", {4});
  wp::array<double, 1> len("len", {5});
  wp::array<std::int64_t, 1> ilen("ilen", {5});
  auto [i, r] = wp::indices<2>();
#ifdef WORKPART_COMPILE_FAIL
  auto m = wp::map("ragged", wp::space(4), y(i) = wp::sum(wp::range(r, 0, len(i)), x(r)));
#else
  auto m = wp::map("ragged", wp::space(4), y(i) = wp::sum(wp::range(r, 0, ilen(i)), x(r)));
#endif
  (void)m;
}
