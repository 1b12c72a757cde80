#pragma once
/// \file pool.hpp
/// `wp::nn::max_pool2d` and `wp::nn::avg_pool2d` over x (batch, channels, height, width).

#include <limits>
#include <string>

#include "../core/space.hpp"
#include "../expr/padded.hpp"
#include "../expr/statement.hpp"
#include "conv.hpp"
#include "layer.hpp"

namespace workpart::nn {

struct pool2d_options {
  index_t stride = 0;  ///< 0: the kernel (PyTorch's default)
  index_t padding = 0;
};

namespace detail {
/// A pooling's windows over x: stride, padding and the output extents, checked.
struct pool_windows {
  index_t stride, padding, N, C, Ho, Wo;
  template <class T>
  pool_windows(const std::string& name, const array<T, 4>& x, index_t kernel, pool2d_options o)
      : stride(o.stride == 0 ? kernel : o.stride),
        padding(o.padding),
        N(x.extent(0)),
        C(x.extent(1)) {
    check_window(name, x.extent(2), kernel, stride, padding, "height");
    check_window(name, x.extent(3), kernel, stride, padding, "width");
    Ho = window_count(x.extent(2), kernel, stride, padding);
    Wo = window_count(x.extent(3), kernel, stride, padding);
  }
};
}  // namespace detail

/// y(n, c, i, j) = the max of x over the window at (stride i - padding, stride j - padding),
/// -infinity outside the image (which never wins: padding is at most half the kernel, as in
/// PyTorch). Maps `<name>.init` (y = -infinity) and `<name>` (max_into over (batch, channels,
/// Ho, Wo, kernel, kernel)); its gradient goes to the window's maximum, shared among ties.
template <class T>
layer_of<T, 4> max_pool2d(const std::string& name, array<T, 4>& x, index_t kernel,
                          pool2d_options o = {}) {
  const detail::pool_windows win(name, x, kernel, o);
  const index_t st = win.stride, pd = win.padding, N = win.N, C = win.C, Ho = win.Ho, Wo = win.Wo;
  if (2 * pd > kernel)
    detail::refuse(name, "padding " + std::to_string(pd) + " is more than half the kernel " +
                             std::to_string(kernel) + " (a window could hold only padding)");
  detail::layer_arrays a;
  auto& y = a.make<T, 4>(name + ".y", {N, C, Ho, Wo});
  const T inf = std::numeric_limits<T>::infinity();
  auto [n, c, i, j, r, s] = indices<6>();
  auto p = detail::program_of(
      a, map(name + ".init", space(N, C, Ho, Wo), y(n, c, i, j) = -inf),
      map(name, space(N, C, Ho, Wo, kernel, kernel),
          max_into(y(n, c, i, j), padded(x, -inf)(n, c, st * i + r - pd, st * j + s - pd))));
  return detail::make_layer(std::move(p), y, std::tuple<>{});
}

/// y(n, c, i, j) = the mean of x over the window, padding counted as zeros (PyTorch's
/// count_include_pad). Maps `<name>.init` (y = 0) and `<name>` (y += x / kernel^2).
template <class T>
layer_of<T, 4> avg_pool2d(const std::string& name, array<T, 4>& x, index_t kernel,
                          pool2d_options o = {}) {
  const detail::pool_windows win(name, x, kernel, o);
  const index_t st = win.stride, pd = win.padding, N = win.N, C = win.C, Ho = win.Ho, Wo = win.Wo;
  detail::layer_arrays a;
  auto& y = a.make<T, 4>(name + ".y", {N, C, Ho, Wo});
  const T scale = T(1) / T(kernel * kernel);
  auto [n, c, i, j, r, s] = indices<6>();
  auto p = detail::program_of(
      a, map(name + ".init", space(N, C, Ho, Wo), y(n, c, i, j) = T(0)),
      map(name, space(N, C, Ho, Wo, kernel, kernel),
          y(n, c, i, j) += padded(x, T(0))(n, c, st * i + r - pd, st * j + s - pd) * scale));
  return detail::make_layer(std::move(p), y, std::tuple<>{});
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_POOL_INSTANCES(EXTERN, T)                                             \
  EXTERN template layer_of<T, 4> max_pool2d<T>(const std::string&, array<T, 4>&, index_t, \
                                               pool2d_options);                           \
  EXTERN template layer_of<T, 4> avg_pool2d<T>(const std::string&, array<T, 4>&, index_t, \
                                               pool2d_options);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_POOL_INSTANCES)

}  // namespace workpart::nn
