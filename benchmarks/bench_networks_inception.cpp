// InceptionV3's description for bench_networks (a translation unit of its own: the typed step
// builds beside the rest of the benchmark).

#include "../examples/networks/inception.hpp"

#include <workpart/optimize.hpp>

#include "bench_networks.hpp"

namespace bench_networks {

/// InceptionV3 at PaSE's size (batch 128, 3 x 299 x 299, 1000 classes, float) with one module
/// of each kind (wpnet::inception_layout::one_each: the stem and modules m5b, m6a, m6b, m7a and
/// m7b, 41 of its 94 convolutions): its training step, typed, described (wp::describe).
/// The full network's typed step (inception_layout::full, 94 convolutions, about 4500 maps) is past
/// what GCC 12 compiles here: a program's flat tuple of maps costs it time and memory growing with
/// the square of its length (more than 8 minutes and 12 GB for -fsyntax-only), and its modules
/// differ in shape, so that wp::repeat_blocks cannot lengthen a shorter one as it does ResNet's.
/// `maps_typed` is the typed step's map count.
workpart::program_description inception3_description(int& maps_typed) {
  namespace wp = workpart;
  wpnet::inception<float, wpnet::inception_layout::one_each> net(wpnet::inception_size{});
  auto step = net.step(0.01f);
  maps_typed = 0;
  step.program.for_each_map([&](const auto&) { ++maps_typed; });
  return wp::describe(step.program);
}

}  // namespace bench_networks
