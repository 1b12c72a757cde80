// Whole networks' training steps (examples/networks/) optimised for P ranks beside the two
// baselines the same model prices: data parallelism and the experts' strategy.
//
//   ./bench_networks [--p=4,8,16,32,64] [--exact] [--threads=N] [--flops=1e13] [--bandwidth=16e9]
//                    [--latency=1e-5] [--csv FILE] [--tables=DIR] [--only=alexnet,resnet,...]
//
// One process, no MPI: each network at PaSE's size (AlexNet: batch 128, 3 x 227 x 227, float;
// the Transformer: batch 64, 256 positions, E 512, 8 heads, FFN 2048, vocabulary 50000, float,
// 6 + 6 blocks; RNNLM: batch 64, 256 positions, vocabulary 100000, embedding 2048, two LSTM
// layers of 2048 units, float; ResNet101: batch 128, 3 x 227 x 227, 1000 classes, float;
// InceptionV3, 94 convolutions: batch 128, 3 x 299 x 299, 1000 classes, float) as
// one training step (forward, wp::backward, SGD; AlexNet's and ResNet101's typed -- ResNet101's
// 3/4/23/3 blocks a run-time value --, the Transformer's described from its typed step of 3 + 3
// blocks and repeated to 6 + 6 by wp::repeat_blocks, RNNLM's described from its typed step of 3
// positions and lengthened to 256 by wpnet::rnnlm_description, InceptionV3's joined from its
// stem's, modules' and head's typed pieces by wp::join_pieces, the joining checked against the
// typed step of one module of each kind: a line says whether alike), priced with the machine
// model PaSE uses (10 TFLOP/s per device, 16 GB/s links; a latency of 10 us per message). For
// each P:
// wp::optimize's modelled seconds per training step, data parallelism's (wpnet::data_parallel) and
// the experts' (AlexNet, ResNet101 and InceptionV3: wpnet::alexnet_expert, wpnet::resnet_expert and
// wpnet::inception_expert, data-parallel convolutions -- their updates replicated, as data
// parallelism's -- model-parallel fully connected layers; the
// Transformer: wpnet::transformer_megatron, Megatron-LM's heads, FFN hidden units and vocabulary
// split, everything else replicated; RNNLM: wpnet::rnnlm_megatron, the embedding's features, the
// LSTMs' units and the vocabulary split) priced by wp::modelled_cost under the same model and
// options, the modelled speed-ups of the found strategy over each, the seconds wp::optimize took
// (pricing and search, the whole call; without the search's runner-up pass, search_options::
// runner_ups, as the rows show no runner-ups), and the process's peak RSS so far (getrusage; P
// ascending).
// Then the found strategy per layer: each forward layer's grid.
//
// The grids considered: all P ranks, powers of two, splitting at most 2 dimensions of each
// map (config_options::use_all_ranks, powers_of_two, max_split_dims = 2, as PaSE restricts a
// layer's splits), and every map replicated on all P ranks (config_options::replicas: data
// parallelism's updates -- each rank updates the whole weights, as data parallelism runs --
// and Megatron's layer norms and residuals); both baselines are among them (checked: a line
// says where not), so the optimum costs no more than either. The Transformer's backward maps
// take their forward maps' grids (config_options::tie_backward: PaSE's space, one
// configuration per layer); both baselines respect that too (checked likewise). RNNLM's
// backward maps are tied likewise (ResNet101's and InceptionV3's too: free, the search's
// dependent sets grow along the residual connections past memory at P = 32), and each LSTM
// layer's steps take one grid per kind of map (config_options::tie_blocks), as PaSE gives an
// LSTM layer one configuration.
// --tables=DIR: each network's searched problem at each P (its cost tables, tied maps merged
// into the vertex the search sees) written to DIR/<network>_p<P>.json, the search rerun on it
// (a line says whether it finds wp::optimize's optimum): bench_ilp solves them again with CBC.
// --exact: every grid (no restriction but the replicated candidates; practical to P = 8).
// --threads=N: threads solving the maps' grids and pricing the combines
// (config_options::threads; default one per hardware thread).
//
// --csv FILE writes one line per network and P: benchmark, network, p, found_s, data_parallel_s,
// expert_s, speedup_vs_data_parallel, speedup_vs_expert, optimize_s, candidates,
// peak_rss_bytes, proven_optimal.
//
//   mpirun -np P ./bench_networks --run [--reps=9] [--strategies=7] [--batch=16] [--image=67]
//                                       [--width=8] [--csv FILE] [--only=...]
//
// (bench_model, issue 68's check of the model against measurement: scripts/bench.sh bench_model
// builds this; docs/model.md has its figures.) The same three strategies and --strategies=N
// random valid schedules (default 7: ten in all) run: AlexNet scaled down (batch 16, 67 x 67
// images, channels and features / 8, float), ResNet scaled down (one block per stage, the same
// images, batch and width divisor; searched with tie_backward), InceptionV3 scaled down (one module
// of each kind, 75 x 75 images, the same batch and width divisor; searched with tie_backward),
// RNNLM scaled down (the same batch, 16 positions, vocabulary 10000, embedding 256, two LSTM layers
// of 256 units, float) and the Transformer scaled down (the same batch, 32 positions, vocabulary
// 4000, E 128 in 4 heads, FFN 512, 2 + 2 blocks, float) trained on the P ranks under data
// parallelism, the experts' strategy and the one wp::optimize finds with a model calibrated on
// these ranks (wp::machine_model::calibrate; over the rows' space: replicated maps offered,
// ResNet's, InceptionV3's, the Transformer's and RNNLM's backward maps tied, RNNLM's steps tied as
// its rows), each one execute() (a training step) timed alternately with the others in a balanced
// order, the median of --reps rounds of the slowest rank's seconds, beside the step's modelled
// seconds (wp::modelled_cost, the same calibrated model), so the model's ranking of the strategies
// is checked against measurement: per network, Kendall's tau between the measured and modelled
// seconds of the strategies, the found strategy's seconds over the fastest's, and per map
// (plan.profile() under the same model) measured over modelled seconds for the maps over 1 % of a
// step -- how many within 0.67-1.5x, the median by kind of kernel (GEMM or loop), the five maps
// furthest off. --csv FILE: benchmark, network, p, strategy, measured_s, modelled_s,
// measured_over_modelled, maps_within_0.67_1.5, maps_over_1pct, appended to (one run per rank
// count; the header where the file starts). benchmarks/plot.py draws both modes' files
// (networks.png, networks_run.png).
//
// --only=NAME,...: those networks alone (alexnet, resnet, inception, transformer, rnnlm), in
// either mode.

#include "../examples/networks/alexnet.hpp"
#include "../examples/networks/inception.hpp"
#include "../examples/networks/resnet.hpp"
#include "../examples/networks/rnnlm.hpp"
#include "../examples/networks/transformer.hpp"

#include <workpart/io/table_reader.hpp>
#include <workpart/optimize.hpp>
#include <workpart/optimize/optimize_tables.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_networks.hpp"

using namespace workpart_bench;
using bench_networks::time_strategies;

namespace {

namespace wp = workpart;

/// --tables=DIR: where each network's searched tables are written, one file per P (empty: none).
std::string tables_dir;

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024.0;
}

/// Whether every grid of `s` is a candidate under `opt` and every group of maps `opt` ties
/// (tie_backward, tie_blocks: the pricer's groups, wp::detail::tied_maps) is on one grid in
/// `s` (else the baseline is priced but the optimum is not bound by it).
template <class Program>
bool among_candidates(const Program& prog, const wp::schedule& s, int P,
                      const wp::config_options& opt) {
  bool all = true;
  std::vector<std::string> names;
  std::vector<std::vector<wp::index_t>> extents;
  std::vector<std::vector<wp::grid_shape>> candidates;
  wpnet::for_each_map_extents(prog,
                              [&](const std::string& name, const std::vector<wp::index_t>& ext) {
                                candidates.push_back(wp::detail::grid_configurations(ext, P, opt));
                                const wp::grid_shape* g = s.find(name);
                                bool found = false;
                                for (const auto& c : candidates.back())
                                  found = found || (g && c == *g);
                                all = all && found;
                                names.push_back(name);
                                extents.push_back(ext);
                              });
  const auto to = wp::detail::tied_maps(names, extents, candidates, opt);
  for (std::size_t m = 0; m < names.size(); ++m)
    if (to[m] != m && s.find(names[m]) && s.find(names[to[m]]))
      all = all && *s.find(names[m]) == *s.find(names[to[m]]);
  return all;
}

int usage(const wp::context& ctx) {
  if (ctx.is_root())
    std::fprintf(
        stderr,
        "usage: bench_networks [--p=4,8,16,32,64] [--exact] [--threads=N] [--flops=F] "
        "[--bandwidth=B] [--latency=A] [--csv FILE] [--tables=DIR] [--only=NAME,...]\n"
        "       mpirun -np P bench_networks --run [--reps=9] [--strategies=7] [--batch=16] "
        "[--image=67] "
        "[--width=8] [--csv FILE] [--only=NAME,...]\n"
        "       NAME: alexnet, resnet, inception, transformer, rnnlm\n");
  return 2;
}

/// --tables: the problem wp::optimize solved for this network at P -- its cost tables, each group
/// of tied maps (tie_backward, tie_blocks) merged into the one vertex the search sees
/// (wp::detail::merge_tied) -- written as DIR/<network>_p<P>.json for bench_ilp to solve
/// again with CBC (issue 68 item 5: the 25 cases of this benchmark certified). The search is
/// rerun on the merged tables here: a line says whether its optimum is wp::optimize's.
template <class Program>
void write_searched_tables(const char* network, const Program& prog, std::int64_t P,
                           const wp::machine_model& mm, const wp::optimize_options& opt,
                           double optimum) {
  const wp::program_cost_tables t = wp::program_costs(prog, int(P), mm, opt.configs);
  const wp::cost_graph g = t.tied.empty() ? t.graph : wp::detail::merge_tied(t.graph, t.tied).graph;
  const std::string path = tables_dir + "/" + network + "_p" + std::to_string(P) + ".json";
  std::ofstream f(path);
  f << wp::write_cost_tables(g);
  f.close();
  if (!f) {
    std::printf("  tables: could not write %s\n", path.c_str());
    return;
  }
  wp::search_options so = opt.search;
  so.runner_ups = false;
  const double again = wp::pase_search(g, so).cost;
  std::size_t pairs = 0;
  for (std::size_t e = 0; e < g.num_edges(); ++e) pairs += g.edge_costs(e).size();
  std::printf(
      "  tables: %s (%zu vertices of %zu maps, %zu edges, %zu pairs); searched again: %.17g, "
      "%s wp::optimize's\n",
      path.c_str(), g.num_vertices(), t.graph.num_vertices(), g.num_edges(), pairs, again,
      std::abs(again - optimum) <= 1e-12 * std::abs(optimum) ? "the same as" : "NOT");
}

/// Item 4 for one network (a typed step or its description): per P the optimum, data
/// parallelism and the experts' strategy under one model, then the found grid per layer.
template <class Program, class Expert>
void network_rows(const char* network, const Program& prog, const std::vector<std::int64_t>& ps,
                  const wp::machine_model& mm, const wp::optimize_options& opt, std::ofstream& out,
                  Expert expert, const std::vector<std::string>& layers) {
  std::printf("%4s %12s %12s %12s %9s %9s %10s %10s %9s\n", "P", "found s", "data-par s",
              "expert s", "vs d-p", "vs expert", "optimize s", "candidates", "peak MB");
  std::vector<std::pair<int, wp::optimized>> found;
  for (std::int64_t P : ps) {
    const auto t0 = std::chrono::steady_clock::now();
    wp::optimized r = wp::optimize(prog, P, mm, opt);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const wp::schedule dp = wpnet::data_parallel(prog, int(P));
    const wp::schedule ex = expert(prog, int(P));
    const double dp_s = wp::modelled_cost(prog, dp, int(P), mm, opt.configs);
    const double ex_s = wp::modelled_cost(prog, ex, int(P), mm, opt.configs);
    const bool bound = among_candidates(prog, dp, int(P), opt.configs) &&
                       among_candidates(prog, ex, int(P), opt.configs);
    const double rss = peak_rss_bytes();
    std::printf("%4lld %12.5g %12.5g %12.5g %8.2fx %8.2fx %10.2f %10zu %9.0f%s%s\n",
                static_cast<long long>(P), r.cost, dp_s, ex_s, dp_s / r.cost, ex_s / r.cost, secs,
                r.candidates, rss / 1e6, r.proven_optimal ? "" : "  (search cut short)",
                bound ? "" : "  (a baseline's grid is outside the candidates)");
    if (out)
      out << "bench_networks," << network << ',' << P << ',' << r.cost << ',' << dp_s << ',' << ex_s
          << ',' << dp_s / r.cost << ',' << ex_s / r.cost << ',' << secs << ',' << r.candidates
          << ',' << rss << ',' << (r.proven_optimal ? 1 : 0) << '\n';
    if (!tables_dir.empty()) write_searched_tables(network, prog, P, mm, opt, r.cost);
    found.emplace_back(int(P), std::move(r));
  }
  // the found strategy per layer: each forward layer's own map
  std::printf(
      "\nfound strategy per layer (the grid of the layer's forward map, its space's "
      "dimensions in order)\n%-18s",
      "layer");
  for (const auto& f : found) std::printf(" %18s", ("P = " + std::to_string(f.first)).c_str());
  std::printf("\n");
  for (const auto& l : layers) {
    std::printf("%-18s", l.c_str());
    for (const auto& f : found) {
      const wp::grid_shape* g = f.second.schedule.find(l);
      std::printf(" %18s", g ? g->str().c_str() : "-");
    }
    std::printf("\n");
  }
}

/// The networks --only names (every one when it names none).
struct network_filter {
  std::string only;
  bool operator()(const std::string& name) const {
    return only.empty() || ("," + only + ",").find("," + name + ",") != std::string::npos;
  }
  /// Whether every name in the list is a network's (a misspelt one would run nothing).
  bool valid() const {
    static const std::vector<std::string> known = {"alexnet", "resnet", "inception", "transformer",
                                                   "rnnlm"};
    std::size_t from = 0;
    while (from <= only.size()) {
      const std::size_t to = std::min(only.find(',', from), only.size());
      if (std::find(known.begin(), known.end(), only.substr(from, to - from)) == known.end())
        return false;
      from = to + 1;
    }
    return true;
  }
};

/// Item 5: the scaled-down networks trained under the three strategies on these ranks.
int run_strategies(wp::context& ctx, int reps, wpnet::alexnet_size size, const std::string& csv,
                   const network_filter& wanted) {
  if (ctx.is_root()) print_run_environment(ctx.size());
  const wp::machine_model mm = wp::machine_model::calibrate(ctx);
  std::ofstream out;
  if (!csv.empty() && ctx.is_root()) {
    // appended to, one run per rank count: the header once, where the file starts
    std::ifstream existing(csv);
    const bool fresh = !existing || existing.peek() == std::ifstream::traits_type::eof();
    out.open(csv, std::ios::app);
    if (fresh)
      out << "benchmark,network,p,strategy,measured_s,modelled_s,measured_over_modelled,"
             "maps_within_0.67_1.5,maps_over_1pct\n";
  }
  if (wanted("alexnet")) {
    wpnet::alexnet<float> net(size);
    auto step = net.step(0.01f);
    net.x.init([](const std::array<wp::index_t, 4>& g) {
      return float(std::sin(0.013 * double(((g[0] * 3 + g[1]) * 67 + g[2]) * 67 + g[3]) + 0.2));
    });
    net.label.init(
        [](const std::array<wp::index_t, 1>& g) { return std::int32_t((g[0] * 7 + 3) % 64); });
    char title[160];
    std::snprintf(title, sizeof title,
                  "AlexNet scaled down (batch %lld, %lld x %lld, width / %lld, float)",
                  static_cast<long long>(size.batch), static_cast<long long>(size.image),
                  static_cast<long long>(size.image), static_cast<long long>(size.width));
    time_strategies(
        ctx, step.program, [](const auto& p, int P) { return wpnet::alexnet_expert(p, P); }, mm,
        reps, "alexnet", title, out);
  }
  if (wanted("resnet"))
    bench_networks::run_resnet(ctx, mm, reps, size.batch, size.image, size.width, out);
  if (wanted("inception"))
    bench_networks::run_inception(ctx, mm, reps, size.batch, size.width, out);
  if (wanted("rnnlm")) {
    // RNNLM at 16 positions (the step typed at that length), a tenth of PaSE's widths
    const wpnet::rnnlm_size rs{
        .batch = size.batch, .vocabulary = 10000, .embed = 256, .hidden = 256};
    wpnet::rnnlm<float, 16> net(rs);
    auto step = net.step(0.01f);
    net.tokens.init([&](const std::array<wp::index_t, 2>& g) {
      return std::int32_t((g[0] * 7919 + g[1] * 104729) % rs.vocabulary);
    });
    net.label.init([&](const std::array<wp::index_t, 2>& g) {
      return std::int32_t((g[0] * 7919 + (g[1] + 1) * 104729) % rs.vocabulary);
    });
    char title[160];
    std::snprintf(title, sizeof title,
                  "RNNLM scaled down (batch %lld, 16 positions, vocabulary 10000, embedding 256, "
                  "2 LSTM layers of 256, float)",
                  static_cast<long long>(rs.batch));
    // the rows' space: free, the search of the 16-step recurrence stops at its table limit
    wp::optimize_options tied;
    tied.configs.tie_backward = true;
    tied.configs.tie_blocks = {"lstm1.t", "lstm2.t"};
    time_strategies(
        ctx, step.program, [](const auto& p, int P) { return wpnet::rnnlm_megatron(p, P); }, mm,
        reps, "rnnlm", title, out, tied);
  }
  if (wanted("transformer")) bench_networks::run_transformer(ctx, mm, reps, size.batch, out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  bool run = false;
  int reps = 9;
  wpnet::alexnet_size small{.batch = 16, .image = 67, .width = 8, .classes = 1024};
  std::vector<std::int64_t> ps = {4, 8, 16, 32, 64};
  bool exact = false;
  int threads = 0;
  double flops = 1e13, bandwidth = 16e9, latency = 1e-5;
  std::string csv;
  network_filter wanted;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (const char* v = option_value(arg, "--p=")) {
      ps = parse_sizes(v);
      if (ps.empty()) return usage(ctx);
    } else if (arg == "--exact") {
      exact = true;
    } else if (const char* t = option_value(arg, "--threads=")) {
      threads = std::atoi(t);
      if (threads < 1) return usage(ctx);
    } else if (const char* f = option_value(arg, "--flops=")) {
      flops = std::atof(f);
    } else if (const char* bw = option_value(arg, "--bandwidth=")) {
      bandwidth = std::atof(bw);
    } else if (const char* l = option_value(arg, "--latency=")) {
      latency = std::atof(l);
    } else if (arg == "--run") {
      run = true;
    } else if (const char* k = option_value(arg, "--strategies=")) {
      bench_networks::random_strategies = std::atoi(k);
      if (bench_networks::random_strategies < 0) return usage(ctx);
    } else if (const char* r = option_value(arg, "--reps=")) {
      reps = std::atoi(r);
    } else if (const char* n = option_value(arg, "--batch=")) {
      small.batch = std::atoll(n);
    } else if (const char* im = option_value(arg, "--image=")) {
      small.image = std::atoll(im);
    } else if (const char* w = option_value(arg, "--width=")) {
      small.width = std::atoll(w);
    } else if (arg == "--csv" && a + 1 < argc) {
      csv = argv[++a];
    } else if (const char* d = option_value(arg, "--tables=")) {
      tables_dir = d;
      if (tables_dir.empty()) return usage(ctx);
    } else if (const char* o = option_value(arg, "--only=")) {
      wanted.only = o;
      if (!wanted.valid()) return usage(ctx);
    } else {
      return usage(ctx);
    }
  }
  if (!(flops > 0) || !(bandwidth > 0) || !(latency >= 0) || reps < 1 || small.batch < 1 ||
      small.image < 67 || small.width < 1)
    return usage(ctx);
  if (run) return run_strategies(ctx, reps, small, csv, wanted);
  if (!ctx.is_root()) return 0;  // the tables: one process
  const wp::machine_model mm{flops, latency, 1.0 / bandwidth};
  wp::optimize_options opt;
  opt.configs.threads = threads;
  opt.search.runner_ups = false;  // the rows show no runner-ups: their pass is not timed
  // every map may also be replicated on all P ranks: data parallelism's updates (each rank
  // updates the whole weights it reads next), Megatron's layer norms and residuals
  opt.configs.replicas = true;
  if (!exact) {
    opt.configs.use_all_ranks = true;
    opt.configs.powers_of_two = true;
    opt.configs.max_split_dims = 2;
  }
  std::printf(
      "machine model: %.3g FLOP/s per rank, %.3g B/s links, %.3g s per message; grids: %s\n", flops,
      bandwidth, latency,
      exact ? "every grid, and each map replicated on all P ranks"
            : "all P ranks, powers of two, at most 2 split dimensions, and each map replicated on "
              "all P ranks");
  std::printf("pricing threads: %u\n",
              threads > 0 ? unsigned(threads) : std::thread::hardware_concurrency());
  print_load_average();

  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "benchmark,network,p,found_s,data_parallel_s,expert_s,speedup_vs_data_parallel,"
           "speedup_vs_expert,optimize_s,candidates,peak_rss_bytes,proven_optimal\n";
  }

  if (wanted("alexnet")) {
    wpnet::alexnet<float> net(wpnet::alexnet_size{});
    auto step = net.step(0.01f);
    int maps = 0;
    step.program.for_each_map([&](const auto&) { ++maps; });
    std::printf("\nAlexNet (batch 128, 3 x 227 x 227, float): one training step, %d maps\n", maps);
    network_rows(
        "alexnet", step.program, ps, mm, opt, out,
        [](const auto& p, int P) { return wpnet::alexnet_expert(p, P); },
        {"conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "conv3", "relu3", "conv4", "relu4",
         "conv5", "relu5", "pool3", "flat",  "fc1",   "relu6", "fc2",   "relu7", "fc3",   "loss"});
  }

  // PaSE's space for the residual and Inception networks: with the backward maps free the
  // search's dependent sets grow along the residual connections (127 s at P = 16, out of
  // memory at 32). Both baselines are in it.
  wp::optimize_options rntied = opt;
  rntied.configs.tie_backward = true;
  if (wanted("resnet")) {
    int typed = 0;
    const auto tr = std::chrono::steady_clock::now();
    const wp::program_description rn = bench_networks::resnet101_description(typed);
    std::printf(
        "\nResNet101 (batch 128, 3 x 227 x 227, 1000 classes, float): one training step, %zu maps "
        "(3/4/23/3 blocks: the typed step, %d maps, built at run time and described in %.2f s)\n",
        rn.maps.size(), typed,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - tr).count());
    std::printf(
        "experts' strategy: data-parallel convolutions, model-parallel classifier\n"
        "search space: every backward map dN on its forward map N's grid "
        "(config_options::tie_backward, as PaSE)\n");
    network_rows("resnet101", rn, ps, mm, rntied, out,
                 [](const auto& p, int P) { return wpnet::resnet_expert(p, P); },
                 {"conv1", "bn1", "pool1", "s1.b1.conv1", "s1.b1.conv2", "s1.b1.proj", "s1.b1.add",
                  "s2.b1.conv2", "s3.b12.conv2", "s3.b23.conv3", "s4.b3.conv2", "s4.b3.relu3",
                  "gpool", "fc", "loss"});
  }

  if (wanted("inception")) {
    std::string check;
    const auto ti = std::chrono::steady_clock::now();
    const wp::program_description in = bench_networks::inception3_description(ps, mm, check);
    std::printf(
        "\nInceptionV3 (batch 128, 3 x 299 x 299, 1000 classes, float; 94 convolutions): one "
        "training step, %zu maps (its stem, 11 modules and head typed and described apart, "
        "joined by wp::join_pieces; with the check below, in %.2f s)\n%s\n",
        in.maps.size(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ti).count(),
        check.c_str());
    std::printf(
        "experts' strategy: data-parallel convolutions, model-parallel classifier\n"
        "search space: every backward map dN on its forward map N's grid "
        "(config_options::tie_backward, as PaSE)\n");
    network_rows(
        "inception3", in, ps, mm, rntied, out,
        [](const auto& p, int P) { return wpnet::inception_expert(p, P); },
        {"stem1.conv", "stem3.conv", "pool1", "stem5.conv", "m5b.b1.conv", "m5b.b5_2.conv",
         "m5b.pool", "m5b.cat.1", "m5d.b3_3.conv", "m6a.b3.conv", "m6b.b7_2.conv", "m6e.b7d_5.conv",
         "m7a.b7_4.conv", "m7b.b3_2a.conv", "m7c.bd_3b.conv", "m7c.cat.4", "gpool", "fc", "loss"});
  }

  if (wanted("transformer")) {
    int typed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const wp::program_description tf = bench_networks::transformer_description(typed);
    std::printf(
        "\nTransformer (batch 64, 256 positions, E 512, 8 heads, FFN 2048, vocabulary 50000, "
        "float): one training step, %zu maps (6 + 6 blocks: the typed step of 3 + 3, %d maps, "
        "described and repeated by wp::repeat_blocks in %.2f s)\n",
        tf.maps.size(), typed,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::printf("experts' strategy: Megatron (heads, FFN hidden units, vocabulary split)\n");
    // PaSE's space: a layer's backward maps on its forward map's grid (config_options::
    // tie_backward); with both free the search's tables outgrow memory. Both baselines are in it
    // (Megatron's replicated maps among the replicated candidates every network's search has).
    wp::optimize_options tied = opt;
    tied.configs.tie_backward = true;
    std::printf(
        "search space: every backward map dN on its forward map N's grid "
        "(config_options::tie_backward, as PaSE)\n");
    network_rows("transformer", tf, ps, mm, tied, out,
                 [](const auto& p, int P) { return wpnet::transformer_megatron(p, P); },
                 {"src", "tgt", "enc1.attn.qkv", "enc1.attn.scores", "enc1.attn.heads", "enc1.attn",
                  "enc1.ln1", "enc1.ff1", "enc1.ff2", "dec1.self.qkv", "dec1.cross.kv",
                  "dec1.cross.scores", "dec6.ff1", "head", "loss"});
  }

  if (wanted("rnnlm")) {
    int typed = 0;
    const auto t1 = std::chrono::steady_clock::now();
    const wp::program_description rnn = bench_networks::rnnlm_description(typed);
    std::printf(
        "\nRNNLM (batch 64, 256 positions, vocabulary 100000, embedding 2048, 2 LSTM layers of "
        "2048 units, float): one training step, %zu maps (the typed step of 3 positions, %d maps, "
        "described and lengthened by wpnet::rnnlm_description in %.2f s)\n",
        rnn.maps.size(), typed,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
    std::printf(
        "experts' strategy: Megatron-style (the embedding's features, the LSTMs' units and the "
        "vocabulary split; the loss over the batch)\n");
    // the Transformer's space, and PaSE's for an LSTM layer: one grid for all its steps (each
    // step reads the layer's input GEMM and weights: free, the search's dependent sets hold
    // them along the whole chain and it stops at its table limit)
    std::printf(
        "search space: every backward map dN on its forward map N's grid, and each LSTM layer's "
        "steps on one grid per kind of map (config_options::tie_blocks, as PaSE)\n");
    wp::optimize_options rtied = opt;
    rtied.configs.tie_backward = true;
    rtied.configs.tie_blocks = {"lstm1.t", "lstm2.t"};
    network_rows(
        "rnnlm", rnn, ps, mm, rtied, out,
        [](const auto& p, int P) { return wpnet::rnnlm_megatron(p, P); },
        {"emb", "lstm1.zx", "lstm1.t1.gates", "lstm1.t2.recur", "lstm1.t2.cell", "lstm1.t256.recur",
         "lstm2.zx", "lstm2.t128.recur", "lstm2.t128.cell", "proj", "loss"});
  }
  return 0;
}
