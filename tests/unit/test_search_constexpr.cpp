// The strategy search in constant evaluation: small std::array graphs optimised inside
// static_assert and checked against a constexpr brute force. Compiling is passing; the
// test case repeats the checks at run time.

#include <catch2/catch.hpp>

#include <workpart/optimize/search.hpp>

#include <cstddef>

namespace wp = workpart;

namespace {

/// The least cost over every assignment, in constant evaluation.
template <class G>
constexpr double brute_force(const G& g) {
  const std::size_t n = g.num_vertices();
  std::size_t a[8] = {};
  double best = 1e300;
  while (true) {
    double c = 0;
    for (std::size_t v = 0; v < n; ++v) c += g.vertex_cost(v, a[v]);
    for (std::size_t e = 0; e < g.num_edges(); ++e)
      c += g.edge_cost(e, a[g.edge_source(e)], a[g.edge_target(e)]);
    if (c < best) best = c;
    std::size_t i = 0;
    while (i < n && ++a[i] == g.num_configs(i)) a[i++] = 0;
    if (i == n) return best;
  }
}

// A chain of three: 0 -> 1 -> 2, two configurations each; agreeing neighbours cost nothing.
constexpr auto chain = [] {
  wp::static_cost_graph<3, 2, 2> g;
  g.configs = {2, 2, 2};
  g.vertex_costs = {{{{1, 2}}, {{3, 1}}, {{2, 2}}}};
  g.edges = {{{0, 1}, {1, 2}}};
  g.edge_costs[0] = {{{{0, 5}}, {{5, 0}}}};
  g.edge_costs[1] = {{{{0, 5}}, {{5, 0}}}};
  return g;
}();

// A diamond of four with a skip edge (0 -> 3): dependent sets of two, 2-3 configurations.
constexpr auto diamond = [] {
  wp::static_cost_graph<4, 5, 3> g;
  g.configs = {3, 2, 3, 2};
  g.vertex_costs = {{{{4, 1, 3}}, {{2, 2, 0}}, {{1, 5, 2}}, {{0, 3, 0}}}};
  g.edges = {{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}}};
  g.edge_costs[0] = {{{{0, 2, 0}}, {{3, 0, 0}}, {{1, 1, 0}}}};
  g.edge_costs[1] = {{{{0, 4, 4}}, {{4, 0, 2}}, {{4, 2, 0}}}};
  g.edge_costs[2] = {{{{0, 1, 0}}, {{6, 0, 0}}, {{0, 0, 0}}}};
  g.edge_costs[3] = {{{{0, 3, 0}}, {{2, 0, 0}}, {{1, 1, 0}}}};
  g.edge_costs[4] = {{{{1, 0, 0}}, {{0, 7, 0}}, {{2, 2, 0}}}};
  return g;
}();

constexpr double chain_cost = wp::pase_search(chain).cost;
static_assert(chain_cost == 5, "chain: configurations (1, 1, 1) cost 2 + 1 + 2");
static_assert(chain_cost == brute_force(chain));
static_assert([] {
  const auto r = wp::pase_search(chain);
  return r.proven_optimal && r.config[0] == 1 && r.config[1] == 1 && r.config[2] == 1;
}());
// Runner-up of vertex 0: configuration 0 with the others at 1 costs 1 + 5 + 1 + 2 = 9, with
// all at 0 costs 1 + 3 + 2 = 6: 1 more than the optimum.
static_assert([] {
  const auto r = wp::pase_search(chain);
  return r.has_runner_ups && r.runner_ups[0].config == 0 && r.runner_ups[0].delta == 1;
}());

constexpr double diamond_cost = wp::pase_search(diamond).cost;
static_assert(diamond_cost == brute_force(diamond));
static_assert(wp::pase_search(diamond).max_dependent_set == 2);
static_assert(wp::pase_search(diamond, {.runner_ups = false}).cost == diamond_cost);
// The fallback (here: tables over the limit) is constexpr too, and returns a valid strategy.
static_assert([] {
  const auto r = wp::pase_search(diamond, {.max_table_bytes = 1});
  return !r.proven_optimal && r.stop == wp::search_stop::table_limit && r.cost >= diamond_cost;
}());

}  // namespace

TEST_CASE("search: constexpr graphs (checked at compile time, again at run time)",
          "[optimize][search][constexpr]") {
  REQUIRE(wp::pase_search(chain).cost == 5);
  REQUIRE(wp::pase_search(diamond).cost == brute_force(diamond));
  STATIC_REQUIRE(chain_cost == 5);
  STATIC_REQUIRE(diamond_cost == brute_force(diamond));
}
