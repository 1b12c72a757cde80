#pragma once
// What bench_networks' translation units share: the networks' descriptions and the Transformer's
// run, built in translation units of their own (the typed steps are the benchmark's longest
// compiles, and build side by side), and item 5's timing of three strategies on these ranks.

#include "../examples/networks/network.hpp"

#include <workpart/optimize.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "bench_mpi.hpp"

namespace bench_networks {

namespace wp = workpart;
using namespace workpart_bench;

workpart::program_description transformer_description(int& maps_typed);
workpart::program_description rnnlm_description(int& maps_typed);
workpart::program_description resnet101_description(int& maps_typed);
/// InceptionV3's full step, joined from pieces; `check`: a line on the joining checked against
/// a typed step (bench_networks_inception.cpp).
workpart::program_description inception3_description(const std::vector<std::int64_t>& ps,
                                                     const wp::machine_model& mm,
                                                     std::string& check);
/// Item 5 for the Transformer scaled down (bench_networks_transformer.cpp).
void run_transformer(wp::context& ctx, const wp::machine_model& mm, int reps, wp::index_t batch,
                     std::ofstream& out);
/// Item 5 for ResNet scaled down (bench_networks_resnet_run.cpp).
void run_resnet(wp::context& ctx, const wp::machine_model& mm, int reps, wp::index_t batch,
                wp::index_t image, wp::index_t width, std::ofstream& out);
/// Item 5 for InceptionV3 scaled down (bench_networks_inception_run.cpp).
void run_inception(wp::context& ctx, const wp::machine_model& mm, int reps, wp::index_t batch,
                   wp::index_t width, std::ofstream& out);

/// Item 5 for one network's step on these ranks: data parallelism, the experts' strategy and
/// the optimum of the calibrated model (over the grids `opt` allows and every map's replicated
/// candidate, config_options::replicas: data parallelism's updates and Megatron's replicated
/// maps are among them), each step timed alternately with the others, beside its modelled
/// seconds.
template <class Program, class Expert>
void time_strategies(wp::context& ctx, const Program& prog, Expert expert,
                     const wp::machine_model& mm, int reps, const std::string& network,
                     const std::string& title, std::ofstream& out, wp::optimize_options opt = {}) {
  const int P = ctx.size();
  const bool root = ctx.is_root();
  opt.configs.replicas = true;
  const wp::optimized found = wp::optimize(prog, P, mm, opt);
  const std::vector<std::pair<std::string, wp::schedule>> strategies = {
      {"data parallel", wpnet::data_parallel(prog, P)},
      {"experts'", expert(prog, P)},
      // root's (pricing reads root-only state: every rank plans with root's schedule, as
      // wp::distribute(prog, wp::automatic, ctx) does)
      {"found", wp::detail::roots_schedule(ctx.comm(), prog, found.schedule)}};
  using plan_type = decltype(wp::distribute(prog, strategies[0].second, ctx));
  std::vector<plan_type> plans;
  std::vector<double> modelled;
  for (const auto& [name, s] : strategies) {
    plans.push_back(wp::distribute(prog, s, ctx));
    modelled.push_back(wp::modelled_cost(prog, s, P, mm));
  }
  for (auto& p : plans) p.scatter();
  for (auto& p : plans) p.execute();  // warm-up: buffers, threads, connections, datatypes
  std::vector<std::vector<double>> t(plans.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t v : round_order(r, plans.size())) {
      quiet_barrier(ctx.comm());
      const auto t0 = std::chrono::steady_clock::now();
      plans[v].execute();
      const double sec = slowest(seconds_since(t0), ctx.comm());
      if (root) t[v].push_back(sec);
    }
  if (!root) return;
  std::printf(
      "\n%s on %d ranks; calibrated model: %.3g FLOP/s, alpha %.3g s, beta %.3g s/B; %d "
      "rounds\n",
      title.c_str(), P, mm.flops, mm.alpha, mm.beta, reps);
  std::printf("%-14s %12s %12s %10s\n", "strategy", "measured s", "modelled s", "meas/model");
  for (std::size_t v = 0; v < plans.size(); ++v) {
    const double m = median(t[v]);
    std::printf("%-14s %12.5g %12.5g %10.2f\n", strategies[v].first.c_str(), m, modelled[v],
                m / modelled[v]);
    if (out)
      out << "bench_networks_run," << network << ',' << P << ',' << strategies[v].first << ',' << m
          << ',' << modelled[v] << ',' << m / modelled[v] << '\n';
  }
  auto order = [&](auto value) {
    std::vector<std::size_t> o(plans.size());
    for (std::size_t k = 0; k < o.size(); ++k) o[k] = k;
    std::stable_sort(o.begin(), o.end(),
                     [&](std::size_t a, std::size_t b) { return value(a) < value(b); });
    std::string txt;
    for (std::size_t k : o) txt += (txt.empty() ? "" : " < ") + strategies[k].first;
    return txt;
  };
  if (!found.proven_optimal)
    std::printf("(the search was cut short: found is not proven optimal)\n");
  std::printf("ranked by measurement: %s\nranked by the model:   %s\n",
              order([&](std::size_t k) { return median(t[k]); }).c_str(),
              order([&](std::size_t k) { return modelled[k]; }).c_str());
}

}  // namespace bench_networks
