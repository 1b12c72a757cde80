/// \file test_programs.cpp
/// Programs of several maps under wp::distribute, at every communicator size: chains on the
/// same grid (nothing moves), transposed grids, grids of different rank, idle ranks in one map,
/// init() inputs, a Jacobi stencil iterated with execute() (halo bytes only), softmax as three
/// maps partitioned over the leading or the last axis, and a split reduction read by the next
/// map (Reduce or Allreduce). Results are compared on root with plain loops written here; the
/// bytes moved between maps are compared with the count of elements each reader needs and
/// does not already hold, derived here from the blocks (block_of), not from the plan.

#include <limits>
#include <map>
#include <tuple>

#include "mpi_test_support.hpp"

namespace {

using namespace mpitest;
using Catch::Matchers::Contains;

/// Rows [lo, hi) of block b of n over g (the documented balanced tiling).
std::pair<index_t, index_t> rows(index_t n, index_t g, index_t b) {
  const block k = block_of(n, g, b);
  return {k.start, k.end()};
}

/// Bytes this rank sent and received between maps, measured, per execute().
struct rank_bytes {
  index_t sent = 0, received = 0;
};
template <class Plan>
rank_bytes between_maps(const Plan& plan) {
  rank_bytes b;
  for (const auto& r : plan.stats().redistributions) {
    if (r.to == "root") continue;  // the gather
    b.sent += r.measured.bytes_sent;
    b.received += r.measured.bytes_received;
  }
  return b;
}

double xv(index_t a, index_t b) { return double((a * 7 + b * 3) % 17) - 8.0; }

}  // namespace

TEST_CASE("programs: a chain on one grid moves nothing between maps", "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t I = 7, J = 5;
  wp::array<double, 2> x("x", {I, J}), y("y", {I, J}), z("z", {I, J});
  fill2(x, xv);
  auto m1 = wp::map("scale", wp::space(I, J), y(i, j) = x(i, j) * 2.0);
  auto m2 = wp::map("shift", wp::space(I, J), z(i, j) = y(i, j) + x(i, j));
  wp::schedule s;
  s.set(m1, wp::grid_shape{index_t(P), 1}).set(m2, wp::grid_shape{index_t(P), 1});
  auto plan = wp::distribute(wp::program(m1, m2), s, ctx);
  plan.run();
  std::vector<double> want_z, want_y;
  for (index_t a = 0; a < I; ++a)
    for (index_t b = 0; b < J; ++b) {
      want_y.push_back(xv(a, b) * 2.0);
      want_z.push_back(xv(a, b) * 3.0);
    }
  REQUIRE(compare_on_root(ctx.comm(), z, want_z) == "");
  REQUIRE(compare_on_root(ctx.comm(), y, want_y) == "");
  const rank_bytes b = between_maps(plan);
  REQUIRE(all_problems(ctx.comm(),
                       b.sent == 0 && b.received == 0 ? "" : "bytes moved between maps") == "");
  REQUIRE(plan.predicted_rank_bytes(true) == 0);
  REQUIRE(plan.explain().find("y -> 'shift' from 'scale'") != std::string::npos);
  REQUIRE(plan.explain().find("none, total 0 B") != std::string::npos);
  REQUIRE(explain_differs(ctx.comm(), plan) == "");
  // y never visits root between the maps, and root sends x once (the second map takes it from
  // the first one's read buffers, where it already is)
  const auto st = plan.stats();
  REQUIRE(st.maps.size() == 2);
  const auto [r0, r1] = rows(I, P, ctx.rank());
  const index_t x_once = ctx.rank() == 0 ? 0 : (r1 - r0) * J * index_t(sizeof(double));
  REQUIRE(all_problems(ctx.comm(),
                       st.scatter.bytes_received == x_once
                           ? ""
                           : "scatter received " + std::to_string(st.scatter.bytes_received) +
                                 " B, expected x once: " + std::to_string(x_once)) == "");
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
}

TEST_CASE("programs: transposed grids (P,1) -> (1,P) move exactly what readers lack",
          "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), me = ctx.rank();
  auto [i, j] = wp::indices<2>();
  constexpr index_t I = 9, J = 7;  // uneven for 2, 3 and 4 ranks
  wp::array<double, 2> x("x", {I, J}), y("y", {I, J}), z("z", {I, J});
  fill2(x, xv);
  auto m1 = wp::map("rows", wp::space(I, J), y(i, j) = x(i, j) + 1.0);
  auto m2 = wp::map("cols", wp::space(I, J), z(i, j) = y(i, j) * 3.0 + x(i, j));
  wp::schedule s;
  s.set(m1, wp::grid_shape{index_t(P), 1}).set(m2, wp::grid_shape{1, index_t(P)});
  auto plan = wp::distribute(wp::program(m1, m2), s, ctx);
  plan.scatter();
  plan.execute();
  plan.gather(z);
  std::vector<double> want;
  for (index_t a = 0; a < I; ++a)
    for (index_t b = 0; b < J; ++b) want.push_back((xv(a, b) + 1.0) * 3.0 + xv(a, b));
  REQUIRE(compare_on_root(ctx.comm(), z, want) == "");
  // rank r holds rows(r) x all columns of y (and of x, read by 'rows') and needs all rows x
  // cols(r) of both: the same pieces move for y and for x, and root sends x only once
  const auto [r0, r1] = rows(I, P, me);
  const auto [c0, c1] = rows(J, P, me);
  const index_t es = sizeof(double);
  const index_t want_recv = 2 * (c1 - c0) * (I - (r1 - r0)) * es;
  const index_t want_sent = 2 * (r1 - r0) * (J - (c1 - c0)) * es;
  const index_t x_once = me == 0 ? 0 : (r1 - r0) * J * es;
  REQUIRE(all_problems(ctx.comm(), plan.stats().scatter.bytes_received == x_once
                                       ? ""
                                       : "x sent more than once") == "");
  const rank_bytes b = between_maps(plan);
  std::string prob;
  if (b.received != want_recv || b.sent != want_sent)
    prob = "moved " + std::to_string(b.sent) + "/" + std::to_string(b.received) + ", expected " +
           std::to_string(want_sent) + "/" + std::to_string(want_recv);
  REQUIRE(all_problems(ctx.comm(), prob) == "");
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
  if (P > 1) REQUIRE(plan.explain().find("Alltoallw") != std::string::npos);
  // only z was gathered: y stays on the ranks (root's y untouched)
  std::string ry;
  if (me == 0)
    for (index_t e = 0; e < I * J; ++e)
      if (y.data()[e] != 0.0) ry = "root's y was written";
  REQUIRE(from_root(ctx.comm(), ry) == "");
}

TEST_CASE("programs: a map failing on one rank, agreed on after later maps, raises everywhere",
          "[mpi][programs][errors]") {
  // Maps that read no data are agreed on once, at the end of execute() (or at the next map
  // that reads data), not one by one: a rank whose run fails (as running out of memory would;
  // injected here) runs no more maps but takes part in every redistribution after it, so no
  // rank waits in a collective another skipped, and every rank raises the earliest failure.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), last = P - 1;
  auto [i, j] = wp::indices<2>();
  constexpr index_t I = 9, J = 7;  // uneven for 2, 3 and 4 ranks
  wp::array<double, 2> x("x", {I, J}), y("y", {I, J}), z("z", {I, J}), u("u", {I, J});
  fill2(x, xv);
  auto m1 = wp::map("rows", wp::space(I, J), y(i, j) = x(i, j) + 1.0);
  auto m2 = wp::map("cols", wp::space(I, J), z(i, j) = y(i, j) * 3.0 + x(i, j));
  auto m3 = wp::map("rows again", wp::space(I, J), u(i, j) = z(i, j) - y(i, j));
  wp::schedule s;
  s.set(m1, wp::grid_shape{index_t(P), 1})
      .set(m2, wp::grid_shape{1, index_t(P)})
      .set(m3, wp::grid_shape{index_t(P), 1});
  auto plan = wp::distribute(wp::program(m1, m2, m3), s, ctx);
  auto& inject = wp::detail::injected_run_failure_for_tests();
  struct reset {
    ~reset() { wp::detail::injected_run_failure_for_tests() = {}; }
  } reset_after;
  SECTION("the last rank fails in the first map; the redistributions after it still run") {
    inject = {"rows", last};
    plan.scatter();
    std::string msg;
    REQUIRE_THROWS_AS(
        [&] {
          try {
            plan.execute();
          } catch (const wp::error& e) {
            msg = e.what();
            throw;
          }
        }(),
        wp::error);
    REQUIRE_THAT(msg, Contains("rank " + std::to_string(last) + ":") &&
                          Contains("map 'rows': injected failure"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("two ranks fail in different maps: the earlier map's failure is raised") {
    inject = {"rows again", 0};
    if (ctx.rank() == last) inject = {"cols", last};
    plan.scatter();
    std::string msg;
    try {
      plan.execute();
    } catch (const wp::error& e) {
      msg = e.what();
    }
    REQUIRE_THAT(msg, Contains("rank " + std::to_string(last) + ":") &&
                          Contains("map 'cols': injected failure"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  // No rank was left behind: the same plan runs again, right, from root's values.
  inject = {};
  plan.run();
  std::vector<double> want;
  for (index_t a = 0; a < I; ++a)
    for (index_t b = 0; b < J; ++b) want.push_back((xv(a, b) + 1.0) * 2.0 + xv(a, b));
  REQUIRE(compare_on_root(ctx.comm(), u, want) == "");
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("programs: grids of different rank, idle ranks, init() inputs", "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t I = 10, J = 6;
  auto gen = [](std::array<std::int64_t, 1> g) { return double(g[0] % 5) + 0.5; };
  wp::array<double, 1> x("x", {I}), v("v", {I});
  x.init(gen);
  wp::array<double, 2> y("y", {I, J});
  fill2(y, xv);
  auto m1 = wp::map("vec", wp::space(I), v(i) = x(i) * 2.0);
  std::vector<double> want;
  for (index_t a = 0; a < I; ++a)
    for (index_t b = 0; b < J; ++b) want.push_back((double(a % 5) + 0.5) * 2.0 + xv(a, b));
  // (vec grid, outer grid): every rank reads all of v; one rank works then all; all then one
  const std::vector<std::pair<wp::grid_shape, wp::grid_shape>> cases = {
      {{index_t(P)}, {1, index_t(P)}},
      {{1}, {index_t(P), 1}},
      {{index_t(P)}, {1, 1}},
      {{index_t(P)}, {index_t(P), 1}}};
  for (const auto& [g1, g2] : cases) {
    INFO("grids " << g1.str() << " -> " << g2.str() << " on " << P << " ranks");
    wp::array<double, 2> zz("z", {I, J});
    auto m2b = wp::map("outer", wp::space(I, J), zz(i, j) = v(i) + y(i, j));
    wp::schedule s;
    s.set(m1, g1).set(m2b, g2);
    auto plan = wp::distribute(wp::program(m1, m2b), s, ctx);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), zz, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
    // v's bytes: each rank of 'outer' receives the rows of v it reads and did not write
    index_t expect = 0;
    for (index_t r = 0; r < P; ++r) {
      index_t need_lo = 0, need_hi = 0, held_lo = 0, held_hi = 0;
      if (r < g2.product()) {
        const index_t gi = g2.dims[0] > 1 ? r : 0;
        std::tie(need_lo, need_hi) = rows(I, g2.dims[0], gi);
      }
      if (r < g1.product()) std::tie(held_lo, held_hi) = rows(I, g1.dims[0], r);
      const index_t overlap =
          std::max<index_t>(0, std::min(need_hi, held_hi) - std::max(need_lo, held_lo));
      expect += (need_hi - need_lo) - overlap;
    }
    REQUIRE(plan.predicted_rank_bytes(true) == expect * index_t(sizeof(double)));
    // x (init) is generated on the ranks: root sends nothing of it
    REQUIRE(plan.explain().find("generate") != std::string::npos);
  }
}

TEST_CASE("programs: Jacobi 2-D iterated with execute() moves only the halo", "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), me = ctx.rank();
  auto [i, j] = wp::indices<2>();
  constexpr index_t n = 11, m = 9, iters = 10;
  wp::array<double, 2> x("x", {n, m}), xn("xn", {n, m});
  auto f0 = [](index_t a, index_t b) { return double((a * 13 + b * 5) % 11); };
  fill2(x, f0);
  fill2(xn, f0);
  auto step = wp::map("step", wp::space({1, n - 1}, {1, m - 1}),
                      xn(i, j) = (x(i - 1, j) + x(i + 1, j) + x(i, j - 1) + x(i, j + 1)) * 0.25);
  auto copy = wp::map("copy", wp::space({1, n - 1}, {1, m - 1}), x(i, j) = xn(i, j));
  wp::schedule s;
  s.set(step, wp::grid_shape{index_t(P), 1}).set(copy, wp::grid_shape{index_t(P), 1});
  auto plan = wp::distribute(wp::program(step, copy), s, ctx);
  plan.scatter();
  // The halo's exchange datatypes are built by the first two runs (the first run's pieces,
  // then a later run's) and reused by every run after them.
  auto builds = [] { return wp::detail::counters().exchange_type_builds.load(); };
  const long before = builds();
  plan.execute();
  plan.execute();
  const long after_two = builds();
  for (int t = 2; t < iters; ++t) plan.execute();
  std::string rebuilt;
  if (builds() != after_two)
    rebuilt = std::to_string(builds() - after_two) + " datatype sets built after the second run";
  if (P > 1 && after_two == before) rebuilt = "no halo datatypes were built";
  REQUIRE(all_problems(ctx.comm(), rebuilt) == "");
  plan.gather();
  // serial reference
  std::vector<double> a(n * m), b(n * m);
  for (index_t r = 0; r < n; ++r)
    for (index_t c = 0; c < m; ++c) a[r * m + c] = b[r * m + c] = f0(r, c);
  for (int t = 0; t < iters; ++t) {
    for (index_t r = 1; r < n - 1; ++r)
      for (index_t c = 1; c < m - 1; ++c)
        b[r * m + c] =
            (a[(r - 1) * m + c] + a[(r + 1) * m + c] + a[r * m + c - 1] + a[r * m + c + 1]) * 0.25;
    for (index_t r = 1; r < n - 1; ++r)
      for (index_t c = 1; c < m - 1; ++c) a[r * m + c] = b[r * m + c];
  }
  REQUIRE(compare_on_root(ctx.comm(), x, a, 1e-12) == "");
  REQUIRE(compare_on_root(ctx.comm(), xn, b, 1e-12) == "");
  // Per later execute(): rank r receives the interior rows just outside its block that a
  // neighbour wrote (columns 1..m-2; the boundary columns and rows never change and stay
  // from the scatter).
  const auto [lo, hi] = rows(n - 2, P, me);  // block of interior rows, offset by 1
  index_t halo = 0;
  if (hi > lo) {
    if (lo > 0) halo += m - 2;      // row lo (global lo+1-1) written by the rank above
    if (hi < n - 2) halo += m - 2;  // row below
  }
  const auto st = plan.stats();
  index_t later = 0;
  for (const auto& r : st.redistributions)
    if (r.to != "root") later += r.predicted_received;
  std::string prob;
  if (later != halo * index_t(sizeof(double)))
    prob = "predicted halo " + std::to_string(later) + " B, expected " + std::to_string(halo * 8);
  REQUIRE(all_problems(ctx.comm(), prob) == "");
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, iters)) == "");
  if (P > 1) REQUIRE(plan.explain().find("halo exchange") != std::string::npos);
}

TEST_CASE("programs: softmax as three maps, over the leading or the last axis", "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 7, L = 10;
  auto xf = [](index_t a, index_t b) { return double((a * 5 + b * 3) % 13) / 4.0 - 1.0; };
  std::vector<double> want;
  for (index_t a = 0; a < R; ++a) {
    double mx = -1e300, sum = 0;
    for (index_t b = 0; b < L; ++b) mx = std::max(mx, xf(a, b));
    for (index_t b = 0; b < L; ++b) sum += std::exp(xf(a, b) - mx);
    for (index_t b = 0; b < L; ++b) want.push_back(std::exp(xf(a, b) - mx) / sum);
  }
  for (bool last_axis : {false, true}) {
    INFO((last_axis ? "partitioned over the last axis" : "partitioned over rows")
         << ", " << P << " ranks");
    wp::array<double, 2> x("x", {R, L}), y("y", {R, L});
    wp::array<double, 1> mx("mx", {R}), sm("sm", {R});
    fill2(x, xf);
    if (double* p = mx.data()) std::fill(p, p + R, -1e300);
    auto m1 = wp::map("max", wp::space(R, L), wp::max_into(mx(i), x(i, j)));
    auto m2 = wp::map("expsum", wp::space(R, L), sm(i) += wp::exp(x(i, j) - mx(i)));
    auto m3 = wp::map("norm", wp::space(R, L), y(i, j) = wp::exp(x(i, j) - mx(i)) / sm(i));
    const wp::grid_shape g =
        last_axis ? wp::grid_shape{1, index_t(P)} : wp::grid_shape{index_t(P), 1};
    wp::schedule s;
    s.set(m1, g).set(m2, g).set(m3, g);
    auto plan = wp::distribute(wp::program(m1, m2, m3), s, ctx);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
    if (!last_axis) {
      REQUIRE(plan.predicted_rank_bytes(true) == 0);
    } else if (P > 1) {
      // each rank reads the whole mx and sm next: combined with Allreduce, nothing else moves
      REQUIRE(plan.explain().find("Allreduce(max)") != std::string::npos);
      REQUIRE(plan.explain().find("Allreduce(sum)") != std::string::npos);
      // per member but the leader: its box out and the whole back, for both vectors
      REQUIRE(plan.predicted_rank_bytes(true) == 2 * 2 * (P - 1) * R * index_t(sizeof(double)));
    }
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
  }
}

TEST_CASE("programs: a split reduction read by the next map", "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, k] = wp::indices<2>();
  constexpr index_t I = 9, K = 11;
  auto xf = [](index_t a, index_t b) { return double((a * 3 + b * 7) % 9) - 4.0; };
  auto wf = [](index_t b) { return double(b % 4) - 1.5; };
  std::vector<double> t_want(I), y_want(I);
  for (index_t a = 0; a < I; ++a) {
    double t = 0.5;  // t's old value
    for (index_t b = 0; b < K; ++b) t += xf(a, b) * wf(b);
    t_want[std::size_t(a)] = t;
    y_want[std::size_t(a)] = t * t + 1.0;
  }
  for (int variant = 0; variant < 3; ++variant) {
    INFO("variant " << variant << " on " << P << " ranks");
    wp::array<double, 2> x("x", {I, K});
    wp::array<double, 1> w("w", {K}), t("t", {I}), y("y", {I});
    fill2(x, xf);
    fill1(w, wf);
    fill1(t, [](index_t) { return 0.5; });
    auto m1 = wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k));
    auto m2 = wp::map("f", wp::space(I), y(i) = t(i) * t(i) + 1.0);
    wp::schedule s;
    s.set(m1, wp::grid_shape{1, index_t(P)});  // k split: partial sums on every rank
    s.set(m2, variant == 0   ? wp::grid_shape{index_t(P)}
              : variant == 1 ? wp::grid_shape{1}
                             : wp::grid_shape{index_t(P)});
    if (variant == 2)
      s.set(m1, wp::grid_shape{index_t(std::max(1, P / 2)), index_t(P >= 2 ? 2 : 1)});
    auto plan = wp::distribute(wp::program(m1, m2), s, ctx);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), y, y_want, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), t, t_want, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
    if (P > 1 && variant == 0) {
      // the readers' blocks of t cut it exactly: a reduce-scatter leaves each its own block,
      // each rank receiving its block from every other one, and nothing moves after it
      REQUIRE(plan.explain().find("reduce-scatter(sum)") != std::string::npos);
      REQUIRE(plan.predicted_rank_bytes(true) == (P - 1) * I * index_t(sizeof(double)));
    }
    if (P > 1 && variant == 1) {
      // only rank 0 reads t: Reduce onto it (every other rank sends its partial once)
      REQUIRE(plan.explain().find("Reduce(sum)") != std::string::npos);
      REQUIRE(plan.predicted_rank_bytes(true) == (P - 1) * I * index_t(sizeof(double)));
    }
    if (variant < 2) {
      // local(t) shows exactly what holds combined values: after the reduce-scatter this
      // rank's rows (the reader's block), after the Reduce all of t on rank 0 and nothing
      // elsewhere; never partial sums
      const auto lb = plan.local(t);
      const int me = ctx.rank();
      const block want = variant == 0 ? block_of(I, P, me) : block{0, me == 0 ? I : 0};
      std::string problems;
      if (want.size == 0) {
        if (!lb.empty()) problems = "a block of t where none holds combined values";
      } else if (lb.empty() || lb.offset[0] != want.start || lb.extent[0] != want.size) {
        problems = "local(t) is [" + std::to_string(lb.offset[0]) + ", +" +
                   std::to_string(lb.extent[0]) + "), expected [" + std::to_string(want.start) +
                   ", +" + std::to_string(want.size) + ")";
      } else {
        for (index_t a = want.start; a < want.end(); ++a)
          if (std::abs(lb({a}) - t_want[std::size_t(a)]) > 1e-12)
            problems += "t(" + std::to_string(a) + ") = " + std::to_string(lb({a})) + "; ";
      }
      REQUIRE(all_problems(ctx.comm(), problems) == "");
    }
    // run again: t accumulates once more, as wp::run of the program twice would
    plan.run();
    std::vector<double> t2(I), y2(I);
    for (index_t a = 0; a < I; ++a) {
      t2[std::size_t(a)] = 2 * t_want[std::size_t(a)] - 0.5;
      y2[std::size_t(a)] = t2[std::size_t(a)] * t2[std::size_t(a)] + 1.0;
    }
    REQUIRE(compare_on_root(ctx.comm(), t, t2, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), y, y2, 1e-12) == "");
  }
}

TEST_CASE("programs: a large Allreduce runs in parts, every member moving 2 (P-1)/P of it",
          "[mpi][programs]") {
  // T(i, j) += X(i, k) W(k, j) and max_into(M(i, j), Z(i, k) W(k, j)) with k split over every
  // rank, then read whole by every rank: each is combined by an Allreduce of I x J doubles
  // (74 KB, over all_reduce_parts_min_bytes), from 3 ranks in parts (a reduce-scatter of the
  // elements' runs, then an allgather), at 2 ranks by the leader. A NaN on the last rank's
  // block of k propagates through the max as the local executors do.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), me = ctx.rank();
  auto [i, j, q] = wp::indices<3>();
  auto [i2, j2, k2] = wp::indices<3>();
  constexpr index_t I = 37, J = 251, K = 7;
  const index_t Q = 2 * P - 1, n = I * J, es = index_t(sizeof(double));
  static_assert(I * J * index_t(sizeof(double)) >= wp::detail::all_reduce_parts_min_bytes);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto xf = [](index_t a, index_t b) { return double((a * 3 + b * 5) % 11) / 4.0 - 1.0; };
  auto zf = [&](index_t a, index_t b) { return a == 3 && b == K - 1 ? nan : xf(b, a) + 0.5; };
  auto wf = [](index_t b, index_t c) { return double((b * 7 + c) % 9) / 3.0 - 1.2; };
  auto vf = [](index_t c) { return double(c) - 0.75; };
  // the reference: plain loops (max propagating NaN)
  std::vector<double> t_want(static_cast<std::size_t>(n)), m_want(static_cast<std::size_t>(n)),
      u_want;
  for (index_t a = 0; a < I; ++a)
    for (index_t c = 0; c < J; ++c) {
      double t = 0.5, m = -1e300;
      for (index_t b = 0; b < K; ++b) {
        t += xf(a, b) * wf(b, c);
        const double z = zf(a, b) * wf(b, c);
        m = std::isnan(m) || std::isnan(z) ? nan : std::max(m, z);
      }
      t_want[std::size_t(a * J + c)] = t;
      m_want[std::size_t(a * J + c)] = m;
    }
  for (index_t a = 0; a < I; ++a)
    for (index_t c = 0; c < J; ++c)
      for (index_t d = 0; d < Q; ++d)
        u_want.push_back(t_want[std::size_t(a * J + c)] * vf(d) + m_want[std::size_t(a * J + c)]);

  wp::array<double, 2> X("X", {I, K}), Z("Z", {I, K}), W("W", {K, J}), T("T", {I, J}),
      M("M", {I, J});
  wp::array<double, 1> V("V", {Q});
  wp::array<double, 3> U("U", {I, J, Q});
  fill2(X, xf);
  fill2(Z, zf);
  fill2(W, wf);
  fill1(V, vf);
  fill2(T, [](index_t, index_t) { return 0.5; });
  fill2(M, [](index_t, index_t) { return -1e300; });
  auto m1 = wp::map("sum", wp::space(I, J, K), T(i2, j2) += X(i2, k2) * W(k2, j2));
  auto m2 = wp::map("max", wp::space(I, J, K), wp::max_into(M(i2, j2), Z(i2, k2) * W(k2, j2)));
  auto m3 = wp::map("use", wp::space(I, J, Q), U(i, j, q) = T(i, j) * V(q) + M(i, j));
  wp::schedule s;
  s.set(m1, wp::grid_shape{1, 1, index_t(P)}).set(m2, wp::grid_shape{1, 1, index_t(P)});
  s.set(m3, wp::grid_shape{1, 1, index_t(P)});  // every rank reads all of T and M
  auto plan = wp::distribute(wp::program(m1, m2, m3), s, ctx);
  plan.run();

  // U on root, NaN where the reference has NaN and nowhere else
  std::string problems;
  if (me == 0) {
    index_t bad = 0;
    for (index_t e = 0; e < U.size(); ++e) {
      const double g = U.data()[e], w = u_want[std::size_t(e)];
      if (std::isnan(w) ? !std::isnan(g) : !(std::abs(g - w) <= 1e-12 * std::max(1.0, std::abs(w))))
        if (bad++ < 3) problems += "U[" + std::to_string(e) + "] = " + std::to_string(g) + "; ";
    }
  }
  REQUIRE(from_root(ctx.comm(), problems) == "");
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
  if (P == 1) return;
  REQUIRE(plan.explain().find("Allreduce(sum)") != std::string::npos);
  REQUIRE(plan.explain().find("Allreduce(max)") != std::string::npos);
  // every rank holds all of T and M combined, the same values on every rank
  std::vector<double> t_root, m_root;
  std::string mine;
  for (auto* a : {&T, &M}) {
    const auto lb = plan.local(*a);
    const auto& want = a == &T ? t_want : m_want;
    std::vector<double> held;
    if (lb.empty() || lb.offset[0] != 0 || lb.extent[0] != I || lb.offset[1] != 0 ||
        lb.extent[1] != J) {
      mine += "local(" + a->name() + ") is not the whole array; ";
      held.assign(std::size_t(n), 0.0);
    } else {
      for (index_t x = 0; x < I; ++x)
        for (index_t y = 0; y < J; ++y) held.push_back(lb({x, y}));
    }
    std::vector<double> root_held = from_root(ctx.comm(), held);
    for (index_t e = 0; e < n; ++e) {
      const double g = held[std::size_t(e)], w = want[std::size_t(e)];
      const bool same_as_root =
          std::isnan(g) ? std::isnan(root_held[std::size_t(e)]) : g == root_held[std::size_t(e)];
      const bool right =
          std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= 1e-12 * std::max(1.0, std::abs(w));
      if (!same_as_root || !right) {
        mine += a->name() + "[" + std::to_string(e) + "] = " + std::to_string(g) + "; ";
        break;
      }
    }
  }
  REQUIRE(all_problems(ctx.comm(), mine) == "");
  // the bytes of each Allreduce: in parts from 3 ranks (this rank's run of n elements from and
  // to every other rank, the others' runs to and from them), else the leader's
  const index_t own = n / P + (me < n % P ? 1 : 0);
  const index_t want_each =
      P >= 3 ? (n - own + (P - 1) * own) * es : (me == 0 ? (P - 1) * n * es : n * es);
  std::string bytes;
  int allreduces = 0;
  for (const auto& r : plan.stats().redistributions) {
    if (r.kind.find("Allreduce(") != 0) continue;
    ++allreduces;
    if (r.measured.bytes_sent != want_each || r.measured.bytes_received != want_each)
      bytes += r.array + ": " + std::to_string(r.measured.bytes_sent) + "/" +
               std::to_string(r.measured.bytes_received) + " expected " +
               std::to_string(want_each) + "; ";
  }
  REQUIRE(allreduces == 2);
  REQUIRE(all_problems(ctx.comm(), bytes) == "");
  // a second run combines again from fresh partials: T accumulates, M stays
  plan.run();
  problems.clear();
  if (me == 0)
    for (index_t a = 0; a < I && problems.empty(); ++a)
      for (index_t c = 0; c < J; ++c) {
        const double t2 = 2 * t_want[std::size_t(a * J + c)] - 0.5;
        const double m2w = m_want[std::size_t(a * J + c)];
        const double w = t2 * vf(Q - 1) + m2w, g = U.data()[(a * J + c) * Q + Q - 1];
        if (std::isnan(w) ? !std::isnan(g)
                          : !(std::abs(g - w) <= 1e-12 * std::max(1.0, std::abs(w)))) {
          problems = "second run: U(" + std::to_string(a) + ", " + std::to_string(c) + ")";
          break;
        }
      }
  REQUIRE(from_root(ctx.comm(), problems) == "");
}

TEST_CASE("programs: a chain of += maps on the same boxes combines its partial sums once",
          "[mpi][programs]") {
  // G(i, j) += A_t(b, i) C_t(b, j) for t = 1, 2, 3 with the batch b split over every rank (an
  // RNN's weight gradient over its steps, data-parallel), a map between them that does not
  // use G, then U reads G by rows: g1 and g2 pass their partial sums on (each member adds onto
  // a local copy of the previous writer's), g3's are combined once. M's chain of max_into
  // likewise (a NaN on the last rank's batch block propagates). K's chain is broken by a map
  // that reads K between its writers: combined after each. B = 2 P + 1: uneven blocks.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size(), me = ctx.rank();
  auto [i, j, b] = wp::indices<3>();
  auto [i2, j2] = wp::indices<2>();
  constexpr index_t I = 5, J = 6;
  const index_t B = 2 * P + 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto af = [](int t, index_t x, index_t y) { return double((x * 5 + y * 3 + t) % 7) / 3.0 - 1.0; };
  auto cf = [](int t, index_t x, index_t y) { return double((x * 2 + y * 7 + 3 * t) % 5) - 1.5; };
  auto df = [&](index_t x, index_t y) { return x == B - 1 && y == 4 ? nan : cf(4, x, y); };
  wp::array<double, 2> A1("A1", {B, I}), A2("A2", {B, I}), A3("A3", {B, I}), C1("C1", {B, J}),
      C2("C2", {B, J}), C3("C3", {B, J});
  const std::array<wp::array<double, 2>*, 3> A{&A1, &A2, &A3}, C{&C1, &C2, &C3};
  for (int t = 1; t <= 3; ++t) {
    fill2(*A[std::size_t(t - 1)], [&](index_t x, index_t y) { return af(t, x, y); });
    fill2(*C[std::size_t(t - 1)], [&](index_t x, index_t y) { return cf(t, x, y); });
  }
  wp::array<double, 2> D("D", {B, J}), G("G", {I, J}), M("M", {I, J}), K("K", {I, J}),
      V("V", {I, J}), W("W", {I, J}), U("U", {I, J});
  fill2(D, df);
  fill2(G, [](index_t, index_t) { return 0.5; });
  fill2(M, [](index_t, index_t) { return -1e300; });
  fill2(K, [](index_t x, index_t y) { return double(x - y); });
  const auto sp = wp::space(I, J, B);
  auto g1 = wp::map("g1", sp, G(i, j) += A1(b, i) * C1(b, j));
  auto m1 = wp::map("m1", sp, wp::max_into(M(i, j), A1(b, i) * D(b, j)));
  auto k1 = wp::map("k1", sp, K(i, j) += A1(b, i) * C2(b, j));
  auto other = wp::map("other", wp::space(I, J), V(i2, j2) = A2(0, i2) + C3(0, j2));
  auto readk = wp::map("readk", wp::space(I, J), W(i2, j2) = K(i2, j2) * 3.0);
  auto g2 = wp::map("g2", sp, G(i, j) += A2(b, i) * C2(b, j));
  auto m2 = wp::map("m2", sp, wp::max_into(M(i, j), A2(b, i) * C3(b, j)));
  auto k2 = wp::map("k2", sp, K(i, j) += A2(b, i) * C1(b, j));
  auto g3 = wp::map("g3", sp, G(i, j) += A3(b, i) * C3(b, j));
  auto use = wp::map("use", wp::space(I, J), U(i2, j2) = G(i2, j2) * 2.0 + M(i2, j2) + K(i2, j2));
  const wp::grid_shape batch{1, 1, index_t(P)}, rows{index_t(P), 1};
  wp::schedule s;
  s.set(g1, batch).set(m1, batch).set(k1, batch).set(g2, batch).set(m2, batch).set(k2, batch);
  s.set(g3, batch).set(other, rows).set(readk, rows).set(use, rows);
  auto plan = wp::distribute(wp::program(g1, m1, k1, other, readk, g2, m2, k2, g3, use), s, ctx);

  // the reference: plain loops, run `runs` times (G and K accumulate, M stays)
  auto want = [&](int runs) {
    std::vector<double> u, w;
    for (index_t x = 0; x < I; ++x)
      for (index_t y = 0; y < J; ++y) {
        double g = 0.5, m = -1e300, k = double(x - y), s1 = 0, s2 = 0, s3 = 0;
        for (index_t z = 0; z < B; ++z) {
          s1 += af(1, z, x) * cf(1, z, y) + af(2, z, x) * cf(2, z, y) + af(3, z, x) * cf(3, z, y);
          s2 += af(1, z, x) * cf(2, z, y);
          s3 += af(2, z, x) * cf(1, z, y);
          for (double v : {af(1, z, x) * df(z, y), af(2, z, x) * cf(3, z, y)})
            m = std::isnan(m) || std::isnan(v) ? nan : std::max(m, v);
        }
        double kr = k;  // what readk saw in the last run
        for (int r = 0; r < runs; ++r) {
          g += s1;
          kr = k + s2;
          k = kr + s3;
        }
        u.push_back(g * 2.0 + m + k);
        w.push_back(kr * 3.0);
      }
    return std::make_pair(u, w);
  };
  auto check = [&](int runs) {
    const auto [u, w] = want(runs);
    std::string problems;
    if (me == 0)
      for (index_t e = 0; e < I * J; ++e)
        for (auto [got, ref, name] : {std::make_tuple(U.data()[e], u[std::size_t(e)], "U"),
                                      std::make_tuple(W.data()[e], w[std::size_t(e)], "W")})
          if (std::isnan(ref) ? !std::isnan(got)
                              : !(std::abs(got - ref) <= 1e-12 * std::max(1.0, std::abs(ref))))
            problems += "run " + std::to_string(runs) + ": " + name + "[" + std::to_string(e) +
                        "] = " + std::to_string(got) + " expected " + std::to_string(ref) + "; ";
    return from_root(ctx.comm(), problems);
  };
  plan.run();
  REQUIRE(check(1) == "");
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
  // execute() again twice from the ranks' values (g1 restarts from the identity on the
  // members that passed partial sums on, and from g3's combined values on the leader)
  plan.execute();
  plan.execute();
  plan.gather();
  REQUIRE(check(3) == "");
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 3)) == "");
  if (P == 1) return;  // no partial sums
  const std::string text = plan.explain();
  INFO(text);
  CHECK(text.find("kept (partial results passed on, combined after 'g3')") != std::string::npos);
  CHECK(text.find("kept (partial results passed on, combined after 'm2')") != std::string::npos);
  // one combine of G and of M, two of K; what is kept moves nothing
  std::map<std::string, int> combines, kept;
  std::string moved;
  for (const auto& r : plan.stats().redistributions) {
    const bool combine = r.kind.rfind("Allreduce(", 0) == 0 ||
                         r.kind.rfind("reduce-scatter(", 0) == 0 || r.kind.rfind("Reduce(", 0) == 0;
    combines[r.array] += combine;
    if (r.kind.rfind("kept", 0) != 0) continue;
    ++kept[r.array];
    if (r.measured.bytes_sent + r.measured.bytes_received + r.predicted_sent +
            r.predicted_received !=
        0)
      moved += r.array + " -> " + r.to + "; ";
  }
  CHECK(combines["G"] == 1);
  CHECK(combines["M"] == 1);
  CHECK(combines["K"] == 2);
  CHECK(kept["G"] == 2);
  CHECK(kept["M"] == 1);
  CHECK(kept["K"] == 0);
  REQUIRE(all_problems(ctx.comm(), moved) == "");
}

TEST_CASE("programs: a split reduction over more ranks than its extent, read by the next map",
          "[mpi][programs]") {
  // K = 2 split over P ranks: at P = 3 and 4 some ranks hold no k at all. They join their
  // group with identity partials, so the partial sums combine rank to rank as usual.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, k] = wp::indices<2>();
  constexpr index_t I = 7, K = 2;
  auto xf = [](index_t a, index_t b) { return double((a * 5 + b * 3) % 7) - 3.0; };
  auto wf = [](index_t b) { return double(b) + 0.5; };
  std::vector<double> t_want(I), y_want(I);
  for (index_t a = 0; a < I; ++a) {
    double t = 0.25;
    for (index_t b = 0; b < K; ++b) t += xf(a, b) * wf(b);
    t_want[std::size_t(a)] = t;
    y_want[std::size_t(a)] = 2.0 * t - 1.0;
  }
  for (const bool max_kind : {false, true}) {
    INFO((max_kind ? "max_into" : "+=") << " on " << P << " ranks");
    wp::array<double, 2> x("x", {I, K});
    wp::array<double, 1> w("w", {K}), t("t", {I}), y("y", {I});
    fill2(x, xf);
    fill1(w, wf);
    fill1(t, [](index_t) { return 0.25; });
    std::vector<double> tw = t_want, yw = y_want;
    if (max_kind)
      for (index_t a = 0; a < I; ++a) {
        double m = 0.25;
        for (index_t b = 0; b < K; ++b) m = std::max(m, xf(a, b) * wf(b));
        tw[std::size_t(a)] = m;
        yw[std::size_t(a)] = 2.0 * m - 1.0;
      }
    auto run = [&](auto m1) {
      auto m2 = wp::map("f", wp::space(I), y(i) = t(i) * 2.0 - 1.0);
      wp::schedule s;
      s.set(m1, wp::grid_shape{1, index_t(P)});
      s.set(m2, wp::grid_shape{index_t(P)});
      auto plan = wp::distribute(wp::program(m1, m2), s, ctx);
      plan.run();
      REQUIRE(compare_on_root(ctx.comm(), y, yw, 1e-12) == "");
      REQUIRE(compare_on_root(ctx.comm(), t, tw, 1e-12) == "");
      REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
      REQUIRE(plan.explain().find("combined on root") == std::string::npos);
    };
    if (max_kind)
      run(wp::map("rowmax", wp::space(I, K), wp::max_into(t(i), x(i, k) * w(k))));
    else
      run(wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k)));
  }
}

TEST_CASE("programs: a one-map program is the one-map plan", "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> x("x", {5, 4}), y("y", {5, 4});
  fill2(x, xv);
  auto m = wp::map("one", wp::space(5, 4), y(i, j) = x(i, j) - 1.0);
  wp::schedule s;
  s.set(m, wp::grid_shape{index_t(P), 1});
  auto a = wp::distribute(wp::program(m), s, ctx);
  auto b = wp::distribute(m, wp::grid_shape{index_t(P), 1}, ctx);
  REQUIRE(a.explain() == b.explain());
  REQUIRE(a.to_json() == b.to_json());
}

TEST_CASE("programs: schedule errors are raised on every rank, naming the map",
          "[mpi][programs][errors]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {8}), y("y", {8}), z("z", {8});
  auto m1 = wp::map("first", wp::space(8), y(i) = x(i) + 1.0);
  auto m2 = wp::map("second", wp::space(8), z(i) = y(i) * 2.0);
  auto prog = wp::program(m1, m2);
  {
    wp::schedule s;
    s.set(m1, wp::grid_shape{1});
    std::string e;
    try {
      auto p = wp::distribute(prog, s, ctx);
    } catch (const wp::grid_error& g) {
      e = g.what();
    }
    REQUIRE(e.find("map 'second' has no grid") != std::string::npos);
    REQUIRE(same_everywhere(ctx.comm(), e) == "");
  }
  {
    wp::schedule s;
    s.set(m1, wp::grid_shape{1}).set(m2, wp::grid_shape{1}).set("third", wp::grid_shape{1});
    const std::string e = what_of([&] { auto p = wp::distribute(prog, s, ctx); });
    REQUIRE(e.find("map 'third', which is not in the program (the program's maps: 'first', "
                   "'second')") != std::string::npos);
    REQUIRE(e.find("did you mean") == std::string::npos);  // nothing near 'third'
    REQUIRE(same_everywhere(ctx.comm(), e) == "");
  }
  {  // a misspelt name: the nearest map is suggested
    wp::schedule s;
    s.set("frist", wp::grid_shape{1}).set(m2, wp::grid_shape{1});
    const std::string e = what_of([&] { auto p = wp::distribute(prog, s, ctx); });
    REQUIRE(e.find("map 'frist', which is not in the program; did you mean 'first'?") !=
            std::string::npos);
    REQUIRE(same_everywhere(ctx.comm(), e) == "");
  }
  {
    wp::schedule s;
    s.set(m1, wp::grid_shape{1}).set(m2, wp::grid_shape{1, 1});
    std::string e;
    try {
      auto p = wp::distribute(prog, s, ctx);
    } catch (const wp::grid_error& g) {
      e = g.what();
    }
    REQUIRE(e.find("map 'second'") != std::string::npos);
    REQUIRE(e.find("rank 2") != std::string::npos);
    REQUIRE(same_everywhere(ctx.comm(), e) == "");
  }
  {
    wp::schedule s;
    s.set(m1, wp::grid_shape{index_t(P + 1)}).set(m2, wp::grid_shape{1});
    const std::string e = what_of([&] { auto p = wp::distribute(prog, s, ctx); });
    REQUIRE(e.find("map 'first'") != std::string::npos);
    REQUIRE(same_everywhere(ctx.comm(), e) == "");
  }
  {
    auto m2same = wp::map("first", wp::space(8), z(i) = y(i) * 2.0);
    wp::schedule s;
    s.set(m1, wp::grid_shape{1});
    const std::string e =
        what_of([&] { auto p = wp::distribute(wp::program(m1, m2same), s, ctx); });
    REQUIRE(e.find("two maps named 'first'") != std::string::npos);
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("programs: views of overlapping root memory across maps are refused",
          "[mpi][programs][errors]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 10;
  std::vector<double> buf(ctx.is_root() ? n + 1 : 0, 1.0);
  double* root = ctx.is_root() ? buf.data() : nullptr;
  wp::array<double, 1> a("a", {n}, root), b("b", {n}, root ? root + 1 : nullptr), c("c", {n}),
      d("d", {n});
  auto m1 = wp::map("writes_a", wp::space(n), a(i) = c(i) + 1.0);
  auto m2 = wp::map("reads_b", wp::space(n), d(i) = b(i) * 2.0);
  wp::schedule s;
  s.set(m1, wp::grid_shape{P}).set(m2, wp::grid_shape{P});
  const std::string e = what_of([&] { auto p = wp::distribute(wp::program(m1, m2), s, ctx); });
  REQUIRE(e.find("'a' and 'b' are views of overlapping memory on root") != std::string::npos);
  REQUIRE(same_everywhere(ctx.comm(), e) == "");
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE(
    "programs: overlapping partial results read again are combined rank to rank; gathered "
    "they are combined on root",
    "[mpi][programs][errors]") {
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [i, k] = wp::indices<2>();
  constexpr index_t n = 8, K = 3;
  wp::array<double, 1> x("x", {n}), y("y", {n + K - 1}), z("z", {n + K - 1});
  fill1(x, [](index_t a) { return double(a + 1); });
  fill1(y, [](index_t) { return 0.5; });
  // y(i + k) += x(i): the ranks' boxes of y overlap where blocks of i meet (combined on root)
  auto spread = wp::map("spread", wp::space(n, K), y(i + k) += x(i));
  auto copy = wp::map("copy", wp::space(n + K - 1), z(i) = y(i) * 2.0);
  auto also = wp::map("also", wp::space(n, K), z(i + k) += x(i));
  {
    // read again by the next map: each rank combines the others' partial results of its part
    // of y (root's old values once), and copy reads y from those parts
    wp::schedule s;
    s.set(spread, wp::grid_shape{P, 1}).set(copy, wp::grid_shape{1});
    auto plan = wp::distribute(wp::program(spread, copy), s, ctx);
    plan.run();
    std::vector<double> want(n + K - 1, 0.5);
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b < K; ++b) want[std::size_t(a + b)] += double(a + 1);
    REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
    for (auto& v : want) v *= 2.0;
    REQUIRE(compare_on_root(ctx.comm(), z, want) == "");
    if (P > 1)
      REQUIRE(plan.explain().find("combine of overlapping parts(sum)") != std::string::npos);
    fill1(y, [](index_t) { return 0.5; });
  }
  {
    // ending the program at that map: y is gathered by its map, with root's old values once
    wp::schedule s;
    s.set(also, wp::grid_shape{1, 1}).set(spread, wp::grid_shape{P, 1});
    auto plan = wp::distribute(wp::program(also, spread), s, ctx);
    plan.run();
    std::vector<double> want(n + K - 1, 0.5);
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b < K; ++b) want[std::size_t(a + b)] += double(a + 1);
    REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
    const auto st = plan.stats();
    std::string prob;
    if (st.gather.bytes_received != st.predicted_gather_received ||
        st.gather.bytes_sent != st.predicted_gather_sent)
      prob = "gather measured " + std::to_string(st.gather.bytes_sent) + "/" +
             std::to_string(st.gather.bytes_received) + " predicted " +
             std::to_string(st.predicted_gather_sent) + "/" +
             std::to_string(st.predicted_gather_received);
    REQUIRE(all_problems(ctx.comm(), prob) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("programs: a partly written split reduction read by two maps", "[mpi][programs]") {
  // t(i) += x(k, i) over i in [1, 9) only (t[0] keeps root's value), k split; two maps read t
  // by rows. Some readers hold all they need after the combine, others also need t[0] from
  // root: the old values of t must count once whatever is shared.
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size();
  auto [k, i] = wp::indices<2>();
  auto [r, c] = wp::indices<2>();
  constexpr index_t K = 5, n = 9, J = 3;
  wp::array<double, 2> x("x", {K, n}), y("y", {n, J}), z("z", {n, J});
  wp::array<double, 1> t("t", {n});
  fill2(x, [](index_t a, index_t b) { return double(a * 3 + b); });
  fill1(t, [](index_t b) { return 100.0 + double(b); });
  auto m1 = wp::map("acc", wp::space({0, K}, {1, n}), t(i) += x(k, i));
  auto m2 = wp::map("first_reader", wp::space(n, J), y(r, c) = t(r) + 1.0);
  auto m3 = wp::map("second_reader", wp::space(n, J), z(r, c) = t(r) * 2.0);
  const wp::grid_shape g = P >= 4 ? wp::grid_shape{2, 2} : wp::grid_shape{P, 1};
  wp::schedule s;
  s.set(m1, g).set(m2, g).set(m3, g);
  auto plan = wp::distribute(wp::program(m1, m2, m3), s, ctx);
  for (int run = 1; run <= 2; ++run) {
    plan.run();
    std::vector<double> tw(n), yw, zw;
    for (index_t b = 0; b < n; ++b) {
      tw[std::size_t(b)] = 100.0 + double(b);
      if (b >= 1)
        for (int q = 0; q < run; ++q)
          for (index_t a = 0; a < K; ++a) tw[std::size_t(b)] += double(a * 3 + b);
      for (index_t e = 0; e < J; ++e) {
        yw.push_back(tw[std::size_t(b)] + 1.0);
        zw.push_back(tw[std::size_t(b)] * 2.0);
      }
    }
    INFO("run " << run << " on " << P << " ranks, grid " << g.str());
    REQUIRE(compare_on_root(ctx.comm(), t, tw) == "");
    REQUIRE(compare_on_root(ctx.comm(), y, yw) == "");
    REQUIRE(compare_on_root(ctx.comm(), z, zw) == "");
  }
}

TEST_CASE("programs: root sends only the parts of an input no earlier map writes",
          "[mpi][programs]") {
  // "head" writes x over [0, 6) of 11; "all" reads x and w over [0, 11); "bump" adds 1 to every
  // x. Root must send x's [6, 11) (to "all", and as old values to "bump") and w's [6, 11)
  // beyond what "head" reads: nothing that the first execute() overwrites.
  wp::context ctx(g_argc, g_argv);
  const index_t P = ctx.size(), me = ctx.rank();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 11, h = 6;
  wp::array<double, 1> x("x", {n}), w("w", {n}), y("y", {n});
  fill1(x, [](index_t b) { return 50.0 + double(b); });
  fill1(w, [](index_t b) { return double(b % 5) - 2.0; });
  auto m1 = wp::map("head", wp::space(h), x(i) = w(i) * 2.0);
  auto m2 = wp::map("all", wp::space(n), y(i) = x(i) + w(i));
  auto m3 = wp::map("bump", wp::space(n), x(i) += 1.0);
  wp::schedule s;
  s.set(m1, wp::grid_shape{P}).set(m2, wp::grid_shape{P}).set(m3, wp::grid_shape{P});
  auto plan = wp::distribute(wp::program(m1, m2, m3), s, ctx);
  // run `run` (1, 2): x below h is "head"'s, above it root's x from before, plus run - 1
  auto check = [&](int run) {
    std::vector<double> xw(n), yw(n);
    for (index_t b = 0; b < n; ++b) {
      const double wv = double(b % 5) - 2.0;
      const double x1 = b < h ? wv * 2.0 : 49.0 + double(run) + double(b);
      yw[std::size_t(b)] = x1 + wv;
      xw[std::size_t(b)] = x1 + 1.0;
    }
    return compare_on_root(ctx.comm(), x, xw) + compare_on_root(ctx.comm(), y, yw);
  };
  plan.run();
  REQUIRE(check(1) == "");
  // what root sends this rank, from the blocks: w's block of [0, 6) for "head", then the part
  // of its [0, 11) block at or above 6 three times (x for "all", x's old values for "bump",
  // w for "all")
  index_t want = 0;
  if (me != 0) {
    const auto b6 = block_of(h, P, me), b11 = block_of(n, P, me);
    want = b6.size + 3 * std::max<index_t>(0, b11.end() - std::max(b11.start, h));
  }
  want *= index_t(sizeof(double));
  const auto st = plan.stats();
  INFO("rank " << me << " of " << P);
  REQUIRE(st.predicted_scatter_received == want);
  REQUIRE(st.scatter.bytes_received == want);
  REQUIRE(all_problems(ctx.comm(), measured_vs_predicted(plan, 1)) == "");
  // again: the program writes x, so root's new x goes out; the results are those of a second run
  plan.run();
  REQUIRE(check(2) == "");
}

// A map over a space of rank 0 (one point: `s() = 0`) runs on rank 0 under the grid (), in a
// program as alone; it once idled there, so an accumulator it reset kept growing.
TEST_CASE("programs: maps of rank 0 run their one point on rank 0", "[mpi][programs]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size(), n = 11;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n});
  wp::array<double, 0> s("s", {}), t("t", {});
  fill1(x, [](index_t a) { return double(a % 4) - 0.5; });
  double sum = 0;
  for (index_t a = 0; a < n; ++a) sum += double(a % 4) - 0.5;
  auto reset = wp::map("reset", wp::space(), s() = 0.0);
  auto acc = wp::map("acc", wp::space(n), s() += x(i));
  auto twice = wp::map("twice", wp::space(), t() = 2.0 * s());
  wp::schedule sc;
  sc.set(reset, wp::grid_shape{}).set(acc, wp::grid_shape{p}).set(twice, wp::grid_shape{});
  auto plan = wp::distribute(wp::program(reset, acc, twice), sc, ctx);
  REQUIRE(plan.explain().find("rank 0: idle") == std::string::npos);
  plan.scatter();
  for (int k = 0; k < 3; ++k) plan.execute();  // reset every time: no growth
  plan.gather(s, t);
  REQUIRE(compare_on_root(ctx.comm(), s, {sum}, 1e-14) == "");
  REQUIRE(compare_on_root(ctx.comm(), t, {2 * sum}, 1e-14) == "");
  // alone, distributed on the grid ()
  wp::distribute(wp::map("alone", wp::space(), t() = 7.0), wp::grid_shape{}, ctx).run();
  REQUIRE(compare_on_root(ctx.comm(), t, {7.0}, 0.0) == "");
}
