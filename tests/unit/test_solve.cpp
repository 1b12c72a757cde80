// The MPI-free solver (plan/solve_array.hpp) on virtual communicators: no MPI is initialised here,
// and rank counts far above this machine's are planned. Bytes are checked against counts
// derived by hand from the balanced tiling (block sizes dealt out one element at a time).

#include <catch2/catch.hpp>

#include <workpart/plan/solve_array.hpp>
#include <workpart/workpart.hpp>

#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace {

/// Sizes of g balanced blocks of n, dealt out one element at a time.
std::vector<index_t> block_sizes(index_t n, index_t g) {
  std::vector<index_t> s(static_cast<std::size_t>(g), 0);
  for (index_t e = 0; e < n; ++e) ++s[static_cast<std::size_t>(e % g)];
  return s;
}

/// Solves every array of map m on grid g for `ranks` virtual ranks.
template <class Map>
std::vector<wp::detail::array_solution> solve(const Map& m, const wp::grid_shape& g, int ranks) {
  wp::detail::check_grid(m.name(), g, Map::rank, ranks);
  const auto cons = wp::detail::extract_constraints(m, g, ranks);
  wp::detail::validate(m.name(), cons, g, ranks);
  std::vector<wp::detail::array_solution> out;
  for (std::size_t u = 0; u < cons.arrays.size(); ++u)
    out.push_back(
        wp::detail::solve_array(cons.arrays[u], cons.read[u], cons.write[u], g, ranks, false));
  return out;
}

wp::detail::solutions view(const std::vector<wp::detail::array_solution>& v) {
  wp::detail::solutions s;
  for (const auto& a : v) s.push_back(&a);
  return s;
}

}  // namespace

TEST_CASE("solve: matmul on (P,1,1) for virtual communicators up to 1000 ranks", "[solve]") {
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t M = 1000, N = 37, K = 23;
  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
  for (int P : {1, 3, 64, 1000}) {
    INFO("P = " << P);
    const auto sol = solve(mm, wp::grid_shape{P, 1, 1}, P);
    const auto rows = block_sizes(M, P);
    // A: each rank's rows; B: whole, broadcast from root along g0; C: old values of its rows
    // in, its rows out. Root's own share moves nowhere.
    index_t scatter = 0, gather = 0;
    for (int r = 1; r < P; ++r) {
      scatter += rows[r] * K * 8 + K * N * 8 + rows[r] * N * 8;
      gather += rows[r] * N * 8;
    }
    REQUIRE(wp::detail::predicted_total(view(sol), P, true) == scatter);
    REQUIRE(wp::detail::predicted_total(view(sol), P, false) == gather);
    // rank 0 sends every scattered byte of A and C (Scatterv) and leads B's Bcast
    REQUIRE(wp::detail::predicted_bytes(view(sol), 0, true, true) == scatter);
    if (P > 1)
      REQUIRE(wp::detail::predicted_bytes(view(sol), P - 1, false, true) == rows[P - 1] * N * 8);
  }
}

TEST_CASE("solve: a split reduction on (1,P) reduces onto the leaders", "[solve]") {
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 9, C = 1000;
  wp::array<float, 2> x("x", {R, C});
  wp::array<float, 1> s("s", {R});
  auto rowsum = wp::map("rowsum", wp::space(R, C), s(i) += x(i, j));
  for (int P : {2, 7, 500}) {
    INFO("P = " << P);
    const auto sol = solve(rowsum, wp::grid_shape{1, P}, P);
    const auto& sa = sol[1].use.name == "s" ? sol[1] : sol[0];
    REQUIRE(sa.wgroup == std::vector<int>{1});
    REQUIRE(sa.out_steps.front().op == wp::detail::step_op::reduce);
    REQUIRE(sa.out_steps.front().collective == "Reduce(sum)");
    // every rank but the leader sends its partial row sums (R floats) once
    REQUIRE(sa.out_steps.front().total() == index_t(P - 1) * R * 4);
  }
  // a grid that needs more ranks than the virtual communicator has is refused
  REQUIRE_THROWS_AS(solve(rowsum, wp::grid_shape{2, 300}, 500), wp::grid_error);
}

TEST_CASE("solve: a replicated grid runs each block on its replicas, gathers replica 0's",
          "[solve][replicas]") {
  // the grid itself: the replica count is one more grid dimension after the space's
  const wp::grid_shape g = wp::grid_shape{2, 1}.replicated(3);
  REQUIRE(g.dims == std::vector<index_t>{2, 1, 3});
  REQUIRE((g.rank() == 3 && g.space_rank() == 2 && g.replicas() == 3 && g.product() == 6));
  REQUIRE(g.str() == "(2,1)x3");
  REQUIRE((g.replica_of(0) == 0 && g.replica_of(4) == 1 && g.replica_of(5) == 2));
  REQUIRE(wp::grid_shape{2, 1}.replica_of(1) == 0);
  REQUIRE(g.replicated(2) == wp::grid_shape{2, 1}.replicated(6));
  REQUIRE(wp::grid_shape{2, 1}.replicated(1) == wp::grid_shape{2, 1});
  REQUIRE_THROWS_AS((wp::grid_shape{2, 1}.replicated(0)), wp::grid_error);

  auto [i, k] = wp::indices<2>();
  constexpr index_t R = 7, C = 5;
  wp::array<double, 2> x("x", {R, C});
  wp::array<double, 2> y("y", {R, C});
  wp::array<double, 1> s("s", {R});
  auto scale = wp::map("scale", wp::space(R, C), y(i, k) = x(i, k) * 2.0);
  auto rowsum = wp::map("rowsum", wp::space(R, C), s(i) += x(i, k));
  const auto rows = block_sizes(R, 2);
  {
    // (2,1)x3 on 7 ranks: ranks 0-2 run rows [0,4), 3-5 rows [4,7), rank 6 idles
    const auto sol = solve(scale, g, 7);
    const auto& xa = sol[0].use.name == "x" ? sol[0] : sol[1];
    const auto& ya = sol[0].use.name == "y" ? sol[0] : sol[1];
    for (int r = 0; r < 6; ++r) {
      INFO("rank " << r);
      const index_t lo = r < 3 ? 0 : rows[0];
      REQUIRE(ya.wbox[std::size_t(r)].lo[0] == lo);
      REQUIRE(ya.wbox[std::size_t(r)].size() == rows[std::size_t(r / 3)] * C);
    }
    REQUIRE(ya.wbox[6].empty());
    // x: root sends replica 0 of block 1 its rows, each block's replicas get them in a Bcast
    // along the replica axis (like a BROADCAST dimension)
    REQUIRE(xa.rgroup == std::vector<int>{2});
    REQUIRE(xa.in_steps[0].received == std::vector<index_t>{0, 0, 0, rows[1] * C * 8, 0, 0, 0});
    REQUIRE(xa.in_steps[1].received == std::vector<index_t>{0, rows[0] * C * 8, rows[0] * C * 8, 0,
                                                            rows[1] * C * 8, rows[1] * C * 8, 0});
    // y: no partial results (each replica computes the whole value); root gathers replica 0's
    REQUIRE(ya.wgroup.empty());
    REQUIRE(ya.out_steps.size() == 1);
    REQUIRE(ya.out_steps[0].where == "replica 0 of each block -> root");
    REQUIRE(ya.out_steps[0].sent == std::vector<index_t>{0, 0, 0, rows[1] * C * 8, 0, 0, 0});
    REQUIRE(ya.mapping_text.find("y[PARTITION:0 on g0, REPLICATE:1] g2:REPLICAS") !=
            std::string::npos);
  }
  {
    // a split reduction under replicas: each replica's group reduces onto its own leader,
    // replica 0's leader is gathered; old values go to every replica's leader
    const auto sol = solve(rowsum, wp::grid_shape{1, 2}.replicated(2), 4);
    const auto& sa = sol[0].use.name == "s" ? sol[0] : sol[1];
    REQUIRE(sa.wgroup == std::vector<int>{1});
    REQUIRE(!sa.w_combine_on_root);
    REQUIRE(sa.init_steps[0].received == std::vector<index_t>{0, R * 8, 0, 0});
    REQUIRE(sa.out_steps[0].collective == "Reduce(sum)");
    REQUIRE(sa.out_steps[0].received == std::vector<index_t>{R * 8, R * 8, 0, 0});
    REQUIRE(sa.out_steps[1].sent == std::vector<index_t>{0, 0, 0, 0});  // root leads
  }
  // a replicated grid has one extent per space dimension, then the replica count
  REQUIRE_THROWS_WITH((solve(scale, wp::grid_shape{2}.replicated(3), 6)),
                      Catch::Contains("grid (2)x3 has rank 1 but the space has rank 2"));
  REQUIRE_THROWS_WITH((solve(scale, wp::grid_shape{2, 1}.replicated(3), 5)),
                      Catch::Contains("needs 6 ranks, communicator has 5"));
  // '=' writes that overlap between blocks (replica 0's) are still refused; a block's own
  // replicas writing the same box are not an overlap
  auto [j] = wp::indices<1>();
  auto twice = wp::map("twice", wp::space(R - 1), s(j) = x(j, 0), s(j + 1) = x(j, 1));
  REQUIRE_THROWS_WITH((solve(twice, wp::grid_shape{2}.replicated(2), 4)),
                      Catch::Contains("ranks 0 and 2 write overlapping parts of 's'"));
  REQUIRE_NOTHROW(solve(twice, wp::grid_shape{1}.replicated(4), 4));
}

TEST_CASE("solve: config_options::replicas adds the replicated all-ones candidate",
          "[solve][replicas]") {
  wp::config_options o;
  const auto plain = wp::detail::grid_configurations({4, 3}, 4, o);
  o.replicas = true;
  const auto with = wp::detail::grid_configurations({4, 3}, 4, o);
  REQUIRE(with.size() == plain.size() + 1);
  REQUIRE(with.back() == wp::grid_shape{1, 1}.replicated(4));
  REQUIRE(wp::detail::grid_configurations({4, 3}, 1, o).size() == 1);  // nothing to replicate
  o.use_all_ranks = true;
  // a space no grid splits over all ranks keeps its all-ones grid, and may be replicated too
  REQUIRE(wp::detail::grid_configurations({}, 4, o) ==
          std::vector<wp::grid_shape>{wp::grid_shape{}, wp::grid_shape{}.replicated(4)});
  o.powers_of_two = true;
  const auto three = wp::detail::grid_configurations({4, 3}, 3, o);
  REQUIRE(three == std::vector<wp::grid_shape>{wp::grid_shape{1, 1}});  // 3 is no power of two
}

TEST_CASE("solve: boxes found once per group of alike blocks are each rank's own", "[solve]") {
  // constraints_from_events finds a map without inner ranges' boxes of an array once per
  // group of ranks whose blocks agree along the dimensions its accesses use: each rank's
  // boxes must be those collect_boxes finds for the rank alone, for reads that use some of the
  // dimensions, shifted and strided reads, writes of several statements, uneven blocks and
  // more ranks than blocks
  namespace wd = wp::detail;
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t I = 7, J = 5, K = 6;
  wp::array<double, 2> A("A", {I, K}), C("C", {I + 2, J}), S("S", {I, J});
  wp::array<double, 1> v("v", {K}), w("w", {J + K});
  wp::array<double, 3> T("T", {I, J, K});
  auto m = wp::map("mixed", wp::space(I, J, K), T(i, j, k) = A(i, k) * v(k) + C(i + 2, j),
                   S(i, j) += w(j + k) * A(i, K - 1 - k));
  for (const auto& dims : std::vector<std::vector<index_t>>{{1, 1, 1},
                                                            {2, 1, 1},
                                                            {1, 3, 1},
                                                            {2, 2, 2},
                                                            {3, 1, 2},
                                                            {7, 1, 1},
                                                            {1, 1, 6},
                                                            {2, 3, 4}}) {
    const wp::grid_shape g(dims);
    for (int ranks : {int(g.product()), int(g.product()) + 2}) {
      INFO(g.str() << " on " << ranks << " ranks");
      const auto cons = wd::extract_constraints(m, g, ranks);
      const auto ev = m.access_events();
      std::vector<wd::box> reads, writes;
      for (int r = 0; r < ranks; ++r) {
        const auto& blk = cons.blocks[std::size_t(r)];
        if (blk.empty(3)) continue;
        wd::collect_boxes(cons.arrays, ev, blk, nullptr, r, reads, writes);
        for (std::size_t u = 0; u < cons.arrays.size(); ++u) {
          REQUIRE(cons.read[u][std::size_t(r)] == reads[u]);
          REQUIRE(cons.write[u][std::size_t(r)] == writes[u]);
          REQUIRE(cons.read[u][std::size_t(r)].rank == cons.arrays[u].rank);
        }
      }
    }
  }
}
