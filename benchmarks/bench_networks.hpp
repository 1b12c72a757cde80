#pragma once
// What bench_networks' translation units share: the networks' descriptions and the Transformer's
// run, built in translation units of their own (the typed steps are the benchmark's longest
// compiles, and build side by side), and item 5's timing of three strategies on these ranks.

#include "../examples/networks/network.hpp"

#include <workpart/optimize.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
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

/// Random valid schedules timed beside the three named strategies (--strategies=N: N more).
inline int random_strategies = 7;

/// Kendall's tau-a between two lists of the same length: (concordant - discordant) pairs over
/// all pairs (a tie in either list counts as neither).
inline double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  double c = 0, d = 0, n = 0;
  for (std::size_t x = 0; x < a.size(); ++x)
    for (std::size_t y = x + 1; y < a.size(); ++y) {
      const double s = (a[x] - a[y]) * (b[x] - b[y]);
      c += s > 0;
      d += s < 0;
      ++n;
    }
  return n > 0 ? (c - d) / n : 0.0;
}

/// Item 5 (and bench_model, issue 68 item 3) for one network's step on these ranks: data
/// parallelism, the experts' strategy, the optimum of the calibrated model (over the grids
/// `opt` allows and every map's replicated candidate, config_options::replicas: data
/// parallelism's updates and Megatron's replicated maps are among them) and random_strategies
/// random schedules (each map on one of its candidate grids, drawn on root, kept where the
/// plans accept it), each step timed alternately with the others, beside its modelled seconds;
/// then the model against the measurements: Kendall's tau of the two rankings, the found
/// strategy over the fastest, and each map's measured over modelled seconds (plan.profile())
/// for the maps that take over 1 % of a step, by kind of kernel (GEMM or loop).
template <class Program, class Expert>
void time_strategies(wp::context& ctx, const Program& prog, Expert expert,
                     const wp::machine_model& mm, int reps, const std::string& network,
                     const std::string& title, std::ofstream& out, wp::optimize_options opt = {}) {
  const int P = ctx.size();
  const bool root = ctx.is_root();
  opt.configs.replicas = true;
  const wp::optimized found = wp::optimize(prog, P, mm, opt);
  std::vector<std::pair<std::string, wp::schedule>> strategies = {
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
  {  // random valid schedules: every map on one of the candidate grids the optimizer priced
    const wp::program_cost_tables t = wp::program_costs(prog, P, mm, opt.configs);
    std::uint64_t state = 0x9e3779b97f4a7c15ull ^ std::hash<std::string>{}(network);
    auto draw = [&](std::size_t n) {  // splitmix64: the same draws on every platform
      state += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = state;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      return std::size_t((z ^ (z >> 31)) % n);
    };
    int made = 0;
    for (int tries = 0; made < random_strategies && tries < 20 * random_strategies; ++tries) {
      wp::schedule s;
      for (std::size_t m = 0; m < t.maps.size(); ++m)
        s.set(t.maps[m], t.grids[m][draw(t.grids[m].size())]);
      s = wp::detail::roots_schedule(ctx.comm(), prog, s);
      try {  // (a grid pair the program solver refuses: refused alike on every rank)
        const double c = wp::modelled_cost(prog, s, P, mm);
        plans.push_back(wp::distribute(prog, s, ctx));
        modelled.push_back(c);
      } catch (const wp::error&) {
        continue;
      }
      strategies.emplace_back("random " + std::to_string(++made), s);
    }
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
  // per map: measured over modelled, for the maps over 1 % of their strategy's step
  std::vector<char> gemm;
  prog.for_each_map([&](const wp::detail::map_interface& m) { gemm.push_back(m.runs_as_gemm()); });
  struct map_ratio {
    std::string strategy, map;
    bool gemm;
    double measured, modelled;
  };
  std::vector<map_ratio> ratios;
  std::vector<int> big(plans.size(), 0), near(plans.size(), 0);
  for (std::size_t v = 0; v < plans.size(); ++v) {
    const wp::plan_profile pr = plans[v].profile(mm);  // (collective)
    for (const auto& row : pr.rows)
      if (row.map >= 0 && row.measured > 0.01 * pr.step_measured && row.modelled > 0) {
        const double q = row.measured / row.modelled;
        ++big[v];
        near[v] += q >= 0.67 && q <= 1.5;
        ratios.push_back({strategies[v].first, row.name, gemm[std::size_t(row.map)] != 0,
                          row.measured, row.modelled});
      }
  }
  if (!root) return;
  std::printf("\n%s on %d ranks; calibrated model: %s; %d rounds\n", title.c_str(), P,
              mm.str().c_str(), reps);
  std::printf("%-14s %12s %12s %10s %16s\n", "strategy", "measured s", "modelled s", "meas/model",
              "maps 0.67-1.5x");
  std::vector<double> measured;
  for (std::size_t v = 0; v < plans.size(); ++v) {
    const double m = median(t[v]);
    measured.push_back(m);
    std::printf("%-14s %12.5g %12.5g %10.2f %10d of %3d\n", strategies[v].first.c_str(), m,
                modelled[v], m / modelled[v], near[v], big[v]);
    if (out)
      out << "bench_networks_run," << network << ',' << P << ',' << strategies[v].first << ',' << m
          << ',' << modelled[v] << ',' << m / modelled[v] << ',' << near[v] << ',' << big[v]
          << '\n';
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
              order([&](std::size_t k) { return measured[k]; }).c_str(),
              order([&](std::size_t k) { return modelled[k]; }).c_str());
  const std::size_t fastest =
      std::size_t(std::min_element(measured.begin(), measured.end()) - measured.begin());
  int all_big = 0, all_near = 0;
  for (std::size_t v = 0; v < plans.size(); ++v) all_big += big[v], all_near += near[v];
  std::printf(
      "bench_model %s np %d: Kendall tau %.3f over %zu strategies (target >= 0.9 at np 2); "
      "found / fastest (%s) %.3f (target <= 1.05); maps over 1 %% of a step within 0.67-1.5x: "
      "%d of %d, %.0f %% (target >= 90 %%)\n",
      network.c_str(), P, kendall_tau(measured, modelled), measured.size(),
      strategies[fastest].first.c_str(), measured[2] / measured[fastest], all_near, all_big,
      all_big ? 100.0 * all_near / all_big : 0.0);
  // where the model misses: the median ratio per kind of kernel, and the worst maps
  for (int g = 1; g >= 0; --g) {
    std::vector<double> q;
    for (const auto& r : ratios)
      if (r.gemm == (g == 1)) q.push_back(r.measured / r.modelled);
    if (q.empty()) continue;
    std::sort(q.begin(), q.end());
    std::printf("  %s maps: %zu, measured/modelled median %.2f, from %.2f to %.2f\n",
                g ? "GEMM" : "loop", q.size(), q[q.size() / 2], q.front(), q.back());
  }
  std::stable_sort(ratios.begin(), ratios.end(), [](const map_ratio& a, const map_ratio& b) {
    auto off = [](const map_ratio& r) { return std::abs(std::log(r.measured / r.modelled)); };
    return off(a) > off(b);
  });
  for (std::size_t k = 0; k < std::min<std::size_t>(5, ratios.size()); ++k)
    std::printf("  off most: %-9s %-24s (%s) measured %.3g s, modelled %.3g s, %.2fx\n",
                ratios[k].strategy.c_str(), ratios[k].map.c_str(), ratios[k].gemm ? "GEMM" : "loop",
                ratios[k].measured, ratios[k].modelled, ratios[k].measured / ratios[k].modelled);
}

}  // namespace bench_networks
