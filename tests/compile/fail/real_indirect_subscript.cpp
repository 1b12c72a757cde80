/// Compile-fail test (must not compile): a subscript computed from a float array.
/// tests/compile/ok/real_indirect_subscript.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_real_indirect_subscript() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  wp::array<float, 1> where("where", {6});
  wp::array<std::int32_t, 1> iwhere("iwhere", {6});
  auto [i] = wp::indices<1>();
  auto m = wp::map("gather", wp::space(6), y(i) = x(where(i)));
  (void)m;
}
