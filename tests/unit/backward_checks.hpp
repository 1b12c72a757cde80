#pragma once
// What tests/unit/test_backward*.cpp share: a rule checked against finite differences, and a
// program's maps as text.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <workpart/workpart.hpp>

#include "finite_differences.hpp"

namespace wp = workpart;
using Catch::Matchers::Contains;
using namespace fd;

namespace {

/// L = sum_i f(x(i), y(i)) over an uneven extent; dL/dx and dL/dy against differences.
template <class F>
void check_rule(F f, double shift = 0.0) {
  const wp::index_t n = 7;
  wp::array<double, 1> x("x", {n}), y("y", {n}), dx("dx", {n}), dy("dy", {n});
  wp::array<double, 0> L("L", {});
  fill(x, 1, shift);
  fill(y, 2, shift);
  auto [i] = wp::indices<1>();
  auto fwd = wp::program(wp::map("zero", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(n), L() += f(x(i), y(i), i)));
  auto bwd = wp::backward(fwd, L, wp::wrt(x, dx), wp::wrt(y, dy));
  wp::run(wp::program(fwd, bwd));
  require_gradient(fwd, L, x, dx);
  require_gradient(fwd, L, y, dy);
}

/// Every map of a program as text (its name, space and statements).
template <class Prog>
std::string maps_text(const Prog& prog) {
  std::string t;
  prog.for_each_map([&](const auto& m) { t += m.str() + "\n"; });
  return t;
}

}  // namespace
