/// Compile test for a misuse: wp::backward through a padded read (wp::padded), which has no
/// differentiation rule yet.
/// With WORKPART_COMPILE_FAIL defined it must not compile, and the compiler must print the
/// sentence tests/compile/CMakeLists.txt names; without it (the fix: the array itself padded,
/// its border holding the fill) it must compile.
#include <workpart/workpart.hpp>

namespace wp = workpart;

void compile_check_backward_padded_read() {
  wp::array<double, 1> y("y", {6}), w("w", {3}), dw("dw", {3});
  wp::array<double, 0> L("L", {});
  auto [i, r] = wp::indices<2>();
#ifdef WORKPART_COMPILE_FAIL
  wp::array<double, 1> x("x", {6});
  auto conv = wp::map("conv", wp::space(6),
                      y(i) = wp::sum(wp::range(r, 0, 3), wp::padded(x, 0.0)(i + r - 1) * w(r)));
#else
  wp::array<double, 1> x("x", {8});  // one zero on each side, written by the user
  auto conv = wp::map("conv", wp::space(6), y(i) = wp::sum(wp::range(r, 0, 3), x(i + r) * w(r)));
#endif
  auto fwd = wp::program(conv, wp::map("l0", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(6), L() += y(i) * y(i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(w, dw));
  (void)bwd;
}
