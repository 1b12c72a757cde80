/// Compile test (ok twin of a compile-fail test, must compile): the fix for indices<9>().
/// tests/compile/fail/too_many_indices.cpp is the same program with the misuse.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_too_many_indices() {
  auto m = wp::indices<8>();
  (void)m;
}
