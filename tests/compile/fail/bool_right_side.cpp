/// Compile-fail test (must not compile): a bool assigned as the right side of a statement.
/// tests/compile/ok/bool_right_side.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_bool_right_side() {
  wp::array<std::int32_t, 1> y("y", {6});
  auto [i] = wp::indices<1>();
  auto m = wp::map("fill", wp::space(6), y(i) = true);
  (void)m;
}
