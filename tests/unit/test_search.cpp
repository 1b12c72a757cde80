// The strategy search (optimize/search.hpp) against brute force on many small random graphs:
// optimal cost, the returned assignment's own cost, the runner-ups (min-marginals), the
// time-budget and table-limit fallbacks; and the cost-table reader (io/table_reader.hpp):
// good input, any JSON number, whitespace, key order, and every error with its byte offset, in
// memory and streamed through a small window as a .json.gz is (the readers under a memory
// limit: test_reader_memory.cpp).

#include <catch2/catch.hpp>

#include <workpart/optimize/cost_graph.hpp>
#include <workpart/optimize/search.hpp>
#include <workpart/optimize/tied_search.hpp>
#include <workpart/io/table_reader.hpp>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/graph_concepts.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/range/iterator_range.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
#include <zlib.h>
#endif

namespace wp = workpart;
using Catch::Contains;

namespace {

/// The text of the wp::error that f throws (empty if none).
template <class F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const wp::error& e) {
    return e.what();
  }
  return {};
}

constexpr double inf = std::numeric_limits<double>::infinity();

/// A cost_table_graph without the span fast paths and with anything the concept allows
/// (self-loops, both directions, repeated edges): the generic path of the search.
struct plain_graph {
  std::vector<std::vector<double>> vc;                  // [v][k]
  std::vector<std::pair<std::size_t, std::size_t>> es;  // (u, v)
  std::vector<std::vector<double>> ec;                  // [e][ku * K_v + kv]
  std::size_t num_vertices() const { return vc.size(); }
  std::size_t num_edges() const { return es.size(); }
  std::size_t num_configs(std::size_t v) const { return vc[v].size(); }
  double vertex_cost(std::size_t v, std::size_t k) const { return vc[v][k]; }
  std::size_t edge_source(std::size_t e) const { return es[e].first; }
  std::size_t edge_target(std::size_t e) const { return es[e].second; }
  double edge_cost(std::size_t e, std::size_t ku, std::size_t kv) const {
    return ec[e][ku * vc[es[e].second].size() + kv];
  }
};
static_assert(wp::cost_table_graph<plain_graph>);

enum class shape { chain, tree, diamond, skip, dag, dense, forest };
const char* shape_name(shape s) {
  switch (s) {
    case shape::chain:
      return "chain";
    case shape::tree:
      return "tree";
    case shape::diamond:
      return "diamond";
    case shape::skip:
      return "skip";
    case shape::dag:
      return "dag";
    case shape::dense:
      return "dense";
    case shape::forest:
      return "forest";
  }
  return "?";
}

/// Edges of a graph of n vertices of the given shape (u < v unless reversed at random).
std::vector<std::pair<std::size_t, std::size_t>> make_edges(shape s, std::size_t n,
                                                            std::mt19937_64& rng) {
  std::vector<std::pair<std::size_t, std::size_t>> e;
  std::uniform_real_distribution<double> U(0, 1);
  switch (s) {
    case shape::chain:
      for (std::size_t i = 1; i < n; ++i) e.push_back({i - 1, i});
      break;
    case shape::tree:
      for (std::size_t i = 1; i < n; ++i) e.push_back({std::size_t(rng() % i), i});
      break;
    case shape::diamond:  // repeated diamonds: a -> b, a -> c, b -> d, c -> d, then d is the next a
      for (std::size_t a = 0; a + 1 < n; a += 3) {
        const std::size_t b = a + 1, c = a + 2, d = a + 3;
        e.push_back({a, b});
        if (c < n) e.push_back({a, c});
        if (d < n) e.push_back({b, d});
        if (c < n && d < n) e.push_back({c, d});
        if (c < n && d >= n) e.push_back({b, c});
      }
      break;
    case shape::skip:  // a chain with residual edges i -> i+2 and i -> i+3
      for (std::size_t i = 1; i < n; ++i) e.push_back({i - 1, i});
      for (std::size_t i = 0; i + 2 < n; ++i)
        if (U(rng) < 0.6) e.push_back({i, i + 2 + std::size_t(i + 3 < n && U(rng) < 0.4)});
      break;
    case shape::dag:
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
          if (U(rng) < 0.35) e.push_back({i, j});
      break;
    case shape::dense:
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
          if (U(rng) < 0.8) e.push_back({i, j});
      break;
    case shape::forest:  // two components and maybe isolated vertices
      for (std::size_t i = 2; i < n; ++i)
        if (U(rng) < 0.8) e.push_back({i - 2, i});
      break;
  }
  for (auto& x : e)
    if (U(rng) < 0.3) std::swap(x.first, x.second);
  return e;
}

/// Random costs: small integers (many ties; sums are exact) or reals spread over decades.
double draw(std::mt19937_64& rng, bool integers) {
  if (integers) return double(rng() % 6);
  std::uniform_real_distribution<double> U(0, 1);
  return std::pow(10.0, 4 * U(rng)) * U(rng);
}

wp::cost_graph random_graph(shape s, std::size_t n, std::size_t max_k, bool integers,
                            std::mt19937_64& rng) {
  wp::cost_graph g;
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t k = 1 + rng() % max_k;
    std::vector<double> c(k);
    for (auto& x : c) x = draw(rng, integers);
    g.add_vertex("v" + std::to_string(v), std::move(c));
  }
  for (auto [u, v] : make_edges(s, n, rng)) {
    std::vector<double> c(g.num_configs(u) * g.num_configs(v));
    for (auto& x : c) x = draw(rng, integers);
    g.add_edge(u, v, std::move(c));
  }
  return g;
}

/// Every assignment: the optimum and, per vertex and configuration, the best total cost
/// with the vertex in that configuration (min-marginals).
struct brute {
  double best = inf;
  std::vector<std::vector<double>> mm;
};

template <class G>
double cost_of(const G& g, const std::vector<std::size_t>& a) {
  double c = 0;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) c += g.vertex_cost(v, a[v]);
  for (std::size_t e = 0; e < g.num_edges(); ++e)
    c += g.edge_cost(e, a[g.edge_source(e)], a[g.edge_target(e)]);
  return c;
}

template <class G>
brute brute_force(const G& g) {
  const std::size_t n = g.num_vertices();
  brute b;
  b.mm.resize(n);
  for (std::size_t v = 0; v < n; ++v) b.mm[v].assign(g.num_configs(v), inf);
  std::vector<std::size_t> a(n, 0);
  while (true) {
    const double c = cost_of(g, a);
    b.best = std::min(b.best, c);
    for (std::size_t v = 0; v < n; ++v) b.mm[v][a[v]] = std::min(b.mm[v][a[v]], c);
    std::size_t i = 0;
    while (i < n && ++a[i] == g.num_configs(i)) a[i++] = 0;
    if (i == n) break;
  }
  return b;
}

bool close(double x, double y) {
  return x == y || std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y));
}

/// The checks every exact search must pass against brute force.
template <class G>
void check_exact(const G& g, bool integers, const wp::search_result& r) {
  const brute b = brute_force(g);
  REQUIRE(r.proven_optimal);
  REQUIRE(r.stop == wp::search_stop::none);
  REQUIRE(r.eliminated == g.num_vertices());
  REQUIRE(r.config.size() == g.num_vertices());
  for (std::size_t v = 0; v < g.num_vertices(); ++v) REQUIRE(r.config[v] < g.num_configs(v));
  // The reported cost is the assignment's own, summed as here; its parts add up.
  REQUIRE(r.cost == cost_of(g, r.config));
  for (std::size_t v = 0; v < g.num_vertices(); ++v)
    REQUIRE(r.vertex_cost[v] == g.vertex_cost(v, r.config[v]));
  for (std::size_t e = 0; e < g.num_edges(); ++e)
    REQUIRE(r.edge_cost[e] ==
            g.edge_cost(e, r.config[g.edge_source(e)], r.config[g.edge_target(e)]));
  if (integers)
    REQUIRE(r.cost == b.best);
  else
    REQUIRE(close(r.cost, b.best));
  // Runner-ups: the best total with the vertex forced off its configuration.
  REQUIRE(r.has_runner_ups);
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    INFO("vertex " << v);
    double expect = inf;
    for (std::size_t k = 0; k < g.num_configs(v); ++k)
      if (k != r.config[v]) expect = std::min(expect, b.mm[v][k]);
    const auto& ru = r.runner_ups[v];
    if (g.num_configs(v) == 1) {
      REQUIRE(ru.config == wp::runner_up::npos);
      continue;
    }
    REQUIRE(ru.config != r.config[v]);
    REQUIRE(ru.config < g.num_configs(v));
    if (integers) {
      REQUIRE(b.mm[v][ru.config] == expect);
      REQUIRE(ru.delta == expect - b.best);
      REQUIRE(ru.cost == expect);
    } else {
      REQUIRE(close(b.mm[v][ru.config], expect));
      REQUIRE(close(ru.cost, expect));
      REQUIRE(std::abs(ru.delta - (expect - b.best)) <= 1e-9 * std::abs(b.best) + 1e-12);
    }
  }
}

std::size_t assignments(const wp::cost_graph& g) {
  std::size_t p = 1;
  for (std::size_t v = 0; v < g.num_vertices(); ++v) p *= g.num_configs(v);
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------- search

TEST_CASE("search: equals brute force on random graphs of every shape", "[optimize][search]") {
  std::mt19937_64 rng(20240917);
  const shape shapes[] = {shape::chain, shape::tree,  shape::diamond, shape::skip,
                          shape::dag,   shape::dense, shape::forest};
  int graphs = 0;
  for (shape s : shapes)
    for (std::size_t n = 1; n <= 8; ++n)
      for (int rep = 0; rep < 6; ++rep) {
        const bool integers = rep % 2 == 0;
        // up to 6 configurations, fewer on the larger graphs to keep brute force small
        const std::size_t max_k = n <= 5 ? 6 : (n <= 6 ? 5 : (n == 7 ? 4 : 3));
        const wp::cost_graph g = random_graph(s, n, max_k, integers, rng);
        INFO(shape_name(s) << " n=" << n << " rep=" << rep << " assignments=" << assignments(g));
        check_exact(g, integers, wp::pase_search(g));
        ++graphs;
      }
  REQUIRE(graphs == 7 * 8 * 6);
}

TEST_CASE("search: tied vertices take one configuration; equals brute force over tied strategies",
          "[optimize][search][tied]") {
  std::mt19937_64 rng(20261129);
  int checked = 0;
  for (shape s : {shape::chain, shape::skip, shape::dag, shape::dense, shape::forest})
    for (std::size_t n = 2; n <= 7; ++n)
      for (int rep = 0; rep < 5; ++rep) {
        const bool integers = rep % 2 == 0;
        // Groups first (each vertex tied to an earlier one or free), then one K per group.
        std::vector<std::size_t> tied(n);
        for (std::size_t v = 0; v < n; ++v) tied[v] = v > 0 && rng() % 3 == 0 ? tied[rng() % v] : v;
        std::vector<std::size_t> K(n);
        for (std::size_t v = 0; v < n; ++v) K[v] = tied[v] == v ? 1 + rng() % 4 : K[tied[v]];
        wp::cost_graph g;
        for (std::size_t v = 0; v < n; ++v) {
          std::vector<double> c(K[v]);
          for (auto& x : c) x = draw(rng, integers);
          g.add_vertex("v" + std::to_string(v), std::move(c));
        }
        for (auto [u, v] : make_edges(s, n, rng)) {
          std::vector<double> c(K[u] * K[v]);
          for (auto& x : c) x = draw(rng, integers);
          g.add_edge(u, v, std::move(c));
        }
        INFO(shape_name(s) << " n=" << n << " rep=" << rep);
        // Brute force over the strategies that respect the ties: the best and, per vertex and
        // configuration, the best with the vertex there.
        double best = inf;
        std::vector<std::vector<double>> mm(n);
        for (std::size_t v = 0; v < n; ++v) mm[v].assign(K[v], inf);
        std::vector<std::size_t> a(n, 0);
        for (;;) {
          bool ok = true;
          for (std::size_t v = 0; v < n; ++v) ok = ok && a[v] == a[tied[v]];
          if (ok) {
            const double c = cost_of(g, a);
            best = std::min(best, c);
            for (std::size_t v = 0; v < n; ++v) mm[v][a[v]] = std::min(mm[v][a[v]], c);
          }
          std::size_t v = 0;
          while (v < n && ++a[v] == K[v]) a[v++] = 0;
          if (v == n) break;
        }
        const wp::search_result r = wp::detail::tied_pase_search(g, tied);
        REQUIRE(r.proven_optimal);
        REQUIRE(close(r.cost, best));
        REQUIRE(close(cost_of(g, r.config), r.cost));
        REQUIRE(r.vertex_cost.size() == n);
        REQUIRE(r.edge_cost.size() == g.num_edges());
        for (std::size_t v = 0; v < n; ++v) REQUIRE(r.config[v] == r.config[tied[v]]);
        REQUIRE(r.has_runner_ups);
        for (std::size_t v = 0; v < n; ++v) {
          const auto& ru = r.runner_ups[v];
          if (K[v] == 1) {
            REQUIRE(ru.config == wp::runner_up::npos);
            continue;
          }
          REQUIRE(ru.config != r.config[v]);
          REQUIRE(close(ru.cost, mm[v][ru.config]));
          for (std::size_t k = 0; k < K[v]; ++k)
            if (k != r.config[v]) REQUIRE(mm[v][ru.config] <= mm[v][k] + 1e-9 * std::abs(mm[v][k]));
        }
        ++checked;
      }
  REQUIRE(checked == 5 * 6 * 5);

  wp::cost_graph g;
  g.add_vertex("a", {1.0, 2.0});
  g.add_vertex("da", {1.0, 2.0, 3.0});
  REQUIRE_THAT(what_of([&] {
                 wp::detail::tied_pase_search(g, {0, 0});
               }),
               Contains("'da' has 3 configurations, 'a' 2"));
  REQUIRE_THAT(what_of([&] {
                 wp::detail::tied_pase_search(g, {1, 0});
               }),
               Contains("not its group's representative"));
  REQUIRE_THAT(what_of([&] { wp::detail::tied_pase_search(g, {0}); }), Contains("1 ties for 2"));
}

TEST_CASE("search: the min-plus kernels (scalar, SSE2, AVX2, AVX-512) agree",
          "[optimize][search]") {
  namespace pase = wp::detail::pase;
  std::mt19937_64 rng(31);
  for (bool two : {false, true})
    for (std::size_t K : {1, 2, 7, 33})
      for (std::size_t J : {1, 3, 4, 8, 15, 16, 17, 31, 32, 33, 70}) {
        INFO("two=" << two << " K=" << K << " J=" << J);
        std::vector<double> b(K), C(K * J), D(K * J);
        for (auto& x : b) x = double(rng() % 7);  // small integers: many ties (the first k wins)
        for (auto& x : C) x = double(rng() % 7);
        for (auto& x : D) x = double(rng() % 3) * 0.1;
        if (K > 2) C[J] = inf;
        const double* d = two ? D.data() : nullptr;
        std::vector<double> v0(J), v1(J);
        std::vector<std::uint16_t> a0(J), a1(J);
        pase::block_min_scalar(b.data(), C.data(), d, K, J, v0.data(), a0.data(), J);
        for (std::size_t j = 0; j < J; ++j) {  // against the definition
          double best = inf;
          std::size_t arg = 0;
          for (std::size_t k = 0; k < K; ++k) {
            const double s = b[k] + (C[k * J + j] + (two ? D[k * J + j] : 0.0));
            if (s < best) {
              best = s;
              arg = k;
            }
          }
          REQUIRE(v0[j] == best);
          REQUIRE(a0[j] == arg);
        }
        // The runner-up pass's kernel: every sum and each row's minimum.
        std::vector<double> o(J), X0(K * J), X1(K * J), lo0(K), lo1(K);
        for (auto& x : o) x = double(rng() % 5);
        pase::block_rows_scalar(b.data(), C.data(), d, o.data(), K, J, X0.data(), lo0.data(), J);
        for (std::size_t k = 0; k < K; ++k) {
          double m = inf;
          for (std::size_t j = 0; j < J; ++j) {
            const double x = b[k] + (C[k * J + j] + (two ? D[k * J + j] : 0.0)) + o[j];
            REQUIRE(X0[k * J + j] == x);
            m = std::min(m, x);
          }
          REQUIRE(lo0[k] == m);
        }
        auto same = [&] {
          REQUIRE(v0 == v1);
          REQUIRE(a0 == a1);
          REQUIRE(X0 == X1);
          REQUIRE(lo0 == lo1);
          std::fill(X1.begin(), X1.end(), -1.0);
          std::fill(lo1.begin(), lo1.end(), -1.0);
        };
        pase::block_rows(b.data(), C.data(), d, o.data(), K, J, X1.data(), lo1.data());
        pase::block_min(b.data(), C.data(), d, K, J, v1.data(), a1.data());
        same();
#if WORKPART_PASE_SIMD
        pase::block_min_sse2(b.data(), C.data(), d, K, J, v1.data(), a1.data());
        pase::block_rows_sse2(b.data(), C.data(), d, o.data(), K, J, X1.data(), lo1.data());
        same();
        if (__builtin_cpu_supports("avx2")) {
          pase::block_min_avx2(b.data(), C.data(), d, K, J, v1.data(), a1.data());
          pase::block_rows_avx2(b.data(), C.data(), d, o.data(), K, J, X1.data(), lo1.data());
          same();
        }
        if (__builtin_cpu_supports("avx512f")) {
          pase::block_min_avx512(b.data(), C.data(), d, K, J, v1.data(), a1.data());
          pase::block_rows_avx512(b.data(), C.data(), d, o.data(), K, J, X1.data(), lo1.data());
          same();
        }
#endif
      }
}

TEST_CASE("search: ties everywhere (all costs equal or zero)", "[optimize][search]") {
  std::mt19937_64 rng(7);
  for (double value : {0.0, 1.0}) {
    wp::cost_graph g;
    for (int v = 0; v < 6; ++v) g.add_vertex("v", std::vector<double>(3, value));
    for (auto [u, v] : make_edges(shape::dag, 6, rng))
      g.add_edge(u, v, std::vector<double>(9, value));
    check_exact(g, true, wp::pase_search(g));
  }
}

TEST_CASE("search: the generic graph path, self-loops, both directions, repeated edges",
          "[optimize][search]") {
  std::mt19937_64 rng(99);
  for (int rep = 0; rep < 40; ++rep) {
    plain_graph g;
    const std::size_t n = 1 + rng() % 6;
    for (std::size_t v = 0; v < n; ++v) {
      g.vc.emplace_back(1 + rng() % 4);
      for (auto& x : g.vc.back()) x = draw(rng, true);
    }
    const std::size_t m = rng() % 10;
    for (std::size_t e = 0; e < m; ++e) {
      const std::size_t u = rng() % n, v = rng() % n;  // u == v and repeats allowed here
      g.es.push_back({u, v});
      g.ec.emplace_back(g.vc[u].size() * g.vc[v].size());
      for (auto& x : g.ec.back()) x = draw(rng, true);
    }
    INFO("rep " << rep);
    check_exact(g, true, wp::pase_search(g));
  }
}

TEST_CASE("search: dependent sets follow the paper (fewest unprocessed neighbours first)",
          "[optimize][search]") {
  // A chain processes its ends first: every dependent set holds one neighbour.
  wp::cost_graph chain;
  for (int v = 0; v < 5; ++v) chain.add_vertex("c", {1, 2});
  for (std::size_t v = 1; v < 5; ++v) chain.add_edge(v - 1, v, {0, 1, 1, 0});
  const auto r = wp::pase_search(chain);
  REQUIRE(r.max_dependent_set == 1);
  REQUIRE(r.order.size() == 5);
  REQUIRE((r.order.front() == 0 || r.order.front() == 4));
  REQUIRE(r.largest_table_rows == 2);
  // A 4-clique: the first vertex depends on the other three, a table of 2*3*4 rows.
  wp::cost_graph clique;
  for (int v = 0; v < 4; ++v) clique.add_vertex("q", std::vector<double>(std::size_t(v) + 2, 0.0));
  for (std::size_t u = 0; u < 4; ++u)
    for (std::size_t v = u + 1; v < 4; ++v)
      clique.add_edge(u, v, std::vector<double>((u + 2) * (v + 2), 1.0));
  const auto q = wp::pase_search(clique);
  REQUIRE(q.order.front() == 0);  // all have 3 neighbours and the same work: the first goes first
  REQUIRE(q.dependent_set[0] == std::vector<std::size_t>{1, 2, 3});
  REQUIRE(q.largest_table_rows == 3 * 4 * 5);
  REQUIRE(q.cost == 6);
}

TEST_CASE("search: empty graph and single vertex", "[optimize][search]") {
  const auto r0 = wp::pase_search(wp::cost_graph{});
  REQUIRE(r0.proven_optimal);
  REQUIRE(r0.cost == 0);
  REQUIRE(r0.config.empty());
  wp::cost_graph g;
  g.add_vertex("only", {3, 1, 2});
  const auto r = wp::pase_search(g);
  REQUIRE(r.config == std::vector<std::size_t>{1});
  REQUIRE(r.runner_ups[0].config == 2);
  REQUIRE(r.runner_ups[0].delta == 1);
}

TEST_CASE("search: infinite costs (forbidden configurations)", "[optimize][search]") {
  wp::cost_graph g;
  g.add_vertex("a", {inf, 5, 1});
  g.add_vertex("b", {2, inf});
  g.add_edge(0, 1, {0, 0, 0, 0, inf, 0});  // a=2 with b=0 is forbidden
  const auto r = wp::pase_search(g);
  REQUIRE(r.cost == 7);  // a=1 (5), b=0 (2)
  REQUIRE(r.config == std::vector<std::size_t>{1, 0});
  REQUIRE(r.runner_ups[1].cost == inf);  // b = 1 is forbidden
  REQUIRE(r.runner_ups[0].config == 0);  // a = 0 and a = 2 both forbidden: cost inf
  REQUIRE(r.runner_ups[0].cost == inf);
}

TEST_CASE("search: without runner-ups", "[optimize][search]") {
  std::mt19937_64 rng(5);
  const auto g = random_graph(shape::skip, 8, 4, true, rng);
  const auto r = wp::pase_search(g, {.runner_ups = false});
  REQUIRE(r.proven_optimal);
  REQUIRE_FALSE(r.has_runner_ups);
  REQUIRE(r.cost == brute_force(g).best);
}

TEST_CASE("search: the time budget and the table limit return a valid strategy, flagged",
          "[optimize][search]") {
  std::mt19937_64 rng(11);
  for (int rep = 0; rep < 10; ++rep) {
    const auto g = random_graph(rep % 2 ? shape::dag : shape::skip, 8, 4, true, rng);
    const double best = brute_force(g).best;
    int calls = 0;
    auto counting = [&](const wp::search_progress& p) {
      ++calls;
      REQUIRE(p.vertices_total == 8);
    };
    const auto full = wp::pase_search(g, {}, counting);
    REQUIRE(calls >= 8);  // at least once per vertex, in each pass
    REQUIRE(full.cost == best);
    // Budget 0 stops before the ordering is done: no table, no progress call.
    calls = 0;
    const auto r = wp::pase_search(g, {.time_budget_seconds = 0}, counting);
    REQUIRE(calls == 0);
    REQUIRE_FALSE(r.proven_optimal);
    REQUIRE(r.stop == wp::search_stop::time_budget);
    REQUIRE_FALSE(r.has_runner_ups);
    REQUIRE(r.eliminated == 0);
    REQUIRE(r.order.size() < 8);
    REQUIRE(r.cost == cost_of(g, r.config));
    REQUIRE(r.cost >= best);
    const auto t = wp::pase_search(g, {.max_table_bytes = 1});
    REQUIRE_FALSE(t.proven_optimal);
    REQUIRE(t.stop == wp::search_stop::table_limit);
    REQUIRE(t.eliminated == 0);
    REQUIRE(t.cost == cost_of(g, t.config));
    REQUIRE(t.cost >= best);
  }
}

TEST_CASE("search: the elimination order is the cheaper of two greedy orders, kept in heaps",
          "[optimize][search]") {
  // The orders by their definitions, the slow way: at each step the alive vertex with the
  // fewest alive neighbours (in the graph with the fill-in of earlier steps), then the smallest
  // table K_v * prod K_neighbours, then the lowest number (the paper's); or the smallest table
  // first, then the lowest number. The search keeps the one whose tables hold fewer entries
  // (the sum of the chosen tables' sizes), the paper's where they tie.
  struct reference_order {
    std::vector<std::size_t> order;
    double work = 0;
  };
  auto reference = [](const wp::cost_graph& g, bool fewest_neighbours) {
    const std::size_t n = g.num_vertices();
    std::vector<std::vector<char>> adj(n, std::vector<char>(n, 0));
    for (std::size_t e = 0; e < g.num_edges(); ++e) {
      const std::size_t u = g.edge_source(e), v = g.edge_target(e);
      if (u != v) adj[u][v] = adj[v][u] = 1;
    }
    std::vector<char> alive(n, 1);
    reference_order out;
    for (std::size_t step = 0; step < n; ++step) {
      std::size_t best = n, best_deg = 0;
      double best_size = 0;
      for (std::size_t v = 0; v < n; ++v) {
        if (!alive[v]) continue;
        std::size_t deg = 0;
        double size = double(g.num_configs(v));
        for (std::size_t w = 0; w < n; ++w)
          if (alive[w] && adj[v][w]) {
            ++deg;
            size *= double(g.num_configs(w));
          }
        if (!fewest_neighbours) deg = 0;
        if (best == n || deg < best_deg || (deg == best_deg && size < best_size)) {
          best = v;
          best_deg = deg;
          best_size = size;
        }
      }
      alive[best] = 0;
      out.order.push_back(best);
      out.work += best_size;
      std::vector<std::size_t> nb;
      for (std::size_t w = 0; w < n; ++w)
        if (alive[w] && adj[best][w]) nb.push_back(w);
      for (std::size_t a : nb)
        for (std::size_t b : nb)
          if (a != b) adj[a][b] = 1;
    }
    return out;
  };
  std::mt19937_64 rng(5);
  int smallest_kept = 0;
  for (int rep = 0; rep < 40; ++rep) {
    const shape sh = shape(rep % 7);
    const auto g = random_graph(sh, 3 + std::size_t(rep) % 14, 4, true, rng);
    INFO(shape_name(sh) << ", " << g.num_vertices() << " vertices");
    const reference_order paper = reference(g, true), smallest = reference(g, false);
    const bool second = smallest.work < paper.work;
    smallest_kept += second;
    const wp::search_result r = wp::pase_search(g, {.runner_ups = false});
    REQUIRE(r.order == (second ? smallest : paper).order);
    REQUIRE(r.cost == cost_of(g, r.config));
  }
  REQUIRE(smallest_kept > 0);  // both kinds of choice are checked
  REQUIRE(smallest_kept < 40);
}

TEST_CASE("search: with no time left, the greedy strategy and nothing after it",
          "[optimize][search]") {
  // A budget of 0: the elimination stops at once and the fallback's later steps (local
  // search, restricted searches) do not start; what remains is the greedy pass, computed
  // here independently: vertices in order, each to its cheapest configuration given the
  // vertices set before it (ties to the lower configuration).
  std::mt19937_64 rng(23);
  for (int rep = 0; rep < 12; ++rep) {
    const auto g = random_graph(rep % 2 ? shape::dense : shape::dag, 9, 5, false, rng);
    const std::size_t n = g.num_vertices();
    std::vector<std::size_t> greedy(n, 0);
    for (std::size_t v = 0; v < n; ++v) {
      double best = inf;
      for (std::size_t k = 0; k < g.num_configs(v); ++k) {
        double c = g.vertex_cost(v, k);
        for (std::size_t e = 0; e < g.num_edges(); ++e) {
          const std::size_t a = g.edge_source(e), b = g.edge_target(e);
          if (a == v && b < v) c += g.edge_cost(e, k, greedy[b]);
          if (b == v && a < v) c += g.edge_cost(e, greedy[a], k);
        }
        if (c < best) {
          best = c;
          greedy[v] = k;
        }
      }
    }
    const auto r = wp::pase_search(g, {.time_budget_seconds = 0});
    REQUIRE(r.stop == wp::search_stop::time_budget);
    REQUIRE(r.config == greedy);
  }
}

TEST_CASE("search: a budget that runs out in the tables still uses them", "[optimize][search]") {
  // The progress callback sleeps past the budget after the 4th vertex, so the search stops
  // there whatever the machine's speed. The vertices not eliminated keep the fallback's
  // configurations; the eliminated ones must then be optimal given those (their tables are
  // read once, whatever time is left): the cost equals brute force over the strategies that
  // agree with the result on the vertices not eliminated.
  std::mt19937_64 rng(23);
  for (int rep = 0; rep < 10; ++rep) {
    const auto g = random_graph(rep % 2 ? shape::dag : shape::skip, 8, 4, true, rng);
    auto slow = [](const wp::search_progress& p) {
      if (p.phase == wp::search_phase::eliminate && p.vertices_done == 4)
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    };
    const auto r = wp::pase_search(g, {.time_budget_seconds = 0.2}, slow);
    REQUIRE(r.stop == wp::search_stop::time_budget);
    REQUIRE(r.order.size() == 8);
    REQUIRE(r.eliminated == 4);
    std::vector<char> fixed(8, 0);
    for (std::size_t t = r.eliminated; t < 8; ++t) fixed[r.order[t]] = 1;
    double best = inf;
    std::vector<std::size_t> a(8, 0);
    while (true) {
      bool agrees = true;
      for (std::size_t v = 0; v < 8; ++v) agrees &= !fixed[v] || a[v] == r.config[v];
      if (agrees) best = std::min(best, cost_of(g, a));
      std::size_t i = 0;
      while (i < 8 && ++a[i] == g.num_configs(i)) a[i++] = 0;
      if (i == 8) break;
    }
    REQUIRE(r.cost == cost_of(g, r.config));
    REQUIRE(r.cost == best);
  }
}

TEST_CASE("search: a long chain with wide tables (larger than brute force can check)",
          "[optimize][search]") {
  // Exact by construction: the cheapest configuration of every vertex is k = v % K and every
  // edge charges 0 for the pair (v % K, (v+1) % K), 1 otherwise (plus skip edges, all 0 on it).
  const std::size_t n = 60, K = 12;
  wp::cost_graph g;
  for (std::size_t v = 0; v < n; ++v) {
    std::vector<double> c(K, 3.0);
    c[v % K] = 1.0;
    g.add_vertex("v", std::move(c));
  }
  auto edge = [&](std::size_t u, std::size_t v) {
    std::vector<double> c(K * K, 1.0);
    c[(u % K) * K + v % K] = 0.0;
    g.add_edge(u, v, std::move(c));
  };
  for (std::size_t v = 1; v < n; ++v) edge(v - 1, v);
  for (std::size_t v = 3; v < n; v += 2) edge(v - 3, v);
  const auto r = wp::pase_search(g);
  REQUIRE(r.proven_optimal);
  REQUIRE(r.cost == double(n));
  for (std::size_t v = 0; v < n; ++v) {
    REQUIRE(r.config[v] == v % K);
    REQUIRE(r.runner_ups[v].delta >= 2.0);  // any other configuration costs 2 more at least
  }
  REQUIRE(r.max_dependent_set >= 2);
}

TEST_CASE("search: errors for a bad graph", "[optimize][search]") {
  plain_graph g;
  g.vc = {{1.0}, {}};
  REQUIRE_THROWS_AS(wp::pase_search(g), wp::shape_error);
  g.vc = {{1.0}, {2.0}};
  g.es = {{0, 5}};
  g.ec = {{0.0}};
  REQUIRE_THAT(what_of([&] { wp::pase_search(g); }),
               Contains("[workpart.table_error]") && Contains("edge 0"));
  g.es = {{0, 1}};
  g.ec = {{std::nan("")}};
  REQUIRE_THAT(what_of([&] { wp::pase_search(g); }), Contains("NaN"));
}

// ---------------------------------------------------------------------------- cost_graph

TEST_CASE("cost_graph: Boost.Graph storage and its checks", "[optimize][tables]") {
  wp::cost_graph g;
  const auto a = g.add_vertex("a", {1, 2}, {{1, 2}, {2, 1}});
  const auto b = g.add_vertex("b", {1, 2, 3});
  REQUIRE(g.add_edge(a, b, {0, 1, 2, 3, 4, 5}) == 0);
  REQUIRE(boost::num_edges(g.graph()) == 1);
  REQUIRE(g.edge_cost(0, 1, 2) == 5);
  REQUIRE(g.config_string(a, 1) == "(2,1)");
  REQUIRE(g.config_string(b, 1) == "#1");
  REQUIRE(g.total_configs() == 5);
  REQUIRE_THAT(what_of([&] { g.add_edge(a, b, std::vector<double>(6)); }),
               Contains("a second edge"));
  REQUIRE_THAT(what_of([&] { g.add_edge(b, a, std::vector<double>(5)); }),
               Contains("[workpart.shape_error]") && Contains("expected 3 x 2"));
  REQUIRE_THAT(what_of([&] { g.add_edge(a, 7, {}); }), Contains("does not exist"));
  REQUIRE_THAT(what_of([&] { g.add_edge(a, a, {1, 2, 3, 4}); }), Contains("to itself"));
  REQUIRE_THAT(what_of([&] { g.add_vertex("c", {}); }), Contains("at least one configuration"));
  REQUIRE_THAT(what_of([&] {
                 g.add_vertex("c", {1, 2}, {{1}, {1, 2}});
               }),
               Contains("different lengths"));
  REQUIRE_THAT(what_of([&] {
                 g.add_vertex("c", {1, 2}, {{1}});
               }),
               Contains("1 configurations but 2 costs"));
  // Copies and moves keep nothing that points into the source graph.
  std::mt19937_64 rng(17);
  auto make = [&] { return random_graph(shape::dag, 6, 4, true, rng); };
  wp::cost_graph src = make();
  const double best = wp::pase_search(src).cost;
  wp::cost_graph copy = src;
  wp::cost_graph moved = std::move(src);
  src = make();  // reuse the moved-from graph
  std::vector<wp::cost_graph> many;
  for (int i = 0; i < 8; ++i) many.push_back(copy);  // reallocations move the graphs
  REQUIRE(wp::pase_search(copy).cost == best);
  REQUIRE(wp::pase_search(moved).cost == best);
  REQUIRE(wp::pase_search(many.back()).cost == best);
  REQUIRE(many.front().num_edges() == copy.num_edges());
  for (std::size_t e = 0; e < copy.num_edges(); ++e)
    REQUIRE(many.front().graph()[many.front().edge_at(e)].index == e);
}

TEST_CASE("cost_graph: a Boost.Graph that BGL's algorithms run on", "[optimize][tables]") {
  BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<wp::cost_graph>));
  BOOST_CONCEPT_ASSERT((boost::EdgeListGraphConcept<wp::cost_graph>));
  BOOST_CONCEPT_ASSERT((boost::BidirectionalGraphConcept<wp::cost_graph>));
  // b -> a -> c, b -> c, c -> d: one topological order, b a c d.
  wp::cost_graph g;
  const auto a = g.add_vertex("a", {1}), b = g.add_vertex("b", {1, 2});
  const auto c = g.add_vertex("c", {1}), d = g.add_vertex("d", {3});
  g.add_edge(b, a, {0, 0});
  g.add_edge(a, c, {0});
  g.add_edge(b, c, {0, 0});
  g.add_edge(c, d, {0});
  std::vector<std::size_t> order;
  std::vector<boost::default_color_type> color(g.num_vertices());
  boost::topological_sort(g, std::back_inserter(order),
                          boost::color_map(boost::make_iterator_property_map(
                              color.begin(), boost::identity_property_map())));
  REQUIRE(order == std::vector<std::size_t>{d, c, a, b});  // reverse topological order
  REQUIRE(boost::out_degree(b, g) == 2);
  REQUIRE(boost::in_degree(c, g) == 2);
  REQUIRE(boost::degree(a, g) == 2);
  std::vector<std::size_t> targets;
  for (auto e : boost::make_iterator_range(boost::out_edges(b, g)))
    targets.push_back(boost::target(e, g));
  REQUIRE(targets == std::vector<std::size_t>{a, c});
  std::size_t n = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    REQUIRE(g[e].index == n);
    REQUIRE(boost::source(e, g) == g.edge_source(n));
    ++n;
  }
  REQUIRE(n == 4);
  REQUIRE(g[d].cost == std::vector<double>{3});
  REQUIRE(boost::edge(b, c, g).second);
  REQUIRE(g[boost::edge(b, c, g).first].index == 2);
  REQUIRE_FALSE(boost::edge(c, b, g).second);
  // Breadth-first from b reaches every vertex.
  std::vector<boost::default_color_type> bfs_color(g.num_vertices());
  boost::breadth_first_search(g, b,
                              boost::color_map(boost::make_iterator_property_map(
                                  bfs_color.begin(), boost::identity_property_map())));
  for (auto col : bfs_color) REQUIRE(col == boost::black_color);
}

// ---------------------------------------------------------------------------- reader

namespace {

void require_same(const wp::cost_graph& x, const wp::cost_graph& y) {
  REQUIRE(x.num_vertices() == y.num_vertices());
  REQUIRE(x.num_edges() == y.num_edges());
  for (std::size_t v = 0; v < x.num_vertices(); ++v) {
    REQUIRE(x.name(v) == y.name(v));
    REQUIRE(x.num_configs(v) == y.num_configs(v));
    for (std::size_t k = 0; k < x.num_configs(v); ++k) {
      REQUIRE(x.vertex_cost(v, k) == y.vertex_cost(v, k));
      REQUIRE(x.config_string(v, k) == y.config_string(v, k));
    }
  }
  for (std::size_t e = 0; e < x.num_edges(); ++e) {
    REQUIRE(x.edge_source(e) == y.edge_source(e));
    REQUIRE(x.edge_target(e) == y.edge_target(e));
    const auto a = x.edge_costs(e), b = y.edge_costs(e);
    REQUIRE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
}

/// A text handed to the scanner in pieces of 1 to 7 bytes, as a gzip'd file's is inflated
/// into its window: with a window of 16 bytes, refills fall at every kind of position.
struct piecewise_source final : wp::detail::tables::text_source {
  std::string_view text;
  std::size_t at = 0;
  std::mt19937 rng{7};
  explicit piecewise_source(std::string_view t) : text(t) {}
  std::size_t read(char* out, std::size_t room) override {
    const std::size_t n = std::min({room, text.size() - at, std::size_t(1 + rng() % 7)});
    std::copy_n(text.data() + at, n, out);
    at += n;
    return n;
  }
  std::size_t bound() const override { return text.size() - at; }
};

/// parse_cost_tables(text, "t.json") scanned through a window of `window` bytes.
wp::cost_graph parse_streamed(const std::string& text, std::size_t window = 16) {
  piecewise_source src(text);
  wp::detail::tables::scanner s(src, "t.json", window);
  return wp::detail::tables::scan_guarded(s, "cost tables", wp::detail::tables::parse);
}

/// The message of the error parsing `text` throws, and checks its type; scanned through a
/// small window, the same error with the same message (byte offsets included).
template <class E>
std::string parse_error(const std::string& text) {
  std::string what;
  try {
    wp::parse_cost_tables(text, "t.json");
  } catch (const E& e) {
    what = e.what();
  } catch (const std::exception& e) {
    FAIL("wrong exception type: " << e.what());
  }
  if (what.empty()) FAIL("no exception for: " << text);
  for (std::size_t window : {16, 17, 64}) {
    try {
      parse_streamed(text, window);
      FAIL("no exception, streamed through a window of " << window << ", for: " << text);
    } catch (const E& e) {
      REQUIRE(e.what() == what);
    }
  }
  return what;
}

/// "byte N" where N is the offset of `marker` in `text`.
std::string byte_of(const std::string& text, const std::string& marker) {
  return "t.json: byte " + std::to_string(text.find(marker)) + ":";
}

}  // namespace

TEST_CASE("reader: a written graph reads back equal, and searches the same", "[optimize][tables]") {
  std::mt19937_64 rng(3);
  for (int rep = 0; rep < 10; ++rep) {
    wp::cost_graph g = random_graph(shape::skip, 7, 5, rep % 2 == 0, rng);
    wp::cost_graph h;  // with tuples and an awkward name
    for (std::size_t v = 0; v < g.num_vertices(); ++v) {
      std::vector<std::vector<std::int64_t>> t;
      for (std::size_t k = 0; k < g.num_configs(v); ++k) t.push_back({std::int64_t(k + 1), 1, 2});
      const auto c = g.vertex_costs(v);
      h.add_vertex("n\"\\" + std::to_string(v) + "\n\xc3\xa9", {c.begin(), c.end()}, t);
    }
    for (std::size_t e = 0; e < g.num_edges(); ++e) {
      const auto c = g.edge_costs(e);
      h.add_edge(g.edge_source(e), g.edge_target(e), {c.begin(), c.end()});
    }
    const std::string text = wp::write_cost_tables(h);
    const wp::cost_graph back = wp::parse_cost_tables(text);
    require_same(h, back);
    require_same(h, parse_streamed(text));
    REQUIRE(wp::pase_search(back).cost == wp::pase_search(h).cost);
  }
}

TEST_CASE("reader: any JSON number, whitespace anywhere, keys in any order, unknown keys",
          "[optimize][tables]") {
  const std::string text =
      " \n\t{ \"comment\" : {\"nested\": [1, {\"x\": null}, true, false, \"s\\\"\"], \"e\": "
      "-1.5e-3},\r\n"
      "  \"edges\" :[ { \"cost\" : [ [ 1e3 , -2.5E-1 ] , [0,\n 1.0e+2] , [ 7 , 0.5 ] ] ,\"v\":1 , "
      "\"u\" : 0 } ] ,\n"
      "  \"vertices\" : [ {\"cost\":[ 1E0 , 2 , 3.25 ] , \"configs\" : [ [1, 1] ,[ 2,1 "
      "],[1e0,2.0]],"
      " \"name\":\"a\\u00e9\\ud83d\\ude00\\/\" } ,\n"
      "    { \"name\" : \"b\" , \"extra\": [[[]]], \"cost\" : [ 0 , -0.0 ] } , {\"cost\":[5]} ]\n"
      "} \n ";
  const wp::cost_graph g = wp::parse_cost_tables(text);
  REQUIRE(g.num_vertices() == 3);
  REQUIRE(g.name(0) == "a\xc3\xa9\xf0\x9f\x98\x80/");
  REQUIRE(g.name(2) == "v2");
  REQUIRE(g.config_string(0, 2) == "(1,2)");
  REQUIRE(g.config_string(1, 0) == "#0");
  REQUIRE(g.vertex_cost(0, 2) == 3.25);
  REQUIRE(g.num_edges() == 1);
  REQUIRE(g.edge_cost(0, 0, 0) == 1000);
  REQUIRE(g.edge_cost(0, 0, 1) == -0.25);
  REQUIRE(g.edge_cost(0, 1, 1) == 100);
  REQUIRE(g.edge_cost(0, 2, 1) == 0.5);
  for (std::size_t window : {16, 17, 64}) require_same(g, parse_streamed(text, window));
  REQUIRE(wp::parse_cost_tables("{\"vertices\":[]}").num_vertices() == 0);
  REQUIRE(wp::parse_cost_tables("{\"edges\":[],\"vertices\":[{\"cost\":[1]}]}").num_vertices() ==
          1);
}

TEST_CASE("reader: a text streamed through a small window reads as it does in memory",
          "[optimize][tables]") {
  // tokens longer than the window (which then grows), escapes and literals across refills,
  // long runs of whitespace (which must not stay in the window)
  const std::string name(1000, 'n'), blanks(5000, ' ');
  const std::string text = "{" + blanks + "\"x\": [true, false, null, \"\\u00e9\\ud83d\\ude00\"]," +
                           blanks + "\"vertices\": [{\"name\": \"" + name +
                           "\\\"\\n\", \"cost\": [1.000000000000000000000000000000001, "
                           "-0.25e-300, 12345678901234567890123]," +
                           blanks + "\"configs\": [[1,2],[3,4],[5,6]]}, {\"cost\": [7]}]," +
                           blanks + "\"edges\": [{\"u\": 0, \"v\": 1, \"cost\": [[1],[2],[3]]}]}" +
                           blanks;
  const wp::cost_graph g = wp::parse_cost_tables(text);
  REQUIRE(g.name(0) == name + "\"\n");
  REQUIRE(g.vertex_cost(0, 2) == 12345678901234567890123.0);
  for (std::size_t window : {16, 17, 31, 64, 4096}) require_same(g, parse_streamed(text, window));
  // errors at the same offsets, with the same words
  using E = wp::table_error;
  std::string t = "{\"vertices\": [{\"name\": \"ab\\u00\"}]}";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "\\u00")) && Contains("invalid \\u escape"));
  t = "{\"vertices\": [{\"name\": \"ab\\u00";
  REQUIRE_THAT(parse_error<E>(t), Contains("truncated \\u escape"));
  t = "{\"vertices\": [{\"name\": \"" + name + "\\";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "\"nnn")) && Contains("unterminated string"));
  t = "{\"vertices\": [{\"cost\": [1], \"configs\": [[" + blanks + "2.5e0" + blanks + "]]}]}";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "2.5e0")) &&
                                      Contains("expected an integer in a configuration tuple, "
                                               "found 2.5e0"));
  t = "{\"vertices\": [{\"cost\": [1.0000000000000000000000x]}]}";
  REQUIRE_THAT(parse_error<E>(t), Contains("malformed number '1.0000000000000000000000x'"));
  t = "{\"x\": tru" + blanks;
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "tru")) && Contains("expected a JSON value"));
  t = "{\"vertices\": []}" + blanks + "x";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "x")) && Contains("after the end"));
  t = "{\"vertices\": [" + blanks;
  REQUIRE_THAT(parse_error<E>(t), Contains("byte " + std::to_string(t.size()) + ":") &&
                                      Contains("the end of the file"));
}

TEST_CASE("reader: malformed JSON is a table_error with the byte offset", "[optimize][tables]") {
  using E = wp::table_error;
  std::string t = R"({"vertices": [{"cost": [1, 2] "name": "a"}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "\"name\"")) && Contains("expected ',' or '}'"));
  t = R"({"vertices": [{"cost": [1, 2.5.1]}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "2.5.1")) && Contains("malformed number '2.5.1'"));
  t = R"({"vertices": [{"cost": [1, nan]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "nan")) && Contains("expected a number"));
  t = R"({"vertices": [{"cost": [1e999]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains("out of the range of a double"));
  t = R"({"vertices": [{"cost": [+1]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "+1")));
  t = R"({"vertices": [{"name": "abc]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "\"abc")) && Contains("unterminated string"));
  t = "";
  REQUIRE_THAT(parse_error<E>(t), Contains("byte 0:") && Contains("the end of the file"));
  t = R"({"vertices": []} x)";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "x")) && Contains("after the end"));
  t = R"({"vertices": [{"cost": [1], "cost": [2]}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "\"cost\": [2]")) && Contains("appears twice"));
  t = R"({"vertices": [{"name": "a"}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "{\"name\"")) && Contains("has no \"cost\""));
  t = R"({"edges": []})";
  REQUIRE_THAT(parse_error<E>(t), Contains("no \"vertices\""));
  t = R"({"vertices": [{"cost": [1], "configs": [[1.5]]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "1.5")) && Contains("expected an integer"));
  t = R"({"vertices": [{"cost": [1]}], "edges": [{"u": 0.5, "v": 0, "cost": [[1]]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "0.5")) && Contains("expected an integer"));
  t = "{\"vertices\": [{\"name\": \"a\tb\", \"cost\": [1]}]}";
  REQUIRE_THAT(parse_error<E>(t), Contains("control character"));
  t = R"({"vertices": [{"name": "a\qb", "cost": [1]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains("invalid escape"));
}

TEST_CASE("reader: edges to unknown vertices, duplicates, self-loops", "[optimize][tables]") {
  using E = wp::table_error;
  const std::string two = R"({"vertices": [{"cost": [1, 2]}, {"cost": [3]}], "edges": [)";
  std::string t = two + R"({"u": 0, "v": 2, "cost": [[1], [2]]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "2, \"cost")) &&
                                      Contains("\"v\": 2 is not a vertex") &&
                                      Contains("there are 2"));
  t = two + R"({"u": -1, "v": 1, "cost": [[1], [2]]}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "-1")) && Contains("\"u\": -1 is not a vertex"));
  t = two + R"({"u": 0, "v": 1, "cost": [[1], [2]]}, {"u": 0, "v": 1, "cost": [[1], [2]]}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "{\"u\": 0, \"v\": 1, \"cost\": [[1], [2]]}]")) &&
                   Contains("edge 1") && Contains("duplicates edge 0"));
  t = two + R"({"u": 1, "v": 1, "cost": [[1]]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains("to itself"));
  t = two + R"({"v": 1, "cost": [[1], [2]]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains("has no \"u\""));
  // edges before vertices: checked once the vertices are known
  t = R"({"edges": [{"u": 0, "v": 3, "cost": [[1]]}], "vertices": [{"cost": [1]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "3, \"cost")));
}

TEST_CASE("reader: wrong shapes are shape_errors with the byte offset", "[optimize][tables]") {
  using E = wp::shape_error;
  const std::string two = R"({"vertices": [{"cost": [1, 2]}, {"cost": [3, 4, 5]}], "edges": [)";
  std::string t = two + R"({"u": 0, "v": 1, "cost": [[1, 2], [3, 4], [5, 6]]}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "{\"u\"")) && Contains("cost matrix is 3 x 2, expected 2 x 3"));
  t = two + R"({"u": 0, "v": 1, "cost": [[1, 2, 3], [4, 5]]}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains(byte_of(t, "[4, 5]")) &&
                                      Contains("row 1 of the cost matrix has 2 entries"));
  t = R"({"vertices": [{"cost": [1, 2], "configs": [[1, 1], [2]]}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "[2]")) && Contains("configuration 1 has 1 factors"));
  t = R"({"vertices": [{"cost": [1, 2], "configs": [[1, 1]]}]})";
  REQUIRE_THAT(parse_error<E>(t),
               Contains(byte_of(t, "{\"cost\"")) && Contains("1 configurations but 2 costs"));
  t = R"({"vertices": [{"cost": []}]})";
  REQUIRE_THAT(parse_error<E>(t), Contains("empty \"cost\" list"));
}

TEST_CASE("reader: sizes a file claims are not allocations", "[optimize][tables]") {
  // Two vertices of 100000 configurations (a 400 KB file) and an edge whose matrix is empty:
  // reserving the 100000 x 100000 matrix the sizes claim (80 GB) before reading it was a bare
  // std::bad_alloc (an abort under ASan); the reader reserves no more than the rest of the file
  // can hold and reports the shape.
  const std::size_t K = 100000;
  std::string t = "{\"vertices\": [";
  for (int v = 0; v < 2; ++v) {
    t += v ? ", {\"cost\": [" : "{\"cost\": [";
    for (std::size_t k = 0; k < K; ++k) t += k ? ",0" : "0";
    t += "]}";
  }
  t += "], \"edges\": [{\"u\": 0, \"v\": 1, \"cost\": []}]}";
  REQUIRE_THAT(what_of([&] { wp::parse_cost_tables(t, "claims.json"); }),
               Contains("[workpart.shape_error]") && Contains("claims.json: byte") &&
                   Contains("cost matrix is 0 x 0, expected 100000 x 100000"));
}

TEST_CASE("reader: files, gzip", "[optimize][tables]") {
  REQUIRE_THAT(what_of([] { wp::read_cost_tables("/nonexistent/tables.json"); }),
               Contains("[workpart.table_error]") && Contains("cannot open") &&
                   Contains("/nonexistent/tables.json"));
  wp::cost_graph g;
  g.add_vertex("a", {1, 2}, {{1}, {2}});
  g.add_vertex("b", {0.5, 0.25});
  g.add_edge(0, 1, {1, 2, 3, 4});
  const std::string text = wp::write_cost_tables(g);
  const std::string plain = "test_search_tables.json";
  {
    std::FILE* f = std::fopen(plain.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  require_same(g, wp::read_cost_tables(plain));
  std::remove(plain.c_str());
  const std::string gz = "test_search_tables.json.gz";
#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
  {
    gzFile f = gzopen(gz.c_str(), "wb");
    REQUIRE(f);
    gzwrite(f, text.data(), unsigned(text.size()));
    gzclose(f);
  }
  require_same(g, wp::read_cost_tables(gz));
  {  // truncated
    std::FILE* f = std::fopen(gz.c_str(), "rb");
    std::string bytes(4096, '\0');
    bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
    std::fclose(f);
    f = std::fopen(gz.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size() / 2, f);
    std::fclose(f);
  }
  REQUIRE_THAT(what_of([&] { wp::read_cost_tables(gz); }), Contains("cannot gunzip"));
  {  // a gzip bomb: 8 MB of blanks in a valid file, read under a 1 MB cap
    gzFile f = gzopen(gz.c_str(), "wb9");
    REQUIRE(f);
    const std::string blanks(1 << 20, ' ');
    gzwrite(f, "{", 1);
    for (int k = 0; k < 8; ++k) gzwrite(f, blanks.data(), unsigned(blanks.size()));
    gzwrite(f, "\"vertices\": []}", 15);
    gzclose(f);
  }
  REQUIRE_THAT(what_of([&] { wp::read_cost_tables(gz, {.max_inflated_bytes = 1 << 20}); }),
               Contains("[workpart.table_error]") && Contains(gz) &&
                   Contains("inflates to more than 1048576 bytes"));
  REQUIRE(wp::read_cost_tables(gz).num_vertices() == 0);  // under the default cap it reads
  {  // two gzip members (gzip -c a b > c) read as one text, streamed across the window
    const std::size_t mid = text.size() / 2;
    gzFile f = gzopen(gz.c_str(), "wb");
    REQUIRE(f);
    gzwrite(f, text.data(), unsigned(mid));
    gzclose(f);
    f = gzopen(gz.c_str(), "ab");
    REQUIRE(f);
    const std::string blanks(1 << 20, ' ');  // four windows of them between the halves
    gzwrite(f, blanks.data(), unsigned(blanks.size()));
    gzwrite(f, text.data() + mid, unsigned(text.size() - mid));
    gzclose(f);
  }
  require_same(g, wp::read_cost_tables(gz));
  {  // an error past the first window: its offset in the inflated text
    const std::string bad =
        "{" + std::string(700000, '\n') + "\"vertices\": [{\"cost\": [1, 2.5.1]}]}";
    gzFile f = gzopen(gz.c_str(), "wb");
    REQUIRE(f);
    gzwrite(f, bad.data(), unsigned(bad.size()));
    gzclose(f);
    REQUIRE_THAT(what_of([&] { wp::read_cost_tables(gz); }),
                 Contains(gz + ": byte " + std::to_string(bad.find("2.5.1")) + ":") &&
                     Contains("malformed number '2.5.1'"));
  }
  {  // a claimed uncompressed size (ISIZE) of 4 GiB on a small file: not reserved, and the
     // wrong length is zlib's error
    std::FILE* f = std::fopen(gz.c_str(), "rb");
    std::string bytes(1 << 16, '\0');
    bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
    std::fclose(f);
    for (std::size_t k = bytes.size() - 4; k < bytes.size(); ++k) bytes[k] = '\xff';
    f = std::fopen(gz.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  REQUIRE_THAT(what_of([&] { wp::read_cost_tables(gz); }), Contains("cannot gunzip"));
#else
  {
    std::FILE* f = std::fopen(gz.c_str(), "wb");
    std::fwrite("\x1f\x8b\x08\x00", 1, 4, f);
    std::fclose(f);
  }
  REQUIRE_THAT(what_of([&] { wp::read_cost_tables(gz); }), Contains("gzip -dk"));
#endif
  std::remove(gz.c_str());
}
