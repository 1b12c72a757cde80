/// Compile test for a misuse: wp::backward of an inner sum whose bounds depend on the outer
/// index (a triangular sum), which has no differentiation rule yet.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix: the sum as a '+=' over a
/// space that includes its index, masked) it must compile.
#include <workpart/workpart.hpp>

namespace wp = workpart;

void compile_check_backward_sum_varying_bounds() {
  wp::array<double, 1> x("x", {6}), y("y", {6}), dx("dx", {6});
  wp::array<double, 0> L("L", {});
  auto [i, r] = wp::indices<2>();
#ifdef WORKPART_COMPILE_FAIL
  auto fwd = wp::program(
      wp::map("prefix", wp::space(6), y(i) = wp::sum(wp::range(r, 0, i + 1), x(r))),
#else
  auto fwd = wp::program(
      wp::map("y0", wp::space(6), y(i) = 0.0),
      wp::map("prefix", wp::space(6, 6), y(i) += wp::select(wp::val(r) <= wp::val(i), x(r), 0.0)),
#endif
      wp::map("l0", wp::space(), L() = 0.0), wp::map("loss", wp::space(6), L() += y(i) * y(i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx));
  (void)bwd;
}
