/// Compile-fail test (must not compile): indices<9>().
/// tests/compile/ok/too_many_indices.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_too_many_indices() {
  auto m = wp::indices<9>();
  (void)m;
}
