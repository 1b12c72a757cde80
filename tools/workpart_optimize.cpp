// workpart-optimize: the exact strategy search (PaSE).
//
//   workpart-optimize --tables FILE.json[.gz] [--time-budget SECONDS] [--no-runner-ups]
//                     [--max-inflated BYTES]
//   workpart-optimize --program FILE.json --nprocs P [--machine FILE.json] [--flops F]
//                     [--alpha A] [--beta B] [--use-all-ranks] [--powers-of-two] [--max-split-dims
//                     K] [--threads N]
//                     [--tie-backward] [--tie-blocks STEM]... [--replicas] [--repeat STEM=N]...
//                     [--time-budget S]
//                     [--no-runner-ups]
//
// --tables solves an explicit cost-table problem; --program prices a program description
// (include/workpart/io/program_reader.hpp) under workpart's cost model for P ranks; --repeat
// first repeats the middle of its three blocks STEM1..STEM3 to N blocks (wp::repeat_blocks,
// include/workpart/optimize/repeat_blocks.hpp), in the order given.
// Prints the chosen configuration of every vertex (name and tuple) with its cost and its
// runner-up, then, as the last line, `optimal cost: <%.17g>`; a search stopped by the time
// budget says so and ends with `best cost found (not proven optimal): <%.17g>`.
// A progress line goes to stderr every few seconds of a long search.
//
// Needs no MPI: it includes the optimize headers only (no Boost.MPI, no MPI library).

#include <workpart/optimize/optimize.hpp>
#include <workpart/io/machine_file.hpp>
#include <workpart/io/program_reader.hpp>
#include <workpart/optimize/repeat_blocks.hpp>
#include <workpart/optimize/search.hpp>
#include <workpart/optimize/tied_search.hpp>
#include <workpart/io/table_reader.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace wp = workpart;

namespace {

constexpr const char* usage_text =
    "usage: workpart-optimize --tables FILE.json[.gz] [--time-budget SECONDS] [--no-runner-ups]\n"
    "                         [--max-inflated BYTES]\n"
    "       workpart-optimize --program FILE.json --nprocs P [--machine FILE.json] [--flops F]\n"
    "                         [--alpha A] [--beta B]\n"
    "                         [--use-all-ranks] [--powers-of-two] [--max-split-dims K]\n"
    "                         [--threads N] [--tie-backward] [--tie-blocks STEM]... [--replicas]\n"
    "                         [--repeat STEM=N]... [--time-budget S] [--no-runner-ups]\n"
    "  --tables FILE        a cost-table problem (JSON; see the pase-tables README)\n"
    "  --program FILE       a program description (JSON: arrays; maps with indices, extents,\n"
    "                       flops_per_point and accesses; see program_reader.hpp), priced\n"
    "                       under workpart's cost model for --nprocs ranks\n"
    "  --nprocs P           ranks to plan for (with --program)\n"
    "  --machine FILE       the machine model (JSON, as workpart-calibrate writes it); flags\n"
    "                       after it change its fields\n"
    "  --flops F            arithmetic operations per second per rank (default 1e10)\n"
    "  --alpha A            seconds per message (default 2e-6)\n"
    "  --beta B             seconds per byte (default 1e-9)\n"
    "  --use-all-ranks      only grids whose product is P\n"
    "  --powers-of-two      only grid entries that are powers of two\n"
    "  --max-split-dims K   only grids with at most K entries > 1 (as PaSE splits few\n"
    "                       dimensions of a layer; data parallelism stays a candidate)\n"
    "  --threads N          threads solving the maps' grids and pricing the combines\n"
    "                       (default: one per hardware\n"
    "                       thread; the tables and the result do not depend on it)\n"
    "  --tie-backward       map dN (a backward map) on map N's grid where both have one\n"
    "                       space, as PaSE gives a layer one configuration (a training\n"
    "                       step then searches as its forward program does)\n"
    "  --tie-blocks STEM    the maps of STEM's blocks named alike but for the block's number\n"
    "                       (lstm1.t2.recur, lstm1.t3.recur, ...) on one grid, as PaSE gives\n"
    "                       an LSTM layer one configuration for all its steps\n"
    "  --replicas           also every map replicated on all P ranks (its whole space on\n"
    "                       each, as Megatron-LM runs its layer norms and residuals)\n"
    "  --repeat STEM=N      the description's blocks STEM1, STEM2, STEM3 become N blocks,\n"
    "                       the middle one repeated (a network described with three blocks\n"
    "                       priced with N; several --repeat apply in the order given)\n"
    "  --time-budget S      stop after S seconds with the best strategy found so far\n"
    "                       (reported as not proven optimal)\n"
    "  --no-runner-ups      skip the runner-up pass (about half the search time)\n"
    "  --max-inflated BYTES the most a .json.gz file may inflate to (default: half of this\n"
    "                       machine's memory): a guard against gzip bombs; the file is\n"
    "                       inflated as a stream, so its whitespace takes no memory\n";

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
    std::fprintf(stderr,
                 "[workpart-optimize] %s: %zu/%zu vertices, %.0f%% of %.3g table entries, %.1f s\n",
                 p.phase == wp::search_phase::eliminate ? "search" : "runner-ups", p.vertices_done,
                 p.vertices_total, pct, p.work_total, p.seconds);
  }
};

}  // namespace

/// "(2,1) +0.5": vertex v's runner-up configuration (`grids`, where given: a program's
/// candidate grids per map, vertex v being map v - 1; else the table's tuple) and how much
/// more the best strategy with it costs; `single` where v has one configuration; empty
/// without runner-ups.
std::string runner_up_text(const wp::cost_graph& g, const wp::search_result& r, std::size_t v,
                           const char* single,
                           const std::vector<std::vector<wp::grid_shape>>* grids = nullptr) {
  if (!r.has_runner_ups) return "";
  const auto& x = r.runner_ups[v];
  if (x.config == wp::runner_up::npos) return single;
  char buf[64];
  std::snprintf(buf, sizeof buf, " +%.6g", x.delta);
  return (grids ? (*grids)[v - 1][x.config].str() : g.config_string(v, x.config)) + buf;
}

double positive(const std::string& flag, const char* s) {
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
    usage((flag + ": '" + s + "' is not a number > 0").c_str());
    std::exit(2);
  }
  return v;
}

/// The program's schedule under the cost model, in the same layout as --tables.
int optimize_program(const std::string& path, long nprocs, const wp::machine_model& mm,
                     const wp::optimize_options& opt,
                     const std::vector<std::pair<std::string, long>>& repeats) {
  const double t0 = now();
  wp::program_description p = wp::read_program_description(path);
  for (const auto& [stem, n] : repeats) {
    p = wp::repeat_blocks(p, stem, n);
    std::printf("workpart-optimize: blocks %s1 .. %s%ld: %zu maps\n", stem.c_str(), stem.c_str(), n,
                p.maps.size());
  }
  std::size_t accesses = 0;
  for (const auto& m : p.maps) accesses += m.accesses.size();
  std::printf("workpart-optimize: %s: %zu maps, %zu arrays, %zu accesses; %ld ranks; %s\n",
              path.c_str(), p.maps.size(), p.arrays.size(), accesses, nprocs, mm.str().c_str());
  const wp::program_cost_tables t = wp::program_costs(p, int(nprocs), mm, opt.configs);
  const double t_price = now() - t0;
  progress_line progress;
  // config_options::tie_backward: the tied groups searched as one vertex each
  const wp::search_result r =
      t.tied.empty() ? wp::pase_search(t.graph, opt.search, progress)
                     : wp::detail::tied_pase_search(t.graph, t.tied, opt.search, progress);
  std::printf("priced %zu candidate grids in %.3f s, search %.3f s\n", t.graph.total_configs() - 2,
              t_price, r.seconds);
  const wp::cost_graph& g = t.graph;
  // vertex v is map v - 1 (vertex 0 is root's inputs); a map over wp::space() has grid "()"
  auto grid_text = [&](std::size_t v) { return t.grids[v - 1][r.config[v]].str(); };
  int wname = 6, wconf = 6;
  for (std::size_t v = 1; v + 1 < g.num_vertices(); ++v) {
    wname = std::max(wname, int(g.name(v).size()));
    wconf = std::max(wconf, int(grid_text(v).size()));
  }
  std::printf("%-*s  %-*s  %-14s  %s\n", wname, "map", wconf, "grid", "own cost (s)",
              r.has_runner_ups ? "runner-up (extra total cost, s)" : "");
  for (std::size_t v = 1; v + 1 < g.num_vertices(); ++v) {
    const std::string ru = runner_up_text(g, r, v, "none (one candidate grid)", &t.grids);
    std::printf("%-*s  %-*s  %-14.6g  %s\n", wname, g.name(v).c_str(), wconf, grid_text(v).c_str(),
                r.vertex_cost[v], ru.c_str());
  }
  std::printf("arrays passed (modelled seconds):\n");
  for (std::size_t e = 0; e < g.num_edges(); ++e) {
    std::string arrays;
    for (const auto& a : t.edge_arrays[e]) arrays += (arrays.empty() ? "" : ", ") + a;
    std::printf("  %s -> %s (%s): %.6g\n", g.name(g.edge_source(e)).c_str(),
                g.name(g.edge_target(e)).c_str(), arrays.c_str(), r.edge_cost[e]);
  }
  double vsum = 0, esum = 0;
  for (double c : r.vertex_cost) vsum += c;
  for (double c : r.edge_cost) esum += c;
  std::printf("map costs %.10g + communication %.10g\n", vsum, esum);
  for (const auto& u : t.unmet) std::printf("constraint not met: %s\n", u.c_str());
  if (!t.unmet.empty())
    std::printf(
        "the cost below is optimal over the grids the options allow; %zu map%s keep%s "
        "the all-ones grid instead\n",
        t.unmet.size(), t.unmet.size() > 1 ? "s" : "", t.unmet.size() > 1 ? "" : "s");
  if (r.proven_optimal && !r.has_runner_ups && opt.search.runner_ups)
    std::printf("runner-ups not computed: the time budget ran out during their pass\n");
  if (!r.proven_optimal) {
    std::printf("not proven optimal: %s\n", r.stop == wp::search_stop::time_budget
                                                ? "the time budget ran out"
                                                : "the tables exceed the memory limit");
    std::printf("best cost found (not proven optimal): %.17g\n", r.cost);
  } else {
    std::printf("optimal cost: %.17g\n", r.cost);
  }
  std::fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  std::string tables, program;
  long nprocs = 0;
  wp::machine_model mm;
  wp::optimize_options popt;
  wp::search_options opt;
  wp::table_read_options read_opt;
  std::vector<std::pair<std::string, long>> repeats;
  bool program_flags = false, table_flags = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nprocs" || a == "--machine" || a == "--flops" || a == "--alpha" || a == "--beta" ||
        a == "--use-all-ranks" || a == "--powers-of-two" || a == "--max-split-dims" ||
        a == "--threads" || a == "--repeat" || a == "--tie-backward" || a == "--tie-blocks" ||
        a == "--replicas")
      program_flags = true;
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
        return usage(
            ("--time-budget: '" + std::string(s) + "' is not a number of seconds >= 0").c_str());
      opt.time_budget_seconds = b;
    } else if (a == "--no-runner-ups") {
      opt.runner_ups = false;
    } else if (a == "--max-inflated") {
      const char* s = value("a number of bytes");
      char* end = nullptr;
      const unsigned long long b = std::strtoull(s, &end, 10);
      if (end == s || *end != '\0' || b == 0 || s[0] == '-')
        return usage(
            ("--max-inflated: '" + std::string(s) + "' is not a number of bytes > 0").c_str());
      read_opt.max_inflated_bytes = std::size_t(b);
      table_flags = true;
    } else if (a == "--program") {
      program = value("a file name");
    } else if (a == "--nprocs") {
      const char* s = value("a number of ranks");
      char* end = nullptr;
      nprocs = std::strtol(s, &end, 10);
      if (end == s || *end != '\0' || nprocs < 1 || nprocs > (1L << 20))
        return usage(
            ("--nprocs: '" + std::string(s) + "' is not a number of ranks from 1 to 2^20").c_str());
    } else if (a == "--machine") {
      try {
        mm = wp::read_machine_model(value("a file name"));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "workpart-optimize: %s\n", e.what());
        return 1;
      }
    } else if (a == "--flops") {
      mm.flops = positive(a, value("operations per second"));
    } else if (a == "--alpha") {
      mm.alpha = positive(a, value("seconds per message"));
    } else if (a == "--beta") {
      mm.beta = positive(a, value("seconds per byte"));
    } else if (a == "--use-all-ranks") {
      popt.configs.use_all_ranks = true;
    } else if (a == "--powers-of-two") {
      popt.configs.powers_of_two = true;
    } else if (a == "--tie-backward") {
      popt.configs.tie_backward = true;
    } else if (a == "--tie-blocks") {
      const std::string stem = value("a stem");
      if (stem.empty())
        return usage("--tie-blocks: give a stem (the name before a block's number)");
      popt.configs.tie_blocks.push_back(stem);
    } else if (a == "--replicas") {
      popt.configs.replicas = true;
    } else if (a == "--max-split-dims") {
      const char* s = value("a number of dimensions");
      char* end = nullptr;
      const long k = std::strtol(s, &end, 10);
      if (end == s || *end != '\0' || k < 1 || k > 64)
        return usage(("--max-split-dims: '" + std::string(s) +
                      "' is not a number of dimensions from 1 to 64")
                         .c_str());
      popt.configs.max_split_dims = int(k);
    } else if (a == "--threads") {
      const char* s = value("a number of threads");
      char* end = nullptr;
      const long k = std::strtol(s, &end, 10);
      if (end == s || *end != '\0' || k < 1 || k > 4096)
        return usage(
            ("--threads: '" + std::string(s) + "' is not a number of threads from 1 to 4096")
                .c_str());
      popt.configs.threads = int(k);
    } else if (a == "--repeat") {
      const std::string s = value("STEM=N");
      const auto eq = s.rfind('=');
      char* end = nullptr;
      const long n = eq == std::string::npos ? 0 : std::strtol(s.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || eq == 0 || end == s.c_str() + eq + 1 || *end != '\0' ||
          n < 2 || n > 100000)
        return usage(
            ("--repeat: '" + s + "' is not STEM=N with N blocks from 2 to 100000").c_str());
      repeats.emplace_back(s.substr(0, eq), n);
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage_text, stdout);
      return 0;
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (tables.empty() == program.empty())
    return usage("give one of --tables FILE and --program FILE");
  if (!program.empty() && nprocs == 0) return usage("--program needs --nprocs P");
  if (!program.empty() && table_flags) return usage("--max-inflated goes with --tables");
  if (!tables.empty() && program_flags)
    return usage(
        "--nprocs, --flops, --alpha, --beta, --use-all-ranks, --powers-of-two, "
        "--max-split-dims, --threads, --tie-backward, --tie-blocks, --replicas and --repeat go "
        "with "
        "--program, not "
        "--tables");

  try {
    if (!program.empty()) {
      popt.search = opt;
      return optimize_program(program, nprocs, mm, popt, repeats);
    }
    const double t0 = now();
    const wp::cost_graph g = wp::read_cost_tables(tables, read_opt);
    const double t_read = now() - t0;
    std::size_t max_k = 0;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) max_k = std::max(max_k, g.num_configs(v));
    std::printf(
        "workpart-optimize: %s: %zu vertices, %zu edges, %zu configurations (at most %zu per "
        "vertex)\n",
        tables.c_str(), g.num_vertices(), g.num_edges(), g.total_configs(), max_k);

    progress_line progress;
    const wp::search_result r = wp::pase_search(g, opt, progress);
    std::printf(
        "read %.3f s, search %.3f s: largest dependent set %zu, largest table %.0f rows, "
        "%.4g table entries\n",
        t_read, r.seconds, r.max_dependent_set, r.largest_table_rows, r.work);

    // Column widths from the data.
    int wname = 6, wconf = 6;
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      wname = std::max(wname, int(g.name(v).size()));
      wconf = std::max(wconf, int(g.config_string(v, r.config[v]).size()));
    }
    std::printf("%5s  %-*s  %-*s  %-14s  %s\n", "#", wname, "vertex", wconf, "config",
                "vertex cost", r.has_runner_ups ? "runner-up (extra total cost)" : "");
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      const std::string ru = runner_up_text(g, r, v, "none (one configuration)");
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
      std::printf(
          "not proven optimal: %s; %zu of %zu vertices were processed exactly; the strategy is the "
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
