/// Compile test (ok twin of a compile-fail test, must compile): the fix for wp::all read where a single value is needed.
/// tests/compile/fail/all_outside_reduction.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_all_outside_reduction() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> y("y", {4});
  auto [i] = wp::indices<1>();
  auto m = wp::map("rows", wp::space(4), y(i) = wp::sum(x(i, wp::all)));
  (void)m;
}
