/// Compile test for a misuse: wp::backward of an inner sum whose bounds read data (a CSR row
/// sum), which has no differentiation rule yet.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix: the sum as a scatter-add
/// over the nonzeros, COO form) it must compile.
#include <workpart/workpart.hpp>

#include <cstdint>

namespace wp = workpart;

void compile_check_backward_sum_data_bounds() {
  wp::array<double, 1> x("x", {6}), y("y", {4}), dx("dx", {6}), val("val", {9});
  wp::array<std::int32_t, 1> row("row", {5}), row_of("row_of", {9}), col("col", {9});
  wp::array<double, 0> L("L", {});
  auto [i, q] = wp::indices<2>();
#ifdef WORKPART_COMPILE_FAIL
  auto fwd = wp::program(
      wp::map("spmv", wp::space(4),
              y(i) = wp::sum(wp::range(q, row(i), row(i + 1)), val(q) * x(col(q)))),
#else
  auto fwd = wp::program(
      wp::map("y0", wp::space(4), y(i) = 0.0),
      wp::map("spmv", wp::space(9), y(row_of(i)) += val(i) * x(col(i))),
#endif
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(4), L() += y(i) * y(i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx));
  (void)bwd;
  (void)q;
}
