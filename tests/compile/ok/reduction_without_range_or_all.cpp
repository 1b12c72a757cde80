/// Compile test (ok twin of a compile-fail test, must compile): the fix for wp::sum of an expression that has nothing to iterate.
/// tests/compile/fail/reduction_without_range_or_all.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_reduction_without_range_or_all() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> y("y", {4});
  auto [i, j] = wp::indices<2>();
  (void)j;
  auto m = wp::map("rows", wp::space(4), y(i) = wp::sum(x(i, wp::all)));
  (void)m;
}
