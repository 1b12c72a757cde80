/// \file log_lines.cpp
/// A two-map program run twice and one map run once, for the WORKPART_LOG=info test
/// (runtime/log.hpp): with the variable rank 0 writes one line per plan built, per map and
/// redistribution of each execute(), per scatter and gather; without it nothing.

#include <workpart/workpart.hpp>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const wp::index_t n = 40;
  wp::array<double, 1> x("x", {n}), y("y", {n}), z("z", {n});
  x.init([](std::array<wp::index_t, 1> g) { return double(g[0]); });
  auto [i] = wp::indices<1>();
  auto m1 = wp::map("twice", wp::space(n), y(i) = x(i) * 2.0);
  auto m2 = wp::map("reversed", wp::space(n), z(i) = y(n - 1 - i) + 1.0);
  wp::schedule s;
  s.set(m1, wp::grid_shape{ctx.size()}).set(m2, wp::grid_shape{ctx.size()});
  auto plan = wp::distribute(wp::program(m1, m2), s, ctx);
  plan.run();
  plan.execute();
  plan.gather();
  auto single = wp::distribute(m1, wp::grid_shape{ctx.size()}, ctx);
  single.run();
  return 0;
}
