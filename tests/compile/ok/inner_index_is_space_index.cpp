/// Compile test (ok twin of a compile-fail test, must compile): the fix for wp::range binds index<0>, which already names dimension 0 of the space.
/// tests/compile/fail/inner_index_is_space_index.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_inner_index_is_space_index() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  auto [i, r] = wp::indices<2>();
  (void)r;
  auto m = wp::map("window", wp::space(6), y(i) = wp::sum(wp::range(r, 0, 3), x(r)));
  (void)m;
}
