/// \file test_network_resnet.cpp
/// ResNet of examples/networks/, scaled down (one bottleneck per stage -- each a stage's first,
/// with its strided projection -- channels / 16, 35 x 35 images), trained at 1 to 4 ranks
/// under data parallelism, the experts' split (data-parallel convolutions, model-parallel
/// classifier) and the strategy wp::automatic finds, gives the parameters and the loss of one
/// process after two SGD steps (double, 1e-9 relative). The identity blocks' residual (a
/// block's input added to its output) is the Transformer's, trained in mpi.network_transformer;
/// the layers are checked against plain loops and finite differences in unit.nn and mpi.nn.

#include "network_training.hpp"

#include "../../examples/networks/resnet.hpp"

#include <cmath>
#include <cstdint>

using namespace mpitest;

TEST_CASE("ResNet, scaled down, trains as on one process under three strategies",
          "[networks][resnet]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // batch 5 (uneven over 2, 3, 4); 35 x 35 images: 18 after the stem's convolution, 9 after
  // its pooling, then 9, 5, 3 and 2 a side (odd extents split unevenly); channels / 16
  wpnet::resnet<double, 1> net({.batch = 5, .image = 35, .width = 16, .classes = 1000});
  auto step = net.step(0.05);
  auto inputs = [&] {
    net.x.init([](const std::array<index_t, 4>& g) {
      return std::sin(0.017 * double(((g[0] * 3 + g[1]) * 35 + g[2]) * 35 + g[3]) + 0.3);
    });
    net.label.init(
        [](const std::array<index_t, 1>& g) { return std::int32_t((g[0] * 11 + 5) % 62); });
  };
  train_like_one_process(
      ctx, step, inputs,
      {{"data parallelism", wpnet::data_parallel(step.program, P)},
       {"the experts' split: data-parallel convolutions, model-parallel classifier",
        wpnet::resnet_expert(step.program, P)}});
}

TEST_CASE("ResNet's optimum costs no more than data parallelism or the experts' split",
          "[networks][resnet][optimize]") {
  wp::context ctx(g_argc, g_argv);
  wpnet::resnet<double, 1> net({.batch = 5, .image = 35, .width = 16, .classes = 1000});
  auto step = net.step(0.05);
  found_within_baselines(ctx, step.program, pase_space(), "the experts' split",
                         [](const auto& p, int P) { return wpnet::resnet_expert(p, P); });
}
