/// Compile test (ok twin of a compile-fail test, must compile): the fix for an access passed to wp::map where a statement belongs.
/// tests/compile/fail/map_argument_not_statement.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_map_argument_not_statement() {
  wp::array<double, 1> y("y", {6});
  auto [i] = wp::indices<1>();
  auto m = wp::map("nothing", wp::space(6), y(i) = 0.0);
  (void)m;
}
