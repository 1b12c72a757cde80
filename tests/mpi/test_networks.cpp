/// \file test_networks.cpp
/// The networks of examples/networks/, scaled down, trained at 1 to 4 ranks under three
/// strategies -- data parallelism, the experts' split and the one wp::automatic finds -- give
/// the parameters and the loss of one process after two SGD steps (double, 1e-9 relative).
/// One process is the same step with every map's grid all ones: every map on rank 0. The
/// layers themselves are checked against plain loops in unit.nn and mpi.nn.

#include "network_training.hpp"

#include "../../examples/networks/alexnet.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

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

TEST_CASE("the baselines zero a weight gradient whole on every rank, as they update the weight",
          "[networks][alexnet][baselines]") {
  // Split over the weight's first axis, every rank would receive the others' zeros before the
  // batch-split backward map sums into the gradient.
  wpnet::alexnet<double> net({.batch = 5, .image = 67, .width = 16, .classes = 1024});
  auto step = net.step(0.05);
  std::vector<std::string> updates;  // the "sgd." maps, each updating one parameter
  step.program.for_each_map([&](const auto& u) {
    if (u.name().rfind("sgd.", 0) == 0) updates.push_back(u.name());
  });
  for (const int P : {2, 3, 4}) {
    const wp::schedule dp = wpnet::data_parallel(step.program, P);
    const wp::schedule ex = wpnet::alexnet_expert(step.program, P);
    int gradients = 0, activations = 0;
    step.program.for_each_map([&](const auto& m) {
      const std::string& name = m.name();
      if (name.rfind("zero.d", 0) != 0) return;
      INFO("map " << name << " at P = " << P);
      const bool updated =
          std::find(updates.begin(), updates.end(), "sgd." + name.substr(6)) != updates.end();
      REQUIRE(dp.find(name) != nullptr);
      REQUIRE(ex.find(name) != nullptr);
      if (updated) {
        ++gradients;
        CHECK(dp.find(name)->replicas() == P);
        // the experts' model-parallel layers split their gradients as their updates
        if (wpnet::layer_of(name).rfind("fc", 0) != 0) CHECK(ex.find(name)->replicas() == P);
      } else {
        // an activation's gradient (or the loss's, over wp::space()): as its maps run
        CHECK(dp.find(name)->replicas() == 1);
        if (m.rank() > 0) {
          ++activations;  // over the batch
          CHECK(dp.find(name)->dims[0] == std::min<wp::index_t>(P, m.extents()[std::size_t(0)]));
        }
      }
    });
    CHECK(gradients == 16);  // five convolutions' and three linear layers' weights and biases
    CHECK(activations > 0);
  }
}

TEST_CASE("AlexNet's optimum costs no more than data parallelism or the experts' split",
          "[networks][alexnet][optimize]") {
  wp::context ctx(g_argc, g_argv);
  wpnet::alexnet<double> net({.batch = 5, .image = 67, .width = 16, .classes = 1024});
  auto step = net.step(0.05);
  found_within_baselines(ctx, step.program, {}, "the experts' split",
                         [](const auto& p, int P) { return wpnet::alexnet_expert(p, P); });
}
