// CTest mpi.describe_tool.np<P>: a typed program written out by wp::describe + wp::to_json and
// priced by `workpart-optimize --program` (run by root) gets the schedule that
// wp::distribute(prog, wp::automatic, ctx) plans on these P ranks, and the optimal cost
// wp::optimize finds, to the last digit. The programs: a 2-layer MLP (an inner sum, weights
// filled by init(), uneven extents), run and checked against plain loops; and a strided
// convolution's training step from wp::backward (a rank-0 loss, maps over wp::space(), maps
// whose statements are pruned).
//
// Environment: WORKPART_OPTIMIZE_TOOL (the tool's path), WORKPART_SCRATCH (where the JSON goes).

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>
#include <workpart/optimize.hpp>

#include "../tests/conv_train_step.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/serialization/string.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace wp = workpart;
using workpart::index_t;

namespace {

int g_argc = 0;  // MPI is initialised by tests/mpi_main.cpp: a context wraps the world
char** g_argv = nullptr;

const wp::machine_model model{1e7, 1e-6, 1e-9};  // slow arithmetic: small maps split

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

/// Root writes the description, runs the tool on it and gives every rank its output.
std::string priced_by_tool(const wp::context& ctx, const wp::program_description& d,
                           const std::string& name) {
  std::string out;
  if (ctx.is_root()) {
    const std::string path = env("WORKPART_SCRATCH") + "/described_" + name + "_np" +
                             std::to_string(ctx.size()) + ".json";
    std::ofstream(path) << wp::to_json(d);
    char flags[160];
    std::snprintf(flags, sizeof flags, " --nprocs %d --flops %.17g --alpha %.17g --beta %.17g",
                  ctx.size(), model.flops, model.alpha, model.beta);
    const std::string cmd =
        "'" + env("WORKPART_OPTIMIZE_TOOL") + "' --program '" + path + "'" + flags + " 2>&1";
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
      out += "\nexit status " + std::to_string(pclose(p));
    }
  }
  boost::mpi::broadcast(ctx.comm(), out, 0);
  return out;
}

/// map name -> grid text "(a,b)" from the tool's table (the lines between its header and
/// "arrays passed"), or from a plan's summary() ("map 'name' on grid (a,b)").
std::map<std::string, std::string> tool_grids(const std::string& out) {
  std::map<std::string, std::string> g;
  std::istringstream in(out);
  std::string line;
  bool table = false;
  while (std::getline(in, line)) {
    if (line.rfind("arrays passed", 0) == 0) break;
    if (table) {
      std::istringstream l(line);
      std::string name, grid;
      l >> name >> grid;
      g[name] = grid;
    }
    table = table || line.rfind("map ", 0) == 0;
  }
  return g;
}
std::map<std::string, std::string> plan_grids(const std::string& summary) {
  std::map<std::string, std::string> g;
  std::istringstream in(summary);
  std::string line;
  const std::string on = "' on grid ";
  while (std::getline(in, line))
    if (line.rfind("map '", 0) == 0 && line.find(on) != std::string::npos)
      g[line.substr(5, line.find(on) - 5)] = line.substr(line.find(on) + on.size());
  return g;
}

template <class Prog, class Plan>
void require_tool_agrees(const wp::context& ctx, const Prog& prog, const Plan& plan,
                         const std::string& name) {
  REQUIRE(!env("WORKPART_OPTIMIZE_TOOL").empty());  // set by CTest (tools/CMakeLists.txt)
  const std::string out = priced_by_tool(ctx, wp::describe(prog), name);
  INFO(out);
  REQUIRE(out.find("exit status 0") != std::string::npos);
  const auto want = plan_grids(plan.summary());
  REQUIRE(!want.empty());
  CHECK(tool_grids(out) == want);
  const wp::optimized r = wp::optimize(prog, ctx.size(), model);
  char cost[64];
  std::snprintf(cost, sizeof cost, "optimal cost: %.17g\n", r.cost);
  CHECK(out.find(cost) != std::string::npos);
}

}  // namespace

TEST_CASE("describe + workpart-optimize: an MLP gets wp::automatic's schedule", "[describe]") {
  wp::context ctx(g_argc, g_argv);
  const index_t N = 37, D = 10, H = 23;
  wp::array<double, 2> x("x", {N, D}), W1("W1", {D, H}), h("h", {N, H}), a("a", {N, H});
  wp::array<double, 2> W2("W2", {H, D}), y("y", {N, D});
  auto w1 = [](index_t k, index_t n) { return std::cos(double(3 * k + n)) / 8; };
  auto xv = [](index_t b, index_t k) { return std::sin(double(b * D + k)); };
  auto w2 = [](index_t k, index_t n) { return std::sin(double(5 * k + n + 1)) / 8; };
  W1.init([&](std::array<std::int64_t, 2> g) { return w1(g[0], g[1]); });
  if (ctx.is_root()) {
    for (index_t b = 0; b < N; ++b)
      for (index_t k = 0; k < D; ++k) x.data()[b * D + k] = xv(b, k);
    for (index_t k = 0; k < H; ++k)
      for (index_t n = 0; n < D; ++n) W2.data()[k * D + n] = w2(k, n);
  }
  auto [i, n, k] = wp::indices<3>();
  auto prog = wp::program(
      wp::map("fc1", wp::space(N, H, D), h(i, n) += x(i, k) * W1(k, n)),
      wp::map("relu", wp::space(N, H), a(i, n) = wp::max(h(i, n), 0.0)),
      wp::map("fc2", wp::space(N, D), y(i, n) = wp::sum(wp::range(k, 0, H), a(i, k) * W2(k, n))));
  auto plan = wp::distribute(prog, wp::automatic_t{model, {}}, ctx);
  plan.run();
  require_tool_agrees(ctx, prog, plan, "mlp");
  double worst = 0;  // y against plain loops, on root
  if (ctx.is_root())
    for (index_t b = 0; b < N; ++b)
      for (index_t o = 0; o < D; ++o) {
        double s = 0;
        for (index_t q = 0; q < H; ++q) {
          double pre = 0;
          for (index_t c = 0; c < D; ++c) pre += xv(b, c) * w1(c, q);
          s += std::max(pre, 0.0) * w2(q, o);
        }
        worst = std::max(worst, std::abs(y.data()[b * D + o] - s));
      }
  boost::mpi::broadcast(ctx.comm(), worst, 0);
  CHECK(worst < 1e-12);
}

TEST_CASE("describe + workpart-optimize: a training step gets wp::automatic's schedule",
          "[describe]") {
  wp::context ctx(g_argc, g_argv);
  testprog::conv_train_step prog(/*C=*/3, /*Tn=*/16, /*F=*/4, /*R=*/3);  // 7 output positions
  auto step = prog.step(0.1);
  auto plan = wp::distribute(step, wp::automatic_t{model, {}}, ctx);
  require_tool_agrees(ctx, step, plan, "train");
}
