/// Compile-fail test (must not compile): a data-dependent range bound read from a float array.
/// tests/compile/ok/real_range_bound.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_real_range_bound() {
  wp::array<double, 1> x("x", {9});
  wp::array<double, 1> y("y", {4});
  wp::array<double, 1> len("len", {5});
  wp::array<std::int64_t, 1> ilen("ilen", {5});
  auto [i, r] = wp::indices<2>();
  auto m = wp::map("ragged", wp::space(4), y(i) = wp::sum(wp::range(r, 0, len(i)), x(r)));
  (void)m;
}
