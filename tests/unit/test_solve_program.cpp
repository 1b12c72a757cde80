// solve_program (plan/program.hpp) through wp::plan_on_paper(program, schedule, P), no MPI, at
// virtual rank counts up to 4096: the bytes each rank sends and receives between the maps, in
// the partial combines, from root's remainders and in the gathers, against counts made here
// element by element (plain loops over the blocks, not the planner's boxes). The same plans
// run under mpirun in tests/mpi/test_plan_on_paper.cpp, where every rank's measured bytes must
// equal these predictions.

#include <catch2/catch.hpp>

#include <workpart/optimize/describe.hpp>
#include <workpart/workpart.hpp>

#include <string>
#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace {

/// Block x of n split into g balanced blocks: [start, end) (the first n % g one larger).
std::pair<index_t, index_t> block(index_t n, index_t g, index_t x) {
  const index_t q = n / g, rem = n % g;
  const index_t start = x * q + std::min(x, rem);
  return {start, start + q + (x < rem ? 1 : 0)};
}
index_t len(std::pair<index_t, index_t> b) { return b.second - b.first; }
bool in(std::pair<index_t, index_t> b, index_t v) { return b.first <= v && v < b.second; }

/// The redistribution or combine of `array` whose kind starts with `kind` (empty: none).
const wp::paper_program::redistribution* find(const wp::paper_program& p, const std::string& array,
                                              const std::string& kind) {
  for (const auto& r : p.redistributions)
    if (r.array == array && r.kind.rfind(kind, 0) == 0) return &r;
  return nullptr;
}
index_t sum(const std::vector<index_t>& v) {
  index_t t = 0;
  for (index_t x : v) t += x;
  return t;
}

}  // namespace

TEST_CASE("solve_program: a chain whose layout turns (rows, then columns)",
          "[unit][plan][program]") {
  constexpr index_t I = 7, J = 5;
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> x("x", {I, J}), y("y", {I, J}), z("z", {I, J});
  auto m1 = wp::map("rows", wp::space(I, J), y(i, j) = x(i, j) + 1.0);
  auto m2 = wp::map("cols", wp::space(I, J), z(i, j) = y(i, j) * 3.0);
  for (int P : {1, 2, 3, 4}) {
    INFO(P << " ranks");
    wp::schedule s;
    s.set(m1, wp::grid_shape{P, 1}).set(m2, wp::grid_shape{1, P});
    const wp::paper_program p = wp::plan_on_paper(wp::program(m1, m2), s, P);
    REQUIRE(int(p.ranks.size()) == P);
    index_t total = 0;
    for (int r = 0; r < P; ++r) {
      // rank r reads y's column block; it wrote its row block of y: the rest comes from others
      index_t want = 0;
      for (index_t a = 0; a < I; ++a)
        for (index_t b = 0; b < J; ++b)
          if (in(block(J, P, r), b) && !in(block(I, P, r), a)) want += 8;
      CHECK(p.ranks[r].first_received == want);
      CHECK(p.ranks[r].steady_received == want);
      total += want;
      // root scatters x's row blocks, gathers y's row blocks and z's column blocks
      CHECK(p.ranks[r].scatter_received == (r == 0 ? 0 : len(block(I, P, r)) * J * 8));
      CHECK(p.ranks[r].gather_sent ==
            (r == 0 ? 0 : (len(block(I, P, r)) * J + I * len(block(J, P, r))) * 8));
    }
    index_t sent = 0;
    for (int r = 0; r < P; ++r) sent += p.ranks[r].first_sent;
    CHECK(sent == total);
    CHECK(p.rank_to_rank_first == total);
    if (P > 1) {
      REQUIRE(find(p, "y", "Alltoallw") != nullptr);
      CHECK(sum(find(p, "y", "Alltoallw")->first_received) == total);
    }
  }
}

TEST_CASE("solve_program: a stencil's halo, up to 4096 ranks", "[unit][plan][program]") {
  auto [i] = wp::indices<1>();
  for (int P : {1, 2, 3, 4, 7, 64, 4096}) {
    const index_t n = P > 64 ? 3 * index_t(P) + 5 : 13;
    wp::array<double, 1> x("x", {n}), y("y", {n}), z("z", {n});
    auto m1 = wp::map("make", wp::space(n), y(i) = x(i) * 2.0);
    auto m2 = wp::map("smooth", wp::space({1, n - 1}), z(i) = y(i - 1) + y(i + 1));
    INFO(P << " ranks, n " << n);
    wp::schedule s;
    s.set(m1, wp::grid_shape{P}).set(m2, wp::grid_shape{P});
    const wp::paper_program p = wp::plan_on_paper(wp::program(m1, m2), s, P);
    index_t total = 0;
    bool ok = true;
    for (int r = 0; r < P; ++r) {
      const auto held = block(n, P, r);
      const auto rb = block(n - 2, P, r);  // the smoothing block, of the space [1, n - 1)
      const index_t lo = 1 + rb.first, hi = 1 + rb.second;
      index_t want = 0;
      if (hi > lo)
        for (index_t e = lo - 1; e < hi + 1; ++e)  // it reads y(i - 1) and y(i + 1)
          if (!in(held, e)) want += 8;
      ok = ok && p.ranks[r].first_received == want;
      total += want;
    }
    CHECK(ok);
    CHECK(p.rank_to_rank_first == total);
    if (P > 1) {
      REQUIRE(find(p, "y", "halo exchange") != nullptr);
      CHECK(sum(find(p, "y", "halo exchange")->first_received) == total);
    }
  }
}

TEST_CASE("solve_program: partial results combined by Allreduce, reduce-scatter or Reduce",
          "[unit][plan][program]") {
  constexpr index_t I = 7, K = 6, J = 5;
  auto [i, k] = wp::indices<2>();
  wp::array<double, 2> x("x", {I, K}), z("z", {I, J});
  wp::array<double, 1> h("h", {I});
  // each rank sums its block of k into the whole h: partial results over the k split
  auto sum_k = wp::map("sum_k", wp::space(I, K), h(i) += x(i, k));
  auto use_h = wp::map("use_h", wp::space(I, J), z(i, k) = h(i) * 2.0);
  struct want_kind {
    const char* kind;
    wp::grid_shape reader;
  };
  for (int P : {1, 2, 3, 4}) {
    const want_kind cases[] = {
        {"Allreduce(sum)", wp::grid_shape{1, P}},       // every rank reads all of h
        {"reduce-scatter(sum)", wp::grid_shape{P, 1}},  // each rank reads its rows of h
        {"Reduce(sum)", wp::grid_shape{1, 1}},          // only rank 0 reads h
    };
    for (const auto& c : cases) {
      INFO(P << " ranks, reader grid " << c.reader.str());
      wp::schedule s;
      s.set(sum_k, wp::grid_shape{1, P}).set(use_h, c.reader);
      const wp::paper_program p = wp::plan_on_paper(wp::program(sum_k, use_h), s, P);
      const auto* comb = find(p, "h", c.kind);
      if (P == 1) {  // nothing is split
        CHECK(find(p, "h", "Allreduce") == nullptr);
        CHECK(find(p, "h", "Reduce") == nullptr);
        CHECK(find(p, "h", "reduce-scatter") == nullptr);
        CHECK(p.rank_to_rank_first == 0);
        continue;
      }
      REQUIRE(comb != nullptr);
      std::vector<index_t> want(std::size_t(P), 0);
      for (int r = 0; r < P; ++r) {
        if (std::string(c.kind) == "Allreduce(sum)")
          want[r] = r == 0 ? (P - 1) * I * 8 : I * 8;
        else if (std::string(c.kind) == "Reduce(sum)")
          want[r] = r == 0 ? (P - 1) * I * 8 : 0;
        else
          want[r] = (P - 1) * len(block(I, P, r)) * 8;  // every other member's share of r's rows
      }
      CHECK(comb->first_received == want);
      // the values are where the reader needs them: nothing else moves
      CHECK(p.rank_to_rank_first == sum(want));
    }
  }
}

TEST_CASE("solve_program: a chain of += maps on the same boxes combines its partial sums once",
          "[unit][plan][program]") {
  // h(i) += x1(i, k), then h(i) += x2(i, k), both with k split over every rank, then only rank
  // 0 reads h: the first passes its partial sums on (each member adds the second's onto a local
  // copy), and the second's are reduced onto rank 0 once -- (P - 1) I doubles where a combine
  // after each moved twice that. Not where the second map's boxes or groups differ, where its
  // op differs, or where a map reads h between them.
  constexpr index_t I = 7, K = 6, J = 5;
  auto [i, k] = wp::indices<2>();
  wp::array<double, 2> x1("x1", {I, K}), x2("x2", {I, K}), z("z", {I, J}), y("y", {I, J});
  wp::array<double, 1> h("h", {I});
  auto sum1 = wp::map("sum1", wp::space(I, K), h(i) += x1(i, k));
  auto sum2 = wp::map("sum2", wp::space(I, K), h(i) += x2(i, k));
  auto max2 = wp::map("max2", wp::space(I, K), wp::max_into(h(i), x2(i, k)));
  auto read = wp::map("read", wp::space(I, J), y(i, k) = h(i) * 3.0);
  auto use = wp::map("use", wp::space(I, J), z(i, k) = h(i) * 2.0);
  auto combines = [](const wp::paper_program& p) {
    int n = 0;
    for (const auto& r : p.redistributions)
      n += r.array == "h" &&
           (r.kind.rfind("Allreduce(", 0) == 0 || r.kind.rfind("reduce-scatter(", 0) == 0 ||
            r.kind.rfind("Reduce(", 0) == 0);
    return n;
  };
  for (int P : {1, 2, 3, 4, 8, 64}) {
    INFO(P << " ranks");
    const wp::grid_shape split{1, P}, rows{P, 1}, one{1, 1};
    wp::schedule s;
    s.set(sum1, split).set(sum2, split).set(use, one);
    const wp::paper_program p = wp::plan_on_paper(wp::program(sum1, sum2, use), s, P);
    const auto* kept = find(p, "h", "kept");
    if (P == 1) {  // nothing is split
      CHECK(kept == nullptr);
      CHECK(combines(p) == 0);
      CHECK(p.rank_to_rank_first == 0);
      continue;
    }
    REQUIRE(kept != nullptr);
    CHECK(kept->kind == "kept (partial results passed on, combined after 'sum2')");
    CHECK(kept->from == "'sum1'");
    CHECK(kept->to == "'sum2'");
    CHECK(sum(kept->first_received) + sum(kept->received) + sum(kept->first_sent) +
              sum(kept->sent) ==
          0);
    CHECK(combines(p) == 1);
    const auto* reduce = find(p, "h", "Reduce(sum)");
    REQUIRE(reduce != nullptr);
    std::vector<index_t> want(std::size_t(P), 0);
    want[0] = (P - 1) * I * 8;  // every other member's partial sums, once
    CHECK(reduce->first_received == want);
    CHECK(reduce->received == want);
    CHECK(p.rank_to_rank_first == (P - 1) * I * 8);
    CHECK(p.rank_to_rank_later == (P - 1) * I * 8);
    for (int r = 1; r < P; ++r) CHECK(p.ranks[std::size_t(r)].steady_sent == I * 8);

    // the second map's rows split (no partial sums): sum1's are combined
    wp::schedule s2;
    s2.set(sum1, split).set(sum2, rows).set(use, one);
    const wp::paper_program p2 = wp::plan_on_paper(wp::program(sum1, sum2, use), s2, P);
    CHECK(find(p2, "h", "kept") == nullptr);
    CHECK(combines(p2) == 1);
    // another op: each combined
    wp::schedule s3;
    s3.set(sum1, split).set(max2, split).set(use, one);
    const wp::paper_program p3 = wp::plan_on_paper(wp::program(sum1, max2, use), s3, P);
    CHECK(find(p3, "h", "kept") == nullptr);
    CHECK(combines(p3) == 2);
    // a map reads h between them: each combined
    wp::schedule s4;
    s4.set(sum1, split).set(read, one).set(sum2, split).set(use, one);
    const wp::paper_program p4 = wp::plan_on_paper(wp::program(sum1, read, sum2, use), s4, P);
    CHECK(find(p4, "h", "kept") == nullptr);
    CHECK(combines(p4) == 2);
  }
}

TEST_CASE("solve_program: the backward of three projections split over the heads combines dx once",
          "[unit][plan][program]") {
  // Q, K and V = x W (three maps, heads split), a loss of all three, and wp::backward's maps
  // on the same grids: dv, dk and dq each add their heads' part of dx, and the first two
  // pass their partial sums on -- one combine of dx, after dq, where there were three.
  constexpr index_t B = 4, E = 6, H = 3, D = 2;
  auto [b, h, d, e] = wp::indices<4>();
  wp::array<double, 2> x("x", {B, E}), dx("dx", {B, E});
  wp::array<double, 3> Wq("Wq", {E, H, D}), Wk("Wk", {E, H, D}), Wv("Wv", {E, H, D}),
      Q("Q", {B, H, D}), K("K", {B, H, D}), V("V", {B, H, D});
  wp::array<double, 0> loss("loss", {});
  auto q = wp::map("q", wp::space(B, H, D, E), Q(b, h, d) += x(b, e) * Wq(e, h, d));
  auto k = wp::map("k", wp::space(B, H, D, E), K(b, h, d) += x(b, e) * Wk(e, h, d));
  auto v = wp::map("v", wp::space(B, H, D, E), V(b, h, d) += x(b, e) * Wv(e, h, d));
  auto l = wp::map("l", wp::space(B, H, D), loss() += Q(b, h, d) * K(b, h, d) * V(b, h, d));
  auto fwd = wp::program(q, k, v, l);
  const auto step = wp::program(fwd, wp::backward(fwd, loss, wp::wrt(x, dx)));
  const auto desc = wp::describe(step);
  for (int P : {2, 3}) {
    INFO(P << " ranks");
    wp::schedule s;  // every map's heads over the ranks (H = 3: the only extent of 3)
    for (const auto& m : desc.maps) {
      std::vector<index_t> g(m.extents.size(), 1);
      for (std::size_t a = 0; a < g.size(); ++a)
        if (m.extents[a] == H) g[a] = P;
      s.set(m.name, wp::grid_shape(g));
    }
    const wp::paper_program p = wp::plan_on_paper(step, s, P);
    int kept = 0, combines = 0;
    for (const auto& r : p.redistributions) {
      if (r.array != "dx") continue;
      if (r.kind.rfind("kept", 0) == 0) {
        ++kept;
        CHECK(r.kind == "kept (partial results passed on, combined after 'dq')");
        CHECK(sum(r.first_received) + sum(r.received) == 0);
      }
      combines += r.kind.rfind("Allreduce(", 0) == 0 || r.kind.rfind("reduce-scatter(", 0) == 0 ||
                  r.kind.rfind("Reduce(", 0) == 0;
    }
    CHECK(kept == 2);
    CHECK(combines == 1);
  }
}

TEST_CASE("solve_program: root sends only what no earlier map wrote", "[unit][plan][program]") {
  constexpr index_t n = 17, half = 8;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n}), y("y", {n}), z("z", {n});
  auto part = wp::map("part", wp::space(half), y(i) = x(i) * 2.0);  // y[0, half) only
  auto all = wp::map("all", wp::space(n), z(i) = y(i) + 1.0);
  for (int P : {1, 2, 3, 4}) {
    INFO(P << " ranks");
    wp::schedule s;
    s.set(part, wp::grid_shape{P}).set(all, wp::grid_shape{P});
    const wp::paper_program p = wp::plan_on_paper(wp::program(part, all), s, P);
    index_t moved = 0;
    for (int r = 0; r < P; ++r) {
      index_t from_root = 0, from_ranks = 0;
      for (index_t e = block(n, P, r).first; e < block(n, P, r).second; ++e) {
        if (e >= half)
          from_root += r == 0 ? 0 : 8;  // root's values of y
        else if (!in(block(half, P, r), e))
          from_ranks += 8;
      }
      // root's scatter: x's block for 'part', and y's unwritten part for 'all'
      const index_t x_part = r == 0 ? 0 : len(block(half, P, r)) * 8;
      CHECK(p.ranks[r].scatter_received == x_part + from_root);
      CHECK(p.ranks[r].first_received == from_ranks);
      moved += from_ranks;
    }
    CHECK(p.rank_to_rank_first == moved);
    CHECK(p.explain.find("only the parts no earlier map writes") != std::string::npos);
  }
}

TEST_CASE("plan_on_paper(program): refuses what distribute refuses",
          "[unit][plan][program][errors]") {
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {5}), y("y", {5});
  auto m1 = wp::map("a", wp::space(5), y(i) = x(i));
  auto m2 = wp::map("b", wp::space(5), x(i) = y(i));
  wp::schedule s;
  s.set(m1, wp::grid_shape{2});
  REQUIRE_THROWS_AS(wp::plan_on_paper(wp::program(m1, m2), s, 2),
                    wp::grid_error);  // 'b' has no grid
  s.set(m2, wp::grid_shape{3});
  REQUIRE_THROWS_AS(wp::plan_on_paper(wp::program(m1, m2), s, 2), wp::grid_error);  // 3 > 2 ranks
  s.set(m2, wp::grid_shape{2});
  REQUIRE_THROWS_AS(wp::plan_on_paper(wp::program(m1, m2), s, 0), wp::grid_error);
  REQUIRE_NOTHROW(wp::plan_on_paper(wp::program(m1, m2), s, 2));
}

namespace {

/// Every grid of each map, the maps solved on them (as the optimizer solves its candidates).
struct solved_candidates {
  std::vector<std::vector<wp::detail::map_solution>> of;  // [map][grid]
};
solved_candidates solve_candidates(const wp::program& p, int P) {
  solved_candidates s;
  wp::config_options co;
  co.use_all_ranks = false;
  for (const auto& m : wp::detail::priced_views(p)) {
    s.of.emplace_back();
    for (const auto& g : wp::detail::grid_configurations(m.extents, P, co)) {
      try {
        auto cons = m.constraints(g, P);
        const auto generated = wp::detail::generated_flags(cons);
        s.of.back().push_back(
            wp::detail::solve_map(m.name, int(m.extents.size()), std::move(cons), g, P, generated));
      } catch (const wp::plan_error&) {
      }
    }
  }
  return s;
}

/// solve_program on one choice of grids, pricing each combine candidate from one plan or by
/// planning every candidate (program_maps::plan_every_candidate, the reference): the same
/// combines, owners and transfers, piece by piece.
int compare_candidate_pricing(const std::vector<const wp::detail::map_solution*>& chosen, int P) {
  std::vector<wp::detail::map_solution> maps;
  for (const auto* m : chosen) maps.push_back(*m);
  auto solve = [&](bool every) {
    wp::detail::program_maps in = wp::detail::program_maps_of(maps, P);
    in.plan_every_candidate = every;
    return wp::detail::solve_program(std::move(in));
  };
  std::string refused_fast, refused_ref;
  wp::detail::program_solution fast, ref;
  try {
    fast = solve(false);
  } catch (const wp::plan_error& e) {
    refused_fast = e.what();
  }
  try {
    ref = solve(true);
  } catch (const wp::plan_error& e) {
    refused_ref = e.what();
  }
  REQUIRE(refused_fast == refused_ref);
  if (!refused_ref.empty()) return 0;
  REQUIRE(fast.combines().size() == ref.combines().size());
  int modes_other_than_allreduce = 0;
  for (std::size_t c = 0; c < ref.combines().size(); ++c) {
    const auto &x = fast.combines()[c], &y = ref.combines()[c];
    CHECK(x.array == y.array);
    CHECK(x.map == y.map);
    CHECK(x.mode == y.mode);
    CHECK(fast.combine_bytes(x) == ref.combine_bytes(y));
    modes_other_than_allreduce += y.mode != wp::detail::combine_mode::all_reduce;
  }
  REQUIRE(fast.redists().size() == ref.redists().size());
  for (std::size_t x = 0; x < ref.redists().size(); ++x) {
    CHECK(fast.redists()[x].kind == ref.redists()[x].kind);
    for (int r = 0; r < P; ++r)
      for (bool first : {true, false})
        for (bool sent : {true, false})
          CHECK(fast.redist_bytes(x, r, first, sent) == ref.redist_bytes(x, r, first, sent));
  }
  CHECK(fast.rank_to_rank_total(true) == ref.rank_to_rank_total(true));
  CHECK(fast.rank_to_rank_total(false) == ref.rank_to_rank_total(false));
  return modes_other_than_allreduce;
}

}  // namespace

TEST_CASE("solve_program: a combine's candidates priced from one plan equal planning each",
          "[unit][plan][program]") {
  // split reductions into arrays read again in other layouts, by the same and later maps, and
  // one array written by two maps (its layers are both)
  constexpr index_t I = 7, K = 6, J = 5;
  auto [i, j, k] = wp::indices<3>();
  wp::array<double, 2> x("x", {I, K}), y("y", {K, J}), c("c", {I, J}), z("z", {I, J});
  wp::array<double, 1> h("h", {I});
  auto mm = wp::map("mm", wp::space(I, J, K), c(i, j) += x(i, k) * y(k, j));
  auto rows = wp::map("rows", wp::space(I, J), h(i) += c(i, j));
  auto again = wp::map("again", wp::space(I, J), c(i, j) += h(i) * 2.0);
  auto use = wp::map("use", wp::space(I, J), z(i, j) = c(i, j) + h(i));
  const auto prog = wp::program(mm, rows, again, use);
  int not_allreduce = 0, programs = 0;
  for (int P : {2, 3, 4, 6}) {
    INFO(P << " ranks");
    const auto cand = solve_candidates(prog, P);
    REQUIRE(cand.of.size() == 4);
    // every pair of grids of the first two maps (~500 programs in all), the others on grids
    // that change from one program to the next
    for (const auto& a : cand.of[0])
      for (const auto& b : cand.of[1]) {
        const auto& c = cand.of[2][std::size_t(programs) % cand.of[2].size()];
        const auto& d = cand.of[3][std::size_t(programs * 7) % cand.of[3].size()];
        INFO(a.grid.str() << " " << b.grid.str() << " " << c.grid.str() << " " << d.grid.str());
        not_allreduce += compare_candidate_pricing({&a, &b, &c, &d}, P);
        ++programs;
      }
  }
  CHECK(programs > 300);
  CHECK(not_allreduce > 20);  // the candidates other than the Allreduce do win, often
}
