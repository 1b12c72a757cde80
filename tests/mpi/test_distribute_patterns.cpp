/// \file test_distribute_patterns.cpp
/// Access patterns under wp::distribute, at every communicator size: elementwise maps with
/// broadcasting, reductions whose reduced axis is partitioned (sum, max, min into pre-filled
/// outputs), swapped axes, a halo stencil, reversed, strided and constant subscripts, CSR
/// SpMV with data-dependent ranges, arrays generated in place by init(), the stepwise
/// scatter / execute / gather protocol, plan.local(), idle ranks, zero-extent spaces and the
/// compile-time mapping of grid-mapped accesses.
///
/// Results are compared on root with plain loops written here; input values are small
/// integers or multiples of 1/4, so the results are exact and compared exactly. Where the
/// bytes are derived by hand from the tiling they are compared with the plan's prediction
/// for every rank; every plan's measured bytes are compared with its prediction on every rank.

#include "mpi_test_support.hpp"

#include <limits>
#include <random>

namespace {

using namespace mpitest;

/// The grid shapes of a test that fit this communicator; the others are reported on root.
std::vector<wp::grid_shape> fitting(const wp::context& ctx, std::vector<wp::grid_shape> gs) {
  std::vector<wp::grid_shape> out;
  for (auto& g : gs) {
    if (g.product() <= ctx.size())
      out.push_back(g);
    else if (ctx.is_root())
      WARN("grid " << g.str() << " skipped: it needs " << g.product() << " ranks, this run has "
                   << ctx.size());
  }
  return out;
}

double xv2(index_t i, index_t j) { return double((i * 5 + j * 7) % 23 - 11); }

}  // namespace

// ================================================================ elementwise

TEST_CASE("patterns: elementwise with broadcasting out(i,j,k) = x(i,j,k) + y(j,k)",
          "[mpi][distribute][patterns]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, j, k] = wp::indices<3>();
  constexpr index_t I = 5, J = 6, K = 7;
  const index_t es = sizeof(std::int32_t);
  for (const auto& g : fitting(ctx, {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {2, 2, 1}})) {
    INFO("grid " << g.str() << " on " << P << " ranks");
    wp::array<std::int32_t, 3> x("x", {I, J, K}), out("out", {I, J, K});
    wp::array<std::int32_t, 2> y("y", {J, K});
    fill3(x, [](index_t a, index_t b, index_t c) { return a * 100 + b * 10 + c; });
    fill2(y, [](index_t b, index_t c) { return -(b * 1000 + c * 7); });
    fill3(out, [](index_t, index_t, index_t) { return -1; });
    auto m = wp::map("add", wp::space(I, J, K), out(i, j, k) = x(i, j, k) + y(j, k));
    auto plan = wp::distribute(m, g, ctx);
    plan.run();
    std::vector<double> want;
    for (index_t a = 0; a < I; ++a)
      for (index_t b = 0; b < J; ++b)
        for (index_t c = 0; c < K; ++c)
          want.push_back(double(a * 100 + b * 10 + c - (b * 1000 + c * 7)));
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");

    // Bytes by hand. x and out are cut like the space; y(j,k) is the same for every i, so
    // along grid dimension 0 it goes to the group leader and is broadcast from there. A plain
    // '=' that covers its box needs no old values of out.
    bytes_by_rank want_b(P);
    const index_t g0 = g.dims[0], g1 = g.dims[1];
    for (int r = 0; r < int(g.product()); ++r) {
      const index_t a = r / g1, b = r % g1;
      const index_t rows = block_of(I, g0, a).size, cols = block_of(J, g1, b).size;
      want_b.scatter(0, r, rows * cols * K * es);  // x
      want_b.gather(r, 0, rows * cols * K * es);   // out
      // y: the leader of r's group is (0, b) = rank b; root sends it, it broadcasts
      const int leader = int(b);
      if (leader == r)
        want_b.scatter(0, r, cols * K * es);
      else
        want_b.scatter(leader, r, cols * K * es);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
    const auto cy = plan.collectives(y), cout = plan.collectives(out);
    INFO("y: " << join(cy) << "; out: " << join(cout));
    REQUIRE(has(cy, "Bcast") == (g0 > 1));
    REQUIRE(has(cout, "Gatherv"));
    REQUIRE_FALSE(has(cout, "Scatterv"));  // no old values for a dense '='
  }
}

TEST_CASE("patterns: in-place update v(i) = v(i) * 2 + 1", "[mpi][distribute][patterns]") {
  // A map that reads the array it writes. API.md section 6: "each execute() runs the program
  // again on the current values", so scatter(); execute(); execute(); gather(); must equal two
  // run()s: 4v + 3.
  wp::context ctx(g_argc, g_argv);
  auto [i] = wp::indices<1>();
  constexpr index_t n = 19;
  wp::array<double, 1> v("v", {n});
  fill1(v, [](index_t a) { return double(a) - 4.0; });
  auto m = wp::map("inplace", wp::space(n), v(i) = v(i) * 2.0 + 1.0);
  auto plan = wp::distribute(m, wp::grid_shape{index_t(ctx.size())}, ctx);
  std::vector<double> once(n), twice(n);
  for (index_t a = 0; a < n; ++a) {
    once[a] = (double(a) - 4.0) * 2.0 + 1.0;
    twice[a] = once[a] * 2.0 + 1.0;
  }
  SECTION("run() twice: the second starts from root's new values") {
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), v, once) == "");
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), v, twice) == "");
  }
  SECTION("execute() twice between one scatter and one gather runs the map twice") {
    plan.scatter();
    plan.execute();
    plan.execute();
    plan.gather();
    REQUIRE(compare_on_root(ctx.comm(), v, twice) == "");
  }
}

// ================================================================ reductions

namespace {

enum class red { sum, max, min };

/// out(i) op= x(i, j) on 15 x 13 under grid g, out pre-filled; returns the problems.
template <class T, red R>
std::string run_reduction(const wp::context& ctx, const wp::grid_shape& g) {
  auto [i, j] = wp::indices<2>();
  constexpr index_t rows = 15, cols = 13;
  const int P = ctx.size();
  const index_t es = sizeof(T);
  wp::array<T, 2> x("x", {rows, cols});
  wp::array<T, 1> out("out", {rows});
  fill2(x, [](index_t a, index_t b) { return xv2(a, b); });
  auto old = [](index_t a) -> double {
    if constexpr (R == red::sum)
      return std::is_integral_v<T> ? double(a * 2 - 9) : double(a) / 2.0;
    else if constexpr (R == red::max)
      return a % 3 == 0 ? 100.0 : -100.0;  // some rows keep it
    else
      return a % 4 == 0 ? -100.0 : 100.0;
  };
  fill1(out, old);
  auto stmt = [&] {
    if constexpr (R == red::sum)
      return out(i) += x(i, j);
    else if constexpr (R == red::max)
      return wp::max_into(out(i), x(i, j));
    else
      return wp::min_into(out(i), x(i, j));
  }();
  auto plan = wp::distribute(wp::map("reduce", wp::space(rows, cols), stmt), g, ctx);
  plan.run();
  std::vector<double> want(rows);
  for (index_t a = 0; a < rows; ++a) {
    double acc = old(a);
    for (index_t b = 0; b < cols; ++b) {
      if constexpr (R == red::sum)
        acc += xv2(a, b);
      else if constexpr (R == red::max)
        acc = std::max(acc, xv2(a, b));
      else
        acc = std::min(acc, xv2(a, b));
    }
    want[a] = acc;
  }
  std::string problems = compare_on_root(ctx.comm(), out, want);
  problems += all_problems(ctx.comm(), measured_problems(plan));
  // Bytes by hand. (p,1): x and out cut by rows: x's rows and out's old values go out, out's
  // rows come back. (1,p): x cut by columns; every rank makes partial results for all rows,
  // which are combined onto root (p-1 partials of 15 elements); root's old values stay there.
  bytes_by_rank want_b(P);
  const index_t g0 = g.dims[0], g1 = g.dims[1];
  for (int r = 1; r < int(g.product()); ++r) {
    if (g1 == 1) {
      const index_t rs = block_of(rows, g0, r).size;
      want_b.scatter(0, r, rs * cols * es);
      want_b.scatter(0, r, rs * es);
      want_b.gather(r, 0, rs * es);
    } else {
      const index_t cs = block_of(cols, g1, r).size;
      want_b.scatter(0, r, rows * cs * es);
      want_b.gather(r, 0, rows * es);
    }
  }
  problems += all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank()));
  const std::string op = R == red::sum   ? "Reduce(sum)"
                         : R == red::max ? "Reduce(max)"
                                         : "Reduce(min)";
  const auto c = plan.collectives(out);
  if (has(c, op) != (g1 > 1))
    problems += "collectives(out) = " + join(c) + " under " + g.str() + "\n";
  if (g1 > 1 && plan.explain().find(op) == std::string::npos)
    problems += "explain() lacks " + op + "\n";
  return problems;
}

}  // namespace

TEST_CASE("patterns: reductions with the reduced axis partitioned, into pre-filled outputs",
          "[mpi][distribute][patterns][reduce]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  for (const wp::grid_shape& g : {wp::grid_shape{1, p}, wp::grid_shape{p, 1}}) {
    INFO("grid " << g.str() << " on " << p << " ranks");
    SECTION("out(i) += x(i, j), double, grid " + g.str()) {
      REQUIRE(run_reduction<double, red::sum>(ctx, g) == "");
    }
    SECTION("max_into(out(i), x(i, j)), float, grid " + g.str()) {
      REQUIRE(run_reduction<float, red::max>(ctx, g) == "");
    }
    SECTION("min_into(out(i), x(i, j)), int64, grid " + g.str()) {
      REQUIRE(run_reduction<std::int64_t, red::min>(ctx, g) == "");
    }
    SECTION("out(i) += x(i, j), int32, grid " + g.str()) {
      REQUIRE(run_reduction<std::int32_t, red::sum>(ctx, g) == "");
    }
  }
}

TEST_CASE("patterns: overlapping += writes out(i) += x(i); out(i + 1) += x(i)",
          "[mpi][distribute][patterns][reduce]") {
  // Neighbouring ranks both add into the element at their boundary: their write boxes
  // overlap, so each element's contributions must still be summed exactly once with the old
  // value.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 23;
  const index_t es = sizeof(double);
  wp::array<double, 1> x("x", {n - 1}), out("out", {n});
  fill1(x, [](index_t a) { return double(a * 3 % 7) + 0.25; });
  fill1(out, [](index_t a) { return 100.0 * double(a); });
  auto m = wp::map("scatter_add", wp::space(n - 1), out(i) += x(i), out(i + 1) += x(i));
  auto plan = wp::distribute(m, wp::grid_shape{index_t(P)}, ctx);
  plan.run();
  std::vector<double> want(n);
  for (index_t a = 0; a < n; ++a)
    want[a] = 100.0 * double(a) + (a < n - 1 ? double(a * 3 % 7) + 0.25 : 0.0) +
              (a >= 1 ? double((a - 1) * 3 % 7) + 0.25 : 0.0);
  REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  // Bytes by hand: rank r gets its block of x and returns its block of out plus one element.
  bytes_by_rank want_b(P);
  for (int r = 1; r < P; ++r) {
    const index_t s = block_of(n - 1, P, r).size;
    want_b.scatter(0, r, s * es);
    want_b.gather(r, 0, (s + 1) * es);
  }
  REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
  if (P > 1) REQUIRE(has(plan.collectives(out), "Gatherv+combine"));
}

TEST_CASE(
    "patterns: overlapping += writes with partial sums, out(i) += x(i, j); out(i + 1) += x(i, j)",
    "[mpi][distribute][patterns][reduce]") {
  // Along j the partial sums are reduced within groups; along i the groups' boxes overlap at
  // the block boundaries and are combined on root.
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t n = 14, C = 5;
  auto xf = [](index_t a, index_t b) { return double((a * 7 + b * 3) % 10) - 4.5; };
  for (const auto& g : fitting(ctx, {{1, 1}, {p, 1}, {1, p}, {2, 2}})) {
    INFO("grid " << g.str() << " on " << p << " ranks");
    wp::array<double, 2> x("x", {n - 1, C});
    wp::array<double, 1> out("out", {n});
    fill2(x, xf);
    fill1(out, [](index_t a) { return 10.0 * double(a); });
    auto m = wp::map("scatter_add2", wp::space(n - 1, C), out(i) += x(i, j), out(i + 1) += x(i, j));
    auto plan = wp::distribute(m, g, ctx);
    plan.run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) {
      want[a] = 10.0 * double(a);
      for (index_t b = 0; b < C; ++b) {
        if (a < n - 1) want[a] += xf(a, b);
        if (a >= 1) want[a] += xf(a - 1, b);
      }
    }
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    const auto c = plan.collectives(out);
    INFO(join(c));
    REQUIRE(has(c, "Reduce(sum)") == (g.dims[1] > 1));
    REQUIRE(has(c, "Gatherv+combine") == (g.dims[0] > 1));
  }
}

TEST_CASE("patterns: reductions into rank-0 arrays", "[mpi][distribute][patterns][reduce]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 21;
  auto xf = [](index_t a) { return double(a % 6) - 2.5; };
  wp::array<double, 1> x("x", {n});
  wp::array<double, 0> loss("loss", {}), top("top", {});
  fill1(x, xf);
  if (double* d = loss.data()) d[0] = 0.75;
  if (double* d = top.data()) d[0] = -50.0;
  double s = 0.75, t = -50.0;
  for (index_t a = 0; a < n; ++a) {
    s += xf(a) * xf(a);
    t = std::max(t, xf(a));
  }
  auto p1 = wp::distribute(wp::map("loss", wp::space(n), loss() += x(i) * x(i)),
                           wp::grid_shape{index_t(P)}, ctx);
  p1.run();
  auto p2 = wp::distribute(wp::map("top", wp::space(n), wp::max_into(top(), x(i))),
                           wp::grid_shape{index_t(P)}, ctx);
  p2.run();
  REQUIRE(compare_on_root(ctx.comm(), loss, {s}) == "");
  REQUIRE(compare_on_root(ctx.comm(), top, {t}) == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(p1) + measured_problems(p2)) == "");
  // bytes by hand: x's blocks out, one partial of 8 bytes back from each rank r >= 1
  bytes_by_rank want_b(P);
  for (int r = 1; r < P; ++r) {
    want_b.scatter(0, r, block_of(n, P, r).size * 8);
    want_b.gather(r, 0, 8);
  }
  REQUIRE(all_problems(ctx.comm(), bytes_problems(p1, want_b, ctx.rank())) == "");
  REQUIRE(all_problems(ctx.comm(), bytes_problems(p2, want_b, ctx.rank())) == "");
}

// ================================================================ subscripts

TEST_CASE("patterns: swapped axes out(i, j) = x(j, i)", "[mpi][distribute][patterns]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t I = 7, J = 9;
  for (const wp::grid_shape& g :
       {wp::grid_shape{1, 1}, wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
    INFO("grid " << g.str());
    wp::array<float, 2> x("x", {J, I}), out("out", {I, J});
    fill2(x, [](index_t b, index_t a) { return float(b * 16 + a); });
    auto plan = wp::distribute(wp::map("transpose", wp::space(I, J), out(i, j) = x(j, i)), g, ctx);
    plan.run();
    std::vector<double> want;
    for (index_t a = 0; a < I; ++a)
      for (index_t b = 0; b < J; ++b) want.push_back(double(b * 16 + a));
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    // x's box of rank r is its block transposed: the same number of elements
    bytes_by_rank want_b{int(p)};
    for (int r = 1; r < int(g.product()); ++r) {
      const index_t n = g.dims[0] > 1 ? block_of(I, p, r).size * J : I * block_of(J, p, r).size;
      want_b.scatter(0, r, n * index_t(sizeof(float)));
      want_b.gather(r, 0, n * index_t(sizeof(float)));
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
  }
}

TEST_CASE("patterns: 1-D subscripts (halo, reversed, strided, constant, strided write)",
          "[mpi][distribute][patterns]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  const wp::grid_shape g{p};
  auto [i] = wp::indices<1>();
  const index_t es = sizeof(double);
  auto xf = [](index_t a) { return double(a * a % 29) - 3.5; };

  SECTION("halo stencil out(i) = x(i - 1) + x(i + 1) on space({1, n - 1})") {
    constexpr index_t n = 23;
    wp::array<double, 1> x("x", {n}), out("out", {n});
    fill1(x, xf);
    fill1(out, [](index_t) { return -1.0; });
    auto plan = wp::distribute(
        wp::map("stencil", wp::space({1, n - 1}), out(i) = x(i - 1) + x(i + 1)), g, ctx);
    plan.run();
    std::vector<double> want(n, -1.0);  // out(0) and out(n-1) are not written: root's values stay
    for (index_t a = 1; a < n - 1; ++a) want[a] = xf(a - 1) + xf(a + 1);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    // rank r runs block r of [1, n-1) and reads one more element on each side
    bytes_by_rank want_b(P);
    for (int r = 1; r < P; ++r) {
      const index_t s = block_of(1, n - 1, p, r).size;
      want_b.scatter(0, r, (s + 2) * es);
      want_b.gather(r, 0, s * es);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
    // the boxes explain() reports: rank r reads [start-1 : end+1]
    const std::string e = plan.explain();
    REQUIRE_THAT(e, Catch::Contains("x[GENERAL:0] (general)"));
    for (int r = 0; r < P; ++r) {
      const block b = block_of(1, n - 1, p, r);
      const std::string line = "rank " + std::to_string(r) + " reads [" +
                               std::to_string(b.start - 1) + ":" + std::to_string(b.end() + 1) +
                               "]";
      INFO(e);
      REQUIRE(e.find(line) != std::string::npos);
    }
  }
  SECTION("reversed out(i) = x(n - 1 - i)") {
    const index_t n = 23;  // a runtime offset
    wp::array<double, 1> x("x", {n}), out("out", {n});
    fill1(x, xf);
    auto plan = wp::distribute(wp::map("reverse", wp::space(n), out(i) = x(n - 1 - i)), g, ctx);
    plan.run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) want[a] = xf(n - 1 - a);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    bytes_by_rank want_b(P);
    for (int r = 1; r < P; ++r) {
      const index_t s = block_of(n, p, r).size;  // the mirrored block: as many elements
      want_b.scatter(0, r, s * es);
      want_b.gather(r, 0, s * es);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
  }
  SECTION("strided read out(i) = x(2 * i)") {
    constexpr index_t n = 17;
    wp::array<double, 1> x("x", {2 * n - 1}), out("out", {n});
    fill1(x, xf);
    auto plan = wp::distribute(wp::map("stride", wp::space(n), out(i) = x(2 * i)), g, ctx);
    plan.run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) want[a] = xf(2 * a);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    bytes_by_rank want_b(P);
    for (int r = 1; r < P; ++r) {
      const index_t s = block_of(n, p, r).size;  // x from 2*start to 2*(end-1): 2s-1 elements
      want_b.scatter(0, r, (2 * s - 1) * es);
      want_b.gather(r, 0, s * es);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
  }
  SECTION("constant subscript out(i) = x(i, 0)") {
    constexpr index_t n = 17;
    wp::array<double, 2> x("x", {n, 3});
    wp::array<double, 1> out("out", {n});
    fill2(x, [](index_t a, index_t b) { return double(a * 10 + b); });
    auto plan = wp::distribute(wp::map("column0", wp::space(n), out(i) = x(i, 0)), g, ctx);
    plan.run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) want[a] = double(a * 10);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    bytes_by_rank want_b(P);
    for (int r = 1; r < P; ++r) {
      const index_t s = block_of(n, p, r).size;  // only column 0 of r's rows
      want_b.scatter(0, r, s * es);
      want_b.gather(r, 0, s * es);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
  }
  SECTION("strided write out(2 * i) = x(i) keeps the odd elements") {
    constexpr index_t n = 17;
    wp::array<double, 1> x("x", {n}), out("out", {2 * n - 1});
    fill1(x, xf);
    fill1(out, [](index_t a) { return 1000.0 + double(a); });
    auto plan = wp::distribute(wp::map("spread", wp::space(n), out(2 * i) = x(i)), g, ctx);
    plan.run();
    std::vector<double> want(2 * n - 1);
    for (index_t a = 0; a < 2 * n - 1; ++a) want[a] = a % 2 == 0 ? xf(a / 2) : 1000.0 + double(a);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  }
}

TEST_CASE("patterns: global coordinates, affine inner ranges and wp::all under a grid",
          "[mpi][distribute][patterns]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  SECTION("wp::val gives global coordinates on every rank's block") {
    auto [i, j] = wp::indices<2>();
    for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
      INFO("grid " << g.str());
      wp::array<std::int64_t, 2> out("out", {9, 7});
      auto plan = wp::distribute(
          wp::map("coords", wp::space(9, 7), out(i, j) = wp::val(i) * 100 + wp::val(j)), g, ctx);
      plan.run();
      std::vector<double> want;
      for (index_t a = 0; a < 9; ++a)
        for (index_t b = 0; b < 7; ++b) want.push_back(double(a * 100 + b));
      REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
      REQUIRE(plan.predicted_total(true) == 0);  // nothing is read
    }
  }
  SECTION("a 3-point convolution out(i) = sum(range(r, 0, 3), w(r) * x(i + r))") {
    auto [i, r] = wp::indices<2>();
    constexpr index_t n = 20;
    auto xf = [](index_t a) { return double(a % 7) - 3.0; };
    wp::array<double, 1> x("x", {n}), w("w", {3}), out("out", {n - 2});
    fill1(x, xf);
    fill1(w, [](index_t a) { return double(a) - 1.0; });
    auto plan = wp::distribute(
        wp::map("conv", wp::space(n - 2), out(i) = wp::sum(wp::range(r, 0, 3), w(r) * x(i + r))),
        wp::grid_shape{p}, ctx);
    plan.run();
    std::vector<double> want(n - 2);
    for (index_t a = 0; a < n - 2; ++a) want[a] = -xf(a) + xf(a + 2);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    // rank r reads x over its block and two more; all of w, broadcast from root
    bytes_by_rank want_b(P);
    for (int q = 1; q < P; ++q) {
      const index_t s = block_of(n - 2, p, q).size;
      want_b.scatter(0, q, (s + 2) * 8);
      want_b.scatter(0, q, 3 * 8);
      want_b.gather(q, 0, s * 8);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
  }
  SECTION("row sums over wp::all: out(i) = sum(x(i, all))") {
    auto [i] = wp::indices<1>();
    wp::array<double, 2> x("x", {10, 6});
    wp::array<double, 1> out("out", {10});
    fill2(x, xv2);
    auto plan = wp::distribute(wp::map("rowsum", wp::space(10), out(i) = wp::sum(x(i, wp::all))),
                               wp::grid_shape{p}, ctx);
    plan.run();
    std::vector<double> want(10, 0.0);
    for (index_t a = 0; a < 10; ++a)
      for (index_t b = 0; b < 6; ++b) want[a] += xv2(a, b);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    // x is grid-mapped: its rows are partitioned, its columns read whole
    REQUIRE_THAT(plan.explain(), Catch::Contains(P > 1 ? "x[PARTITION:0 on g0, REPLICATE:1]\n"
                                                       : "x[REPLICATE:0, REPLICATE:1]\n"));
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  }
}

// ================================================================ CSR

TEST_CASE("patterns: CSR SpMV row-partitioned, data-dependent ranges",
          "[mpi][distribute][patterns][csr]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, jj] = wp::indices<2>();
  constexpr index_t rows = 19, cols = 17;
  // A random sparse matrix, fixed seed, generated alike on every rank; rows 3 and 10 empty.
  std::mt19937 rng(20240611u);
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int32_t> cidx;
  std::vector<double> v;
  for (index_t a = 0; a < rows; ++a) {
    const int len = (a == 3 || a == 10) ? 0 : int(rng() % 5);
    for (int q = 0; q < len; ++q) {
      cidx.push_back(std::int32_t(rng() % cols));
      v.push_back(double(int(rng() % 17) - 8) / 4.0);
    }
    ptr.push_back(std::int64_t(cidx.size()));
  }
  const index_t nnz = index_t(cidx.size());
  auto xf = [](index_t c) { return double(c % 5) - 1.5; };

  wp::array<std::int64_t, 1> row("row", {rows + 1});
  wp::array<std::int32_t, 1> col("col", {nnz});
  wp::array<double, 1> val("val", {nnz}), x("x", {cols}), y("y", {rows});
  fill1(row, [&](index_t a) { return ptr[a]; });
  fill1(col, [&](index_t q) { return cidx[q]; });
  fill1(val, [&](index_t q) { return v[q]; });
  fill1(x, xf);
  fill1(y, [](index_t) { return 999.0; });  // '=' overwrites; empty rows become 0
  std::vector<double> want(rows, 0.0);
  for (index_t a = 0; a < rows; ++a)
    for (std::int64_t q = ptr[a]; q < ptr[a + 1]; ++q) want[a] += v[q] * xf(cidx[q]);
  REQUIRE(want[3] == 0.0);

  for (const wp::grid_shape& g : {wp::grid_shape{index_t(P)}, wp::grid_shape{1}}) {
    INFO("grid " << g.str() << " on " << P << " ranks");
    auto m = wp::map("spmv", wp::space(rows),
                     y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj))));
    auto plan = wp::distribute(m, g, ctx);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    // Bytes by hand: rank r reads row(start .. end) (one more than its rows); root inspects
    // the row pointers, so the column indices and values come as exactly the entries of the
    // rank's rows, ptr[start] .. ptr[end]; x is addressed through data: every rank gets it all.
    const index_t ap = g.product();
    bytes_by_rank want_b(P);
    for (int r = 1; r < int(ap); ++r) {
      const block b = block_of(rows, ap, r);
      const index_t entries = ptr[std::size_t(b.end())] - ptr[std::size_t(b.start)];
      want_b.scatter(0, r, (b.size + 1) * 8);
      want_b.scatter(0, r, entries * 4 + entries * 8 + cols * 8);
      want_b.gather(r, 0, b.size * 8);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
    REQUIRE_THAT(plan.explain(), Catch::Contains("x[INDIRECT:0]"));
    if (ap > 1) {
      REQUIRE_FALSE(has(plan.collectives(val), "Bcast"));
      REQUIRE(has(plan.collectives(x), "Bcast"));
      REQUIRE_THAT(plan.explain(), Catch::Contains("data-dependent range 0, inspected on root"));
    }
    fill1(y, [](index_t) { return 999.0; });
  }
}

TEST_CASE("patterns: a scatter-add dE(tok(b, s), d) += g(b, s, d) (an embedding's gradient)",
          "[mpi][distribute][patterns][scatter]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [b, s, d] = wp::indices<3>();
  constexpr index_t B = 5, S = 7, D = 6, V = 11;  // uneven; tokens 9 and 10 never occur
  wp::array<std::int64_t, 2> tok("tok", {B, S});
  wp::array<double, 3> g("g", {B, S, D});
  wp::array<double, 2> dE("dE", {V, D});
  auto tf = [](index_t x, index_t y) { return std::int64_t((x * 4 + y * y) % 9); };
  auto gf = [](index_t x, index_t y, index_t z) { return double((x * 7 + y * 3 + z) % 13) - 6.0; };
  auto ef = [](index_t v, index_t z) { return 0.25 * double(v) - 0.5 * double(z); };
  fill2(tok, tf);
  fill3(g, gf);
  std::vector<double> want(std::size_t(V * D));
  for (index_t v = 0; v < V; ++v)
    for (index_t z = 0; z < D; ++z) want[std::size_t(v * D + z)] = ef(v, z);
  for (index_t x = 0; x < B; ++x)
    for (index_t y = 0; y < S; ++y)
      for (index_t z = 0; z < D; ++z) want[std::size_t(tf(x, y) * D + z)] += gf(x, y, z);

  std::vector<wp::grid_shape> grids{wp::grid_shape{index_t(P), 1, 1},
                                    wp::grid_shape{1, index_t(P), 1},
                                    wp::grid_shape{1, 1, index_t(P)}};
  if (P == 4) grids.push_back(wp::grid_shape{2, 1, 2});
  for (const wp::grid_shape& gr : grids) {
    INFO("grid " << gr.str() << " on " << P << " ranks");
    fill2(dE, ef);  // '+=' keeps the old values, counted once
    auto m = wp::map("demb", wp::space(B, S, D), dE(tok(b, s), d) += g(b, s, d));
    auto plan = wp::distribute(m, gr, ctx);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), dE, want, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    // The written axis is data-dependent: every rank's box spans the vocabulary, so ranks
    // along b or s hold partial sums of the same box (a split reduction), while d splits it.
    REQUIRE_THAT(plan.explain(), Catch::Contains("dE[INDIRECT:0"));
    bytes_by_rank want_b(P);
    if (gr.dims[2] == 1) {  // b or s split: tok and g by blocks, dE reduced onto root
      const int along = gr.dims[0] > 1 ? 0 : 1;
      for (int r = 1; r < P; ++r) {
        const block k = block_of(along == 0 ? B : S, P, r);
        const index_t pts = k.size * (along == 0 ? S : B);
        want_b.scatter(0, r, pts * 8 + pts * D * 8);
        if (k.size > 0) want_b.gather(r, 0, V * D * 8);
      }
      REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
      if (P > 1) REQUIRE(has(plan.collectives(dE), "Reduce(sum)"));
    } else if (gr.dims[0] == 1) {  // d split: every rank all of tok, its columns of g and dE
      for (int r = 1; r < P; ++r) {
        const block k = block_of(D, P, r);
        if (k.size == 0) continue;
        want_b.scatter(0, r, B * S * 8 + B * S * k.size * 8 + V * k.size * 8);
        want_b.gather(r, 0, V * k.size * 8);
      }
      REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
      REQUIRE_FALSE(has(plan.collectives(dE), "Reduce(sum)"));
    }
  }

  SECTION("a token outside the vocabulary is a shape_error on every rank") {
    if (ctx.rank() == 0) tok.data()[B * S - 1] = V + 2;
    auto plan = wp::distribute(wp::map("demb", wp::space(B, S, D), dE(tok(b, s), d) += g(b, s, d)),
                               wp::grid_shape{index_t(P), 1, 1}, ctx);
    const std::string msg = what_of([&] { plan.run(); });
    REQUIRE_THAT(msg, Catch::Contains("shape_error") && Catch::Contains("'demb'") &&
                          Catch::Contains(std::to_string(V + 2)) &&
                          Catch::Contains("outside [0, " + std::to_string(V) + ")"));
    REQUIRE(all_problems(ctx.comm(), msg.empty() ? "no error" : "") == "");
  }
}

// ================================================================ init()

TEST_CASE("patterns: arrays filled with init() are generated in place",
          "[mpi][distribute][patterns][init]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 11, C = 9;
  auto gx = [](std::array<index_t, 2> c) { return double(c[0] * 3 - c[1]); };
  auto gz = [](std::array<index_t, 1> c) { return 0.5 * double(c[0]); };

  SECTION("a read-only input: out(i, j) = x(i, j) * 2 + y(j), x from init()") {
    for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
      INFO("grid " << g.str());
      wp::array<double, 2> x("x", {R, C}), out("out", {R, C});
      wp::array<double, 1> y("y", {C});
      x.init(gx);
      fill1(y, [](index_t b) { return double(b) / 4.0; });
      auto plan =
          wp::distribute(wp::map("gen", wp::space(R, C), out(i, j) = x(i, j) * 2.0 + y(j)), g, ctx);
      plan.run();
      std::vector<double> want;
      for (index_t a = 0; a < R; ++a)
        for (index_t b = 0; b < C; ++b) want.push_back(gx({a, b}) * 2.0 + double(b) / 4.0);
      REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
      REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
      REQUIRE(plan.collectives(x) == std::vector<std::string>{"generate"});
      // x crosses no link: the scatter phase moves only y
      bytes_by_rank want_b(P);
      for (int r = 1; r < P; ++r) {
        const index_t n = g.dims[0] > 1 ? block_of(R, p, r).size * C : R * block_of(C, p, r).size;
        want_b.scatter(0, r, (g.dims[0] > 1 ? C : block_of(C, p, r).size) * 8);  // y
        want_b.gather(r, 0, n * 8);
      }
      REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
      // and root never made a global copy of x
      REQUIRE(from_root(ctx.comm(), int(x.root_materialized())) == 0);
    }
  }
  SECTION("a written output whose old values come from init(): acc(i) += x(i, j)") {
    for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
      INFO("grid " << g.str());
      wp::array<double, 2> x("x", {R, C});
      wp::array<double, 1> acc("acc", {R});
      x.init(gx);
      acc.init(gz);
      auto plan = wp::distribute(wp::map("genacc", wp::space(R, C), acc(i) += x(i, j)), g, ctx);
      // Before the run both arrays are generated in place: nothing is scattered at all.
      REQUIRE(has(plan.collectives(acc), "generate"));
      REQUIRE(plan.predicted_total(true) == 0);
      const wp::plan_stats predicted = plan.stats();
      plan.run();
      std::vector<double> want(R);
      for (index_t a = 0; a < R; ++a) {
        want[a] = gz({a});  // the generated old value, counted once
        for (index_t b = 0; b < C; ++b) want[a] += gx({a, b});
      }
      REQUIRE(compare_on_root(ctx.comm(), acc, want) == "");
      // What the run moved is what was predicted before it.
      std::string bad;
      if (plan.stats().scatter.bytes_sent != 0 || plan.stats().scatter.bytes_received != 0)
        bad += "rank " + std::to_string(ctx.rank()) + " scattered bytes; ";
      if (plan.stats().gather.bytes_sent != predicted.predicted_gather_sent ||
          plan.stats().gather.bytes_received != predicted.predicted_gather_received)
        bad += "rank " + std::to_string(ctx.rank()) + " gather bytes differ from the prediction; ";
      REQUIRE(all_problems(ctx.comm(), bad) == "");
      // acc now lives on root: the next scatter sends root's values instead of init()'s.
      REQUIRE_FALSE(has(plan.collectives(acc), "generate"));
    }
  }
  SECTION("a second run() of an init() output combines with the values the first one left") {
    // API.md section 3: '+=' combines "with the values the array holds when the map runs".
    // After the first run() root holds acc = init + row sums (gathered); the second run adds
    // the row sums again. Regenerating acc from init() would lose the first run.
    for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
      INFO("grid " << g.str());
      wp::array<double, 2> x("x", {R, C});
      wp::array<double, 1> acc("acc", {R});
      x.init(gx);
      acc.init(gz);
      auto plan = wp::distribute(wp::map("genacc2", wp::space(R, C), acc(i) += x(i, j)), g, ctx);
      plan.run();
      plan.run();
      std::vector<double> want(R);
      for (index_t a = 0; a < R; ++a) {
        want[a] = gz({a});
        for (index_t b = 0; b < C; ++b) want[a] += 2.0 * gx({a, b});
      }
      REQUIRE(compare_on_root(ctx.comm(), acc, want) == "");
    }
  }
  SECTION("a plan built before another plan gathered an init() array reads the gathered values") {
    // Both plans are built while x is only init(): the second must not regenerate x from
    // init() once the first has gathered x = 2 * init to root.
    for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
      INFO("grid " << g.str());
      wp::array<double, 2> x("x", {R, C}), out("out", {R, C});
      x.init(gx);
      auto doubler =
          wp::distribute(wp::map("dbl", wp::space(R, C), x(i, j) = x(i, j) * 2.0), g, ctx);
      auto reader =
          wp::distribute(wp::map("rd", wp::space(R, C), out(i, j) = x(i, j) + 1.0), g, ctx);
      REQUIRE(reader.collectives(x) == std::vector<std::string>{"generate"});
      doubler.run();
      reader.run();
      std::vector<double> want;
      for (index_t a = 0; a < R; ++a)
        for (index_t b = 0; b < C; ++b) want.push_back(2.0 * gx({a, b}) + 1.0);
      REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
      // the reader now scatters root's x, and says so; what it moved is what it predicted
      REQUIRE(has(reader.collectives(x), "Scatterv"));
      REQUIRE(all_problems(ctx.comm(), measured_problems(reader)) == "");
    }
  }
  SECTION("root's data() asked for after the plan was built is what the plan scatters") {
    for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
      INFO("grid " << g.str());
      wp::array<double, 2> x("x", {R, C}), out("out", {R, C});
      x.init(gx);
      auto plan =
          wp::distribute(wp::map("rootedit", wp::space(R, C), out(i, j) = x(i, j) - 3.0), g, ctx);
      if (ctx.is_root()) x.data()[R * C - 1] = 1000.0;  // root's copy made and changed
      plan.run();
      std::vector<double> want;
      for (index_t a = 0; a < R; ++a)
        for (index_t b = 0; b < C; ++b) want.push_back(gx({a, b}) - 3.0);
      want.back() = 1000.0 - 3.0;
      REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
      REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    }
  }
  SECTION("init() called again on every rank after a gather replaces the values") {
    const wp::grid_shape g{p, 1};
    wp::array<double, 2> x("x", {R, C});
    wp::array<double, 1> acc("acc", {R});
    x.init(gx);
    acc.init(gz);
    auto plan = wp::distribute(wp::map("reinit", wp::space(R, C), acc(i) += x(i, j)), g, ctx);
    plan.run();                                                        // acc now on root
    acc.init([](std::array<index_t, 1> c) { return -double(c[0]); });  // new old values
    plan.run();
    std::vector<double> want(R);
    for (index_t a = 0; a < R; ++a) {
      want[a] = -double(a);
      for (index_t b = 0; b < C; ++b) want[a] += gx({a, b});
    }
    REQUIRE(compare_on_root(ctx.comm(), acc, want) == "");
  }
}

// ================================================================ stepwise protocol

namespace {
double sa(index_t a, index_t k) { return double((a * 3 + k * 5) % 7 - 3) / 4.0; }
double sb(index_t k, index_t b) { return double((k * 2 + b * 9) % 11 - 5) / 4.0; }
double sc(index_t a, index_t b) { return double(a - b); }
constexpr index_t SM = 13, SN = 11, SK = 7;
std::vector<double> step_ref(int reps) {
  std::vector<double> w;
  for (index_t a = 0; a < SM; ++a)
    for (index_t b = 0; b < SN; ++b) {
      double s = 0;
      for (index_t k = 0; k < SK; ++k) s += sa(a, k) * sb(k, b);
      w.push_back(sc(a, b) + reps * s);
    }
  return w;
}
std::vector<wp::grid_shape> step_grids(const wp::context& ctx) {
  const index_t p = ctx.size();
  return fitting(ctx, {{p, 1, 1}, {1, p, 1}, {1, 1, p}, {2, 2, 1}, {1, 2, 2}});
}
}  // namespace

TEST_CASE("patterns: scatter, execute twice, gather: C += A*B holds old + 2*A*B",
          "[mpi][distribute][patterns][steps]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j, k] = wp::indices<3>();
  for (const auto& g : step_grids(ctx)) {
    INFO("grid " << g.str() << " on " << ctx.size() << " ranks");
    wp::array<double, 2> A("A", {SM, SK}), B("B", {SK, SN}), C("C", {SM, SN});
    fill2(A, sa);
    fill2(B, sb);
    fill2(C, sc);
    auto plan =
        wp::distribute(wp::map("mm", wp::space(SM, SN, SK), C(i, j) += A(i, k) * B(k, j)), g, ctx);
    plan.scatter();
    plan.execute();
    plan.execute();
    plan.gather();
    REQUIRE(compare_on_root(ctx.comm(), C, step_ref(2)) == "");
    REQUIRE(all_problems(ctx.comm(), plan.stats().runs == 2 ? "" : "runs != 2") == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 1, 1)) == "");
    // once more on the current values, and only C gathered by name
    plan.execute();
    plan.gather(C);
    REQUIRE(compare_on_root(ctx.comm(), C, step_ref(3)) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 1, 2)) == "");
    // a fresh run() starts again from root's values (old + 3AB)
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), C, step_ref(4)) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 2, 3)) == "");
  }
}

TEST_CASE("patterns: a plan only root works in runs in place on root's arrays",
          "[mpi][distribute][patterns][steps][inplace]") {
  // Grid (1,1,1): one rank or several, only root executes, so run() copies nothing; the
  // stepwise protocol still works and continues from what run() left on root.
  wp::context ctx(g_argc, g_argv);
  auto [i, j, k] = wp::indices<3>();
  wp::array<double, 2> A("A", {SM, SK}), B("B", {SK, SN}), C("C", {SM, SN});
  fill2(A, sa);
  fill2(B, sb);
  fill2(C, sc);
  auto plan = wp::distribute(wp::map("mm1", wp::space(SM, SN, SK), C(i, j) += A(i, k) * B(k, j)),
                             wp::grid_shape{1, 1, 1}, ctx);
  REQUIRE(plan.runs_in_place());
  REQUIRE_THAT(plan.explain(), Catch::Contains("run(): in place on root's arrays"));
  plan.run();
  REQUIRE(compare_on_root(ctx.comm(), C, step_ref(1)) == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 1, 1)) == "");
  REQUIRE(plan.stats().scatter.bytes_sent + plan.stats().gather.bytes_received == 0);
  // local() after an in-place run is root's block of root's own array: no copy
  const auto lc = plan.local(C);
  if (ctx.is_root()) {
    REQUIRE(lc.data == C.data());
    REQUIRE(lc.extent == std::array<index_t, 2>{SM, SN});
  } else {
    REQUIRE(lc.empty());
  }
  plan.gather();  // root already holds the values: nothing changes
  REQUIRE(compare_on_root(ctx.comm(), C, step_ref(1)) == "");
  // execute() after run() continues from root's values (old + AB), like a distributed plan
  plan.execute();
  plan.gather();
  REQUIRE(compare_on_root(ctx.comm(), C, step_ref(2)) == "");
  plan.run();
  REQUIRE(compare_on_root(ctx.comm(), C, step_ref(3)) == "");
  REQUIRE(all_problems(ctx.comm(), plan.stats().runs == 3 ? "" : "runs != 3") == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 1, 1)) == "");

  // A plan whose arrays other ranks hold does not run in place (with 2+ ranks).
  auto spread = wp::distribute(wp::map("mm2", wp::space(SM, SN, SK), C(i, j) += A(i, k) * B(k, j)),
                               wp::grid_shape{index_t(ctx.size()), 1, 1}, ctx);
  REQUIRE(spread.runs_in_place() == (ctx.size() == 1));

  // A read and written array in place: snapshot semantics as in wp::run (reads see old values).
  constexpr index_t n = 17;
  auto [a] = wp::indices<1>();
  wp::array<double, 1> x("x", {n});
  fill1(x, [](index_t q) { return double(q * q % 7); });
  auto shift = wp::distribute(wp::map("shift", wp::space({1, n}), x(a) = x(a - 1) + 0.5),
                              wp::grid_shape{1}, ctx);
  REQUIRE(shift.runs_in_place());
  shift.run();
  std::vector<double> want(n);
  want[0] = 0.0;
  for (index_t q = 1; q < n; ++q) want[q] = double((q - 1) * (q - 1) % 7) + 0.5;
  REQUIRE(compare_on_root(ctx.comm(), x, want) == "");
  shift.gather(x);  // by name: root holds the values already, nothing changes
  REQUIRE(compare_on_root(ctx.comm(), x, want) == "");
  // local() of a box that starts above 0: root's array at offset 1
  const auto lx = shift.local(x);
  if (ctx.is_root()) {
    REQUIRE(lx.offset[0] == 1);
    REQUIRE(lx.extent[0] == n - 1);
    REQUIRE(lx.data == x.data() + 1);
    REQUIRE(lx({5}) == want[5]);
  } else {
    REQUIRE(lx.empty());
  }

  // An init() input keeps being generated in place: root makes no copy, so no in-place run.
  wp::array<double, 1> gx("gx", {n}), out("out", {n});
  gx.init([](std::array<index_t, 1> c) { return 3.0 * double(c[0]); });
  auto gen =
      wp::distribute(wp::map("gen1", wp::space(n), out(a) = gx(a) + 1.0), wp::grid_shape{1}, ctx);
  REQUIRE_THAT(gen.explain(), !Catch::Contains("run(): in place"));
  gen.run();
  for (index_t q = 0; q < n; ++q) want[q] = 3.0 * double(q) + 1.0;
  REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
  REQUIRE(from_root(ctx.comm(), int(gx.root_materialized())) == 0);
}

TEST_CASE(
    "patterns: execute() before any scatter() starts from root's values; gather() first changes "
    "nothing",
    "[mpi][distribute][patterns][steps]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j, k] = wp::indices<3>();
  const index_t p = ctx.size();
  for (const wp::grid_shape& g :
       {wp::grid_shape{1, 1, 1}, wp::grid_shape{p, 1, 1}, wp::grid_shape{1, 1, p}}) {
    INFO("grid " << g.str() << " on " << p << " ranks");
    wp::array<double, 2> A("A", {SM, SK}), B("B", {SK, SN}), C("C", {SM, SN});
    fill2(A, sa);
    fill2(B, sb);
    fill2(C, sc);
    auto plan =
        wp::distribute(wp::map("mm0", wp::space(SM, SN, SK), C(i, j) += A(i, k) * B(k, j)), g, ctx);
    plan.gather();  // nothing executed yet
    REQUIRE(compare_on_root(ctx.comm(), C, step_ref(0)) == "");
    plan.execute();
    plan.gather(C);
    REQUIRE(compare_on_root(ctx.comm(), C, step_ref(1)) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 1, 1)) == "");
  }
}

TEST_CASE("patterns: gather(a) leaves root's other outputs alone until they are gathered",
          "[mpi][distribute][patterns][steps]") {
  wp::context ctx(g_argc, g_argv);
  auto [i] = wp::indices<1>();
  constexpr index_t n = 15;
  wp::array<double, 1> x("x", {n}), o1("o1", {n}), o2("o2", {n});
  fill1(x, [](index_t a) { return double(a); });
  fill1(o1, [](index_t) { return -1.0; });
  fill1(o2, [](index_t) { return -2.0; });
  auto plan =
      wp::distribute(wp::map("two_outputs", wp::space(n), o1(i) = x(i) + 1.0, o2(i) = x(i) * 2.0),
                     wp::grid_shape{index_t(ctx.size())}, ctx);
  plan.scatter();
  plan.execute();
  plan.gather(o1);
  std::vector<double> w1(n), w2(n, -2.0), w2b(n);
  for (index_t a = 0; a < n; ++a) {
    w1[a] = double(a) + 1.0;
    w2b[a] = 2.0 * double(a);
  }
  REQUIRE(compare_on_root(ctx.comm(), o1, w1) == "");
  REQUIRE(compare_on_root(ctx.comm(), o2, w2) == "");
  plan.gather(o2);
  REQUIRE(compare_on_root(ctx.comm(), o2, w2b) == "");
  // gathering both by name at once moves what gather() moves
  plan.gather(o1, o2);
  REQUIRE(compare_on_root(ctx.comm(), o1, w1) == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 1, 2)) == "");
}

TEST_CASE("patterns: plan.local() blocks match the tiling", "[mpi][distribute][patterns][local]") {
  wp::context ctx(g_argc, g_argv);
  const int me = ctx.rank();
  auto [i, j, k] = wp::indices<3>();
  for (const auto& g : step_grids(ctx)) {
    INFO("grid " << g.str() << " on " << ctx.size() << " ranks");
    wp::array<double, 2> A("A", {SM, SK}), B("B", {SK, SN}), C("C", {SM, SN});
    fill2(A, sa);
    fill2(B, sb);
    fill2(C, sc);
    auto plan =
        wp::distribute(wp::map("mm", wp::space(SM, SN, SK), C(i, j) += A(i, k) * B(k, j)), g, ctx);
    plan.scatter();
    plan.execute();
    std::ostringstream os;
    const auto c = coords_of(g.dims, me);
    const auto lc = plan.local(C);
    const auto la = plan.local(A);
    if (c.empty()) {
      if (!lc.empty() || lc.data != nullptr || !la.empty()) os << "an idle rank holds a block; ";
    } else {
      const block bi = block_of(SM, g.dims[0], c[0]), bj = block_of(SN, g.dims[1], c[1]),
                  bk = block_of(SK, g.dims[2], c[2]);
      // C is written over i x j: its block does not depend on k's grid coordinate
      const std::array<index_t, 2> co{bi.start, bj.start}, ce{bi.size, bj.size};
      if (lc.offset != co || lc.extent != ce)
        os << "local(C) offset (" << lc.offset[0] << "," << lc.offset[1] << ") extent ("
           << lc.extent[0] << "," << lc.extent[1] << "), expected (" << co[0] << "," << co[1]
           << ") (" << ce[0] << "," << ce[1] << "); ";
      if (lc.stride[1] != 1 || lc.stride[0] != bj.size) os << "local(C) strides; ";
      if (lc.data == nullptr) os << "local(C) has no data; ";
      const std::array<index_t, 2> ao{bi.start, bk.start}, ae{bi.size, bk.size};
      if (la.offset != ao || la.extent != ae) os << "local(A) offset/extent; ";
      if (la.data == nullptr) os << "local(A) has no data; ";
      // A's block holds root's values; with k unsplit, C's block holds old + A*B already
      for (index_t a = bi.start; a < bi.end() && la.data; ++a)
        for (index_t q = bk.start; q < bk.end(); ++q)
          if (la({a, q}) != sa(a, q))
            os << "local(A)(" << a << "," << q << ") = " << la({a, q}) << "; ";
      if (g.dims[2] == 1 && lc.data)
        for (index_t a = bi.start; a < bi.end(); ++a)
          for (index_t b = bj.start; b < bj.end(); ++b) {
            double s = sc(a, b);
            for (index_t q = 0; q < SK; ++q) s += sa(a, q) * sb(q, b);
            if (lc({a, b}) != s)
              os << "local(C)(" << a << "," << b << ") = " << lc({a, b}) << " != " << s << "; ";
          }
    }
    REQUIRE(all_problems(ctx.comm(), os.str()) == "");
    plan.gather();
    REQUIRE(compare_on_root(ctx.comm(), C, step_ref(1)) == "");
  }
}

// ================================================================ idle ranks, empty spaces

TEST_CASE("patterns: ranks beyond the grid's product stay idle",
          "[mpi][distribute][patterns][idle]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  if (P == 1) {
    if (ctx.is_root()) WARN("idle ranks skipped: one rank has none to spare");
    return;
  }
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 10, C = 6;
  for (const wp::grid_shape& g : {wp::grid_shape{1, 1}, wp::grid_shape{index_t(P - 1), 1},
                                  wp::grid_shape{1, index_t(P - 1)}}) {
    INFO("grid " << g.str() << " on " << P << " ranks");
    wp::array<std::int64_t, 2> x("x", {R, C}), out("out", {R, C});
    fill2(x, [](index_t a, index_t b) { return a * 10 + b; });
    auto plan = wp::distribute(wp::map("triple", wp::space(R, C), out(i, j) = x(i, j) * 3), g, ctx);
    plan.run();
    std::vector<double> want;
    for (index_t a = 0; a < R; ++a)
      for (index_t b = 0; b < C; ++b) want.push_back(double((a * 10 + b) * 3));
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    const std::string e = plan.explain();
    INFO(e);
    REQUIRE(e.find(std::to_string(g.product()) + " of " + std::to_string(P) + " ranks active") !=
            std::string::npos);
    std::ostringstream os;
    const bool idle = ctx.rank() >= g.product();
    const auto& s = plan.stats();
    if (idle) {
      if (s.scatter.bytes_sent || s.scatter.bytes_received || s.gather.bytes_sent ||
          s.gather.bytes_received || s.predicted_scatter_sent || s.predicted_scatter_received ||
          s.predicted_gather_sent || s.predicted_gather_received)
        os << "an idle rank moved bytes; ";
      if (!plan.local(out).empty() || !plan.local(x).empty()) os << "an idle rank holds a block; ";
    }
    REQUIRE(all_problems(ctx.comm(), os.str()) == "");
    for (int r = int(g.product()); r < P; ++r)
      REQUIRE(e.find("rank " + std::to_string(r) + ": idle") != std::string::npos);
  }
}

TEST_CASE("patterns: replicated grids run each block on its replicas, gather replica 0's",
          "[mpi][distribute][patterns][replicas]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 7, C = 5;
  const index_t es = sizeof(std::int64_t);
  // every rank the whole space; two row blocks each on P / 2 ranks (a rank idle at P = 3)
  std::vector<wp::grid_shape> grids = {wp::grid_shape{1, 1}.replicated(P)};
  if (P >= 2) grids.push_back(wp::grid_shape{2, 1}.replicated(P / 2));
  for (const auto& g : grids) {
    INFO("grid " << g.str() << " on " << P << " ranks");
    wp::array<std::int64_t, 2> x("x", {R, C}), out("out", {R, C});
    wp::array<std::int64_t, 1> rows("rows", {R});
    fill2(x, [](index_t a, index_t b) { return a * 10 + b; });
    fill2(out, [](index_t, index_t) { return -1; });
    if (ctx.is_root())
      for (index_t a = 0; a < R; ++a) rows.data()[a] = a * 1000;
    auto plan = wp::distribute(
        wp::map("triple", wp::space(R, C), out(i, j) = x(i, j) * 3, rows(i) += x(i, j)), g, ctx);
    plan.scatter();
    plan.execute();
    plan.execute();  // rows += twice: each replica adds into its own copy
    plan.gather();
    std::vector<double> want, want_rows;
    for (index_t a = 0; a < R; ++a) {
      std::int64_t sum = 0;
      for (index_t b = 0; b < C; ++b) {
        want.push_back(double((a * 10 + b) * 3));
        sum += a * 10 + b;
      }
      want_rows.push_back(double(a * 1000 + 2 * sum));
    }
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
    REQUIRE(compare_on_root(ctx.comm(), rows, want_rows) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
    // by hand: x's block to replica 0 of each block from root, to the other replicas by a
    // Bcast from it; rows' old values to every replica; root gathers replica 0's blocks only
    const index_t nb = g.dims[0], reps = g.replicas();
    bytes_by_rank want_b(P);
    for (int r = 0; r < int(g.product()); ++r) {
      const index_t blk = r / reps, rep = r % reps, lead = blk * reps;
      const index_t n = block_of(R, nb, blk).size;
      want_b.scatter(rep == 0 ? 0 : int(lead), r, n * C * es);  // x
      want_b.scatter(0, r, n * es);                             // rows' old values: += adds to them
      if (rep == 0) {
        want_b.gather(r, 0, n * C * es);  // out
        want_b.gather(r, 0, n * es);      // rows
      }
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
    const std::string e = plan.explain();
    INFO(e);
    const bool replicated = reps > 1;  // (1,1)x1 at np 1, (2,1)x1 at np 3: plain grids
    REQUIRE((e.find("replicas: each block runs on " + std::to_string(reps) + " ranks") !=
             std::string::npos) == replicated);
    REQUIRE((e.find("Gatherv (replica 0 of each block -> root)") != std::string::npos) ==
            replicated);
  }
  // a replicated grid needs its replicas' ranks: an error on every rank before anything moves
  wp::array<std::int64_t, 2> x("x", {R, C}), out("out", {R, C});
  auto m = wp::map("triple", wp::space(R, C), out(i, j) = x(i, j) * 3);
  REQUIRE_THROWS_WITH(wp::distribute(m, wp::grid_shape{1, 1}.replicated(P + 1), ctx),
                      Catch::Contains("needs " + std::to_string(P + 1) + " ranks"));
  REQUIRE_THROWS_WITH(wp::distribute(m, wp::grid_shape{1}.replicated(P + 1), ctx),
                      Catch::Contains("has rank 1 but the space has rank 2"));
}

TEST_CASE("patterns: a zero-extent space changes nothing and moves nothing",
          "[mpi][distribute][patterns][empty]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> x("x", {4, 5}), out("out", {4, 5});
  fill2(x, [](index_t a, index_t b) { return double(a + b); });
  fill2(out, [](index_t a, index_t b) { return double(a * b) - 7.0; });
  std::vector<double> want;
  for (index_t a = 0; a < 4; ++a)
    for (index_t b = 0; b < 5; ++b) want.push_back(double(a * b) - 7.0);
  for (const wp::grid_shape& g : {wp::grid_shape{p, 1}, wp::grid_shape{1, p}}) {
    INFO("grid " << g.str());
    SECTION("'=' over space(0, 5), grid " + g.str()) {
      auto plan =
          wp::distribute(wp::map("empty_rows", wp::space(0, 5), out(i, j) = x(i, j) + 1.0), g, ctx);
      plan.run();
      REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
      REQUIRE(plan.predicted_total(true) == 0);
      REQUIRE(plan.predicted_total(false) == 0);
      REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    }
    SECTION("'+=' over space({2, 2}, {0, 5}), grid " + g.str()) {
      auto plan = wp::distribute(
          wp::map("empty_lohi", wp::space({2, 2}, {0, 5}), out(i, j) += x(i, j)), g, ctx);
      plan.run();
      REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
      REQUIRE(plan.predicted_total(true) == 0);
      REQUIRE(plan.predicted_total(false) == 0);
      REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    }
    SECTION("max_into over space(4, 0), grid " + g.str()) {
      wp::array<double, 1> m("m", {4});
      fill1(m, [](index_t a) { return double(a); });
      auto plan = wp::distribute(
          wp::map("empty_cols", wp::space(4, 0), wp::max_into(m(i), x(i, j) + 100.0)), g, ctx);
      plan.run();
      REQUIRE(compare_on_root(ctx.comm(), m, {0.0, 1.0, 2.0, 3.0}) == "");
      REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    }
  }
}

TEST_CASE("patterns: two '=' statements into disjoint parts of one array keep the rest",
          "[mpi][distribute][patterns]") {
  // API.md section 3: "Elements of an array that no statement writes keep the values root
  // holds." One active rank runs both statements, so nothing overlaps between ranks.
  wp::context ctx(g_argc, g_argv);
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {3}), out("out", {20});
  fill1(x, [](index_t a) { return double(a) + 1.0; });
  fill1(out, [](index_t) { return 7.0; });
  auto m = wp::map("two_parts", wp::space(3), out(i) = x(i), out(i + 10) = x(i) * 2.0);
  auto plan = wp::distribute(m, wp::grid_shape{1}, ctx);
  plan.run();
  std::vector<double> want(20, 7.0);
  for (index_t a = 0; a < 3; ++a) {
    want[a] = double(a) + 1.0;
    want[a + 10] = 2.0 * (double(a) + 1.0);
  }
  REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
}

TEST_CASE("patterns: a later statement reads what an earlier one wrote on the same rank",
          "[mpi][distribute][patterns][fused]") {
  // Fused temporaries: each rank reads only the box it wrote itself, so no exchange is needed
  // between the statements; the temporary is still gathered to root like any output.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 11, C = 7;
  auto xv = [](index_t a, index_t b) { return double((a * 5 + b * 3) % 13 - 6) / 4.0; };
  const std::vector<wp::grid_shape> grids{{p, 1}, {1, p}};
  SECTION("t = 2x; y = t + x; t = t * 3 + 1 (a snapshot of t)") {
    for (const auto& g : grids) {
      INFO("grid " << g.str() << " on " << P << " ranks");
      wp::array<double, 2> x("x", {R, C}), t("t", {R, C}), y("y", {R, C});
      fill2(x, xv);
      fill2(t, [](index_t, index_t) { return -5.0; });
      auto m = wp::map("fused", wp::space(R, C), t(i, j) = x(i, j) * 2.0,
                       y(i, j) = t(i, j) + x(i, j), t(i, j) = t(i, j) * 3.0 + 1.0);
      auto plan = wp::distribute(m, g, ctx);
      REQUIRE(plan.collectives(t).front() == "none");
      plan.run();
      std::vector<double> wt, wy;
      for (index_t a = 0; a < R; ++a)
        for (index_t b = 0; b < C; ++b) {
          wy.push_back(3.0 * xv(a, b));
          wt.push_back(6.0 * xv(a, b) + 1.0);
        }
      REQUIRE(compare_on_root(ctx.comm(), y, wy) == "");
      REQUIRE(compare_on_root(ctx.comm(), t, wt) == "");
      REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    }
  }
  SECTION("a pure temporary costs no scatter: t = x * x; y = t - x") {
    for (const auto& g : grids) {
      INFO("grid " << g.str() << " on " << P << " ranks");
      wp::array<double, 2> x("x", {R, C}), t("t", {R, C}), y("y", {R, C});
      fill2(x, xv);
      auto plan = wp::distribute(wp::map("temp", wp::space(R, C), t(i, j) = x(i, j) * x(i, j),
                                         y(i, j) = t(i, j) - x(i, j)),
                                 g, ctx);
      plan.run();
      std::vector<double> wy;
      for (index_t a = 0; a < R; ++a)
        for (index_t b = 0; b < C; ++b) wy.push_back(xv(a, b) * xv(a, b) - xv(a, b));
      REQUIRE(compare_on_root(ctx.comm(), y, wy) == "");
      // scatter moves x only: each rank's block of x, once
      bytes_by_rank want_b(P);
      for (int r = 1; r < P; ++r) {
        const index_t n = g.dims[0] > 1 ? block_of(R, p, r).size * C : R * block_of(C, p, r).size;
        want_b.scatter(0, r, n * 8);
        want_b.gather(r, 0, 2 * n * 8);  // t and y
      }
      REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
      REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    }
  }
  SECTION("row sums then normalise, rows whole on every rank; old sums counted once") {
    wp::array<double, 2> x("x", {R, C}), y("y", {R, C});
    wp::array<double, 1> s("s", {R});
    fill2(x, [](index_t a, index_t b) { return double(a + b + 1); });
    fill1(s, [](index_t a) { return double(a % 3); });
    auto m = wp::map("norm", wp::space(R, C), s(i) += x(i, j), y(i, j) = x(i, j) / s(i));
    auto plan = wp::distribute(m, wp::grid_shape{p, 1}, ctx);
    plan.run();
    std::vector<double> ws(R), wy;
    for (index_t a = 0; a < R; ++a) {
      ws[std::size_t(a)] = double(a % 3);
      for (index_t b = 0; b < C; ++b) ws[std::size_t(a)] += double(a + b + 1);
    }
    for (index_t a = 0; a < R; ++a)
      for (index_t b = 0; b < C; ++b) wy.push_back(double(a + b + 1) / ws[std::size_t(a)]);
    REQUIRE(compare_on_root(ctx.comm(), s, ws) == "");
    REQUIRE(compare_on_root(ctx.comm(), y, wy) == "");
    // executing again on the current values adds the row sums once more, as wp::run would
    plan.scatter();
    plan.execute();
    plan.execute();
    plan.gather();
    for (index_t a = 0; a < R; ++a) {
      double rs = 0;
      for (index_t b = 0; b < C; ++b) rs += double(a + b + 1);
      ws[std::size_t(a)] += 2.0 * rs;
    }
    REQUIRE(compare_on_root(ctx.comm(), s, ws) == "");
  }
}

TEST_CASE("patterns: a softmax map fused over cache-sized blocks of every rank's block",
          "[mpi][distribute][patterns][fused]") {
  // exec/cpu/fusion.hpp: each rank runs the four statements block by block over its own
  // block. A small budget makes every rank's block fuse; the result is the plain loop's.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  struct budget_scope {  // a small budget: every rank's block is fused
    std::size_t saved = wp::detail::fusion_budget_bytes();
    budget_scope() { wp::detail::fusion_budget_bytes() = 2048; }
    ~budget_scope() { wp::detail::fusion_budget_bytes() = saved; }
  } budget;
  constexpr index_t B = 3, S = 13, L = 131;
  auto xv = [](index_t a, index_t b, index_t c) {
    return double((a * 7 + b * 5 + c * 3) % 29 - 14) / 4.0;
  };
  std::vector<double> want;
  for (index_t a = 0; a < B; ++a)
    for (index_t b = 0; b < S; ++b) {
      double m = -1e300, t = 0;
      for (index_t c = 0; c < L; ++c) m = std::max(m, xv(a, b, c));
      for (index_t c = 0; c < L; ++c) t += std::exp(xv(a, b, c) - m);
      for (index_t c = 0; c < L; ++c) want.push_back(std::exp(xv(a, b, c) - m) / t);
    }
  auto [b, s, l] = wp::indices<3>();
  for (const wp::grid_shape& g : {wp::grid_shape{p, 1, 1}, wp::grid_shape{1, p, 1}}) {
    INFO("grid " << g.str() << " on " << P << " ranks");
    wp::array<double, 3> x("x", {B, S, L}), e("e", {B, S, L}), y("y", {B, S, L});
    wp::array<double, 2> mx("mx", {B, S}), sum("sum", {B, S});
    fill3(x, xv);
    fill2(mx, [](index_t, index_t) { return -std::numeric_limits<double>::infinity(); });
    fill2(sum, [](index_t, index_t) { return 0.0; });
    auto sm = wp::map("softmax", wp::space(B, S, L), wp::max_into(mx(b, s), x(b, s, l)),
                      e(b, s, l) = wp::exp(x(b, s, l) - mx(b, s)), sum(b, s) += e(b, s, l),
                      y(b, s, l) = e(b, s, l) / sum(b, s));
    auto plan = wp::distribute(sm, g, ctx);
    REQUIRE(plan.explain().find("statements on rank 0's block: fused") != std::string::npos);
    const long before = wp::detail::counters().fused_maps.load();
    plan.run();
    const bool busy = g.dims[0] > 1 ? block_of(B, p, ctx.rank()).size > 0  // some rows here
                                    : block_of(S, p, ctx.rank()).size > 0;
    REQUIRE(all_problems(ctx.comm(),
                         (wp::detail::counters().fused_maps.load() - before == (busy ? 1 : 0))
                             ? ""
                             : "rank " + std::to_string(ctx.rank()) + " did not fuse") == "");
    REQUIRE(compare_on_root(ctx.comm(), y, want, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
  }
  SECTION("a later statement writes what an earlier one reads: the earlier reads old values") {
    constexpr index_t n = 1003;
    wp::array<double, 1> x("x", {n}), a("a", {n}), c("c", {n});
    fill1(x, [](index_t k) { return double(k % 11) - 5.0; });
    fill1(c, [](index_t k) { return double(k % 7); });
    auto [i] = wp::indices<1>();
    auto plan = wp::distribute(wp::map("anti", wp::space(n), a(i) = x(i) + c(i), c(i) = x(i) * 2.0),
                               wp::grid_shape{p}, ctx);
    plan.run();
    std::vector<double> wa, wc;
    for (index_t k = 0; k < n; ++k) {
      wa.push_back(double(k % 11) - 5.0 + double(k % 7));
      wc.push_back((double(k % 11) - 5.0) * 2.0);
    }
    REQUIRE(compare_on_root(ctx.comm(), a, wa) == "");
    REQUIRE(compare_on_root(ctx.comm(), c, wc) == "");
  }
}

TEST_CASE("patterns: a convolution with channels runs as packed GEMMs on every rank's block",
          "[mpi][distribute][patterns][gemm]") {
  // exec/cpu/gemm_packed.hpp: each rank packs its block's input windows as a matrix (im2col)
  // and runs GEMMs; split over output channels, rows (a halo of the input) or columns.
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  constexpr index_t C = 3, K = 10, H = 13, W = 11, R = 3, S = 2, OH = H - R + 1, OW = W - S + 1;
  auto iv = [](index_t c, index_t y, index_t x) { return double((c * 5 + y * 3 + x) % 13 - 6); };
  auto wv = [](index_t e) { return double(e % 7 - 3) / 4.0; };
  std::vector<double> want;
  for (index_t k = 0; k < K; ++k)
    for (index_t y = 0; y < OH; ++y)
      for (index_t x = 0; x < OW; ++x) {
        double a = 0;
        for (index_t c = 0; c < C; ++c)
          for (index_t r = 0; r < R; ++r)
            for (index_t s = 0; s < S; ++s)
              a += wv(((k * C + c) * R + r) * S + s) * iv(c, y + r, x + s);
        want.push_back(a);
      }
  auto [k, y, x, c, r, s] = wp::indices<6>();
  for (const wp::grid_shape& g :
       {wp::grid_shape{p, 1, 1}, wp::grid_shape{1, p, 1}, wp::grid_shape{1, 1, p}}) {
    INFO("grid " << g.str() << " on " << P << " ranks");
    wp::array<double, 3> in("in", {C, H, W}), out("out", {K, OH, OW});
    wp::array<double, 4> w("w", {K, C, R, S});
    fill3(in, iv);
    if (double* d = w.data())
      for (index_t e = 0; e < w.size(); ++e) d[e] = wv(e);
    fill3(out, [](index_t, index_t, index_t) { return 99.0; });
    auto conv =
        wp::map("conv", wp::space(K, OH, OW),
                out(k, y, x) = wp::sum(
                    wp::range(c, 0, C),
                    wp::sum(wp::range(r, 0, R),
                            wp::sum(wp::range(s, 0, S), w(k, c, r, s) * in(c, y + r, x + s)))));
    auto plan = wp::distribute(conv, g, ctx);
    const long packed = wp::detail::counters().packed_elements.load();
    const long loops = wp::detail::counters().loop_statements.load();
    plan.run();
    // Every busy rank packs, however few output channels (the GEMM's m) its block holds: the
    // loop's rows would run along its block's output columns, at most 10, and against rows
    // that short the GEMM wins at any reuse (exec/contraction_affine.hpp,
    // packed_gemm_long_row); a rank with an empty block runs nothing.
    const index_t k_here = g.dims[0] > 1 ? block_of(K, p, ctx.rank()).size : K;
    const index_t rows_here = g.dims[1] > 1 ? block_of(OH, p, ctx.rank()).size : OH;
    const index_t cols_here = g.dims[2] > 1 ? block_of(OW, p, ctx.rank()).size : OW;
    const bool busy = k_here > 0 && rows_here > 0 && cols_here > 0;
    const bool gemm = busy;
    const long packed_here = wp::detail::counters().packed_elements.load() - packed;
    const long loops_here = wp::detail::counters().loop_statements.load() - loops;
    REQUIRE(all_problems(ctx.comm(),
                         (gemm ? packed_here == C * R * S * rows_here * cols_here && loops_here == 0
                               : packed_here == 0 && loops_here == (busy ? 1 : 0))
                             ? ""
                             : "rank " + std::to_string(ctx.rank()) + " packed " +
                                   std::to_string(packed_here) + " elements, ran " +
                                   std::to_string(loops_here) + " loops") == "");
    REQUIRE(compare_on_root(ctx.comm(), out, want, 1e-12) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  }
}

// ================================================================ compile-time mapping

TEST_CASE("patterns: the mapping of matmul's accesses under grid<2,2,1> is a constant expression",
          "[mpi][distribute][patterns][mapping]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j, k] = wp::indices<3>();
  wp::array<float, 2> A("A", {4, 3}), B("B", {3, 5}), C("C", {4, 5});
  STATIC_REQUIRE(wp::mapping(A(i, k), wp::grid<2, 2, 1>) ==
                 wp::axis_map{wp::partition(0), wp::broadcast, wp::partition(1)});
  STATIC_REQUIRE(wp::mapping(B(k, j), wp::grid<2, 2, 1>) ==
                 wp::axis_map{wp::broadcast, wp::partition(1), wp::partition(0)});
  STATIC_REQUIRE(wp::mapping(C(i, j), wp::grid<2, 2, 1>) ==
                 wp::axis_map{wp::partition(0), wp::partition(1), wp::broadcast});
  // an offset and a sum of indices are not grid-mapped; a transposed pair is
  STATIC_REQUIRE(wp::mapping(A(i + 1, k), wp::grid<2, 2, 1>)[0] == wp::general);
  STATIC_REQUIRE(wp::mapping(A(k, i), wp::grid<2, 2, 1>) ==
                 wp::axis_map{wp::partition(1), wp::broadcast, wp::partition(0)});
  STATIC_REQUIRE(!wp::mapping(C(i + j, k), wp::grid<2, 2, 1>).grid_mapped());
  STATIC_REQUIRE(wp::mapping(C(i, j), wp::grid<2, 2, 1>).grid_mapped());
  // wp::all and constant axes are read whole or at one place: still grid-mapped
  wp::array<float, 3> X("X", {4, 3, 5});
  STATIC_REQUIRE(wp::mapping(X(i, wp::all, j), wp::grid<2, 2>) ==
                 wp::axis_map{wp::partition(0), wp::partition(2)});
  STATIC_REQUIRE(wp::mapping(X(j, 0, wp::all), wp::grid<2, 2>) ==
                 wp::axis_map{wp::broadcast, wp::partition(0)});
  // an index inside an indirect subscript is data-dependent: general
  wp::array<std::int32_t, 1> col("col", {4});
  STATIC_REQUIRE(wp::mapping(X(i, col(j), wp::all), wp::grid<2, 2>) ==
                 wp::axis_map{wp::partition(0), wp::general});
}
