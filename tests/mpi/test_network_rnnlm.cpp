/// \file test_network_rnnlm.cpp
/// The RNNLM of examples/networks/, scaled down (3 positions, vocabulary 11, embedding 6, two
/// LSTM layers of 7 units), trained at 1 to 4 ranks under data parallelism, Megatron-style
/// tensor parallelism and the strategy wp::automatic finds, gives the parameters and the loss
/// of one process after two SGD steps (double, 1e-9 relative). The LSTM layer itself is
/// checked against plain loops and finite differences in unit.nn and mpi.nn. And the
/// description the benchmark prices PaSE's 256 positions with (wpnet::rnnlm_description: the
/// step written with three positions, lengthened) is the description of the step typed at
/// that length. And wp::automatic, whose free search of this step at 4 ranks would fill
/// 7.4 GB, searches within its table bound (automatic_t::max_table_bytes) and, over it, in
/// PaSE's space, exactly there. The length is a run-time value: a step of four positions
/// trains too, and the step typed at PaSE's 256 is the description lengthened.

#include "network_training.hpp"

#include "../../examples/networks/rnnlm.hpp"

#include <workpart/optimize.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace mpitest;

namespace {
constexpr wpnet::rnnlm_size small{.batch = 5, .vocabulary = 11, .embed = 6, .hidden = 7};

/// The maps of a description that access anything, and its arrays (wp::backward's zeroing maps
/// pruned to nothing stand and are numbered apart: see wp::repeat_blocks).
wp::program_description acting(const wp::program_description& d) {
  wp::program_description a;
  a.arrays = d.arrays;
  for (const auto& m : d.maps)
    if (!m.accesses.empty()) a.maps.push_back(m);
  return a;
}

void rnnlm_inputs(wp::array<std::int32_t, 2>& tokens, wp::array<std::int32_t, 2>& label) {
  tokens.init(
      [](const std::array<index_t, 2>& g) { return std::int32_t((g[0] * 5 + g[1] * 3) % 11); });
  label.init(
      [](const std::array<index_t, 2>& g) { return std::int32_t((g[0] + g[1] * 4 + 1) % 11); });
}
}  // namespace

TEST_CASE("RNNLM, scaled down, trains as on one process under three strategies",
          "[networks][rnnlm]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // batch 5 (uneven over 2, 3, 4), hidden 7 (uneven: Megatron's split of the units)
  wpnet::rnnlm<double, 3> net(small);
  auto step = net.step(0.5);
  auto inputs = [&] { rnnlm_inputs(net.tokens, net.label); };
  train_like_one_process(
      ctx, step, inputs,
      {{"data parallelism", wpnet::data_parallel(step.program, P)},
       {"Megatron: the embedding's features, the LSTMs' units and the vocabulary split",
        wpnet::rnnlm_megatron(step.program, P)}});
}

TEST_CASE("RNNLM of a length given at run time (4 positions) trains as on one process",
          "[networks][rnnlm]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  wpnet::rnnlm_size size = small;
  size.length = 4;
  wpnet::rnnlm<double> net(size);  // the length a value: no template argument
  REQUIRE(net.tokens.extent(1) == 4);
  auto step = net.step(0.5);
  const std::vector<std::string> names = step.program.names();
  auto has = [&](const std::string& m) {
    return std::find(names.begin(), names.end(), m) != names.end();
  };
  CHECK(has("lstm2.t4.cell"));
  CHECK(has("dlstm1.t4.recur"));
  CHECK_FALSE(has("lstm1.t5.gates"));
  auto inputs = [&] { rnnlm_inputs(net.tokens, net.label); };
  const auto want =
      train(ctx.comm(), step, wp::distribute(step.program, one_process(step.program), ctx), inputs);
  REQUIRE(trained(ctx.comm(), want, step.params) == "");
  for (const auto& [what, s] : {std::pair<std::string, wp::schedule>{
                                    "data parallelism", wpnet::data_parallel(step.program, P)},
                                {"Megatron", wpnet::rnnlm_megatron(step.program, P)}}) {
    INFO(what);
    auto got = train(ctx.comm(), step, wp::distribute(step.program, s, ctx), inputs);
    CHECK(differ(ctx.comm(), got, want, 1e-9) == "");
  }
}

TEST_CASE("wp::automatic bounds its search's tables: over the bound, PaSE's space, exactly",
          "[networks][rnnlm][automatic]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  wpnet::rnnlm<double, 3> net(small);
  auto step = net.step(0.5);
  wp::optimize_options free;
  free.search.runner_ups = false;
  wp::optimize_options tied = free;
  tied.configs.tie_backward = true;
  const wp::optimized t = wp::optimize(step.program, P, {}, tied);
  REQUIRE(t.proven_optimal);
  for (std::size_t bound : {std::size_t(1), std::size_t(1) << 30}) {
    INFO("max_table_bytes = " << bound);
    free.search.max_table_bytes = tied.search.max_table_bytes = bound;
    const wp::optimized f = wp::optimize(step.program, P, {}, free);
    // the free search of this step at 4 ranks needs more than a GiB (it filled 7.4 GB): there
    // wp::automatic searches PaSE's space
    if (P == 4 && bound > 1) CHECK_FALSE(f.proven_optimal);
    wp::automatic_t a;
    a.max_table_bytes = bound;
    const wp::schedule s = wp::detail::automatic_schedule(ctx.comm(), step.program, a);
    const double got = wp::modelled_cost(step.program, s, P, {});
    if (f.proven_optimal) {  // within the bound: the free search's optimum
      CHECK(got == Approx(f.cost).epsilon(1e-12));
      continue;
    }
    // over it: PaSE's space searched within the same bound (its optimum where it fits, as the
    // 1 GiB bound does), or the free search's greedy strategy where that is cheaper
    const wp::optimized tb = wp::optimize(step.program, P, {}, tied);
    CHECK(got == Approx(std::min(tb.cost, f.cost)).epsilon(1e-12));
    if (bound > 1) {
      CHECK(tb.proven_optimal);
      CHECK(tb.cost == Approx(t.cost).epsilon(1e-12));
      CHECK(got <= t.cost * (1 + 1e-12));
    }
  }
}

TEST_CASE("The RNNLM's Megatron schedule splits the units, features and vocabulary",
          "[networks][rnnlm]") {
  wp::context ctx(g_argc, g_argv);
  wpnet::rnnlm<double, 3> net(small);
  auto step = net.step(0.1);
  const wp::schedule s = wpnet::rnnlm_megatron(step.program, 4);
  auto grid = [&](const std::string& map) {
    const wp::grid_shape* g = s.find(map);
    return g ? g->str() : "none";
  };
  CHECK(grid("emb") == "(1,1,4)");               // (batch, position, feature)
  CHECK(grid("sgd.emb.E") == "(1,4)");           // (word, feature)
  CHECK(grid("lstm1.zx") == "(1,1,1,4,1)");      // (batch, position, gate, unit, input)
  CHECK(grid("lstm1.zx.bias") == "(1,1,1,4)");   // (batch, position, gate, unit)
  CHECK(grid("lstm2.t2.gates") == "(1,1,4)");    // (batch, gate, unit)
  CHECK(grid("lstm2.t3.recur") == "(1,1,4,1)");  // (batch, gate, unit, input unit)
  CHECK(grid("dlstm2.t3.recur") == "(1,1,4,1)");
  CHECK(grid("lstm1.t1.cell") == "(1,4)");  // (batch, unit)
  CHECK(grid("sgd.lstm1.Wh") == "(1,1,4)");
  CHECK(grid("sgd.lstm1.b") == "(1,4)");
  CHECK(grid("proj") == "(1,1,4,1)");  // (batch, position, word, feature)
  CHECK(grid("sgd.proj.W") == "(1,4)");
  CHECK(grid("sgd.proj.b") == "(4)");
  CHECK(grid("loss") == "(4,1)");  // over the batch
}

TEST_CASE("The RNNLM described at three positions and lengthened is the RNNLM typed at five",
          "[networks][rnnlm]") {
  wp::context ctx(g_argc, g_argv);
  // no MPI in it and nothing that depends on the rank count (it prices 2 to 4 ranks itself):
  // checked once, at np 1, not four times over
  if (ctx.size() != 1) return;
  wpnet::rnnlm<double, 3> n3(small);
  wpnet::rnnlm<double, 5> n5(small);
  auto s3 = n3.step(0.1);
  auto s5 = n5.step(0.1);
  const wp::program_description got = wpnet::rnnlm_description(wp::describe(s3.program), 5);
  const wp::program_description want = wp::describe(s5.program);
  // the same arrays, and the same maps that access anything, in order, alike to the letter
  const wp::program_description g = acting(got), w = acting(want);
  CHECK(wp::to_json(g) == wp::to_json(w));
  CHECK(got.maps.size() > g.maps.size());
  // so the same prices under any schedule; and the optimum of the same model costs no more
  // than either baseline
  const wp::machine_model mm{1e9, 1e-5, 1e-9};
  for (int P : {2, 3, 4}) {
    const double dp = wp::modelled_cost(g, wpnet::data_parallel(g, P), P, mm);
    const double meg = wp::modelled_cost(g, wpnet::rnnlm_megatron(g, P), P, mm);
    CHECK(dp == Approx(wp::modelled_cost(w, wpnet::data_parallel(w, P), P, mm)));
    CHECK(meg == Approx(wp::modelled_cost(w, wpnet::rnnlm_megatron(w, P), P, mm)));
    const wp::optimized free = wp::optimize(got, P, mm);
    CHECK(free.cost <= meg * (1 + 1e-12));
    // PaSE's space (a backward map on its forward map's grid, a layer's steps on one grid per
    // kind of map), with every map's replicated candidate too (data parallelism's updates are
    // replicated): both baselines are in it, so its optimum is bound by them; without the
    // replicated candidates it is no cheaper than the free one where that search ran to the
    // end (free, the steps' shared input and weights make it stop at its table limit at some
    // rank counts: then the tied optimum is the cheaper; free with replicated candidates it
    // fills 6.5 GB at 4 ranks); its schedule keeps the ties and costs what it says
    wp::optimize_options tied;
    tied.configs.tie_backward = true;
    tied.configs.tie_blocks = {"lstm1.t", "lstm2.t"};
    const wp::optimized t0 = wp::optimize(got, P, mm, tied);
    CHECK(t0.proven_optimal);
    if (free.proven_optimal) CHECK(t0.cost >= free.cost * (1 - 1e-12));
    tied.configs.replicas = true;
    const wp::optimized t = wp::optimize(got, P, mm, tied);
    CHECK(t.proven_optimal);
    CHECK(t.cost <= t0.cost * (1 + 1e-12));
    CHECK(t.cost <= dp * (1 + 1e-12));
    CHECK(t.cost <= meg * (1 + 1e-12));
    CHECK(wp::modelled_cost(got, t.schedule, P, mm, tied.configs) == Approx(t.cost).epsilon(1e-12));
    for (const char* kind : {"gates", "cell", "recur"})
      for (const char* layer : {"lstm1", "lstm2", "dlstm1"})
        for (int k = 3; k <= 5; ++k) {
          const std::string first =
                                std::string(layer) + ".t" + (kind[0] == 'r' ? "2." : "1.") + kind,
                            other = std::string(layer) + ".t" + std::to_string(k) + "." + kind;
          CHECK(*t.schedule.find(other) == *t.schedule.find(first));
        }
    CHECK(*t.schedule.find("dlstm1.t4.cell") == *t.schedule.find("lstm1.t1.cell"));
  }
}

TEST_CASE("The RNNLM typed at PaSE's 256 positions is its description lengthened from three",
          "[networks][rnnlm]") {
  wp::context ctx(g_argc, g_argv);
  if (ctx.size() != 1) return;  // no MPI in it: checked once
  wpnet::rnnlm<double, 3> n3(small);
  wpnet::rnnlm_size size = small;
  size.length = 256;
  wpnet::rnnlm<double> n256(size);
  auto s3 = n3.step(0.1);
  auto s256 = n256.step(0.1);  // 2 x 256 LSTM steps built at run time
  const wp::program_description got = wpnet::rnnlm_description(wp::describe(s3.program), 256);
  const wp::program_description want = wp::describe(s256.program);
  CHECK(want.maps.size() > 3000);
  CHECK(wp::to_json(acting(got)) == wp::to_json(acting(want)));
}
