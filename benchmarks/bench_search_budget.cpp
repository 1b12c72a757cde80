// Whether the strategy search keeps its time budget (search_options::time_budget_seconds,
// workpart-optimize --time-budget) on graphs far larger than the published ones, and what the
// strategy it returns costs against the optimum found without a budget in the same run.
//
//   ./bench_search_budget [--reps=5] [--chain=300000] [--grid=7x3000]
//                         [--budgets=0.05,0.1,0.2,0.5,1] [--csv FILE]
//
// Graphs (4 configurations per vertex, uniform random costs in [0, 100), seed 1):
//   chain   v - (v+1): dependent sets of one vertex; solved exactly in about 0.3 s at 300,000
//           vertices, so small budgets stop it in the ordering or the tables
//   grid    W x L vertices, each joined to its right and lower neighbours: dependent sets of
//           about W vertices (4^W rows); 7 x 3000 takes seconds exact, so every budget stops it
//           in the tables
// Rows: per graph the unbudgeted search (the baseline: its time and optimal cost), then per
// budget the median over --reps of the search's own seconds (search_result::seconds: ordering,
// tables, fallback and the result; the graph is built before), that over the budget, the
// largest single run, the vertices eliminated, whether the result was proven optimal, and its
// cost over the optimum. The budget is kept when seconds / budget <= 1.1; below the floor
// (load, the edges per vertex, the greedy pass and the result: one pass each over the edges,
// 0.05 s at 300,000 vertices here) no budget can be.
//
// --csv FILE also writes one line per row: benchmark, graph, vertices, edges, budget_s (empty
// for the baseline), search_s, max_s, ratio, eliminated, proven_optimal, cost, cost_ratio.

#include <workpart/optimize/cost_graph.hpp>
#include <workpart/optimize/search.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace wp = workpart;
using workpart_bench::csv_writer;
using workpart_bench::median;

namespace {

constexpr std::size_t K = 4;

std::vector<double> random_costs(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 100.0);
  std::vector<double> c(count);
  for (double& x : c) x = u(rng);
  return c;
}

wp::cost_graph chain(std::size_t n) {
  std::mt19937_64 rng(1);
  wp::cost_graph g;
  for (std::size_t v = 0; v < n; ++v) g.add_vertex("v" + std::to_string(v), random_costs(K, rng));
  for (std::size_t v = 0; v + 1 < n; ++v) g.add_edge(v, v + 1, random_costs(K * K, rng));
  return g;
}

wp::cost_graph grid(std::size_t width, std::size_t length) {
  std::mt19937_64 rng(1);
  wp::cost_graph g;
  for (std::size_t v = 0; v < width * length; ++v)
    g.add_vertex("v" + std::to_string(v), random_costs(K, rng));
  for (std::size_t i = 0; i < length; ++i)
    for (std::size_t j = 0; j < width; ++j) {
      const std::size_t v = i * width + j;
      if (j + 1 < width) g.add_edge(v, v + 1, random_costs(K * K, rng));
      if (i + 1 < length) g.add_edge(v, v + width, random_costs(K * K, rng));
    }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::size_t chain_n = 300000, grid_w = 7, grid_l = 3000;
  std::vector<double> budgets = {0.05, 0.1, 0.2, 0.5, 1.0};
  std::string csv_path;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (const char* p = workpart_bench::csv_option(argc, argv, a)) {
      csv_path = p;
    } else if (const char* v = workpart_bench::option_value(arg, "--reps=")) {
      reps = std::max(1, std::atoi(v));
    } else if (const char* v = workpart_bench::option_value(arg, "--chain=")) {
      chain_n = std::size_t(std::max(2L, std::atol(v)));
    } else if (const char* v = workpart_bench::option_value(arg, "--grid=")) {
      char* x = nullptr;
      grid_w = std::size_t(std::max(1L, std::strtol(v, &x, 10)));
      grid_l = std::size_t(std::max(1L, *x == 'x' ? std::atol(x + 1) : 1L));
    } else if (const char* v = workpart_bench::option_value(arg, "--budgets=")) {
      budgets.clear();
      for (std::string s = v; !s.empty();) {
        const auto comma = s.find(',');
        budgets.push_back(std::atof(s.substr(0, comma).c_str()));
        s = comma == std::string::npos ? "" : s.substr(comma + 1);
      }
    } else {
      std::fprintf(stderr,
                   "usage: bench_search_budget [--reps=5] [--chain=300000] [--grid=7x3000]\n"
                   "                           [--budgets=0.05,0.1,0.2,0.5,1] [--csv FILE]\n");
      return 2;
    }
  }
  csv_writer csv;
  try {
    csv = csv_writer(csv_path,
                     {"benchmark", "graph", "vertices", "edges", "budget_s", "search_s", "max_s",
                      "ratio", "eliminated", "proven_optimal", "cost", "cost_ratio"});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_search_budget: %s\n", e.what());
    return 1;
  }
  std::printf("%-8s %9s %9s %8s %9s %9s %7s %10s %6s %12s\n", "graph", "vertices", "budget_s",
              "search_s", "max_s", "s/budget", "elim", "optimal", "", "cost/opt");
  const std::pair<const char*, wp::cost_graph> graphs[] = {{"chain", chain(chain_n)},
                                                           {"grid", grid(grid_w, grid_l)}};
  for (const auto& [name, g] : graphs) {
    const wp::search_result exact = wp::pase_search(g, {.runner_ups = false});
    std::printf("%-8s %9zu %9s %8.3f %9s %9s %7zu %10s %6s %12.17g\n", name, g.num_vertices(),
                "none", exact.seconds, "", "", exact.eliminated,
                exact.proven_optimal ? "yes" : "no", "", exact.cost);
    csv.row({"search_budget", name, std::to_string(g.num_vertices()), std::to_string(g.num_edges()),
             "", std::to_string(exact.seconds), std::to_string(exact.seconds), "",
             std::to_string(exact.eliminated), exact.proven_optimal ? "1" : "0",
             std::to_string(exact.cost), "1"});
    for (double budget : budgets) {
      std::vector<double> secs;
      wp::search_result last;
      for (int r = 0; r < reps; ++r) {
        last = wp::pase_search(g, {.time_budget_seconds = budget, .runner_ups = false});
        secs.push_back(last.seconds);
      }
      const double med = median(secs), mx = *std::max_element(secs.begin(), secs.end());
      std::printf("%-8s %9zu %9.3f %8.3f %9.3f %9.2f %7zu %10s %6s %12.6f\n", name,
                  g.num_vertices(), budget, med, mx, med / budget, last.eliminated,
                  last.proven_optimal ? "yes" : "no", "", last.cost / exact.cost);
      csv.row({"search_budget", name, std::to_string(g.num_vertices()),
               std::to_string(g.num_edges()), std::to_string(budget), std::to_string(med),
               std::to_string(mx), std::to_string(med / budget), std::to_string(last.eliminated),
               last.proven_optimal ? "1" : "0", std::to_string(last.cost),
               std::to_string(last.cost / exact.cost)});
    }
  }
  return 0;
}
