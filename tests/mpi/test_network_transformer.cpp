/// \file test_network_transformer.cpp
/// The Transformer of examples/networks/, scaled down (one encoder and one decoder block,
/// embedding 8, two heads), trained at 1 to 4 ranks under data parallelism, Megatron's tensor
/// parallelism and the strategy wp::automatic finds, gives the parameters and the loss of one
/// process after two SGD steps (double, 1e-9 relative). Its layers are checked against plain
/// loops and finite differences in unit.nn.

#include "network_training.hpp"

#include "../../examples/networks/transformer.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

using namespace mpitest;

TEST_CASE("The Transformer, scaled down, trains as on one process under three strategies",
          "[networks][transformer]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // batch 5 and 7 positions (uneven over 2, 3, 4), vocabulary 11, E 8 in 2 heads, FFN 6; one
  // encoder and one decoder block (the decoder reads the encoder's output: blocks chain as
  // layers do)
  wpnet::transformer<double> net(
      {.batch = 5, .length = 7, .vocabulary = 11, .embed = 8, .heads = 2, .ff = 6, .blocks = 1});
  auto step = net.step(0.1);
  auto inputs = [&] {
    net.source.init(
        [](const std::array<index_t, 2>& g) { return std::int32_t((g[0] * 5 + g[1] * 3) % 11); });
    net.target.init(
        [](const std::array<index_t, 2>& g) { return std::int32_t((g[0] * 2 + g[1] * 7) % 11); });
    net.label.init(
        [](const std::array<index_t, 2>& g) { return std::int32_t((g[0] + g[1] * 4 + 1) % 11); });
  };
  train_like_one_process(ctx, step, inputs,
                         {{"data parallelism", wpnet::data_parallel(step.program, P)},
                          {"Megatron: heads, FFN hidden units and the vocabulary split",
                           wpnet::transformer_megatron(step.program, P)}});
}

TEST_CASE("The Megatron schedule splits what Megatron splits", "[networks][transformer]") {
  wp::context ctx(g_argc, g_argv);
  wpnet::transformer<double> net(
      {.batch = 4, .length = 6, .vocabulary = 12, .embed = 8, .heads = 4, .ff = 8, .blocks = 1});
  auto step = net.step(0.1);
  const wp::schedule s = wpnet::transformer_megatron(step.program, 4);
  auto grid = [&](const std::string& map) {
    const wp::grid_shape* g = s.find(map);
    return g ? g->str() : "none";
  };
  // attention: heads (the scores' dimension 1, the projections' and heads' dimension 2)
  CHECK(grid("enc1.attn.qkv") == wp::grid_shape({1, 1, 4, 1, 1}).str());
  CHECK(grid("enc1.attn.scores") == wp::grid_shape({1, 4, 1, 1}).str());
  CHECK(grid("dec1.cross.kv") == wp::grid_shape({1, 1, 4, 1, 1}).str());
  CHECK(grid("dec1.self.heads") == wp::grid_shape({1, 1, 4, 1}).str());
  // the output projection sums over the heads: split there (row parallel)
  CHECK(grid("enc1.attn") == wp::grid_shape({1, 1, 4, 1, 1}).str());
  // the feed-forward's hidden units: ff1 column-parallel, ff2 row-parallel
  CHECK(grid("enc1.ff1") == wp::grid_shape({1, 1, 4, 1}).str());
  CHECK(grid("enc1.ff2") == wp::grid_shape({1, 1, 1, 4}).str());
  CHECK(grid("sgd.enc1.ff1.W") == wp::grid_shape({1, 4}).str());
  CHECK(grid("sgd.enc1.ff2.W") == wp::grid_shape({4, 1}).str());
  CHECK(grid("sgd.enc1.attn.Wq") == wp::grid_shape({1, 4, 1}).str());
  // the head's vocabulary; residuals, norms, the embeddings and the second layer's output
  // replicated on every rank
  CHECK(grid("head") == wp::grid_shape({1, 1, 4, 1}).str());
  CHECK(grid("enc1.res1") == wp::grid_shape({1, 1, 1}).replicated(4).str());
  CHECK(grid("src") == wp::grid_shape({1, 1, 1}).replicated(4).str());
  CHECK(grid("enc1.ff2.bias") == wp::grid_shape({1, 1, 1}).replicated(4).str());
  CHECK(grid("enc1.attn.y0") == wp::grid_shape({1, 1, 1}).replicated(4).str());
  CHECK(grid("sgd.enc1.attn.Wo") == wp::grid_shape({4, 1, 1}).str());
  // the loss reads whole rows of the logits: over the batch, not replicated
  CHECK(grid("loss") == wp::grid_shape({4, 1}).str());
}

TEST_CASE("The Transformer's optimum costs no more than data parallelism or Megatron",
          "[networks][transformer][optimize]") {
  wp::context ctx(g_argc, g_argv);
  wpnet::transformer<double> net(
      {.batch = 5, .length = 7, .vocabulary = 11, .embed = 8, .heads = 2, .ff = 6, .blocks = 1});
  auto step = net.step(0.1);
  found_within_baselines(ctx, step.program, pase_space(), "Megatron",
                         [](const auto& p, int P) { return wpnet::transformer_megatron(p, P); });
}
