/// \file uncaught_error.cpp
/// A program that lets a wp::error escape main (comm/uncaught.hpp), run by
/// run_uncaught_error.cmake under mpiexec: with no argument every rank raises the same
/// shape_error (a subscript leaves its array); with `one` only the last rank throws while
/// the others wait for it in a barrier.

#include <workpart/workpart.hpp>

#include <cstring>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "one") == 0) {
    if (ctx.rank() == ctx.size() - 1) throw wp::plan_error("only the last rank fails here");
    ctx.comm().barrier();  // never completes: the last rank does not come
    return 0;
  }
  wp::array<double, 1> x("x", {10}), y("y", {10});
  auto [i] = wp::indices<1>();
  auto plan = wp::distribute(wp::map("shift", wp::space(10), y(i) = x(i + 1)),
                             wp::grid_shape{ctx.size()}, ctx);
  plan.run();
  return 0;
}
