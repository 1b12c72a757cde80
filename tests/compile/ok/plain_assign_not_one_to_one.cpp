/// Compile test (ok twin of a compile-fail test, must compile): the fix for a plain '=' into out(i + j) sends several points (i, j) to one element.
/// tests/compile/fail/plain_assign_not_one_to_one.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_plain_assign_not_one_to_one() {
  wp::array<double, 2> x("x", {4, 5});
  wp::array<double, 1> out("out", {8});
  auto [i, j] = wp::indices<2>();
  auto m = wp::map("diag", wp::space(4, 5), out(i + j) += x(i, j));
  (void)m;
}
