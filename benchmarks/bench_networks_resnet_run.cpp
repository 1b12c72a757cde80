// ResNet scaled down for bench_networks --run (a translation unit of its own: its plans'
// instantiation is the benchmark's longest compile, and builds beside the rest of it).

#include "../examples/networks/resnet.hpp"

#include <workpart/optimize.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "bench_networks.hpp"

namespace bench_networks {

/// ResNet scaled down (one block per stage, the images, batch and width divisor of the
/// AlexNet run, float) trained under data parallelism, the experts' split and the found
/// strategy on these ranks (time_strategies; searched with each backward map on its forward
/// map's grid, as the bench rows).
void run_resnet(wp::context& ctx, const wp::machine_model& mm, int reps, wp::index_t batch,
                wp::index_t image, wp::index_t width, std::ofstream& out) {
  wpnet::resnet<float> net(
      {.batch = batch, .image = image, .width = width, .classes = 1000, .blocks = {1, 1, 1, 1}});
  auto step = net.step(0.01f);
  net.x.init([&](const std::array<wp::index_t, 4>& g) {
    return float(std::sin(0.013 * double(((g[0] * 3 + g[1]) * image + g[2]) * image + g[3]) + 0.2));
  });
  const wp::index_t classes = wpnet::narrow(net.size.classes, width);
  net.label.init(
      [&](const std::array<wp::index_t, 1>& g) { return std::int32_t((g[0] * 7 + 3) % classes); });
  char title[200];
  std::snprintf(title, sizeof title,
                "ResNet scaled down (one block per stage, batch %lld, %lld x %lld, width / %lld, "
                "float)",
                static_cast<long long>(batch), static_cast<long long>(image),
                static_cast<long long>(image), static_cast<long long>(width));
  wp::optimize_options opt;
  opt.configs.tie_backward = true;
  time_strategies(
      ctx, step.program, [](const auto& p, int P) { return wpnet::resnet_expert(p, P); }, mm, reps,
      "resnet", title, out, opt);
}

}  // namespace bench_networks
