// ResNet101's description for bench_networks (a translation unit of its own: the typed step
// of three blocks per stage builds beside the rest of the benchmark).

#include "../examples/networks/resnet.hpp"

#include <workpart/optimize.hpp>

#include "bench_networks.hpp"

namespace bench_networks {

/// ResNet101 at PaSE's size (batch 128, 3 x 227 x 227, 1000 classes, float): its training step
/// built with 3/4/23/3 blocks (the depth a run-time value) and described (wp::describe): the
/// program that runs (wpnet::resnet101_description, the step of three blocks per stage
/// lengthened, describes the same maps but for the order of the zeroing maps:
/// mpi.network_resnet). `maps_typed` is the typed step's map count.
workpart::program_description resnet101_description(int& maps_typed) {
  namespace wp = workpart;
  wpnet::resnet<float> net(wpnet::resnet_size{});
  auto step = net.step(0.01f);
  maps_typed = int(step.program.size());
  return wp::describe(step.program);
}

}  // namespace bench_networks
