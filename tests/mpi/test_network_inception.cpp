/// \file test_network_inception.cpp
/// InceptionV3 of examples/networks/, scaled down: PaSE's whole network
/// (wpnet::inception_layout::full: the stem and modules A x 3, B, C x 4, D, E x 2 -- 94
/// convolutions, each with its batch norm and ReLU, 1 x 7, 7 x 1, 1 x 3 and 3 x 1 among them,
/// and the channel concatenations that join the branches, E's nested; channels / 32, 75 x 75
/// images), trained at 1 to 4 ranks under data parallelism, the experts' split (data-parallel
/// convolutions, model-parallel classifier) and the strategy wp::automatic finds, gives the
/// parameters and the loss of one process after two SGD steps (double, 1e-7 relative). The
/// optimum is checked against the baselines on the `small` layout (31 convolutions). The
/// layers are checked against plain loops and finite differences in unit.nn (the rectangular
/// kernels and nn::concat among them) and mpi.nn.

#include "network_training.hpp"

#include "../../examples/networks/inception.hpp"

#include <cmath>
#include <cstdint>

using namespace mpitest;

TEST_CASE("InceptionV3, scaled down, trains as on one process under three strategies",
          "[networks][inception]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // batch 5 (uneven over 2, 3, 4); 75 x 75 images: 37 and 35 a side in the stem, 17 after its
  // first pooling, 15 and 7 after its last convolution and pooling, then 7, 3 and 1 in the
  // modules (odd extents split unevenly); channels / 32
  wpnet::inception<double> net({.batch = 5,
                                .image = 75,
                                .width = 32,
                                .classes = 1000,
                                .layout = wpnet::inception_layout::full});
  auto step = net.step(0.05);
  auto inputs = [&] {
    net.x.init([](const std::array<index_t, 4>& g) {
      return std::sin(0.013 * double(((g[0] * 3 + g[1]) * 75 + g[2]) * 75 + g[3]) + 0.2);
    });
    net.label.init(
        [](const std::array<index_t, 1>& g) { return std::int32_t((g[0] * 7 + 3) % 31); });
  };
  train_like_one_process(
      ctx, step, inputs,
      {{"data parallelism", wpnet::data_parallel(step.program, P)},
       {"the experts' split: data-parallel convolutions, model-parallel classifier",
        wpnet::inception_expert(step.program, P)}},
      // 1e-7: the rounding a split sum's order of terms leaves (1e-16) grows through the 94
      // convolutions' batch norms over 5 images of 2-20 channels, many over 1 x 1 planes: the
      // largest difference measured is 5.7e-9 at np 2, 1.5e-8 at np 3, 1.2e-8 at np 4 (the
      // same in every run; the 31-convolution layout stays within 1e-9)
      1e-7);
}

TEST_CASE("InceptionV3's optimum costs no more than data parallelism or the experts' split",
          "[networks][inception][optimize]") {
  wp::context ctx(g_argc, g_argv);
  wpnet::inception<double> net({.batch = 5,
                                .image = 75,
                                .width = 32,
                                .classes = 1000,
                                .layout = wpnet::inception_layout::small});
  auto step = net.step(0.05);
  found_within_baselines(ctx, step.program, pase_space(), "the experts' split",
                         [](const auto& p, int P) { return wpnet::inception_expert(p, P); });
}
