/// Compile-fail test (must not compile): index<1> read in a space of rank 1.
/// tests/compile/ok/index_beyond_rank.cpp is the same program with the misuse fixed.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_index_beyond_rank() {
  wp::array<double, 1> x("x", {6});
  wp::array<double, 1> y("y", {6});
  auto [i, j] = wp::indices<2>();
  (void)j;
  auto m = wp::map("copy", wp::space(6), y(i) = x(j));
  (void)m;
}
