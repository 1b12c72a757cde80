// workpart-optimize: the exact strategy search (PaSE) on a cost-table file.
//
//   workpart-optimize --tables FILE.json[.gz] [--time-budget SECONDS] [--no-runner-ups]
//
// Prints the chosen configuration of every vertex (name and tuple) with its cost and its
// runner-up, then, as the last line, `optimal cost: <%.17g>`; a search stopped by the time
// budget says so and ends with `best cost found (not proven optimal): <%.17g>`.
// A progress line goes to stderr every few seconds of a long search.
//
// Needs no MPI: it includes the optimize headers only.

#include <workpart/optimize/search.hpp>
#include <workpart/optimize/table_reader.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace wp = workpart;

namespace {

constexpr const char* usage_text =
    "usage: workpart-optimize --tables FILE.json[.gz] [--time-budget SECONDS] [--no-runner-ups]\n"
    "  --tables FILE        a cost-table problem (JSON; see the pase-tables README)\n"
    "  --time-budget S      stop after S seconds with the best strategy found so far\n"
    "                       (reported as not proven optimal)\n"
    "  --no-runner-ups      skip the runner-up pass (about half the search time)\n"
    "  --program ...        not yet: optimising a program needs the cost model\n";

int usage(const char* why) {
  std::fprintf(stderr, "workpart-optimize: %s\n%s", why, usage_text);
  return 2;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Prints "[workpart-optimize] eliminate 120/204 vertices, 45% of 1.2e+09 table entries, 3 s"
/// to stderr after 2 s of search, then at most every 2 s.
struct progress_line {
  double next = 2.0;
  bool printed = false;
  void operator()(const wp::search_progress& p) {
    if (p.seconds < next) return;
    next = p.seconds + 2.0;
    printed = true;
    const double pct = p.work_total > 0 ? 100.0 * p.work_done / p.work_total : 100.0;
    std::fprintf(stderr, "[workpart-optimize] %s: %zu/%zu vertices, %.0f%% of %.3g table entries, %.1f s\n",
                 p.phase == wp::search_phase::eliminate ? "search" : "runner-ups", p.vertices_done,
                 p.vertices_total, pct, p.work_total, p.seconds);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string tables;
  wp::search_options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        usage((a + " needs " + what).c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--tables") {
      tables = value("a file name");
    } else if (a == "--time-budget") {
      const char* s = value("a number of seconds");
      char* end = nullptr;
      const double b = std::strtod(s, &end);
      if (end == s || *end != '\0' || !(b >= 0))
        return usage(("--time-budget: '" + std::string(s) + "' is not a number of seconds >= 0").c_str());
      opt.time_budget_seconds = b;
    } else if (a == "--no-runner-ups") {
      opt.runner_ups = false;
    } else if (a == "--program") {
      std::fprintf(stderr,
                   "workpart-optimize: not yet: --program needs the cost model (issue 9), which is not "
                   "built; use --tables FILE.json with precomputed cost tables\n");
      return 2;
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage_text, stdout);
      return 0;
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (tables.empty()) return usage("--tables FILE is required");

  try {
    const double t0 = now();
    const wp::cost_graph g = wp::read_cost_tables(tables);
    const double t_read = now() - t0;
    std::size_t max_k = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) max_k = std::max(max_k, g.num_configs(v));
    std::printf("workpart-optimize: %s: %zu vertices, %zu edges, %zu configurations (at most %zu per vertex)\n",
                tables.c_str(), g.num_vertices(), g.num_edges(), g.total_configs(), max_k);

    progress_line progress;
    const wp::search_result r = wp::pase_search(g, opt, progress);
    std::printf("read %.3f s, search %.3f s: largest dependent set %zu, largest table %.0f rows, "
                "%.4g table entries\n",
                t_read, r.seconds, r.max_dependent_set, r.largest_table_rows, r.work);

    // Column widths from the data.
    int wname = 6, wconf = 6;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      wname = std::max(wname, int(g.name(v).size()));
      wconf = std::max(wconf, int(g.config_string(v, r.config[v]).size()));
    }
    std::printf("%5s  %-*s  %-*s  %-14s  %s\n", "#", wname, "vertex", wconf, "config", "vertex cost",
                r.has_runner_ups ? "runner-up (extra total cost)" : "");
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      std::string ru;
      if (r.has_runner_ups) {
        const auto& x = r.runner_ups[v];
        if (x.config == wp::runner_up::npos) {
          ru = "none (one configuration)";
        } else {
          char buf[64];
          std::snprintf(buf, sizeof buf, " +%.6g", x.delta);
          ru = g.config_string(v, x.config) + buf;
        }
      }
      std::printf("%5zu  %-*s  %-*s  %-14.8g  %s\n", v, wname, g.name(v).c_str(), wconf,
                  g.config_string(v, r.config[v]).c_str(), r.vertex_cost[v], ru.c_str());
    }
    double vsum = 0, esum = 0;
    for (double c : r.vertex_cost) vsum += c;
    for (double c : r.edge_cost) esum += c;
    std::printf("vertex costs %.10g + edge costs %.10g\n", vsum, esum);
    if (r.proven_optimal && !r.has_runner_ups && opt.runner_ups)
      std::printf("runner-ups not computed: the time budget ran out during their pass\n");
    if (!r.proven_optimal) {
      std::printf("not proven optimal: %s; %zu of %zu vertices were processed exactly; the strategy is the "
                  "best of greedy + local search and an exact search over fewer configurations\n",
                  r.stop == wp::search_stop::time_budget ? "the time budget ran out"
                                                         : "the tables exceed the memory limit",
                  r.eliminated, g.num_vertices());
      std::printf("best cost found (not proven optimal): %.17g\n", r.cost);
    } else {
      std::printf("optimal cost: %.17g\n", r.cost);
    }
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "workpart-optimize: %s\n", e.what());
    return 1;
  }
}
