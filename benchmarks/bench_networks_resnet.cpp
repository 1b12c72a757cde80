// ResNet101's description for bench_networks (a translation unit of its own: the typed step
// of three blocks per stage builds beside the rest of the benchmark).

#include "../examples/networks/resnet.hpp"

#include <workpart/optimize.hpp>

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

}  // namespace bench_networks
