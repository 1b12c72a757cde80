#pragma once
/// \file conv.hpp
/// `wp::nn::conv2d(name, x, out_channels, kernel, {stride, padding, groups})`: a 2-D
/// convolution over x (batch, channels, height, width), zero-padded (wp::padded); kernel and
/// padding square (`3`) or per axis (`{1, 7}`: height, width -- InceptionV3's factorised
/// convolutions).

#include <cmath>
#include <string>

#include "../core/space.hpp"
#include "../expr/padded.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// An extent per image axis: `3` for both, or `{height, width}`.
struct size2d {
  index_t height = 0, width = 0;
  constexpr size2d() = default;
  constexpr size2d(index_t both) : height(both), width(both) {}  // NOLINT: 3 means 3 x 3
  constexpr size2d(index_t h, index_t w) : height(h), width(w) {}
};

struct conv2d_options {
  index_t stride = 1;
  size2d padding = 0;  ///< zeros on each side: `1`, or `{0, 3}` (height, width)
  index_t groups = 1;  ///< channels in `groups` independent groups (depthwise: groups = C)
};

/// The output extent of a window of `kernel` moved by `stride` over `n` padded by `padding`
/// on each side: (n + 2 padding - kernel) / stride + 1 (PyTorch's, rounded down).
inline index_t window_count(index_t n, index_t kernel, index_t stride, index_t padding) {
  return (n + 2 * padding - kernel) / stride + 1;
}

namespace detail {
inline void check_window(const std::string& name, index_t n, index_t kernel, index_t stride,
                         index_t padding, const char* axis) {
  if (kernel < 1 || stride < 1 || padding < 0)
    refuse(name, "kernel and stride must be at least 1 and padding at least 0");
  if (n + 2 * padding < kernel)
    refuse(name, std::string("the ") + axis + " " + std::to_string(n) + " padded by " +
                     std::to_string(padding) + " is smaller than the kernel " +
                     std::to_string(kernel));
}
}  // namespace detail

/// y(n, k, i, j) = bias(k) + sum_{c, r, s} x(n, g Cg + c, stride i + r - ph,
/// stride j + s - pw) w(k, c, r, s), with g = k / Kg the group of output channel k
/// (Cg = C / groups input and Kg = K / groups output channels per group), x zero outside its
/// image, (ph, pw) the padding and (Rh, Rw) the kernel. Maps `<name>.bias` and `<name>` (over
/// (batch, group, Kg, Ho, Wo, Cg, Rh, Rw)); parameters `<name>.w` (K, Cg, Rh, Rw) and
/// `<name>.b` (K), uniform in +-1/sqrt(Cg Rh Rw).
template <class T>
layer_of<T, 4, 4, 1> conv2d(const std::string& name, array<T, 4>& x, index_t out_channels,
                            size2d kernel, conv2d_options o = {}) {
  const index_t N = x.extent(0), C = x.extent(1), H = x.extent(2), W = x.extent(3);
  const index_t K = out_channels, G = o.groups, Rh = kernel.height, Rw = kernel.width;
  if (K < 1 || G < 1) detail::refuse(name, "out_channels and groups must be at least 1");
  if (C % G != 0 || K % G != 0)
    detail::refuse(name, "groups " + std::to_string(G) + " must divide the input channels " +
                             std::to_string(C) + " and the output channels " + std::to_string(K));
  detail::check_window(name, H, Rh, o.stride, o.padding.height, "height");
  detail::check_window(name, W, Rw, o.stride, o.padding.width, "width");
  const index_t Ho = window_count(H, Rh, o.stride, o.padding.height);
  const index_t Wo = window_count(W, Rw, o.stride, o.padding.width);
  const index_t Cg = C / G, Kg = K / G, st = o.stride, ph = o.padding.height, pw = o.padding.width;
  detail::layer_arrays a;
  auto& w = a.make<T, 4>(name + ".w", {K, Cg, Rh, Rw});
  auto& dw = a.make<T, 4>("d" + name + ".w", {K, Cg, Rh, Rw});
  auto& b = a.make<T, 1>(name + ".b", {K});
  auto& db = a.make<T, 1>("d" + name + ".b", {K});
  auto& y = a.make<T, 4>(name + ".y", {N, K, Ho, Wo});
  const double bound = 1 / std::sqrt(double(Cg * Rh * Rw));
  detail::init_uniform(w, bound);
  detail::init_uniform(b, bound);
  auto [n, g, k, i, j, c, r, s] = indices<8>();
  auto [bn, bk, bi, bj] = indices<4>();
  auto xp = padded(x, T(0));
  auto p = detail::program_of(
      a, map(name + ".bias", space(N, K, Ho, Wo), y(bn, bk, bi, bj) = b(bk)),
      map(name, space(N, G, Kg, Ho, Wo, Cg, Rh, Rw),
          y(n, Kg * g + k, i, j) +=
          xp(n, Cg * g + c, st * i + r - ph, st * j + s - pw) * w(Kg * g + k, c, r, s)));
  return detail::make_layer(std::move(p), y, std::tuple{wrt(w, dw), wrt(b, db)});
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_CONV_INSTANCES(EXTERN, T)                                               \
  EXTERN template layer_of<T, 4, 4, 1> conv2d<T>(const std::string&, array<T, 4>&, index_t, \
                                                 size2d, conv2d_options);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_CONV_INSTANCES)

}  // namespace workpart::nn
