// CTest tools.optimize: runs workpart-optimize and checks what it prints.
//
//   test_workpart_optimize <path of workpart-optimize> <scratch folder> <program.json>
//                          [tables.json[.gz]...]
//
// Generated tables (integer costs, so every summation order gives the same double): the last
// line must be `optimal cost: <%.17g of the brute-force optimum>`. Given tables (the published
// ones): the last line must equal the library's own `pase_search` result, and brute force
// where the problem is small enough. A program description (--program): the last line must
// equal wp::optimize() on the same description and model, in this process; with --repeat,
// wp::repeat_blocks too, and the network described whole. Also: the time
// budget's lines, malformed files' messages, bad arguments and exit codes.

#include <workpart/optimize/optimize.hpp>
#include <workpart/io/program_reader.hpp>
#include <workpart/optimize/repeat_blocks.hpp>
#include <workpart/optimize/search.hpp>
#include <workpart/io/table_reader.hpp>

#include <sys/wait.h>

#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <map>
#include <string>
#include <vector>

namespace wp = workpart;

#include "tool_test_support.hpp"

namespace {

using tooltest::check;
using tooltest::failures;
using tooltest::last_line;
using tooltest::slurp;

struct run_result {
  int status = -1;
  std::string out, err;
};

/// Runs `tool args` with stdout and stderr captured in files under `dir`.
run_result run(const std::string& tool, const std::string& args, const std::string& dir) {
  const std::string out = dir + "/tool_stdout.txt", err = dir + "/tool_stderr.txt";
  const std::string cmd = "'" + tool + "' " + args + " > '" + out + "' 2> '" + err + "'";
  const int rc = std::system(cmd.c_str());
  run_result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string g17(const char* prefix, double x) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s%.17g", prefix, x);
  return buf;
}

template <class G>
double brute_force(const G& g) {
  const std::size_t n = g.num_vertices();
  std::vector<std::size_t> a(n, 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    double c = 0;
    for (std::size_t v = 0; v < n; ++v) c += g.vertex_cost(v, a[v]);
    for (std::size_t e = 0; e < g.num_edges(); ++e)
      c += g.edge_cost(e, a[g.edge_source(e)], a[g.edge_target(e)]);
    best = std::min(best, c);
    std::size_t i = 0;
    while (i < n && ++a[i] == g.num_configs(i)) a[i++] = 0;
    if (i == n) return best;
  }
}

double assignments(const wp::cost_graph& g) {
  double p = 1;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) p *= double(g.num_configs(v));
  return p;
}

wp::cost_graph generated(std::mt19937_64& rng, std::size_t n, std::size_t max_k) {
  wp::cost_graph g;
  for (std::size_t v = 0; v < n; ++v) {
    std::vector<double> c(1 + rng() % max_k);
    for (auto& x : c) x = double(rng() % 1000) * 1e6;  // integers: exact in any order
    std::vector<std::vector<std::int64_t>> t;
    for (std::size_t k = 0; k < c.size(); ++k) t.push_back({std::int64_t(1) << k, 1});
    g.add_vertex("op_" + std::to_string(v), std::move(c), t);
  }
  for (std::size_t v = 1; v < n; ++v)
    for (std::size_t u : {v - 1, v >= 3 ? v - 3 : v}) {
      if (u == v) continue;
      std::vector<double> c(g.num_configs(u) * g.num_configs(v));
      for (auto& x : c) x = double(rng() % 1000) * 1e6;
      g.add_edge(u, v, std::move(c));
    }
  return g;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

/// A description of a chain of n blocks (block k: blk<k>.y += blk<k-1>.y W_k, the first reading
/// x), then a loss over the last: for --repeat.
std::string chain_json(int n) {
  std::string arrays = R"({"name": "x", "shape": [12, 6]}, {"name": "L", "shape": []})", maps;
  for (int k = 1; k <= n; ++k) {
    const std::string b = "blk" + std::to_string(k),
                      in = k == 1 ? "x" : "blk" + std::to_string(k - 1) + ".y";
    arrays += R"(, {"name": ")" + b + R"(.W", "shape": [6, 6]}, {"name": ")" + b +
              R"(.y", "shape": [12, 6]})";
    maps += R"({"name": ")" + b +
            R"(.fc", "indices": ["i", "n", "k"], "extents": [12, 6, 6], "flops_per_point": 2,
 "accesses": [{"array": ")" +
            in + R"(", "index": ["i", "k"]}, {"array": ")" + b +
            R"(.W", "index": ["k", "n"]}, {"array": ")" + b +
            R"(.y", "index": ["i", "n"], "mode": "+="}]},
)";
  }
  maps +=
      R"({"name": "loss", "indices": ["i", "n"], "extents": [12, 6], "accesses": [{"array": "blk)" +
      std::to_string(n) +
      R"(.y", "index": ["i", "n"]}, {"array": "L", "index": [], "mode": "+="}]})";
  return "{\"arrays\": [" + arrays + "],\n\"maps\": [" + maps + "]}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: test_workpart_optimize TOOL DIR PROGRAM.json [TABLES...]\n");
    return 2;
  }
  const std::string tool = argv[1], dir = argv[2], program = argv[3];

  // A program description under the cost model: what wp::optimize finds here.
  {
    const wp::program_description d = wp::read_program_description(program);
    struct model_case {
      int nprocs;
      wp::machine_model mm;
      const char* flags;
    };
    const model_case cases[] = {
        {4, {}, ""},
        {16, {2e10, 2e-6, 1e-10}, " --flops 2e10 --alpha 2e-6 --beta 1e-10"},
        {6, {1e9, 1e-5, 1e-9}, " --flops 1e9 --alpha 1e-5 --beta 1e-9"}};
    for (const auto& c : cases) {
      const wp::optimized want = wp::optimize(d, c.nprocs, c.mm);
      const run_result r = run(
          tool, "--program '" + program + "' --nprocs " + std::to_string(c.nprocs) + c.flags, dir);
      const std::string what = "--program at " + std::to_string(c.nprocs) + " ranks";
      check(r.status == 0,
            what + ": exit status " + std::to_string(r.status) + "; stderr: " + r.err);
      check(last_line(r.out) == g17("optimal cost: ", want.cost),
            what + ": last line '" + last_line(r.out) + "', optimize() " + g17("", want.cost));
      for (const auto& m : want.maps)  // each map's grid, in the table's config notation
        check(r.out.find(m.map) != std::string::npos, what + ": map " + m.map + " missing");
      check(r.out.find("runner-up") != std::string::npos, what + ": no runner-ups");
      std::printf("%s: %s\n", what.c_str(), last_line(r.out).c_str());
    }
    // only grids that use every rank, powers of two: the same as the library with those options
    wp::optimize_options o;
    o.configs.use_all_ranks = o.configs.powers_of_two = true;
    const wp::optimized want = wp::optimize(d, 8, {}, o);
    const run_result r =
        run(tool, "--program '" + program + "' --nprocs 8 --use-all-ranks --powers-of-two", dir);
    check(last_line(r.out) == g17("optimal cost: ", want.cost),
          "--use-all-ranks --powers-of-two: '" + last_line(r.out) + "'");
    check(r.out.find("constraint not met") == std::string::npos,
          "--use-all-ranks --powers-of-two at 8 ranks: a constraint reported unmet");
    // at 3 ranks no grid is all ranks in powers of two: said, map by map, not dropped
    const run_result r3 =
        run(tool, "--program '" + program + "' --nprocs 3 --use-all-ranks --powers-of-two", dir);
    check(
        r3.status == 0 && r3.out.find("constraint not met: map '") != std::string::npos &&
            r3.out.find("uses all 3 ranks with powers of two; it keeps (1") != std::string::npos &&
            r3.out.find("the cost below is optimal over the grids the options allow") !=
                std::string::npos,
        "--nprocs 3 --use-all-ranks --powers-of-two: '" + r3.out + "'");
    // --replicas: the library's optimum with replicated candidates, no dearer than without
    wp::optimize_options rep;
    rep.configs.replicas = true;
    const wp::optimized with = wp::optimize(d, 4, {}, rep), without = wp::optimize(d, 4, {});
    const run_result rr = run(tool, "--program '" + program + "' --nprocs 4 --replicas", dir);
    check(rr.status == 0 && last_line(rr.out) == g17("optimal cost: ", with.cost) &&
              with.cost <= without.cost,
          "--replicas: '" + last_line(rr.out) + "', optimize() " + g17("", with.cost) +
              ", without replicas " + g17("", without.cost));
  }

  // --repeat: a chain described with three blocks, repeated to 7, prices as the chain described
  // with 7 (and as wp::repeat_blocks + wp::optimize here); its errors.
  {
    const std::string three = dir + "/chain3.json", seven = dir + "/chain7.json";
    write(three, chain_json(3));
    write(seven, chain_json(7));
    const wp::machine_model slow{1e6, 2e-6, 1e-9};  // slow arithmetic: the blocks split
    const wp::optimized want =
        wp::optimize(wp::repeat_blocks(wp::read_program_description(three), "blk", 7), 4, slow);
    const wp::optimized written = wp::optimize(wp::read_program_description(seven), 4, slow);
    check(want.cost == written.cost,
          "repeat_blocks(chain3, 7) " + g17("", want.cost) + ", chain7 " + g17("", written.cost));
    const run_result r =
        run(tool, "--program '" + three + "' --nprocs 4 --flops 1e6 --repeat blk=7", dir);
    check(r.status == 0 && r.out.find("blocks blk1 .. blk7: 8 maps") != std::string::npos &&
              r.out.find("blk6.fc") != std::string::npos,
          "--repeat blk=7: status " + std::to_string(r.status) + ", '" + r.out + "'");
    check(last_line(r.out) == g17("optimal cost: ", want.cost),
          "--repeat blk=7: '" + last_line(r.out) + "', optimize() " + g17("", want.cost));
    const run_result w = run(tool, "--program '" + seven + "' --nprocs 4 --flops 1e6", dir);
    check(last_line(w.out) == last_line(r.out),
          "chain7 '" + last_line(w.out) + "' against --repeat '" + last_line(r.out) + "'");
    for (const char* bad :
         {" --repeat blk", " --repeat =7", " --repeat blk=1", " --repeat blk=x"}) {
      const run_result a = run(tool, "--program '" + three + "' --nprocs 4" + bad, dir);
      check(a.status == 2 && a.err.find("--repeat: '") != std::string::npos &&
                a.err.find("is not STEM=N") != std::string::npos,
            std::string("bad --repeat") + bad + ": '" + a.err + "'");
    }
    const run_result none = run(tool, "--program '" + three + "' --nprocs 4 --repeat enc=6", dir);
    check(none.status == 1 && none.err.find("wp::repeat_blocks('enc', 6): no map's name carries "
                                            "'enc1'") != std::string::npos,
          "--repeat enc=6: status " + std::to_string(none.status) + ", '" + none.err + "'");
    const run_result tables = run(tool, "--tables x --repeat blk=4", dir);
    check(tables.status == 2 && tables.err.find("--repeat go with --program") != std::string::npos,
          "--tables with --repeat: '" + tables.err + "'");
  }

  // --tie-backward: map dfc on map fc's grid, as wp::optimize with config_options::tie_backward
  {
    const std::string file = dir + "/tied.json";
    write(file, R"({"arrays": [{"name": "x", "shape": [12, 6]}, {"name": "W", "shape": [6, 5]},
{"name": "y", "shape": [12, 5]}, {"name": "dy", "shape": [12, 5]}, {"name": "dW", "shape": [6, 5]}],
"maps": [{"name": "fc", "indices": ["i", "n", "k"], "extents": [12, 5, 6], "flops_per_point": 2,
 "accesses": [{"array": "x", "index": ["i", "k"]}, {"array": "W", "index": ["k", "n"]},
              {"array": "y", "index": ["i", "n"], "mode": "+="}]},
{"name": "dfc", "indices": ["i", "n", "k"], "extents": [12, 5, 6], "flops_per_point": 2,
 "accesses": [{"array": "x", "index": ["i", "k"]}, {"array": "dy", "index": ["i", "n"]},
              {"array": "dW", "index": ["k", "n"], "mode": "+="}]}]}
)");
    wp::optimize_options o;
    o.configs.tie_backward = true;
    const wp::machine_model slow{1e6, 2e-6, 1e-9};
    const wp::optimized want = wp::optimize(wp::read_program_description(file), 4, slow, o);
    check(want.maps.size() == 2 && want.maps[0].grid == want.maps[1].grid,
          "tie_backward: fc and dfc on different grids");
    const run_result r =
        run(tool, "--program '" + file + "' --nprocs 4 --flops 1e6 --tie-backward", dir);
    // the table's rows: "<map> <grid> <own cost> ..."
    std::map<std::string, std::string> grid_of;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string map, grid;
      words >> map >> grid;
      grid_of.emplace(map, grid);  // the table's row comes before the edges "fc -> ..."
    }
    const std::string grid = want.maps[0].grid.str();
    check(r.status == 0 && last_line(r.out) == g17("optimal cost: ", want.cost) &&
              grid_of["fc"] == grid && grid_of["dfc"] == grid,
          "--tie-backward: status " + std::to_string(r.status) + ", want " +
              g17("optimal cost: ", want.cost) + " on " + grid + ", '" + r.out + "'");
    // --tie-blocks l: maps l1.fc and l2.fc (blocks of stem "l") on one grid, as wp::optimize
    // with config_options::tie_blocks; a stem is needed
    const std::string blocks = dir + "/blocks.json";
    write(blocks, R"({"arrays": [{"name": "x", "shape": [12, 6]}, {"name": "W", "shape": [6, 5]},
{"name": "y", "shape": [12, 5]}, {"name": "V", "shape": [5, 7]}, {"name": "z", "shape": [12, 7]}],
"maps": [{"name": "l1.fc", "indices": ["i", "n", "k"], "extents": [12, 5, 6], "flops_per_point": 2,
 "accesses": [{"array": "x", "index": ["i", "k"]}, {"array": "W", "index": ["k", "n"]},
              {"array": "y", "index": ["i", "n"], "mode": "+="}]},
{"name": "l2.fc", "indices": ["i", "n", "k"], "extents": [12, 7, 5], "flops_per_point": 2,
 "accesses": [{"array": "y", "index": ["i", "k"]}, {"array": "V", "index": ["k", "n"]},
              {"array": "z", "index": ["i", "n"], "mode": "+="}]}]}
)");
    wp::optimize_options b;
    b.configs.tie_blocks = {"l"};
    b.configs.use_all_ranks = true;
    const wp::optimized wb = wp::optimize(wp::read_program_description(blocks), 4, slow, b);
    check(wb.proven_optimal && wb.maps.size() == 2 && wb.maps[0].grid == wb.maps[1].grid,
          "tie_blocks: l1.fc and l2.fc on different grids");
    b.configs.tie_blocks.clear();  // free, the two take different grids: the tie binds
    const wp::optimized fb = wp::optimize(wp::read_program_description(blocks), 4, slow, b);
    check(fb.maps[0].grid != fb.maps[1].grid && fb.cost < wb.cost,
          "tie_blocks: the free optimum is on one grid too (the test shows nothing)");
    const run_result rb = run(
        tool, "--program '" + blocks + "' --nprocs 4 --flops 1e6 --use-all-ranks --tie-blocks l",
        dir);
    std::map<std::string, std::string> block_grid;  // the table's rows: "<map> <grid> ..."
    std::istringstream block_lines(rb.out);
    for (std::string line; std::getline(block_lines, line);) {
      std::istringstream words(line);
      std::string map, grid;
      words >> map >> grid;
      block_grid.emplace(map, grid);
    }
    check(rb.status == 0 && last_line(rb.out) == g17("optimal cost: ", wb.cost) &&
              block_grid["l1.fc"] == wb.maps[0].grid.str() &&
              block_grid["l2.fc"] == wb.maps[0].grid.str(),
          "--tie-blocks: status " + std::to_string(rb.status) + ", want " +
              g17("optimal cost: ", wb.cost) + " on " + wb.maps[0].grid.str() + ", '" + rb.out +
              "'");
    const run_result nb = run(tool, "--program '" + blocks + "' --nprocs 4 --tie-blocks ''", dir);
    check(nb.status == 2 && nb.err.find("--tie-blocks: give a stem") != std::string::npos,
          "--tie-blocks '': '" + nb.err + "'");
    const run_result t = run(tool, "--tables x --tie-backward", dir);
    check(t.status == 2 &&
              t.err.find("--replicas and --repeat go with --program") != std::string::npos,
          "--tables with --tie-backward: '" + t.err + "'");
  }

  // Generated tables against brute force.
  std::mt19937_64 rng(42);
  for (int rep = 0; rep < 6; ++rep) {
    const wp::cost_graph g = generated(rng, 3 + std::size_t(rep), 5);
    const std::string file = dir + "/generated_" + std::to_string(rep) + ".json";
    write(file, wp::write_cost_tables(g));
    const run_result r = run(tool, "--tables '" + file + "'", dir);
    check(r.status == 0, file + ": exit status " + std::to_string(r.status) + "; stderr: " + r.err);
    check(last_line(r.out) == g17("optimal cost: ", brute_force(g)),
          file + ": last line '" + last_line(r.out) + "', brute force " + g17("", brute_force(g)));
    check(r.out.find("op_0") != std::string::npos, file + ": vertex names missing");
  }

  // The time budget: flagged, and no better than the optimum.
  {
    const wp::cost_graph g = generated(rng, 40, 8);
    const std::string file = dir + "/generated_budget.json";
    write(file, wp::write_cost_tables(g));
    const double best = wp::pase_search(g).cost;
    const run_result r = run(tool, "--tables '" + file + "' --time-budget 0", dir);
    check(r.status == 0, "budget: exit status " + std::to_string(r.status));
    const std::string last = last_line(r.out);
    const std::string prefix = "best cost found (not proven optimal): ";
    check(last.rfind(prefix, 0) == 0, "budget: last line '" + last + "'");
    check(r.out.find("not proven optimal: the time budget ran out") != std::string::npos,
          "budget: no line saying the result is not proven optimal");
    if (last.rfind(prefix, 0) == 0)
      check(std::strtod(last.c_str() + prefix.size(), nullptr) >= best,
            "budget: better than the optimum?");
    const run_result full = run(tool, "--tables '" + file + "' --time-budget 60", dir);
    check(last_line(full.out) == g17("optimal cost: ", best),
          "budget 60 s: '" + last_line(full.out) + "'");
  }

  // Errors: --program is not there yet; malformed files; usage.
  {
    const run_result p = run(tool, "--program '" + program + "'", dir);
    check(p.status == 2 && p.err.find("--program needs --nprocs") != std::string::npos,
          "--program without --nprocs: status " + std::to_string(p.status) + ", stderr '" + p.err +
              "'");
    for (const char* args :
         {" --nprocs 0", " --nprocs many", " --nprocs 4 --flops -1", " --nprocs 4 --beta x"}) {
      const run_result a = run(tool, "--program '" + program + "'" + args, dir);
      check(a.status == 2 && a.err.find("usage:") != std::string::npos,
            std::string("bad argument") + args);
    }
    const run_result both = run(tool, "--tables x --nprocs 4", dir);
    check(both.status == 2 && both.err.find("go with --program") != std::string::npos,
          "--tables with --nprocs");
    const std::string badp = dir + "/bad_program.json";
    write(
        badp,
        R"({"arrays": [{"name": "y", "shape": [4]}], "maps": [{"name": "m", "extents": [4], "accesses": [{"array": "y", "index": ["j"], "mode": "="}]}]})");
    const run_result bp = run(tool, "--program '" + badp + "' --nprocs 2", dir);
    check(bp.status == 1 && bp.err.find("'j' is not an index of the map") != std::string::npos &&
              bp.err.find("bad_program.json: byte") != std::string::npos,
          "bad program: status " + std::to_string(bp.status) + ", stderr '" + bp.err + "'");
    // an access past its array's end: wp::map's sentence, at the access's byte offset
    const std::string oob = dir + "/oob_program.json";
    write(
        oob,
        R"({"arrays": [{"name": "x", "shape": [4]}, {"name": "y", "shape": [4]}], "maps": [{"name": "m", "indices": ["i"], "extents": [4], "accesses": [{"array": "x", "index": ["i+10"]}, {"array": "y", "index": ["i"], "mode": "="}]}]})");
    const run_result ob = run(tool, "--program '" + oob + "' --nprocs 2", dir);
    check(
        ob.status == 1 &&
            ob.err.find("oob_program.json: byte 141: map 'm': access x(i+10) reads axis 0 of "
                        "'x' at 13, outside [0, 4)") != std::string::npos &&
            ob.out.find("optimal cost") == std::string::npos,
        "out-of-bounds program: status " + std::to_string(ob.status) + ", stderr '" + ob.err + "'");
    // a plain '=' whose left side misses an index: the race sentence, at its offset
    const std::string race = dir + "/race_program.json";
    write(
        race,
        R"({"arrays": [{"name": "x", "shape": [4, 3]}, {"name": "y", "shape": [4]}], "maps": [{"name": "m", "indices": ["i", "k"], "extents": [4, 3], "accesses": [{"array": "x", "index": ["i", "k"]}, {"array": "y", "index": ["i"], "mode": "="}]}]})");
    const run_result rc = run(tool, "--program '" + race + "' --nprocs 2", dir);
    check(rc.status == 1 &&
              rc.err.find("race_program.json: byte 189: map 'm': the plain '=' into y(i) sends "
                          "several points of the space to one element") != std::string::npos,
          "racing program: status " + std::to_string(rc.status) + ", stderr '" + rc.err + "'");
    // sizes a table claims are not allocations: 2 x 100000 configurations, an empty matrix
    {
      std::string t = "{\"vertices\": [";
      for (int v = 0; v < 2; ++v) {
        t += v ? ", {\"cost\": [" : "{\"cost\": [";
        for (int k = 0; k < 100000; ++k) t += k ? ",0" : "0";
        t += "]}";
      }
      t += "], \"edges\": [{\"u\": 0, \"v\": 1, \"cost\": []}]}";
      const std::string claims = dir + "/claims.json";
      write(claims, t);
      const run_result cl = run(tool, "--tables '" + claims + "'", dir);
      check(cl.status == 1 && cl.err.find("[workpart.shape_error]") != std::string::npos &&
                cl.err.find("cost matrix is 0 x 0, expected 100000 x 100000") != std::string::npos,
            "claimed sizes: status " + std::to_string(cl.status) + ", stderr '" + cl.err + "'");
      std::remove(claims.c_str());
    }
    const std::string bad = dir + "/malformed.json";
    write(bad, "{\"vertices\": [{\"cost\": [1, 2}]}");
    const run_result m = run(tool, "--tables '" + bad + "'", dir);
    check(m.status == 1 && m.err.find("[workpart.table_error]") != std::string::npos &&
              m.err.find("byte 28") != std::string::npos,
          "malformed: status " + std::to_string(m.status) + ", stderr '" + m.err + "'");
    const run_result u = run(tool, "", dir);
    check(u.status == 2 && u.err.find("usage:") != std::string::npos, "no arguments: usage");
#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
    {  // a gzip'd file that inflates past --max-inflated: refused while inflating, not after
      const std::string bomb = dir + "/bomb.json.gz";
      gzFile f = gzopen(bomb.c_str(), "wb9");
      const std::string spaces(1 << 20, ' ');
      gzwrite(f, "{", 1);
      for (int k = 0; k < 8; ++k) gzwrite(f, spaces.data(), unsigned(spaces.size()));
      gzwrite(f, "\"vertices\": []}", 15);
      gzclose(f);
      const run_result capped = run(tool, "--tables '" + bomb + "' --max-inflated 1000000", dir);
      check(capped.status == 1 && capped.err.find("[workpart.table_error]") != std::string::npos &&
                capped.err.find("inflates to more than 1000000 bytes") != std::string::npos,
            "gzip bomb: status " + std::to_string(capped.status) + ", stderr '" + capped.err + "'");
      const run_result whole = run(tool, "--tables '" + bomb + "'", dir);
      check(whole.status == 0, "the same file under the default cap: status " +
                                   std::to_string(whole.status) + ", stderr '" + whole.err + "'");
      const run_result zero = run(tool, "--tables '" + bomb + "' --max-inflated 0", dir);
      check(zero.status == 2, "--max-inflated 0: status " + std::to_string(zero.status));
      std::remove(bomb.c_str());
    }
#endif
    const run_result b = run(tool, "--tables x --time-budget soon", dir);
    check(b.status == 2, "bad --time-budget: status " + std::to_string(b.status));
  }

  // Given tables: the tool prints what the library finds (and brute force, when small).
  for (int i = 4; i < argc; ++i) {
    const std::string file = argv[i];
    const wp::cost_graph g = wp::read_cost_tables(file);
    const wp::search_result lib = wp::pase_search(g);
    const run_result r = run(tool, "--tables '" + file + "'", dir);
    check(r.status == 0, file + ": exit status " + std::to_string(r.status) + "; stderr: " + r.err);
    check(last_line(r.out) == g17("optimal cost: ", lib.cost),
          file + ": last line '" + last_line(r.out) + "'");
    if (assignments(g) <= 2e6) {
      const double b = brute_force(g);
      check(std::abs(b - lib.cost) <= 1e-12 * b,
            file + ": brute force " + g17("", b) + " vs " + g17("", lib.cost));
    }
    std::printf("%s: %s\n", file.c_str(), last_line(r.out).c_str());
  }

  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
