/// \file test_profile.cpp
/// plan.profile() at every communicator size: per map and per transfer the executes measured
/// and the median seconds, the same on every rank; the modelled seconds against what they
/// must be, derived here -- a map's largest block (the balanced tiling, block_of) times its
/// operations per point over the model's rate; a redistribution's busiest rank's bytes (the
/// rows or columns each rank lacks, counted here) times the model's seconds per byte; the last
/// execute()'s timeline on every rank; the table printed on rank 0 only; a single map's plan;
/// no executes yet; a moved-from plan refused on every rank.

#include <algorithm>
#include <sstream>

#include <workpart/optimize/describe.hpp>

#include "mpi_test_support.hpp"

namespace {

using namespace mpitest;
using Catch::Matchers::Contains;

double xv(index_t a, index_t b) { return double((a * 5 + b * 3) % 11) - 5.0; }

/// Root's profile text against every rank's: problems as text, the same on every rank.
std::string profile_differs(const boost::mpi::communicator& c, const wp::plan_profile& p) {
  const std::string root = from_root(c, p.to_json());
  return all_problems(c, root == p.to_json() ? "" : "profile differs from root's");
}

}  // namespace

TEST_CASE("profile: maps and transfers, measured and modelled, the same on every rank",
          "[mpi][profile]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  constexpr index_t I = 7, J = 5;
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> X("X", {I, J}), H("H", {I, J}), Y("Y", {I, J});
  wp::array<double, 1> s("s", {I}), z("z", {I});
  fill2(X, xv);
  fill1(s, [](index_t) { return 0.0; });
  auto m1 = wp::map("scale", wp::space(I, J), H(i, j) = X(i, j) * 3.0);
  auto m2 = wp::map("act", wp::space(I, J), Y(i, j) = wp::tanh(H(i, j)));
  auto m3 = wp::map("rowsum", wp::space(I, J), s(i) += Y(i, j));
  auto m4 = wp::map("twice", wp::space(I), z(i) = s(i) * 2.0);
  wp::schedule sch;
  sch.set(m1, wp::grid_shape{index_t(P), 1})
      .set(m2, wp::grid_shape{1, index_t(P)})
      .set(m3, wp::grid_shape{1, index_t(P)})
      .set(m4, wp::grid_shape{index_t(P)});
  const wp::program prog(m1, m2, m3, m4);
  auto plan = wp::distribute(prog, sch, ctx);
  plan.scatter();
  constexpr int executes = 5;
  for (int e = 0; e < executes; ++e) plan.execute();

  // flops 1 and alpha = beta = 0: a map's modelled seconds are its largest block's operations
  const wp::machine_model ops_model{.flops = 1.0, .alpha = 0.0, .beta = 0.0};
  const wp::plan_profile p = plan.profile(ops_model);
  CHECK(profile_differs(ctx.comm(), p) == "");
  CHECK(p.ranks == P);
  CHECK(p.rank == ctx.rank());
  CHECK(p.executes == executes);
  CHECK(p.step_measured > 0);

  const wp::program_description d = wp::describe(prog);
  const index_t largest_rows = block_of(I, P, 0).size, largest_cols = block_of(J, P, 0).size;
  const std::vector<double> largest = {double(largest_rows * J), double(I * largest_cols),
                                       double(I * largest_cols), double(largest_rows)};
  int maps = 0;
  double modelled_sum = 0;
  for (const auto& r : p.rows) {
    INFO(r.kind << " " << r.name);
    CHECK(r.executes == executes);
    CHECK(r.measured >= 0);
    modelled_sum += r.modelled;
    if (r.map < 0) continue;
    REQUIRE(r.map == maps);  // the maps in program order, transfers between them
    CHECK(r.kind == "map");
    CHECK(r.name == d.maps[std::size_t(r.map)].name);
    CHECK(r.modelled ==
          Approx(largest[std::size_t(r.map)] * d.maps[std::size_t(r.map)].ops_per_point));
    ++maps;
  }
  CHECK(maps == 4);
  CHECK(p.step_modelled == Approx(modelled_sum));
  for (const auto& r : p.rows)
    if (r.map == 0) CHECK(r.measured > 0);  // every rank's block has points of the first map

  // H from row blocks to column blocks: each rank receives the rows it lacks of its columns
  // and sends its rows of the columns it lacks; the busiest rank's bytes, at beta = 1 s/B
  index_t busiest = 0;
  for (int r = 0; r < P; ++r) {
    const index_t rows_r = block_of(I, P, r).size, cols_r = block_of(J, P, r).size;
    busiest = std::max({busiest, (I - rows_r) * cols_r * index_t(sizeof(double)),
                        rows_r * (J - cols_r) * index_t(sizeof(double))});
  }
  const wp::plan_profile pb = plan.profile({.flops = 1e300, .alpha = 0.0, .beta = 1.0});
  bool found_h = false, found_s = false;
  const auto st = plan.stats();
  for (const auto& r : pb.rows) {
    if (r.map >= 0) continue;
    INFO(r.kind << " " << r.name);
    REQUIRE(r.transfer >= 0);
    REQUIRE(std::size_t(r.transfer) < st.redistributions.size());
    const auto& rs = st.redistributions[std::size_t(r.transfer)];
    CHECK(r.name == rs.array + ": " + rs.from + " -> " + rs.to);
    CHECK(r.kind == rs.kind);
    if (r.name == "H: 'scale' -> 'act'") {
      found_h = true;
      CHECK(r.modelled == Approx(double(busiest)));
    }
    if (r.name.rfind("s: ", 0) == 0) found_s = true;
  }
  CHECK(found_h);  // a row for every redistribution stats() lists, "none" at one rank
  CHECK(found_s);  // the partial row sums combined before 'twice' reads them

  // the timeline: every rank's four blocks in program order, then the step's agreement
  for (int r = 0; r < P; ++r) {
    std::vector<int> blocks;
    double last = 0;
    bool waited = false;
    for (const auto& e : p.timeline) {
      if (e.rank != r) continue;
      CHECK(e.end >= e.start);
      CHECK(e.start >= last - 1e-12);
      last = e.start;
      if (e.row < 0) {
        waited = true;
        continue;
      }
      REQUIRE(e.row < int(p.rows.size()));
      if (p.rows[std::size_t(e.row)].map >= 0) blocks.push_back(p.rows[std::size_t(e.row)].map);
    }
    CHECK(blocks == std::vector<int>{0, 1, 2, 3});
    CHECK(waited);
  }

  // the table on rank 0 only; JSON and the picture
  std::ostringstream os;
  os << p;
  if (ctx.is_root()) {
    CHECK_THAT(os.str(), Contains("rowsum") && Contains("step") && Contains("executes"));
  } else {
    CHECK(os.str().empty());
  }
  CHECK_THAT(p.to_json(), Contains("\"rows\":[") && Contains("\"timeline\":["));
  CHECK_THAT(p.to_svg(), Contains("<svg") && Contains("rank " + std::to_string(P - 1)));
  CHECK_THAT(p.str(), Contains("machine_model{.flops = 1"));
}

TEST_CASE("profile: a single map's plan, and a program before any execute", "[mpi][profile]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  constexpr index_t M = 9, N = 4, K = 3;
  auto [i, j, k] = wp::indices<3>();
  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill2(A, xv);
  fill2(B, xv);
  auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
  auto plan = wp::distribute(mm, wp::grid_shape{index_t(P), 1, 1}, ctx);
  plan.run();
  plan.run();
  const wp::plan_profile p = plan.profile({.flops = 1.0, .alpha = 0.0, .beta = 0.0});
  CHECK(profile_differs(ctx.comm(), p) == "");
  REQUIRE(p.rows.size() == 1);
  CHECK(p.rows[0].name == "matmul");
  CHECK(p.rows[0].executes == 2);
  CHECK(p.executes == 2);
  const double ops = wp::describe(wp::program(mm)).maps[0].ops_per_point;
  CHECK(p.rows[0].modelled == Approx(double(block_of(M, P, 0).size * N * K) * ops));
  CHECK(p.timeline.size() == std::size_t(2 * P));  // a block and a wait on each rank

  // the same map as a program of one map, not executed yet: rows, no figures
  auto once = wp::distribute(wp::program(mm), wp::schedule().set(mm, wp::grid_shape{1, 1, 1}), ctx);
  const wp::plan_profile q = once.profile();
  REQUIRE(q.rows.size() == 1);
  CHECK(q.executes == 0);
  CHECK(q.rows[0].executes == 0);
  CHECK(q.rows[0].measured == 0);
  CHECK(q.timeline.empty());

  // a moved-from plan: the same error on every rank, before any collective
  auto moved = std::move(plan);
  const std::string msg = what_of([&] { (void)plan.profile(); });
  CHECK_THAT(msg, Contains("profile"));
  CHECK(same_everywhere(ctx.comm(), msg) == "");
  CHECK(a_plan_still_works(ctx) == "");
}
