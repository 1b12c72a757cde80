/// \file test_networks.cpp
/// The networks of examples/networks/, scaled down, trained at 1 to 4 ranks under three
/// strategies -- data parallelism, the experts' split and the one wp::automatic finds -- give
/// the parameters and the loss of one process after two SGD steps (double, 1e-9 relative).
/// One process is the same step with every map's grid all ones: every map on rank 0. The
/// layers themselves are checked against plain loops in unit.nn and mpi.nn.

#include "network_training.hpp"

#include "../../examples/networks/alexnet.hpp"

#include <cmath>
#include <cstdint>

using namespace mpitest;

TEST_CASE("AlexNet, scaled down, trains as on one process under three strategies",
          "[networks][alexnet]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // batch 5 (uneven over 2, 3, 4), 67 x 67 images (1 x 1 after pool3), channels / 16
  wpnet::alexnet<double> net({.batch = 5, .image = 67, .width = 16, .classes = 1024});
  auto step = net.step(0.05);
  auto inputs = [&] {
    net.x.init([](const std::array<index_t, 4>& g) {
      return std::sin(0.013 * double(((g[0] * 3 + g[1]) * 67 + g[2]) * 67 + g[3]) + 0.2);
    });
    net.label.init(
        [](const std::array<index_t, 1>& g) { return std::int32_t((g[0] * 7 + 3) % 64); });
  };
  train_like_one_process(
      ctx, step, inputs,
      {{"data parallelism", wpnet::data_parallel(step.program, P)},
       {"the experts' split: data-parallel convolutions, model-parallel classifier",
        wpnet::alexnet_expert(step.program, P)}});
}

TEST_CASE("AlexNet's optimum costs no more than data parallelism or the experts' split",
          "[networks][alexnet][optimize]") {
  wp::context ctx(g_argc, g_argv);
  wpnet::alexnet<double> net({.batch = 5, .image = 67, .width = 16, .classes = 1024});
  auto step = net.step(0.05);
  found_within_baselines(ctx, step.program, {}, "the experts' split",
                         [](const auto& p, int P) { return wpnet::alexnet_expert(p, P); });
}
