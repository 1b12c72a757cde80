/// Compile-fail test (must not compile): wp::all read where a single value is needed.
/// tests/compile/ok/all_outside_reduction.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_all_outside_reduction() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> y("y", {4});
  auto [i] = wp::indices<1>();
  auto m = wp::map("rows", wp::space(4), y(i) = x(i, wp::all));
  (void)m;
}
