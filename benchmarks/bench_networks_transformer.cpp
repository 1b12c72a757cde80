// The Transformer's description for bench_networks (one translation unit of its own: the typed
// training step of 3 + 3 blocks is the longest compile of the benchmark, and builds beside
// the rest of it).

#include "../examples/networks/transformer.hpp"

#include <workpart/optimize.hpp>

namespace bench_networks {

/// The Transformer at PaSE's size (batch 64, 256 positions, E 512, 8 heads, FFN 2048,
/// vocabulary 50000, float): its training step written with three encoder and three decoder
/// blocks, described (wp::describe) and repeated to six of each (wp::repeat_blocks), as PaSE
/// trains it. `maps_typed` is the typed step's map count.
workpart::program_description transformer_description(int& maps_typed) {
  namespace wp = workpart;
  wpnet::transformer<float, 3> net(wpnet::transformer_size{});
  auto step = net.step(0.01f);
  maps_typed = 0;
  step.program.for_each_map([&](const auto&) { ++maps_typed; });
  return wp::repeat_blocks(wp::repeat_blocks(wp::describe(step.program), "enc", 6), "dec", 6);
}

}  // namespace bench_networks
