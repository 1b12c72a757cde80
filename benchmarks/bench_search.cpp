// The exact strategy search (optimize/search.hpp) on generated cost-table problems of the
// published graphs' shapes, and on table files given on the command line, against a naive
// implementation of the same dynamic programme timed in the same run.
//
//   ./bench_search [--reps=5] [--p=8,16,32,64] [--sizes=10,50,250] [--naive-limit=3e7]
//                  [--shape=transformer|inception|dag|chain2] [--write=FILE --p=64 --sizes=250]
//                  [--scale=published.json[.gz] --p=16,32,64 [--max-dims=4]]
//                  [--csv FILE] [tables.json[.gz] ...]
//
// Shapes (vertices ~ the size asked for):
//   transformer  layers of 6 operations: a chain with an attention skip (b -> d) and a residual
//                edge around the layer; 4-factor (einsum) and 3-factor (elementwise) configs
//   inception    blocks: an input, four branches of 1-3 operations, a 4-input concat
//   dag          random DAG, each vertex fed by 1-2 of the 4 vertices before it
//   chain2       a chain of 2-factor operations (p up to 1024)
// Configurations: every tuple of divisors of p (2-4 factors) whose product is <= p. Costs: a
// synthetic model (work / product of factors plus a per-factor communication charge; edges
// charge the mismatch of the factors both ends share), deterministic per seed.
//
// Columns: vertices, edges, the largest K, the largest dependent set, the largest table (rows),
// table entries visited (rows x K summed), seconds (median of the repeats) for the search
// without and with the runner-up pass, the naive DP (std::map tables keyed by the dependent
// set's configurations, costs fetched through the graph interface, as Algorithm 1 reads;
// skipped above --naive-limit entries) and its ratio, and the process's peak RSS so far
// (getrusage; cases run from small to large). `agree` checks the naive DP's optimum.
//
// --write=FILE writes the transformer problem for the first --p and --sizes (or, with --scale,
// that topology at the first --p) as a table file (for the reader's speed: time
// `workpart-optimize --tables FILE`). --scale=FILE keeps a
// published graph's topology and tuple lengths (at most --max-dims) and generates
// configurations and costs for each --p: the published shapes at larger p.
//
// --csv FILE also writes the table's rows as CSV, one line per case: benchmark, case, shape
// (transformer, inception, dag, chain2, the --scale file's name, or "file" for a table file),
// p (the ranks the configurations are for; empty for a table file), vertices, edges, k_max,
// max_dependent_set, max_table_rows, entries, search_s, runner_ups_s, naive_s, naive_ratio
// (naive_s / search_s), peak_rss_bytes, agree (1 or 0); the naive cells are empty where the
// naive DP was skipped.

#include <workpart/optimize/cost_graph.hpp>
#include <workpart/optimize/search.hpp>
#include <workpart/io/table_reader.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.hpp"

namespace wp = workpart;
using workpart_bench::csv_writer;
using workpart_bench::median;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double peak_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

// ------------------------------------------------------------------------ generators

/// Every tuple of `dims` divisors of p whose product is <= p.
std::vector<std::vector<std::int64_t>> divisor_tuples(std::int64_t p, int dims) {
  std::vector<std::int64_t> div;
  for (std::int64_t d = 1; d <= p; ++d)
    if (p % d == 0) div.push_back(d);
  std::vector<std::vector<std::int64_t>> out;
  std::vector<std::int64_t> cur;
  auto rec = [&](auto&& self, std::int64_t prod) -> void {
    if (int(cur.size()) == dims) {
      out.push_back(cur);
      return;
    }
    for (std::int64_t d : div) {
      if (prod * d > p) break;
      cur.push_back(d);
      self(self, prod * d);
      cur.pop_back();
    }
  };
  rec(rec, 1);
  return out;
}

/// Builds a cost_graph with synthetic costs over the given operation shapes.
class generator {
 public:
  generator(std::int64_t p, std::uint64_t seed) : p_(p), rng_(seed) {}

  std::size_t op(int dims, const char* kind) {
    auto& t = tuples(dims);
    std::uniform_real_distribution<double> U(0, 1);
    const double work = 1e9 * (0.2 + U(rng_));
    std::vector<double> w(static_cast<std::size_t>(dims));
    for (auto& x : w) x = 0.02 * work * U(rng_);
    std::vector<double> cost(t.size());
    for (std::size_t k = 0; k < t.size(); ++k) {
      double prod = 1, comm = 0;
      for (int i = 0; i < dims; ++i) {
        prod *= double(t[k][std::size_t(i)]);
        comm += w[std::size_t(i)] * std::log2(double(t[k][std::size_t(i)]));
      }
      cost[k] = work / prod + comm + 1e3 * U(rng_);
    }
    return g_.add_vertex(std::string(kind) + "_" + std::to_string(g_.num_vertices()),
                         std::move(cost), t);
  }

  void edge(std::size_t u, std::size_t v) {
    const auto& tu = tuples(g_.config(u, 0).size());
    const auto& tv = tuples(g_.config(v, 0).size());
    std::uniform_real_distribution<double> U(0, 1);
    const double bytes = 1e7 * (0.2 + U(rng_));
    const std::size_t shared = std::min(tu[0].size(), tv[0].size());
    std::vector<double> c(tu.size() * tv.size());
    for (std::size_t a = 0; a < tu.size(); ++a)
      for (std::size_t b = 0; b < tv.size(); ++b) {
        double mismatch = 0;
        for (std::size_t i = 0; i < shared; ++i)
          mismatch += std::abs(std::log2(double(tu[a][i])) - std::log2(double(tv[b][i])));
        c[a * tv.size() + b] = bytes * mismatch;
      }
    g_.add_edge(u, v, std::move(c));
  }

  wp::cost_graph take() { return std::move(g_); }

 private:
  const std::vector<std::vector<std::int64_t>>& tuples(std::size_t dims) {
    auto it = cache_.find(dims);
    if (it == cache_.end()) it = cache_.emplace(dims, divisor_tuples(p_, int(dims))).first;
    return it->second;
  }
  std::int64_t p_;
  std::mt19937_64 rng_;
  wp::cost_graph g_;
  std::map<std::size_t, std::vector<std::vector<std::int64_t>>> cache_;
};

/// Transformer layers: x -> a(qkv, 4) -> b(scores, 4) -> c(softmax, 3) -> d(context, 4),
/// b -> d, d -> e(add, 3), x -> e (residual), e -> f(norm, 3); f is the next x.
wp::cost_graph transformer(std::int64_t p, std::size_t vertices, std::uint64_t seed) {
  generator g(p, seed);
  std::size_t x = g.op(3, "embed");
  while (true) {
    const std::size_t a = g.op(4, "qkv"), b = g.op(4, "scores"), c = g.op(3, "softmax"),
                      d = g.op(4, "context"), e = g.op(3, "add"), f = g.op(3, "norm");
    g.edge(x, a);
    g.edge(a, b);
    g.edge(b, c);
    g.edge(c, d);
    g.edge(a, d);
    g.edge(d, e);
    g.edge(x, e);
    g.edge(e, f);
    x = f;
    if (f + 7 > vertices) break;
  }
  return g.take();
}

/// Inception blocks: in -> four branches (1, 2, 3, 1 operations) -> concat.
wp::cost_graph inception(std::int64_t p, std::size_t vertices, std::uint64_t seed) {
  generator g(p, seed);
  std::size_t in = g.op(4, "stem");
  while (true) {
    std::vector<std::size_t> ends;
    for (int len : {1, 2, 3, 1}) {
      std::size_t prev = in;
      for (int i = 0; i < len; ++i) {
        const std::size_t v = g.op(4, "conv");
        g.edge(prev, v);
        prev = v;
      }
      ends.push_back(prev);
    }
    const std::size_t cat = g.op(4, "concat");
    for (std::size_t e : ends) g.edge(e, cat);
    in = cat;
    if (cat + 9 > vertices) break;
  }
  return g.take();
}

/// A random DAG: each vertex fed by 1-2 of the 4 vertices before it; 2-4 factors.
wp::cost_graph random_dag(std::int64_t p, std::size_t vertices, std::uint64_t seed) {
  generator g(p, seed);
  std::mt19937_64 rng(seed * 7 + 1);
  for (std::size_t v = 0; v < vertices; ++v) {
    g.op(2 + int(rng() % 3), "op");
    if (v == 0) continue;
    const std::size_t w = std::min<std::size_t>(4, v);
    const std::size_t u1 = v - 1 - rng() % w;
    g.edge(u1, v);
    const std::size_t u2 = v - 1 - rng() % w;
    if (u2 != u1 && rng() % 2) g.edge(u2, v);
  }
  return g.take();
}

/// A published graph's topology (from a table file) with every vertex's tuple length kept
/// (at most max_dims) and configurations and costs generated for p.
wp::cost_graph scaled(const wp::cost_graph& like, std::int64_t p, std::size_t max_dims,
                      std::uint64_t seed) {
  generator g(p, seed);
  for (std::size_t v = 0; v < like.num_vertices(); ++v) {
    const std::size_t dims = std::max<std::size_t>(1, std::min(max_dims, like.config(v, 0).size()));
    g.op(int(dims), "op");
  }
  for (std::size_t e = 0; e < like.num_edges(); ++e)
    g.edge(like.edge_source(e), like.edge_target(e));
  return g.take();
}

wp::cost_graph chain2(std::int64_t p, std::size_t vertices, std::uint64_t seed) {
  generator g(p, seed);
  for (std::size_t v = 0; v < vertices; ++v) {
    g.op(2, "op");
    if (v) g.edge(v - 1, v);
  }
  return g.take();
}

// ------------------------------------------------------------------------ the naive DP

/// The same programme (same order and dependent sets, taken from `r`) written plainly: each
/// vertex's table is a std::map from the configurations of its dependent set to the best
/// (cost, configuration); every entry fetches its costs through the graph interface.
double naive_dp(const wp::cost_graph& g, const wp::search_result& r,
                std::vector<std::size_t>& config) {
  const std::size_t n = g.num_vertices();
  using key = std::vector<std::size_t>;
  std::vector<std::map<key, std::pair<double, std::size_t>>> table(n);
  std::vector<std::vector<std::size_t>> children(n);
  for (std::size_t c = 0; c < n; ++c)
    if (!r.dependent_set[c].empty()) children[r.dependent_set[c].front()].push_back(c);
  std::vector<std::size_t> pos(n);
  for (std::size_t t = 0; t < n; ++t) pos[r.order[t]] = t;
  std::vector<std::vector<std::size_t>> own_edges(n);  // edges whose first-processed end is v
  for (std::size_t e = 0; e < g.num_edges(); ++e) {
    const std::size_t u = g.edge_source(e), v = g.edge_target(e);
    own_edges[pos[u] < pos[v] ? u : v].push_back(e);
  }
  std::vector<std::size_t> env(n, 0);
  double total = 0;
  for (std::size_t v : r.order) {
    const auto& D = r.dependent_set[v];
    key a(D.size(), 0);
    while (true) {
      for (std::size_t i = 0; i < D.size(); ++i) env[D[i]] = a[i];
      double best = std::numeric_limits<double>::infinity();
      std::size_t bk = 0;
      for (std::size_t k = 0; k < g.num_configs(v); ++k) {
        env[v] = k;
        double s = g.vertex_cost(v, k);
        for (std::size_t e : own_edges[v])
          s += g.edge_cost(e, env[g.edge_source(e)], env[g.edge_target(e)]);
        for (std::size_t c : children[v]) {
          key kc;
          for (std::size_t x : r.dependent_set[c]) kc.push_back(env[x]);
          s += table[c].at(kc).first;
        }
        if (s < best) {
          best = s;
          bk = k;
        }
      }
      table[v][a] = {best, bk};
      if (D.empty()) total += best;
      std::size_t i = 0;
      while (i < D.size() && ++a[i] == g.num_configs(D[i])) a[i++] = 0;
      if (i == D.size()) break;
    }
  }
  config.assign(n, 0);
  for (std::size_t t = n; t-- > 0;) {
    const std::size_t v = r.order[t];
    key a;
    for (std::size_t x : r.dependent_set[v]) a.push_back(config[x]);
    config[v] = table[v].at(a).second;
  }
  return total;
}

// ------------------------------------------------------------------------ timing

/// A count held in a double (table rows, entries: they may pass 2^63) as a CSV cell, every digit.
std::string whole(double x) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.0f", x);
  return buf;
}

void header() {
  std::printf("%-24s %5s %5s %5s %3s %10s %10s %9s %9s %9s %7s %8s %s\n", "case", "V", "E", "Kmax",
              "|D|", "max rows", "entries", "search s", "+runner s", "naive s", "naive/x",
              "peak MB", "agree");
}

/// Times one case and prints its row; `shape` and `p` (0: unknown) are for the CSV row.
void bench(const std::string& name, const std::string& shape, std::int64_t p,
           const wp::cost_graph& g, int reps, double naive_limit, csv_writer& csv) {
  const wp::search_result first = wp::pase_search(g, {.runner_ups = false});
  const bool do_naive = first.work <= naive_limit;
  std::vector<double> t_search, t_ru, t_naive;
  double naive_cost = 0;
  std::vector<std::size_t> naive_config;
  const std::size_t variants = do_naive ? 3 : 2;
  double spent = 0;
  for (int r = 0; r < reps && (r < 1 || spent < 20); ++r) {
    for (std::size_t v : workpart_bench::round_order(r, variants)) {
      const double t0 = now();
      if (v == 0) {
        const auto x = wp::pase_search(g, {.runner_ups = false});
        t_search.push_back(now() - t0);
        if (std::getenv("BENCH_SEARCH_PHASES"))
          std::printf("   setup %.4f eliminate %.4f s\n", x.setup_seconds, x.eliminate_seconds);
        if (x.cost != first.cost) std::printf("!! search not deterministic\n");
      } else if (v == 1) {
        const auto x = wp::pase_search(g);
        t_ru.push_back(now() - t0);
        if (x.cost != first.cost) std::printf("!! runner-up run differs\n");
      } else {
        naive_cost = naive_dp(g, first, naive_config);
        t_naive.push_back(now() - t0);
      }
      spent += now() - t0;
    }
  }
  std::size_t kmax = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) kmax = std::max(kmax, g.num_configs(v));
  const double ts = median(t_search);
  char naive[64] = "-", ratio[32] = "-", agree[64] = "-";
  bool ok = false;
  if (do_naive) {
    std::snprintf(naive, sizeof naive, "%9.4f", median(t_naive));
    std::snprintf(ratio, sizeof ratio, "%6.0fx", median(t_naive) / std::max(ts, 1e-9));
    double naive_assign = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v)
      naive_assign += g.vertex_cost(v, naive_config[v]);
    for (std::size_t e = 0; e < g.num_edges(); ++e)
      naive_assign +=
          g.edge_cost(e, naive_config[g.edge_source(e)], naive_config[g.edge_target(e)]);
    ok = std::abs(naive_cost - first.cost) <= 1e-9 * std::abs(first.cost) &&
         std::abs(naive_assign - first.cost) <= 1e-9 * std::abs(first.cost);
    std::snprintf(agree, sizeof agree, "%s", ok ? "yes" : "NO");
  }
  const double peak = peak_mb();
  std::printf("%-24s %5zu %5zu %5zu %3zu %10.0f %10.3g %9.4f %9.4f %9s %7s %8.0f %s\n",
              name.c_str(), g.num_vertices(), g.num_edges(), kmax, first.max_dependent_set,
              first.largest_table_rows, first.work, ts, median(t_ru), naive, ratio, peak, agree);
  csv.row({"bench_search", name, shape, p > 0 ? csv_writer::cell(p) : "",
           csv_writer::cell(g.num_vertices()), csv_writer::cell(g.num_edges()),
           csv_writer::cell(kmax), csv_writer::cell(first.max_dependent_set),
           whole(first.largest_table_rows), whole(first.work), csv_writer::cell(ts),
           csv_writer::cell(median(t_ru)), do_naive ? csv_writer::cell(median(t_naive)) : "",
           do_naive ? csv_writer::cell(median(t_naive) / std::max(ts, 1e-9)) : "",
           csv_writer::cell(std::llround(peak * 1048576.0)), do_naive ? (ok ? "1" : "0") : ""});
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::vector<std::int64_t> ps = {8, 16, 32, 64};
  std::vector<std::int64_t> sizes = {10, 50, 250};
  double naive_limit = 3e7;
  std::string write_to, only, scale;
  std::size_t max_dims = 8;
  std::vector<std::string> files;
  std::string csv_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (const char* f = workpart_bench::csv_option(argc, argv, i)) {
      csv_path = f;
    } else if (const char* v = workpart_bench::option_value(a, "--reps=")) {
      reps = std::max(1, std::atoi(v));
    } else if (const char* v = workpart_bench::option_value(a, "--p=")) {
      ps = workpart_bench::parse_sizes(v);
    } else if (const char* v = workpart_bench::option_value(a, "--sizes=")) {
      sizes = workpart_bench::parse_sizes(v);
    } else if (const char* v = workpart_bench::option_value(a, "--naive-limit=")) {
      naive_limit = std::atof(v);
    } else if (const char* v = workpart_bench::option_value(a, "--scale=")) {
      scale = v;
    } else if (const char* v = workpart_bench::option_value(a, "--max-dims=")) {
      max_dims = std::size_t(std::max(1, std::atoi(v)));
    } else if (const char* v = workpart_bench::option_value(a, "--shape=")) {
      only = v;
    } else if (const char* v = workpart_bench::option_value(a, "--write=")) {
      write_to = v;
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr,
                   "usage: bench_search [--reps=5] [--p=8,16,32,64] [--sizes=10,50,250] "
                   "[--naive-limit=3e7]\n"
                   "                    [--shape=transformer|inception|dag|chain2] [--write=FILE]\n"
                   "                    [--scale=FILE [--max-dims=N]]\n"
                   "                    [--csv FILE] [tables.json[.gz] ...]\n");
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (ps.empty() || sizes.empty()) {
    std::fprintf(stderr, "bench_search: --p and --sizes need positive numbers\n");
    return 2;
  }

  if (!write_to.empty()) {
    const double t0 = now();
    const wp::cost_graph g = scale.empty()
                                 ? transformer(ps.front(), std::size_t(sizes.front()), 1)
                                 : scaled(wp::read_cost_tables(scale), ps.front(), max_dims, 1);
    const std::string text = wp::write_cost_tables(g);
    std::ofstream(write_to, std::ios::binary) << text;
    std::printf(
        "wrote %s: %s p=%lld, %zu vertices, %zu edges, %zu configurations, %.1f MB (%.2f s)\n",
        write_to.c_str(), scale.empty() ? "transformer" : scale.c_str(), (long long)ps.front(),
        g.num_vertices(), g.num_edges(), g.total_configs(), double(text.size()) / 1e6, now() - t0);
    return 0;
  }

  csv_writer csv;
  try {
    csv =
        csv_writer(csv_path, {"benchmark", "case", "shape", "p", "vertices", "edges", "k_max",
                              "max_dependent_set", "max_table_rows", "entries", "search_s",
                              "runner_ups_s", "naive_s", "naive_ratio", "peak_rss_bytes", "agree"});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_search: %s\n", e.what());
    return 1;
  }
  header();
  if (!scale.empty()) {  // a published topology at other p
    const wp::cost_graph like = wp::read_cost_tables(scale);
    const std::string base = scale.substr(
        scale.find_last_of('/') == std::string::npos ? 0 : scale.find_last_of('/') + 1);
    for (std::int64_t p : ps) {
      const wp::cost_graph g = scaled(like, p, max_dims, std::uint64_t(p));
      const std::string stem = base.substr(0, base.find('.'));
      bench(stem + "@p=" + std::to_string(p), stem, p, g, reps, naive_limit, csv);
    }
    return 0;
  }
  if (!files.empty()) {
    for (const auto& f : files) {
      const double t0 = now();
      const wp::cost_graph g = wp::read_cost_tables(f);
      const double tr = now() - t0;
      std::string name =
          f.substr(f.find_last_of('/') == std::string::npos ? 0 : f.find_last_of('/') + 1);
      bench(name, "file", 0, g, reps, naive_limit, csv);
      std::printf("%-24s read %.4f s, optimal cost %.17g\n", "", tr,
                  wp::pase_search(g, {.runner_ups = false}).cost);
    }
    return 0;
  }

  using gen = wp::cost_graph (*)(std::int64_t, std::size_t, std::uint64_t);
  const std::pair<const char*, gen> shapes[] = {
      {"transformer", transformer}, {"inception", inception}, {"dag", random_dag}};
  for (std::int64_t p : ps)
    for (std::int64_t n : sizes)
      for (const auto& [name, make] : shapes) {
        if (!only.empty() && only != name) continue;
        const wp::cost_graph g = make(p, std::size_t(n), std::uint64_t(p * 1000 + n));
        bench(std::string(name) + " p=" + std::to_string(p) + " n=" + std::to_string(n), name, p, g,
              reps, naive_limit, csv);
      }
  for (std::int64_t p : {std::int64_t(256), std::int64_t(1024)}) {
    if (!only.empty() && only != "chain2") continue;
    const wp::cost_graph g = chain2(p, 250, std::uint64_t(p));
    bench("chain2 p=" + std::to_string(p) + " n=250", "chain2", p, g, reps, naive_limit, csv);
  }
  return 0;
}
