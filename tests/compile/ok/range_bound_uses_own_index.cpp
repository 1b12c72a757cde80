/// Compile test (ok twin of a compile-fail test, must compile): the fix for the upper bound of wp::range(r, ...) is written with r.
/// tests/compile/fail/range_bound_uses_own_index.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_range_bound_uses_own_index() {
  wp::array<double, 1> x("x", {9});
  wp::array<double, 1> y("y", {6});
  auto [i, r] = wp::indices<2>();
  auto m = wp::map("prefix", wp::space(6), y(i) = wp::sum(wp::range(r, 0, i + 1), x(r)));
  (void)m;
}
