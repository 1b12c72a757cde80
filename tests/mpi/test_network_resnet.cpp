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
#include <set>
#include <string>
#include <vector>

using namespace mpitest;

TEST_CASE("ResNet, scaled down, trains as on one process under three strategies",
          "[networks][resnet]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // batch 5 (uneven over 2, 3, 4); 35 x 35 images: 18 after the stem's convolution, 9 after
  // its pooling, then 9, 5, 3 and 2 a side (odd extents split unevenly); channels / 16
  wpnet::resnet<double> net(
      {.batch = 5, .image = 35, .width = 16, .classes = 1000, .blocks = {1, 1, 1, 1}});
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
  wpnet::resnet<double> net(
      {.batch = 5, .image = 35, .width = 16, .classes = 1000, .blocks = {1, 1, 1, 1}});
  auto step = net.step(0.05);
  found_within_baselines(ctx, step.program, pase_space(), "the experts' split",
                         [](const auto& p, int P) { return wpnet::resnet_expert(p, P); });
}

TEST_CASE("ResNet101 built at run time has the maps of the three-block step lengthened",
          "[networks][resnet][describe]") {
  // The depth is a run-time value: ResNet101's typed step ({3, 4, 23, 3}, 4990 maps) is built
  // by a loop, and wp::repeat_blocks's lengthening of the step of three blocks per stage
  // describes the same maps, in the same order, and arrays.
  wp::context ctx(g_argc, g_argv);
  if (ctx.size() != 1) return;
  wpnet::resnet<double> r101(wpnet::resnet_size{});
  auto step101 = r101.step(0.01);
  wpnet::resnet<double> r3({.blocks = {3, 3, 3, 3}});
  auto step3 = r3.step(0.01);
  const wp::program_description typed = wp::describe(step101.program);
  const wp::program_description lengthened =
      wpnet::resnet101_description(wp::describe(step3.program));
  // the maps and arrays of either that the other lacks (a few, to read)
  auto missing = [](const std::vector<std::string>& from, const std::vector<std::string>& in) {
    const std::set<std::string> have(in.begin(), in.end());
    std::vector<std::string> out;
    for (const auto& n : from)
      if (!have.count(n) && out.size() < 8) out.push_back(n);
    return out;
  };
  auto map_names = [](const wp::program_description& d) {
    std::vector<std::string> n;
    for (const auto& m : d.maps) n.push_back(m.name);
    return n;
  };
  auto array_names = [](const wp::program_description& d) {
    std::vector<std::string> n;
    for (const auto& a : d.arrays) n.push_back(a.name);
    return n;
  };
  CHECK(missing(map_names(typed), map_names(lengthened)).empty());
  CHECK(missing(map_names(lengthened), map_names(typed)).empty());
  CHECK(missing(array_names(typed), array_names(lengthened)).empty());
  CHECK(missing(array_names(lengthened), array_names(typed)).empty());
  REQUIRE(typed.maps.size() == lengthened.maps.size());
  // each the same map (its space, operations and accesses), in the same order but for the
  // zeroing maps at the backward program's start (named after the gradient they zero, not
  // the block that asked for them), which are the same set. (Each block's unpad map stands
  // between two maps of the next block: wp::repeat_blocks copies it with that block.)
  auto signature = [](const wp::map_description& m) {
    std::string t = m.name + " [";
    for (index_t e : m.extents) t += std::to_string(e) + " ";
    t += "] " + std::to_string(m.ops_per_point);
    for (const auto& a : m.accesses) t += " " + a.text + ":" + std::to_string(int(a.mode));
    return t;
  };
  auto split = [&](const wp::program_description& d) {
    std::pair<std::vector<std::string>, std::multiset<std::string>> r;  // in order; zeroing
    for (const auto& m : d.maps)
      if (m.name.rfind("zero.", 0) == 0)
        r.second.insert(signature(m));
      else
        r.first.push_back(signature(m));
    return r;
  };
  const auto [typed_order, typed_zeros] = split(typed);
  const auto [lengthened_order, lengthened_zeros] = split(lengthened);
  std::size_t m = 0;
  while (m < typed_order.size() && m < lengthened_order.size() &&
         typed_order[m] == lengthened_order[m])
    ++m;
  INFO("map " << m << ": typed " << (m < typed_order.size() ? typed_order[m] : "-")
              << "; lengthened " << (m < lengthened_order.size() ? lengthened_order[m] : "-"));
  CHECK(m == typed_order.size());
  CHECK(typed_order.size() == lengthened_order.size());
  CHECK(typed_zeros == lengthened_zeros);
  for (const auto& a : typed.arrays) {
    const wp::array_description* b = lengthened.find_array(a.name);
    INFO("array " << a.name);
    REQUIRE(b != nullptr);
    CHECK(b->shape == a.shape);
    CHECK(b->type == a.type);
    CHECK(b->init == a.init);
  }
}
