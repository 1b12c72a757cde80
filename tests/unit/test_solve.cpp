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
