/// Compile test (ok twin of a compile-fail test, must compile): the fix for a statement writes through a data-dependent subscript.
/// tests/compile/fail/indirect_left_side.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_indirect_left_side() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  wp::array<std::int32_t, 1> col("col", {6});
  auto [i] = wp::indices<1>();
  auto m = wp::map("scatter", wp::space(6), y(i) = x(col(i)));
  (void)m;
}
