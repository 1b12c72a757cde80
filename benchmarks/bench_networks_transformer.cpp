// The Transformer for bench_networks: its description, and its scaled-down step run under the
// three strategies (one translation unit of its own: the typed training steps of 3 + 3 and
// 2 + 2 blocks are the longest compiles of the benchmark, and build beside the rest of it).

#include "../examples/networks/transformer.hpp"

#include <workpart/optimize.hpp>

#include <array>
#include <cstdint>
#include <cstdio>

#include "bench_networks.hpp"

namespace bench_networks {

/// The Transformer at PaSE's size (batch 64, 256 positions, E 512, 8 heads, FFN 2048,
/// vocabulary 50000, float): its training step written with three encoder and three decoder
/// blocks, described (wp::describe) and repeated to six of each (wp::repeat_blocks), as PaSE
/// trains it. `maps_typed` is the typed step's map count.
workpart::program_description transformer_description(int& maps_typed) {
  namespace wp = workpart;
  wpnet::transformer<float> net({.blocks = 3});
  auto step = net.step(0.01f);
  maps_typed = 0;
  step.program.for_each_map([&](const auto&) { ++maps_typed; });
  return wp::repeat_blocks(wp::repeat_blocks(wp::describe(step.program), "enc", 6), "dec", 6);
}

/// The Transformer scaled down (2 + 2 blocks, 32 positions, vocabulary 4000, E 128 in 4
/// heads, FFN 512, float) trained under data parallelism, Megatron's tensor parallelism and
/// the found strategy on these ranks (time_strategies; searched in the space of the bench
/// rows: replicated candidates, each backward map on its forward map's grid).
void run_transformer(wp::context& ctx, const wp::machine_model& mm, int reps, wp::index_t batch,
                     std::ofstream& out) {
  const wpnet::transformer_size z{.batch = batch,
                                  .length = 32,
                                  .vocabulary = 4000,
                                  .embed = 128,
                                  .heads = 4,
                                  .ff = 512,
                                  .blocks = 2};
  wpnet::transformer<float> net(z);
  auto step = net.step(0.01f);
  auto token = [&](std::int64_t a, std::int64_t b) {
    return std::int32_t((a * 7919 + b * 104729) % z.vocabulary);
  };
  net.source.init([&](const std::array<wp::index_t, 2>& g) { return token(g[0], g[1]); });
  net.target.init([&](const std::array<wp::index_t, 2>& g) { return token(g[0] + 3, g[1]); });
  net.label.init([&](const std::array<wp::index_t, 2>& g) { return token(g[0] + 3, g[1] + 1); });
  char title[200];
  std::snprintf(title, sizeof title,
                "Transformer scaled down (batch %lld, 32 positions, vocabulary 4000, E 128 in 4 "
                "heads, FFN 512, 2 + 2 blocks, float)",
                static_cast<long long>(z.batch));
  // the bench rows' space: each backward map takes its forward map's grid, as in Megatron (the
  // search is then proven optimal); time_strategies adds the replicated candidates (Megatron's
  // norms and residuals)
  wp::optimize_options opt;
  opt.configs.tie_backward = true;
  time_strategies(
      ctx, step.program, [](const auto& p, int P) { return wpnet::transformer_megatron(p, P); }, mm,
      reps, "transformer", title, out, opt);
}

}  // namespace bench_networks
