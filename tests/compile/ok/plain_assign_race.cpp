/// Compile test (ok twin of a compile-fail test, must compile): the fix for a plain '=' into out(i) from a 2-D space writes each element once per j.
/// tests/compile/fail/plain_assign_race.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_plain_assign_race() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> out("out", {4});
  auto [i, j] = wp::indices<2>();
  auto m = wp::map("row", wp::space(4, 5), out(i) += x(i, j));
  (void)m;
}
