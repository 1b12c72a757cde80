// ResNet for bench_networks: ResNet101's description, and ResNet scaled down run under the
// three strategies (a translation unit of its own: the typed step of three blocks per stage
// is the benchmark's longest compile, and builds beside the rest of it).

#include "../examples/networks/resnet.hpp"

#include <workpart/optimize.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "bench_networks.hpp"

namespace bench_networks {

/// ResNet101 at PaSE's size (batch 128, 3 x 227 x 227, 1000 classes, float): its training step
/// written with three blocks per stage, described (wp::describe) and repeated to 3/4/23/3
/// (wpnet::resnet101_description). `maps_typed` is the typed step's map count.
workpart::program_description resnet101_description(int& maps_typed) {
  namespace wp = workpart;
  wpnet::resnet<float, 3> net(wpnet::resnet_size{});
  auto step = net.step(0.01f);
  maps_typed = 0;
  step.program.for_each_map([&](const auto&) { ++maps_typed; });
  return wpnet::resnet101_description(wp::describe(step.program));
}

/// ResNet scaled down (one block per stage, the images, batch and width divisor of the
/// AlexNet run, float) trained under data parallelism, the experts' split and the found
/// strategy on these ranks (time_strategies; searched with each backward map on its forward
/// map's grid, as the bench rows).
void run_resnet(wp::context& ctx, const wp::machine_model& mm, int reps, wp::index_t batch,
                wp::index_t image, wp::index_t width, std::ofstream& out) {
  wpnet::resnet<float, 1> net({.batch = batch, .image = image, .width = width, .classes = 1000});
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
