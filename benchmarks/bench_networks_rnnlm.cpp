// RNNLM's description for bench_networks (a translation unit of its own, built beside the
// rest of the benchmark).

#include "../examples/networks/rnnlm.hpp"

#include <workpart/optimize.hpp>

namespace bench_networks {

/// RNNLM at PaSE's size (batch 64, 256 positions, vocabulary 100000, embedding 2048, two LSTM
/// layers of 2048 units, float): its training step written with three positions, described
/// (wp::describe) and lengthened to 256 (wpnet::rnnlm_description). `maps_typed` is the typed
/// step's map count.
workpart::program_description rnnlm_description(int& maps_typed) {
  namespace wp = workpart;
  wpnet::rnnlm<float, 3> net(wpnet::rnnlm_size{});
  auto step = net.step(0.01f);
  maps_typed = 0;
  step.program.for_each_map([&](const auto&) { ++maps_typed; });
  return wpnet::rnnlm_description(wp::describe(step.program), 256);
}

}  // namespace bench_networks
