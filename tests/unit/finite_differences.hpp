// Central finite differences of a forward program, for the wp::backward tests
// (test_backward.cpp, test_backward_networks.cpp): one process (wp::run), double.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <workpart/workpart.hpp>

namespace fd {

namespace wp = workpart;

// Distinct smooth values away from the kinks of abs/max/min and positive where log/sqrt read.
template <int N>
double value_at(const std::array<wp::index_t, N>& g, int salt) {
  double v = 0.37 * salt;
  for (int a = 0; a < N; ++a) v += double((g[a] * (3 + a) + salt * 5) % 11) * 0.173 + 0.05 * a;
  return std::sin(v) * 0.9 + 0.013 * salt;
}
template <int N>
void fill(wp::array<double, N>& a, int salt, double shift = 0.0) {
  a.init(
      [salt, shift](const std::array<wp::index_t, N>& g) { return value_at<N>(g, salt) + shift; });
}

/// d loss / d x by central differences of the forward program, element by element,
/// against the gradient array dx the backward program wrote.
template <class Fwd, int N>
void require_gradient(const Fwd& fwd, wp::array<double, 0>& loss, wp::array<double, N>& x,
                      wp::array<double, N>& dx) {
  const double h = 1e-5;
  std::vector<double> want(static_cast<std::size_t>(x.size()));
  for (wp::index_t k = 0; k < x.size(); ++k) {
    const double v = x.data()[k];
    x.data()[k] = v + h;
    wp::run(fwd);
    const double lp = loss.data()[0];
    x.data()[k] = v - h;
    wp::run(fwd);
    const double lm = loss.data()[0];
    x.data()[k] = v;
    want[std::size_t(k)] = (lp - lm) / (2 * h);
  }
  for (wp::index_t k = 0; k < x.size(); ++k) {
    INFO("d" << x.name() << "[" << k << "]: backward " << dx.data()[k] << ", finite differences "
             << want[std::size_t(k)]);
    REQUIRE(std::abs(dx.data()[k] - want[std::size_t(k)]) <=
            1e-6 * std::max(1.0, std::abs(want[std::size_t(k)])));
  }
}

}  // namespace fd
