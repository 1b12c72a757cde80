// InceptionV3 scaled down for bench_networks --run (a translation unit of its own: its plans'
// instantiation builds beside the rest of the benchmark).

#include "../examples/networks/inception.hpp"

#include <workpart/optimize.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "bench_networks.hpp"

namespace bench_networks {

/// InceptionV3 scaled down (one module of each kind, 75 x 75 images -- the smallest its
/// strides leave a plane for --, the batch and width divisor of the AlexNet run, float)
/// trained under data parallelism, the experts' split and the found strategy on these ranks
/// (time_strategies; searched with each backward map on its forward map's grid, as the bench
/// rows).
void run_inception(wp::context& ctx, const wp::machine_model& mm, int reps, wp::index_t batch,
                   wp::index_t width, std::ofstream& out) {
  const wp::index_t image = 75;
  wpnet::inception<float> net({.batch = batch,
                               .image = image,
                               .width = width,
                               .classes = 1000,
                               .layout = wpnet::inception_layout::one_each});
  auto step = net.step(0.01f);
  net.x.init([&](const std::array<wp::index_t, 4>& g) {
    return float(std::sin(0.013 * double(((g[0] * 3 + g[1]) * image + g[2]) * image + g[3]) + 0.2));
  });
  const wp::index_t classes = wpnet::narrow(net.size.classes, width);
  net.label.init(
      [&](const std::array<wp::index_t, 1>& g) { return std::int32_t((g[0] * 7 + 3) % classes); });
  char title[200];
  std::snprintf(title, sizeof title,
                "InceptionV3 scaled down (one module of each kind, batch %lld, 75 x 75, width / "
                "%lld, float)",
                static_cast<long long>(batch), static_cast<long long>(width));
  wp::optimize_options opt;
  opt.configs.tie_backward = true;
  time_strategies(
      ctx, step.program, [](const auto& p, int P) { return wpnet::inception_expert(p, P); }, mm,
      reps, "inception", title, out, opt);
}

}  // namespace bench_networks
