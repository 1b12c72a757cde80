/// \file test_optimize_model.cpp
/// The optimizer's cost model and its search, on one process: candidate grids against a
/// brute-force count, operations per point from expression types, and optimize()'s schedule
/// against every schedule priced from the same tables (brute force) for small programs and
/// rank counts 1 to 6.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>
#include <workpart/optimize/optimize.hpp>
#include <workpart/optimize/pricer.hpp>  // the pricer's internals (run_tasks, transfer_memo)

#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>
#include <limits>
#include <vector>

namespace wp = workpart;
using workpart::index_t;

TEST_CASE("optimize: candidate grids are every tuple within the extents and the ranks",
          "[unit][optimize]") {
  for (index_t P = 1; P <= 9; ++P)
    for (const std::vector<index_t>& ext :
         {std::vector<index_t>{3, 8}, {1, 5, 4}, {7}, {9, 2, 3, 2}}) {
      for (bool all : {false, true})
        for (bool pow2 : {false, true})
          for (int cap : {0, 1, 2}) {
            wp::config_options opt{all, pow2};
            opt.max_split_dims = cap;
            const auto got = wp::detail::grid_configurations(ext, P, opt);
            std::size_t want = 0;
            // brute force over the box [1, ext] per dimension
            std::vector<index_t> c(ext.size(), 1);
            for (;;) {
              index_t prod = 1;
              int split = 0;
              bool ok = true;
              for (index_t x : c) {
                prod *= x;
                split += x > 1 ? 1 : 0;
                ok = ok && (!pow2 || (x & (x - 1)) == 0);
              }
              ok = ok && (cap == 0 || split <= cap);
              if (ok && prod <= P && (!all || prod == P)) ++want;
              std::size_t d = 0;
              for (; d < c.size(); ++d) {
                if (++c[d] <= ext[d]) break;
                c[d] = 1;
              }
              if (d == c.size()) break;
            }
            INFO("P " << P << " all " << all << " pow2 " << pow2 << " cap " << cap);
            if (want == 0) {  // nothing fits: the one-rank grid
              REQUIRE(got.size() == 1);
              REQUIRE(got[0].product() == 1);
            } else {
              REQUIRE(got.size() == want);
            }
            for (const auto& g : got) REQUIRE(g.product() <= P);
            // data parallelism (the first dimension over all ranks) stays a candidate
            if (P <= ext[0] && (!pow2 || (P & (P - 1)) == 0)) {
              std::vector<index_t> dp(ext.size(), 1);
              dp[0] = P;
              REQUIRE(std::find(got.begin(), got.end(), wp::grid_shape(dp)) != got.end());
            }
          }
    }
}

TEST_CASE("optimize: operations per point come from the expression", "[unit][optimize]") {
  auto [i, k] = wp::indices<2>();
  wp::array<double, 2> x("x", {4, 4});
  wp::array<double, 1> y("y", {4}), w("w", {4});
  REQUIRE(wp::detail::ops_per_point(wp::map("copy", wp::space(4), y(i) = w(i))) == 1);
  REQUIRE(wp::detail::ops_per_point(wp::map("axpy", wp::space(4), y(i) = w(i) * 2.0 + y(i))) == 2);
  REQUIRE(wp::detail::ops_per_point(wp::map("dot", wp::space(4, 4), y(i) += x(i, k) * w(k))) == 2);
  REQUIRE(wp::detail::ops_per_point(wp::map("e", wp::space(4), y(i) = wp::exp(w(i) - 1.0))) == 2);
}

namespace {

/// The least total over every assignment of configurations, from the tables themselves.
double brute_force(const wp::cost_graph& g) {
  const std::size_t V = g.num_vertices();
  std::vector<std::size_t> k(V, 0);
  double best = INFINITY;
  for (;;) {
    double c = 0;
    for (std::size_t v = 0; v < V; ++v) c += g.vertex_cost(v, k[v]);
    for (std::size_t e = 0; e < g.num_edges(); ++e)
      c += g.edge_cost(e, k[g.edge_source(e)], k[g.edge_target(e)]);
    best = std::min(best, c);
    std::size_t v = 0;
    for (; v < V; ++v) {
      if (++k[v] < g.num_configs(v)) break;
      k[v] = 0;
    }
    if (v == V) return best;
  }
}

}  // namespace

TEST_CASE("optimize: the schedule is the cheapest of all under the model", "[unit][optimize]") {
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t B = 6, D = 5, H = 7;
  wp::array<float, 2> x("x", {B, D}), W1("W1", {D, H}), h("h", {B, H}), a("a", {B, H}),
      W2("W2", {H, D}), y("y", {B, D}), z("z", {B, D});
  auto fc1 = wp::map("fc1", wp::space(B, H, D), h(i, j) += x(i, k) * W1(k, j));
  auto relu = wp::map("relu", wp::space(B, H), a(i, j) = wp::max(h(i, j), 0.0f));
  auto fc2 = wp::map("fc2", wp::space(B, D, H), y(i, j) += a(i, k) * W2(k, j));
  auto res = wp::map("res", wp::space(B, D), z(i, j) = y(i, j) + x(i, j));  // a skip edge from x
  auto check = [](const auto& prog, int P, const wp::machine_model& mm) {
    INFO(P << " ranks, flops " << mm.flops);
    const auto t = wp::program_costs(prog, P, mm);
    const double want = brute_force(t.graph);
    const wp::optimized r = wp::optimize(prog, P, mm);
    REQUIRE(r.proven_optimal);
    REQUIRE(r.cost == Approx(want).epsilon(1e-12));
    // the reported schedule costs what is reported, priced from the tables again
    double again = 0;
    std::vector<std::size_t> chosen(t.graph.num_vertices(), 0);
    for (std::size_t m = 0; m < t.maps.size(); ++m) {
      const wp::grid_shape* g = r.schedule.find(t.maps[m]);
      REQUIRE(g != nullptr);
      std::size_t c = 0;
      while (!(t.grids[m][c] == *g)) ++c;
      chosen[m + 1] = c;
    }
    for (std::size_t v = 0; v < t.graph.num_vertices(); ++v)
      again += t.graph.vertex_cost(v, chosen[v]);
    for (std::size_t e = 0; e < t.graph.num_edges(); ++e)
      again += t.graph.edge_cost(e, chosen[t.graph.edge_source(e)], chosen[t.graph.edge_target(e)]);
    REQUIRE(again == Approx(r.cost).epsilon(1e-12));
    // wp::modelled_cost prices a given schedule alike: the optimum's, and data parallelism's
    // (every map's first dimension over the ranks), summed here from the full tables, no less
    REQUIRE(wp::modelled_cost(prog, r.schedule, P, mm) == Approx(r.cost).epsilon(1e-12));
    wp::schedule dp;
    std::vector<std::size_t> dp_chosen(t.graph.num_vertices(), 0);
    for (std::size_t m = 0; m < t.maps.size(); ++m) {
      std::vector<index_t> g(t.grids[m].front().dims.size(), 1);
      g[0] = std::min<index_t>(P, index_t(B));  // every map's first extent is B
      dp.set(t.maps[m], wp::grid_shape(g));
      std::size_t c = 0;
      while (!(t.grids[m][c] == wp::grid_shape(g))) ++c;
      dp_chosen[m + 1] = c;
    }
    double dp_cost = 0;
    for (std::size_t v = 0; v < t.graph.num_vertices(); ++v)
      dp_cost += t.graph.vertex_cost(v, dp_chosen[v]);
    for (std::size_t e = 0; e < t.graph.num_edges(); ++e)
      dp_cost += t.graph.edge_cost(e, dp_chosen[t.graph.edge_source(e)],
                                   dp_chosen[t.graph.edge_target(e)]);
    REQUIRE(wp::modelled_cost(prog, dp, P, mm) == Approx(dp_cost).epsilon(1e-12));
    REQUIRE(dp_cost >= r.cost * (1 - 1e-12));
    for (const auto& c : r.maps) REQUIRE(c.grid.product() <= P);
    REQUIRE(!r.str().empty());
  };
  const wp::machine_model models[] = {wp::machine_model{}, wp::machine_model{1e3, 1e-9, 1e-12},
                                      wp::machine_model{1e12, 1e-3, 1e-6}};
  // Every rank count to 16 without sanitizers (scripts/test.sh --plain); under them (the
  // whole suite's build-asan/, where pricing runs some 17 times slower) the memory checks take
  // a sample of them, prime, even and square counts among it.
#if defined(__SANITIZE_ADDRESS__)
  const std::vector<int> few = {1, 3, 4, 6}, more = {7, 12, 16};
#else
  const std::vector<int> few = {1, 2, 3, 4, 5, 6}, more = {7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
#endif
  for (const auto& mm : models)
    for (int P : few) check(wp::program(fc1, relu, fc2, res), P, mm);
  // more ranks, fewer maps (brute force stays small): up to 16
  for (const auto& mm : models)
    for (int P : more) check(wp::program(fc1, relu), P, mm);
}

TEST_CASE("optimize: config_options::tie_backward runs map dN on map N's grid, optimally so",
          "[unit][optimize][tied]") {
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t B = 6, D = 5, H = 7;
  wp::array<float, 2> x("x", {B, D}), W1("W1", {D, H}), h("h", {B, H}), a("a", {B, H}),
      g("g", {B, H}), dW1("dW1", {D, H}), x2("x2", {B, D}), t2("t2", {D, B});
  // a forward pair and the maps named as wp::backward names their derivatives
  auto fc1 = wp::map("fc1", wp::space(B, H, D), h(i, j) += x(i, k) * W1(k, j));
  auto relu = wp::map("relu", wp::space(B, H), a(i, j) = wp::max(h(i, j), 0.0f));
  auto drelu = wp::map("drelu", wp::space(B, H), g(i, j) = a(i, j) * h(i, j));
  auto dfc1 = wp::map("dfc1", wp::space(B, H, D), dW1(k, j) += x(i, k) * g(i, j));
  // "dx2" names a map of another space than "x2": it stays free
  auto mx2 = wp::map("x2", wp::space(B, D), x2(i, j) = 2.0f * x(i, j));
  auto dx2 = wp::map("dx2", wp::space(D, B), t2(i, j) = x2(j, i));
  const auto prog = wp::program(fc1, relu, drelu, dfc1);
  wp::optimize_options tie;
  tie.configs.tie_backward = true;
  // under the sanitizers (build-asan/, pricing some 17 times slower) two of the counts
#if defined(__SANITIZE_ADDRESS__)
  const std::vector<int> ranks = {2, 3};
#else
  const std::vector<int> ranks = {1, 2, 3, 4, 6};
#endif
  for (int P : ranks) {
    INFO(P << " ranks");
    const wp::machine_model mm{1e9, 1e-6, 1e-9};
    const auto t = wp::program_costs(prog, P, mm, tie.configs);
    REQUIRE(t.tied.size() == t.graph.num_vertices());
    REQUIRE(t.tied[3] == 2);  // drelu -> relu (map m is vertex m + 1)
    REQUIRE(t.tied[4] == 1);  // dfc1 -> fc1
    REQUIRE(wp::program_costs(prog, P, mm).tied.empty());
    const auto t2 = wp::program_costs(wp::program(mx2, dx2), P, mm, tie.configs);
    REQUIRE(t2.tied == std::vector<std::size_t>{0, 1, 2, 3});  // dx2: free
    const wp::optimized r = wp::optimize(prog, P, mm, tie);
    REQUIRE(r.proven_optimal);
    REQUIRE(*r.schedule.find("dfc1") == *r.schedule.find("fc1"));
    REQUIRE(*r.schedule.find("drelu") == *r.schedule.find("relu"));
    REQUIRE(wp::modelled_cost(prog, r.schedule, P, mm) == Approx(r.cost).epsilon(1e-12));
    // brute force over the tied schedules, each priced on its own by wp::modelled_cost
    double best = std::numeric_limits<double>::infinity();
    const auto& G = t.grids;
    for (const auto& g1 : G[0])
      for (const auto& g2 : G[1]) {
        wp::schedule s;
        s.set("fc1", g1);
        s.set("dfc1", g1);
        s.set("relu", g2);
        s.set("drelu", g2);
        best = std::min(best, wp::modelled_cost(prog, s, P, mm));
      }
    REQUIRE(r.cost == Approx(best).epsilon(1e-12));
    // the untied optimum is over more schedules: never dearer
    REQUIRE(wp::optimize(prog, P, mm).cost <= r.cost * (1 + 1e-12));
  }
}

TEST_CASE("optimize: the tables do not depend on the threads that price them", "[unit][optimize]") {
  // fc1's grids that split its reduced index k leave partial sums that relu reads: each pair
  // of grids is a combine priced on its own, on config_options::threads threads
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t B = 6, D = 5, H = 7;
  wp::array<float, 2> x("x", {B, D}), W1("W1", {D, H}), h("h", {B, H}), a("a", {B, H}),
      W2("W2", {H, D}), y("y", {B, D});
  auto prog = wp::program(wp::map("fc1", wp::space(B, H, D), h(i, j) += x(i, k) * W1(k, j)),
                          wp::map("relu", wp::space(B, H), a(i, j) = wp::max(h(i, j), 0.0f)),
                          wp::map("fc2", wp::space(B, D, H), y(i, j) += a(i, k) * W2(k, j)));
  const wp::machine_model mm{1e9, 1e-6, 1e-9};
  // 16 ranks: enough distinct pairs of holders and needs (relu -> fc2) that the
  // redistributions are priced on several threads too
  for (int P : {4, 12, 16}) {
    wp::config_options one;
    one.threads = 1;
    const auto want = wp::program_costs(prog, P, mm, one);
    for (int threads : {2, 3, 0}) {
      INFO(P << " ranks, " << threads << " threads");
      wp::config_options opt;
      opt.threads = threads;
      const auto got = wp::program_costs(prog, P, mm, opt);
      REQUIRE(got.graph.num_vertices() == want.graph.num_vertices());
      REQUIRE(got.graph.num_edges() == want.graph.num_edges());
      for (std::size_t v = 0; v < want.graph.num_vertices(); ++v)
        for (std::size_t c = 0; c < want.graph.num_configs(v); ++c)
          REQUIRE(got.graph.vertex_cost(v, c) == want.graph.vertex_cost(v, c));
      for (std::size_t e = 0; e < want.graph.num_edges(); ++e) {
        const std::size_t u = want.graph.edge_source(e), v = want.graph.edge_target(e);
        REQUIRE(got.graph.edge_source(e) == u);
        REQUIRE(got.graph.edge_target(e) == v);
        for (std::size_t cu = 0; cu < want.graph.num_configs(u); ++cu)
          for (std::size_t cv = 0; cv < want.graph.num_configs(v); ++cv)
            REQUIRE(got.graph.edge_cost(e, cu, cv) == want.graph.edge_cost(e, cu, cv));
      }
    }
  }
}

TEST_CASE("optimize: an error on a pricing thread is raised once every thread has stopped",
          "[unit][optimize]") {
  // run_tasks hands tasks to threads; one that fails (an allocation, say) on a worker must
  // come out of the call as it would on one thread, not end the process
  for (std::size_t threads : {1, 2, 3}) {
    INFO(threads << " threads");
    std::atomic<int> ran{0};
    auto fails = [&] {
      wp::detail::run_tasks(200, threads, [&](std::size_t x, std::size_t) {
        ++ran;
        if (x == 37) throw std::bad_alloc();
      });
    };
    REQUIRE_THROWS_AS(fails(), std::bad_alloc);
    REQUIRE(ran >= 38);  // every task up to the failing one was handed out
    std::vector<int> once(500, 0);
    wp::detail::run_tasks(once.size(), threads, [&](std::size_t x, std::size_t) { ++once[x]; });
    REQUIRE(std::count(once.begin(), once.end(), 1) == 500);
  }
}

TEST_CASE("optimize: bad rank counts are errors", "[unit][optimize][errors]") {
  auto [i] = wp::indices<1>();
  wp::array<double, 1> y("y", {4}), w("w", {4});
  auto m = wp::map("copy", wp::space(4), y(i) = w(i));
  REQUIRE_THROWS_AS(wp::optimize(m, 0), wp::grid_error);
  REQUIRE_THROWS_AS(wp::optimize(m, -3), wp::grid_error);
}

TEST_CASE("optimize: a split reduction nobody reads is combined on its edge to the outputs",
          "[unit][optimize]") {
  // y's partial results over the k split are read by no later map: the model prices their
  // combine and root's gather on the edge to 'root (outputs)', as the program plan moves them
  // (plan_on_paper's bytes; alpha 0, beta 1: an edge costs its busiest rank's bytes)
  constexpr index_t I = 7, K = 6;
  auto [i, k] = wp::indices<2>();
  wp::array<double, 2> x("x", {I, K}), z("z", {I, K});
  wp::array<double, 1> y("y", {I});
  auto sum_k = wp::map("sum_k", wp::space(I, K), y(i) += x(i, k));
  auto copy = wp::map("copy", wp::space(I, K), z(i, k) = x(i, k) * 2.0);
  const auto prog = wp::program(sum_k, copy);
  const wp::machine_model bytes_only{.flops = 1e30, .alpha = 0, .beta = 1};
  for (int P : {2, 3, 4}) {
    INFO(P << " ranks");
    const auto t = wp::program_costs(prog, P, bytes_only);
    const std::size_t sink = t.graph.num_vertices() - 1;
    std::size_t e = 0;
    while (!(t.graph.edge_source(e) == 1 && t.graph.edge_target(e) == sink)) ++e;
    std::size_t c = 0;
    while (!(t.grids[0][c] == wp::grid_shape{1, P})) ++c;
    wp::schedule s;
    s.set(sum_k, wp::grid_shape{1, P}).set(copy, wp::grid_shape{1, 1});
    const wp::paper_program p = wp::plan_on_paper(prog, s, P);
    std::vector<index_t> sent(std::size_t(P), 0), received(std::size_t(P), 0);
    int entries = 0;
    for (const auto& r : p.redistributions)
      if (r.array == "y") {
        ++entries;
        for (int q = 0; q < P; ++q)
          sent[std::size_t(q)] += r.sent[std::size_t(q)],
              received[std::size_t(q)] += r.received[std::size_t(q)];
      }
    REQUIRE(entries == 2);  // the combine and the gather
    index_t busiest = 0;
    for (int q = 0; q < P; ++q)
      busiest = std::max({busiest, sent[std::size_t(q)], received[std::size_t(q)]});
    REQUIRE(busiest > 0);
    CHECK(t.graph.edge_cost(e, c, 0) == Approx(double(busiest)));
    CHECK(t.graph.vertex_cost(1, c) == Approx(0.0).margin(1e-20));  // the combine is not on the map
  }
}

TEST_CASE("optimize: partial sums passed on to the next += map cost nothing on their edge",
          "[unit][optimize]") {
  // h(i, j) += x1(i, j, k), then h(i, j) += x2(i, j, k), then a map reads h whole: with k
  // split over every rank in both, the first's partial sums pass on to the second (a local
  // copy), whose combine is priced on its edge to the reader. With the second's j split
  // instead, the first's are combined on the edge between them (alpha 0, beta 1: an edge
  // costs its busiest rank's bytes; plan_on_paper's bytes).
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t I = 3, J = 5, K = 4;
  wp::array<double, 3> x1("x1", {I, J, K}), x2("x2", {I, J, K}), z("z", {I, J, K});
  wp::array<double, 2> h("h", {I, J});
  auto sum1 = wp::map("sum1", wp::space(I, J, K), h(i, j) += x1(i, j, k));
  auto sum2 = wp::map("sum2", wp::space(I, J, K), h(i, j) += x2(i, j, k));
  auto use = wp::map("use", wp::space(I, J, K), z(i, j, k) = h(i, j) * 2.0);
  const auto prog = wp::program(sum1, sum2, use);
  const wp::machine_model bytes_only{.flops = 1e30, .alpha = 0, .beta = 1};
  for (int P : {2, 3, 4}) {
    INFO(P << " ranks");
    wp::config_options one_run;  // (no next execute()'s old values of sum1 on the same edge)
    one_run.executions = 1;
    const auto t = wp::program_costs(prog, P, bytes_only, one_run);
    auto edge = [&](std::size_t from, std::size_t to) {
      std::size_t e = 0;
      while (!(t.graph.edge_source(e) == from && t.graph.edge_target(e) == to)) ++e;
      return e;
    };
    auto config = [&](std::size_t m, const wp::grid_shape& g) {
      std::size_t c = 0;
      while (!(t.grids[m][c] == g)) ++c;
      return c;
    };
    const wp::grid_shape split{1, 1, P}, cols{1, P, 1}, one{1, 1, 1};
    // the busiest rank's bytes of what the program moves of h from sum1 into sum2 (sum1's
    // combine included)
    auto busiest = [&](const wp::grid_shape& g2) {
      wp::schedule s;
      s.set(sum1, split).set(sum2, g2).set(use, one);
      const wp::paper_program p = wp::plan_on_paper(prog, s, P);
      std::vector<index_t> sent(std::size_t(P), 0), received(std::size_t(P), 0);
      for (const auto& r : p.redistributions)
        if (r.array == "h" && r.from.rfind("'sum1'", 0) == 0 && r.to != "'use'")
          for (int q = 0; q < P; ++q)
            sent[std::size_t(q)] += r.first_sent[std::size_t(q)],
                received[std::size_t(q)] += r.first_received[std::size_t(q)];
      index_t b = 0;
      for (int q = 0; q < P; ++q) b = std::max({b, sent[std::size_t(q)], received[std::size_t(q)]});
      return b;
    };
    const std::size_t e12 = edge(1, 2), e23 = edge(2, 3);
    CHECK(t.graph.edge_cost(e12, config(0, split), config(1, split)) == Approx(0.0).margin(1e-20));
    CHECK(busiest(split) == 0);
    // the second's combine, on its edge to the reader: a Reduce onto rank 0
    CHECK(t.graph.edge_cost(e23, config(1, split), config(2, one)) ==
          Approx(double((P - 1) * I * J * 8)));
    // the second's j split: the first's partial sums combined, then its columns brought
    const double not_passed = t.graph.edge_cost(e12, config(0, split), config(1, cols));
    CHECK(not_passed > 0);
    CHECK(not_passed == Approx(double(busiest(cols))));
  }
}

TEST_CASE("optimize: a large Allreduce is priced in parts, a small one through the leader",
          "[unit][optimize]") {
  // h(i, j) += x(i, j, k) with k split over every rank, read whole by every rank next: an
  // Allreduce on the edge. Of I x J doubles past all_reduce_parts_min_bytes, from 3 ranks, it
  // runs in parts: each member sends and receives the others' runs of its partial and its own
  // run to and from each (4 (P - 1) messages); else the leader moves P - 1 boxes each way in
  // 2 (P - 1) messages. The model's edge: the busiest rank's bytes (alpha 0, beta 1) and its
  // messages (alpha 1, beta 0), as counted here.
  auto [i, j, k] = wp::indices<3>();
  const wp::machine_model bytes_only{.flops = 1e30, .alpha = 0, .beta = 1};
  const wp::machine_model messages_only{.flops = 1e30, .alpha = 1, .beta = 1e-30};
  for (const index_t I : {index_t(3), index_t(37)}) {
    constexpr index_t J = 251, K = 9;
    const index_t n = I * J;
    const bool large = n * 8 >= wp::detail::all_reduce_parts_min_bytes;
    wp::array<double, 3> x("x", {I, J, K}), z("z", {I, J, K});
    wp::array<double, 2> h("h", {I, J});
    auto sum_k = wp::map("sum_k", wp::space(I, J, K), h(i, j) += x(i, j, k));
    auto use = wp::map("use", wp::space(I, J, K), z(i, j, k) = h(i, j) * 2.0);
    const auto prog = wp::program(sum_k, use);
    for (int P : {2, 3, 4, 8}) {
      INFO(P << " ranks, " << n * 8 << " bytes of h");
      const bool parts = large && P >= 3;
      index_t busiest = 0;
      int messages = 0;
      if (parts) {
        const index_t most = (n + P - 1) / P;  // the largest run
        busiest = (n - most + (P - 1) * most) * 8;
        messages = 4 * (P - 1);
      } else {
        busiest = (P - 1) * n * 8;  // the leader's, each way
        messages = 2 * (P - 1);
      }
      for (const auto* mm : {&bytes_only, &messages_only}) {
        const auto t = wp::program_costs(prog, P, *mm);
        std::size_t e = 0;
        while (!(t.graph.edge_source(e) == 1 && t.graph.edge_target(e) == 2)) ++e;
        std::size_t c = 0, d = 0;
        while (!(t.grids[0][c] == wp::grid_shape{1, 1, P})) ++c;
        while (!(t.grids[1][d] == wp::grid_shape{1, 1, P})) ++d;
        if (mm == &bytes_only)
          CHECK(t.graph.edge_cost(e, c, d) == Approx(double(busiest)));
        else
          CHECK(t.graph.edge_cost(e, c, d) == Approx(double(messages)).epsilon(1e-6));
      }
    }
  }
}

namespace {

/// A box of a 2-D array: rows [r0, r1), columns [c0, c1).
wp::detail::box box2(index_t r0, index_t r1, index_t c0, index_t c1) {
  wp::detail::box b;
  b.rank = 2;
  b.valid = r1 > r0 && c1 > c0;
  b.lo[0] = r0, b.hi[0] = r1, b.lo[1] = c0, b.hi[1] = c1;
  return b;
}

}  // namespace

TEST_CASE("optimize: a need many ranks share is priced as the plan moves it", "[unit][optimize]") {
  // edge_transfer finds the holders a need meets once per distinct need (first_alike) and
  // hands the pieces to each rank with that need but the holder itself: the bytes and
  // messages per rank must be the planned transfer's, for needs shared by every rank, by
  // a grid dimension's ranks, by none, and with empty needs among them; holders that tile
  // the array (priced without planning) and holders that overlap (planned)
  namespace wd = wp::detail;
  constexpr index_t R = 13, C = 11;  // uneven: blocks of 4/3/3/3 rows, 6/5 columns
  for (int P : {1, 2, 3, 4, 6, 8}) {
    // held: a (P/2 or 1) x (2 or 1) block tiling; and an overlapping one (one row more)
    const int gc = P % 2 == 0 ? 2 : 1, gr = P / gc;
    std::vector<wd::box> tiled, overlapping;
    for (int r = 0; r < P; ++r) {
      const auto br = wd::balanced_block(0, R, gr, r / gc);
      const auto bc = wd::balanced_block(0, C, gc, r % gc);
      tiled.push_back(box2(br.start, br.end, bc.start, bc.end));
      overlapping.push_back(box2(br.start, std::min(R, br.end + 1), bc.start, bc.end));
    }
    // needs: all the same (a weight read whole), the same per column block (rows replicated),
    // a halo'd row block per rank, and some empty
    std::vector<std::vector<wd::box>> needs(4);
    for (int r = 0; r < P; ++r) {
      needs[0].push_back(box2(0, R, 0, C));
      const auto bc = wd::balanced_block(0, C, gc, r % gc);
      needs[1].push_back(box2(0, R, bc.start, bc.end));
      const auto br = wd::balanced_block(0, R, P, r);
      needs[2].push_back(box2(std::max<index_t>(0, br.start - 1), std::min(R, br.end + 1), 0, C));
      needs[3].push_back(r % 3 == 1 ? wd::box{} : box2(2, 9, 1, 7));
    }
    for (const auto* held : {&tiled, &overlapping}) {
      const wd::holders h(*held);
      REQUIRE(h.disjoint == (held == &tiled || gr == 1));  // one row block: nothing overlaps
      for (std::size_t k = 0; k < needs.size(); ++k) {
        INFO(P << " ranks, need " << k << (held == &tiled ? ", tiled" : ", overlapping"));
        for (std::size_t es : {std::size_t(4), std::size_t(8)}) {
          wd::reader_need n;
          n.reads = needs[k];
          n.any_reads = true;
          n.reads_alike = wd::first_alike(n.reads);
          for (int r = 0; r < P; ++r) {  // the first rank with the same box, or -1 if empty
            const auto& b = n.reads[std::size_t(r)];
            int first = -1;
            for (int q = 0; q < P && !b.empty(); ++q)
              if (n.reads[std::size_t(q)] == b) {
                first = q;
                break;
              }
            REQUIRE(n.reads_alike[std::size_t(r)] == first);
          }
          const wd::transfer_cost got = wd::edge_transfer(h, es, n, P);
          const wd::transfer_cost want =
              wd::price_transfer(wd::plan_transfer(needs[k], {{0, *held}}), P, es);
          REQUIRE(got.sent == want.sent);
          REQUIRE(got.received == want.received);
          REQUIRE(got.messages == want.messages);
        }
      }
    }
  }
}
