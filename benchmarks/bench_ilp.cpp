// The search's optima certified by an independent exact solver: each problem's cost tables
// written as an integer linear programme and solved by COIN-OR CBC (Debian's coinor-cbc, run
// as the `cbc` program), beside wp::pase_search on the same tables in the same run. No MPI.
//
//   ./bench_ilp [--random=40] [--seed=1] [--max-pairs=400000] [--objective=1000] [--csv FILE]
//               [tables.json[.gz] ...]
//
// Problems: --random graphs generated here (DAGs of 3-14 vertices, each fed by 1-3 of the 5
// before it, 1-7 configurations per vertex, costs drawn from a few magnitudes, ties
// included), then every table file given (the format workpart-optimize --tables reads, e.g.
// the published graphs' tables: AlexNet, ResNet-101, InceptionV3, RNNLM, Transformer at P = 4
// and 8; or the optimizer's own problems on the five networks at P = 4-64, which
// `bench_networks --tables=DIR` writes). A problem whose edges hold more than --max-pairs
// configuration pairs in all is skipped, with a line saying so (the ILP has a variable per pair).
//
// The ILP (the marginal form of the labelling problem): binary x[v][k] (vertex v takes
// configuration k), one per vertex summing to 1; continuous y[e][a][b] >= 0 per edge and pair,
// whose sums over b equal x[u][a] and over a equal x[w][b]: with x integral they are the
// pair's indicator, so the objective sum c_v(k) x + sum c_e(a,b) y is the strategy's cost.
// Costs are scaled so that the search's optimum is --objective (1000) before they are written
// (CBC's tolerances are absolute; the scale changes no strategy's rank: at an optimum of 1,
// CBC stopped at strategies 1.6e-9 of it dearer on RNNLM's tables, within its 1e-9), with
// ratioGap 0, allowableGap 0 and tolerances of 1e-9. CBC's chosen configurations are read
// from its solution file and both strategies priced here by an exactly rounded sum of their
// vertex and edge costs, so a gap of exactly 0 means CBC found nothing cheaper. Printed
// per problem: its size, both costs, the gap (CBC's minus the search's: negative would mean
// the search missed the optimum; positive, CBC stopped short of it), whether the two chose
// the same configurations, and both times. Without `cbc` on PATH it prints why and exits 0.
//
// --csv FILE: benchmark, problem, vertices, edges, configs, pairs, search_cost, ilp_cost, gap,
// same_strategy, search_s, ilp_s.

#include <workpart/io/table_reader.hpp>
#include <workpart/optimize/cost_graph.hpp>
#include <workpart/optimize/search.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

namespace wp = workpart;
using workpart_bench::csv_writer;
using workpart_bench::option_value;
using workpart_bench::seconds_since;

/// A random DAG: vertex v fed by 1-3 of the 5 before it; 1-7 configurations; costs from a few
/// magnitudes, some equal (ties the search must break like any other exact solver).
wp::cost_graph random_problem(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 2654435761u + 17);
  auto uniform = [&](int lo, int hi) { return lo + int(rng() % std::uint64_t(hi - lo + 1)); };
  auto cost = [&] {
    const int kind = uniform(0, 5);
    if (kind == 0) return 0.0;
    if (kind == 1) return 5.0;  // a value repeated across entries: ties
    return double(uniform(1, 1000)) * std::pow(10.0, uniform(0, 6));
  };
  wp::cost_graph g;
  const int n = uniform(3, 14);
  for (int v = 0; v < n; ++v) {
    std::vector<double> c(std::size_t(uniform(1, 7)));
    for (auto& x : c) x = cost();
    g.add_vertex("v" + std::to_string(v), std::move(c));
  }
  for (int v = 1; v < n; ++v) {
    const int feeds = std::min(v, uniform(1, 3));
    std::vector<int> from;
    while (int(from.size()) < feeds) {
      const int u = std::max(0, v - uniform(1, 5));
      if (std::find(from.begin(), from.end(), u) == from.end()) from.push_back(u);
    }
    for (int u : from) {
      std::vector<double> m(g.num_configs(std::size_t(u)) * g.num_configs(std::size_t(v)));
      for (auto& x : m) x = cost();
      g.add_edge(std::size_t(u), std::size_t(v), std::move(m));
    }
  }
  return g;
}

/// The sum of `terms` rounded once, exactly (Shewchuk's partials, as Python's math.fsum):
/// two strategies of equal cost get equal sums whatever their terms' order, where a running
/// sum of different terms can differ in the last bit (two tied strategies of InceptionV3's
/// tables summed 1 ulp apart).
double exact_sum(const std::vector<double>& terms) {
  std::vector<double> partials;
  for (double x : terms) {
    std::size_t i = 0;
    for (double y : partials) {
      if (std::abs(x) < std::abs(y)) std::swap(x, y);
      const double hi = x + y, lo = y - (hi - x);
      if (lo != 0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  }
  // the partials are non-overlapping, ascending: add from the top, correcting the last rounding
  double hi = 0;
  std::size_t n = partials.size();
  if (n > 0) {
    hi = partials[--n];
    double lo = 0;
    while (n > 0) {
      const double x = hi, y = partials[--n];
      hi = x + y;
      lo = y - (hi - x);
      if (lo != 0) break;
    }
    if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
      const double y = lo * 2, x = hi + y;
      if (y == x - hi) hi = x;
    }
  }
  return hi;
}

/// The strategy's cost: its vertices' and edges' costs, summed exactly.
double price(const wp::cost_graph& g, const std::vector<std::size_t>& k) {
  std::vector<double> terms;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) terms.push_back(g.vertex_cost(v, k[v]));
  for (std::size_t e = 0; e < g.num_edges(); ++e)
    terms.push_back(g.edge_cost(e, k[g.edge_source(e)], k[g.edge_target(e)]));
  return exact_sum(terms);
}

std::size_t pairs_of(const wp::cost_graph& g) {
  std::size_t p = 0;
  for (std::size_t e = 0; e < g.num_edges(); ++e) p += g.edge_costs(e).size();
  return p;
}

/// The ILP in CPLEX LP format (which CBC reads), costs divided by `scale`.
void write_lp(const wp::cost_graph& g, double scale, const std::string& path) {
  std::ofstream f(path);
  f.precision(17);
  f << "Minimize\n obj:";
  std::size_t terms = 0;
  auto term = [&](double c, const std::string& var) {
    f << (terms++ % 8 == 7 ? "\n " : " ") << (c / scale >= 0 ? "+ " : "- ") << std::abs(c / scale)
      << " " << var;
  };
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    for (std::size_t k = 0; k < g.num_configs(v); ++k)
      term(g.vertex_cost(v, k), "x" + std::to_string(v) + "_" + std::to_string(k));
  for (std::size_t e = 0; e < g.num_edges(); ++e) {
    const std::size_t ku = g.num_configs(g.edge_source(e)), kv = g.num_configs(g.edge_target(e));
    for (std::size_t a = 0; a < ku; ++a)
      for (std::size_t b = 0; b < kv; ++b)
        term(g.edge_cost(e, a, b),
             "y" + std::to_string(e) + "_" + std::to_string(a) + "_" + std::to_string(b));
  }
  if (terms == 0) f << " 0 x0_0";
  f << "\nSubject To\n";
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    f << " one" << v << ":";
    for (std::size_t k = 0; k < g.num_configs(v); ++k) f << " + x" << v << "_" << k;
    f << " = 1\n";
  }
  for (std::size_t e = 0; e < g.num_edges(); ++e) {
    const std::size_t u = g.edge_source(e), w = g.edge_target(e);
    const std::size_t ku = g.num_configs(u), kv = g.num_configs(w);
    for (std::size_t a = 0; a < ku; ++a) {
      f << " r" << e << "_" << a << ":";
      for (std::size_t b = 0; b < kv; ++b) f << " + y" << e << "_" << a << "_" << b;
      f << " - x" << u << "_" << a << " = 0\n";
    }
    for (std::size_t b = 0; b < kv; ++b) {
      f << " c" << e << "_" << b << ":";
      for (std::size_t a = 0; a < ku; ++a) f << " + y" << e << "_" << a << "_" << b;
      f << " - x" << w << "_" << b << " = 0\n";
    }
  }
  f << "Binaries\n";
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    for (std::size_t k = 0; k < g.num_configs(v); ++k) f << " x" << v << "_" << k << "\n";
  f << "End\n";
}

struct ilp_result {
  bool ok = false;
  std::string why;  ///< when not ok
  std::vector<std::size_t> config;
  double seconds = 0;
};

/// Runs CBC on the problem and reads back the configuration each vertex takes. Costs are
/// divided by `scale` (the search's optimum over --objective, so that CBC's objective is near
/// that and its tolerances, absolute, are relative to the optimum: costs spanning nine orders
/// of magnitude divided by the largest one hid gaps of 1e-7 of it).
ilp_result solve_ilp(const wp::cost_graph& g, double scale, const std::string& dir) {
  ilp_result r;
  if (!(scale > 0)) {
    scale = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v)
      for (double c : g.vertex_costs(v)) scale = std::max(scale, std::abs(c));
    for (std::size_t e = 0; e < g.num_edges(); ++e)
      for (double c : g.edge_costs(e)) scale = std::max(scale, std::abs(c));
    if (scale == 0) scale = 1;
  }
  const std::string lp = dir + "/problem.lp", sol = dir + "/solution.txt", log = dir + "/cbc.log";
  write_lp(g, scale, lp);
  std::remove(sol.c_str());
  const std::string cmd = "cbc " + lp +
                          " ratioGap 0 allowableGap 0 integerTolerance 1e-9 primalTolerance 1e-9 "
                          "dualTolerance 1e-9 solve solu " +
                          sol + " > " + log + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  r.seconds = seconds_since(t0);
  std::ifstream in(sol);
  std::string status;
  if (rc != 0 || !std::getline(in, status)) {
    r.why = "cbc failed (exit " + std::to_string(rc) + "; its output: " + log + ")";
    return r;
  }
  if (status.rfind("Optimal", 0) != 0) {
    r.why = "cbc: " + status;
    return r;
  }
  r.config.assign(g.num_vertices(), std::size_t(-1));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string index, name;
    double value = 0;
    if (line.rfind("**", 0) == 0) ls.ignore(2);  // CBC marks values off their bounds
    if (!(ls >> index >> name >> value) || name.empty() || name[0] != 'x' || value < 0.5) continue;
    const std::size_t at = name.find('_');
    const std::size_t v = std::stoul(name.substr(1, at - 1)), k = std::stoul(name.substr(at + 1));
    if (v < r.config.size()) r.config[v] = k;
  }
  // CBC writes only the nonzero values: a vertex whose x are all missing took none
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    if (r.config[v] == std::size_t(-1)) {
      if (g.num_configs(v) == 1) {
        r.config[v] = 0;  // presolve may drop a fixed variable from the file
      } else {
        r.why = "cbc's solution names no configuration of vertex " + std::to_string(v);
        return r;
      }
    }
  r.ok = true;
  return r;
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_ilp [--random=40] [--seed=1] [--max-pairs=400000] [--objective=1000] "
               "[--csv FILE] [tables.json[.gz] ...]\n");
  return 2;
}

bool have_cbc() { return std::system("command -v cbc > /dev/null 2>&1") == 0; }

}  // namespace

int main(int argc, char** argv) {
  int randoms = 40;
  std::uint64_t seed = 1;
  std::size_t max_pairs = 400000;
  double objective = 1e3;
  std::string csv_path;
  std::vector<std::string> files;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (const char* v = workpart_bench::csv_option(argc, argv, a)) {
      csv_path = v;
    } else if (const char* v = option_value(s, "--random=")) {
      randoms = std::atoi(v);
    } else if (const char* v = option_value(s, "--seed=")) {
      seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = option_value(s, "--max-pairs=")) {
      max_pairs = std::size_t(std::atof(v));
    } else if (const char* v = option_value(s, "--objective=")) {
      objective = std::atof(v);
      if (!(objective > 0)) return usage();
    } else if (s.rfind("--", 0) == 0) {
      return usage();
    } else {
      files.push_back(s);
    }
  }
  if (!have_cbc()) {
    std::printf(
        "bench_ilp: skipped: the `cbc` program (COIN-OR CBC) is not on PATH; install it with "
        "apt-get install coinor-cbc (scripts/bench.sh bench_ilp does)\n");
    return 0;
  }
  char tmpl[] = "/tmp/bench_ilp_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  if (!dir) {
    std::fprintf(stderr, "bench_ilp: cannot make a working folder under /tmp\n");
    return 1;
  }

  csv_writer csv(csv_path,
                 {"benchmark", "problem", "vertices", "edges", "configs", "pairs", "search_cost",
                  "ilp_cost", "gap", "same_strategy", "search_s", "ilp_s"});
  std::printf("%-26s %4s %4s %6s %8s %17s %17s %10s %5s %9s %9s\n", "problem", "V", "E", "K",
              "pairs", "search cost", "ILP (CBC) cost", "gap", "same", "search s", "cbc s");
  int solved = 0, nonzero = 0, skipped = 0, failed = 0;
  double worst = 0;
  auto run = [&](const std::string& name, const wp::cost_graph& g) {
    const std::size_t pairs = pairs_of(g);
    if (pairs > max_pairs) {
      std::printf("%-26s %4zu %4zu %6zu %8zu  skipped: more pairs than --max-pairs=%zu\n",
                  name.c_str(), g.num_vertices(), g.num_edges(), g.total_configs(), pairs,
                  max_pairs);
      ++skipped;
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const wp::search_result s = wp::pase_search(g, {.runner_ups = false});
    const double search_s = seconds_since(t0);
    const ilp_result ilp = solve_ilp(g, price(g, s.config) / objective, dir);
    if (!ilp.ok) {
      std::printf("%-26s %4zu %4zu %6zu %8zu  FAILED: %s\n", name.c_str(), g.num_vertices(),
                  g.num_edges(), g.total_configs(), pairs, ilp.why.c_str());
      ++failed;
      return;
    }
    const double search_cost = price(g, s.config), ilp_cost = price(g, ilp.config);
    const double gap = ilp_cost - search_cost;
    const bool same = ilp.config == s.config;
    ++solved;
    if (gap != 0) ++nonzero;
    worst = std::max(worst, std::abs(gap) / std::max(1e-300, std::abs(search_cost)));
    std::printf("%-26s %4zu %4zu %6zu %8zu %17.10g %17.10g %10.3g %5s %9.4f %9.3f\n", name.c_str(),
                g.num_vertices(), g.num_edges(), g.total_configs(), pairs, search_cost, ilp_cost,
                gap, same ? "yes" : "no", search_s, ilp.seconds);
    std::fflush(stdout);
    csv.row({"bench_ilp", name, csv_writer::cell(g.num_vertices()), csv_writer::cell(g.num_edges()),
             csv_writer::cell(g.total_configs()), csv_writer::cell(pairs),
             csv_writer::cell(search_cost), csv_writer::cell(ilp_cost), csv_writer::cell(gap),
             same ? "1" : "0", csv_writer::cell(search_s), csv_writer::cell(ilp.seconds)});
  };
  for (int r = 0; r < randoms; ++r)
    run("random seed " + std::to_string(seed + std::uint64_t(r)),
        random_problem(seed + std::uint64_t(r)));
  for (const auto& f : files) {
    std::string name = f.substr(f.find_last_of('/') + 1);
    try {
      run(name, wp::read_cost_tables(f));
    } catch (const std::exception& e) {
      std::printf("%-26s FAILED to read: %s\n", name.c_str(), e.what());
      ++failed;
    }
  }
  std::printf(
      "%d problems solved by both: gap exactly 0 in %d, nonzero in %d (largest |gap| / cost "
      "%.3g); %d skipped, %d failed\n",
      solved, solved - nonzero, nonzero, worst, skipped, failed);
  const std::string rm = std::string("rm -rf ") + dir;
  if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "bench_ilp: could not remove %s\n", dir);
  return nonzero == 0 && failed == 0 ? 0 : 1;
}
