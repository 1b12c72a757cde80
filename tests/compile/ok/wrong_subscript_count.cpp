/// Compile test (ok twin of a compile-fail test, must compile): the fix for a rank-2 array subscripted with one index.
/// tests/compile/fail/wrong_subscript_count.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_wrong_subscript_count() {
  wp::array<double, 2> A("A", {4, 5});
  wp::array<double, 2> out("out", {4, 5});
  auto [i, j] = wp::indices<2>();
  auto m = wp::map("copy", wp::space(4, 5), out(i, j) = A(i, j));
  (void)m;
}
