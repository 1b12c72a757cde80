/// Compile-fail test (must not compile): two nested wp::range bind the same index variable.
/// tests/compile/ok/nested_ranges_same_index.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_nested_ranges_same_index() {
  wp::array<double, 1> x("x", {9});
  wp::array<double, 1> y("y", {4});
  auto [i, r, q] = wp::indices<3>();
  (void)q;
  auto m = wp::map("box", wp::space(4),
                   y(i) = wp::sum(wp::range(r, 0, 3), wp::sum(wp::range(r, 0, 2), x(i + r))));
  (void)m;
}
