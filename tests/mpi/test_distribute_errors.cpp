/// \file test_distribute_errors.cpp
/// Errors of wp::distribute and of running a plan, at every communicator size. Every error is
/// expected on every rank alike (API.md section 8: "raised on every rank alike, before any
/// collective starts: no rank is left waiting"): each rank asserts the throw itself, the
/// messages are compared between ranks, and after the errors a plan is built and run to show
/// that no rank was left inside a collective (a rank left behind would hang it, and the test
/// would time out rather than pass).
///
/// The data-dependent case (a corrupt CSR row pointer or column index) can only be found
/// while executing, on the rank whose rows read it; execute() and run() must still raise it
/// on every rank.

#include "mpi_test_support.hpp"

#include <limits>

namespace {

using namespace mpitest;
using Catch::Matchers::Contains;

/// Builds a map and distributes it over every rank. A map that fails its bounds check throws
/// when built on one rank; under several ranks the error is kept until distribute, where every
/// rank raises it alike (a rank that threw alone would leave the others in distribute).
template <class Make>
void build_and_distribute(const wp::context& ctx, Make make) {
  auto m = make();
  wp::distribute(m, wp::grid_shape{index_t(ctx.size())}, ctx);
}

}  // namespace

TEST_CASE("errors: grids that do not fit the space or the communicator",
          "[mpi][distribute][errors]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> x("x", {6, 5}), out("out", {6, 5});
  auto m = wp::map("grid_check", wp::space(6, 5), out(i, j) = x(i, j) * 2.0);

  SECTION("grid rank differs from the space rank") {
    for (const wp::grid_shape& g :
         {wp::grid_shape{1}, wp::grid_shape{1, 1, 1}, wp::grid_shape{p}}) {
      INFO("grid " << g.str());
      REQUIRE_THROWS_AS(wp::distribute(m, g, ctx), wp::grid_error);
      const std::string msg = what_of([&] { wp::distribute(m, g, ctx); });
      REQUIRE_THAT(msg, Contains("'grid_check'") &&
                            Contains("has rank " + std::to_string(g.rank())) &&
                            Contains("space has rank 2"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
  }
  SECTION("grid product larger than the communicator") {
    for (const wp::grid_shape& g :
         {wp::grid_shape{p + 1, 1}, wp::grid_shape{p, 2}, wp::grid_shape{1, 2 * p + 3}}) {
      INFO("grid " << g.str());
      REQUIRE_THROWS_AS(wp::distribute(m, g, ctx), wp::grid_error);
      const std::string msg = what_of([&] { wp::distribute(m, g, ctx); });
      REQUIRE_THAT(msg, Contains("'grid_check'") &&
                            Contains("needs " + std::to_string(g.product()) + " ranks") &&
                            Contains("communicator has " + std::to_string(p)));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
    if (p < 5) {
      REQUIRE_THROWS_AS(wp::distribute(m, wp::grid<5, 1>, ctx), wp::grid_error);
      REQUIRE_THROWS_AS(wp::distribute(m, wp::grid<1, 5>), wp::grid_error);
    } else if (ctx.is_root()) {
      WARN("grid<5,1> fits " << p << " ranks: compile-time grid too large not checked");
    }
  }
  SECTION("grid extents below 1") {
    for (const wp::grid_shape& g :
         {wp::grid_shape{0, 1}, wp::grid_shape{1, 0}, wp::grid_shape{-1, 1}}) {
      INFO("grid " << g.str());
      REQUIRE_THROWS_AS(wp::distribute(m, g, ctx), wp::grid_error);
      const std::string msg = what_of([&] { wp::distribute(m, g, ctx); });
      REQUIRE_THAT(msg, Contains("'grid_check'") && Contains("grid extents are >= 1"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
  }
  // no rank was left inside a collective
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE(
    "errors: accesses out of bounds are refused when the map is built (one rank) or distributed",
    "[mpi][distribute][errors]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j] = wp::indices<2>();
  constexpr index_t n = 9;
  wp::array<double, 1> x("x", {n}), out("out", {n});
  wp::array<double, 2> x2("x2", {n, 3});
  SECTION("a shifted read") {
    REQUIRE_THROWS_AS(build_and_distribute(
                          ctx, [&] { return wp::map("shift", wp::space(n), out(i) = x(i + 1)); }),
                      wp::shape_error);
    const std::string msg = what_of([&] {
      build_and_distribute(ctx, [&] { return wp::map("shift", wp::space(n), out(i) = x(i + 1)); });
    });
    REQUIRE_THAT(msg,
                 Contains("'shift'") && Contains("'x'") && Contains("at 9") && Contains("[0, 9)"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("a strided read") {
    REQUIRE_THROWS_AS(build_and_distribute(
                          ctx, [&] { return wp::map("stride", wp::space(n), out(i) = x(2 * i)); }),
                      wp::shape_error);
  }
  SECTION("a reversed read one past the end") {
    REQUIRE_THROWS_AS(
        build_and_distribute(ctx, [&] { return wp::map("rev", wp::space(n), out(i) = x(n - i)); }),
        wp::shape_error);
  }
  SECTION("a negative halo") {
    REQUIRE_THROWS_AS(
        build_and_distribute(
            ctx, [&] { return wp::map("halo", wp::space(n), out(i) = x(i - 1) + x(i)); }),
        wp::shape_error);
    const std::string msg = what_of([&] {
      build_and_distribute(ctx,
                           [&] { return wp::map("halo", wp::space(n), out(i) = x(i - 1) + x(i)); });
    });
    REQUIRE_THAT(msg, Contains("'halo'") && Contains("at -1"));
  }
  SECTION("a shifted write") {
    REQUIRE_THROWS_AS(build_and_distribute(
                          ctx, [&] { return wp::map("wshift", wp::space(n), out(i + 1) = x(i)); }),
                      wp::shape_error);
    const std::string msg = what_of([&] {
      build_and_distribute(ctx, [&] { return wp::map("wshift", wp::space(n), out(i + 1) = x(i)); });
    });
    REQUIRE_THAT(msg, Contains("'wshift'") && Contains("'out'") && Contains("writes"));
  }
  SECTION("a space larger than the arrays") {
    REQUIRE_THROWS_AS(
        build_and_distribute(ctx,
                             [&] {
                               return wp::map("big", wp::space({0, n + 1}), out(i) = x(i));
                             }),
        wp::shape_error);
  }
  SECTION("a constant subscript beyond its axis") {
    REQUIRE_THROWS_AS(build_and_distribute(
                          ctx, [&] { return wp::map("const", wp::space(n), out(i) = x2(i, 3)); }),
                      wp::shape_error);
    const std::string msg = what_of([&] {
      build_and_distribute(ctx, [&] { return wp::map("const", wp::space(n), out(i) = x2(i, 3)); });
    });
    REQUIRE_THAT(msg, Contains("'const'") && Contains("'x2'") && Contains("axis 1"));
  }
  SECTION("an affine inner range past the end") {
    REQUIRE_THROWS_AS(build_and_distribute(ctx,
                                           [&] {
                                             return wp::map(
                                                 "window", wp::space(n),
                                                 out(i) = wp::sum(wp::range(j, i, i + 2), x(j)));
                                           }),
                      wp::shape_error);
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("errors: overlapping '=' writes between ranks", "[mpi][distribute][errors]") {
  // A single '=' statement whose left side is not one-to-one (out(i + j) = ...) is refused
  // at compile time (tests/compile), or when the map is built if a coefficient is a runtime
  // value. What remains expressible: several '=' statements into one array, each one-to-one,
  // whose writes overlap between ranks at the block boundaries: y(i) = ..., y(i + 1) = ...
  // The same left sides with '+=' combine and are fine.
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i, j] = wp::indices<2>();
  constexpr index_t n = 11, C = 4;
  wp::array<double, 1> y("y", {n + 1}), v("v", {n});
  wp::array<double, 2> x("x", {n, C}), w("w", {n, C + 1});
  fill1(v, [](index_t a) { return double(a) + 1.0; });
  fill2(x, [](index_t a, index_t b) { return double(a * 10 + b); });
  auto two = wp::map("two", wp::space(n), y(i) = v(i), y(i + 1) = v(i) * 2.0);
  auto cols = wp::map("cols", wp::space(n, C), w(i, j) = x(i, j), w(i, j + 1) = x(i, j) * 2.0);
  // Under a grid that does not split the shifted dimension, nothing overlaps: accepted, and
  // each rank runs the statements in order (the second overwrites where both write).
  {
    auto plan = wp::distribute(cols, wp::grid_shape{p, 1}, ctx);
    plan.run();
    std::vector<double> want;
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b <= C; ++b)
        want.push_back(b == 0 ? double(a * 10) : 2.0 * double(a * 10 + b - 1));
    REQUIRE(compare_on_root(ctx.comm(), w, want) == "");
  }
  if (p < 2) {
    if (ctx.is_root())
      WARN("overlapping writes between ranks skipped: they need 2 ranks, this run has 1");
    // one rank: no two ranks write anything, so these plans are accepted
    REQUIRE_NOTHROW(wp::distribute(two, wp::grid_shape{1}, ctx));
    REQUIRE_NOTHROW(wp::distribute(cols, wp::grid_shape{1, 1}, ctx));
  } else {
    for (const wp::grid_shape& g : {wp::grid_shape{2}, wp::grid_shape{p}}) {
      INFO("grid " << g.str());
      REQUIRE_THROWS_AS(wp::distribute(two, g, ctx), wp::plan_error);
      const std::string msg = what_of([&] { wp::distribute(two, g, ctx); });
      REQUIRE_THAT(msg, Contains("'two'") && Contains("overlapping") && Contains("'y'") &&
                            Contains("ranks 0 and 1"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
    for (const wp::grid_shape& g : {wp::grid_shape{1, 2}, wp::grid_shape{1, p}}) {
      INFO("grid " << g.str());
      REQUIRE_THROWS_AS(wp::distribute(cols, g, ctx), wp::plan_error);
      REQUIRE_THAT(what_of([&] { wp::distribute(cols, g, ctx); }),
                   Contains("'cols'") && Contains("'w'") && Contains("overlapping"));
    }
    // with '+=' the same left sides are fine
    auto two_add = wp::map("two_add", wp::space(n), y(i) += v(i), y(i + 1) += v(i) * 2.0);
    REQUIRE_NOTHROW(wp::distribute(two_add, wp::grid_shape{p}, ctx).run());
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("errors: a runtime coefficient that makes '=' many-to-one is refused on every rank",
          "[mpi][distribute][errors]") {
  // out(s * i + j) with s = 0 sends the whole row i to one element: the runtime twin of the
  // compile-time check on out(i + j).
  wp::context ctx(g_argc, g_argv);
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> x("x", {3, 3});
  wp::array<double, 1> out("out", {9});
  index_t s = 0;  // a runtime zero
  auto build = [&] {
    auto m = wp::map("srace", wp::space(3, 3), out(s * i + j) = x(i, j));
    wp::distribute(m, wp::grid_shape{1, 1}, ctx).run();
  };
  REQUIRE_THROWS_AS(build(), wp::error);
  const std::string msg = what_of(build);
  REQUIRE_THAT(msg, Contains("'srace'"));
  REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  // with s = 3 the same form is one-to-one and runs
  const index_t s3 = 3;
  auto ok = wp::map("sok", wp::space(3, 3), out(s3 * i + j) = x(i, j) + 1.0);
  wp::distribute(ok, wp::grid_shape{index_t(ctx.size()) > 3 ? 3 : index_t(ctx.size()), 1}, ctx)
      .run();
  REQUIRE(compare_on_root(ctx.comm(), out, {1, 1, 1, 1, 1, 1, 1, 1, 1}) == "");
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("errors: statements a plan cannot distribute", "[mpi][distribute][errors]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 8;
  wp::array<double, 1> x("x", {n}), out("out", {n}), y("y", {n}), other("other", {n});
  SECTION("one array written by statements of different kinds") {
    auto m = wp::map("mixed", wp::space(n), out(i) = x(i), out(i) += x(i));
    REQUIRE_THROWS_AS(wp::distribute(m, wp::grid_shape{p}, ctx), wp::plan_error);
    const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{p}, ctx); });
    REQUIRE_THAT(msg, Contains("'mixed'") && Contains("'out'") && Contains("different kinds"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    auto m2 =
        wp::map("mixed2", wp::space(n), wp::max_into(out(i), x(i)), wp::min_into(out(i), x(i)));
    REQUIRE_THROWS_AS(wp::distribute(m2, wp::grid_shape{1}, ctx), wp::plan_error);
  }
  SECTION("a statement reads what an earlier statement wrote on another rank") {
    // out(i + 1) of the last point of a block is written by the next rank's statement.
    auto m = wp::map("raw", wp::space(n - 1), out(i) = x(i), y(i) = out(i + 1) * 2.0);
    REQUIRE_THROWS_AS(wp::distribute(m, wp::grid_shape{p}, ctx), wp::plan_error);
    const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{p}, ctx); });
    REQUIRE_THAT(msg, Contains("'raw'") && Contains("'out'") && Contains("rank 0 reads [1:") &&
                          Contains("separate maps"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("a statement reads partial sums an earlier statement left on several ranks") {
    auto [a, b] = wp::indices<2>();
    wp::array<double, 2> x2("x2", {n, 5}), y2("y2", {n, 5});
    auto m = wp::map("partial", wp::space(n, 5), out(a) += x2(a, b), y2(a, b) = x2(a, b) / out(a));
    if (p > 1) {  // the reduced axis split over ranks: every rank holds a partial out
      const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{1, p}, ctx); });
      REQUIRE_THAT(msg, Contains("'partial'") && Contains("'out'") && Contains("partial results"));
      REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    }
    REQUIRE_NOTHROW(wp::distribute(m, wp::grid_shape{p, 1}, ctx));  // rows whole on each rank
  }
  SECTION("a statement reads an array before and another after the map writes it") {
    auto m = wp::map("twice", wp::space(n), y(i) = out(i), out(i) = x(i), other(i) = out(i));
    REQUIRE_THROWS_AS(wp::distribute(m, wp::grid_shape{p}, ctx), wp::plan_error);
    const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{p}, ctx); });
    REQUIRE_THAT(msg, Contains("'twice'") && Contains("'out'") && Contains("before and after"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("the device backend in a build without a device system") {
    // This test is built with g++ and without workpart::device_omp: no device system.
    static_assert(!wp::detail::has_device_system);
    auto m = wp::map("gpu", wp::space(n), out(i) = x(i));
    REQUIRE_THROWS_AS(
        wp::distribute(m, wp::grid_shape{p}, ctx, wp::options{.backend = wp::backend::cuda}),
        wp::backend_error);
    const std::string msg = what_of([&] {
      wp::distribute(m, wp::grid_shape{p}, ctx, wp::options{.backend = wp::backend::cuda});
    });
    REQUIRE_THAT(msg,
                 Contains("'gpu'") && Contains("workpart::device_omp") && Contains("backend::cpu"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("naming an array the plan does not use") {
    auto plan =
        wp::distribute(wp::map("named", wp::space(n), out(i) = x(i)), wp::grid_shape{p}, ctx);
    REQUIRE_THROWS_AS(plan.gather(other), wp::plan_error);
    REQUIRE_THROWS_AS(plan.local(other), wp::plan_error);
    REQUIRE_THAT(what_of([&] { plan.gather(other); }), Contains("'other'") && Contains("'named'"));
    // the plan itself is unharmed
    plan.run();
    std::vector<double> want(n, 0.0);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

// ================================================================ data-dependent

namespace {

/// A CSR matrix of `rows` rows over `cols` columns, row lengths 0..3 (fixed pattern).
struct csr {
  static constexpr index_t rows = 13, cols = 10;
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int32_t> col;
  std::vector<double> val;
  csr() {
    for (index_t a = 0; a < rows; ++a) {
      const index_t len = (a * 7 + 2) % 4;  // 2, 1, 0, 3, 2, 1, 0, ...
      for (index_t q = 0; q < len; ++q) {
        col.push_back(std::int32_t((a * 3 + q * 5) % cols));
        val.push_back(double(a) - double(q) / 4.0);
      }
      ptr.push_back(std::int64_t(col.size()));
    }
  }
  index_t nnz() const { return index_t(col.size()); }
  /// The rank (under grid (g)) that runs row a.
  static int rank_of_row(index_t a, index_t g) {
    for (index_t r = 0; r < g; ++r) {
      const block b = block_of(rows, g, r);
      if (a >= b.start && a < b.end()) return int(r);
    }
    return -1;
  }
};

}  // namespace

TEST_CASE("errors: a corrupt CSR raises from execute() and run() on every rank",
          "[mpi][distribute][errors][csr]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i, jj] = wp::indices<2>();
  const csr A;
  const index_t nnz = A.nnz();
  wp::array<std::int64_t, 1> row("row", {csr::rows + 1});
  wp::array<std::int32_t, 1> col("col", {nnz});
  wp::array<double, 1> val("val", {nnz}), x("x", {csr::cols}), y("y", {csr::rows});
  auto good = [&] {
    fill1(row, [&](index_t a) { return A.ptr[a]; });
    fill1(col, [&](index_t q) { return A.col[q]; });
  };
  good();
  fill1(val, [&](index_t q) { return A.val[q]; });
  fill1(x, [](index_t c) { return double(c) + 0.5; });
  std::vector<double> want(csr::rows, 0.0);
  for (index_t a = 0; a < csr::rows; ++a)
    for (std::int64_t q = A.ptr[a]; q < A.ptr[a + 1]; ++q)
      want[a] += A.val[q] * (double(A.col[q]) + 0.5);
  auto spmv = wp::map("spmv", wp::space(csr::rows),
                      y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj))));
  const wp::grid_shape g{p};

  // the root's data is set before the plan scatters it; each corruption names the rank that
  // runs the row that reads it
  struct corruption {
    std::string what;
    std::function<void()> apply;
    int rank;                  // the rank whose block reads the bad value
    std::string contains;      // a piece of the message
    bool moves_range = false;  // changes a row pointer: the range root inspected moves
  };
  const std::int64_t last = A.ptr[csr::rows];
  std::vector<corruption> cases = {
      {"the last row pointer one past the end",
       [&] {
         if (std::int64_t* r = row.data()) r[csr::rows] = last + 1;
       },
       csr::rank_of_row(csr::rows - 1, p), "at " + std::to_string(nnz), true},
      {"a negative first row pointer",
       [&] {
         if (std::int64_t* r = row.data()) r[0] = -1;
       },
       csr::rank_of_row(0, p), "at -1", true},
      {"a row pointer far past the end in the middle",
       [&] {
         if (std::int64_t* r = row.data()) r[7] = last + 40;
       },
       csr::rank_of_row(6, p), "'spmv'", true},
      {"a column index past x's end",
       [&] {
         if (std::int32_t* c = col.data()) c[nnz - 1] = std::int32_t(csr::cols + 3);
       },
       csr::rank_of_row(csr::rows - 1, p), "at " + std::to_string(csr::cols + 3)},
  };
  // the entry nnz-1 belongs to the last non-empty row
  {
    index_t a = csr::rows - 1;
    while (A.ptr[a] == A.ptr[a + 1]) --a;
    cases.back().rank = csr::rank_of_row(a, p);
  }

  for (const auto& c : cases) {
    INFO(c.what << "; expected on rank " << c.rank << " of " << p);
    SECTION(c.what + ", from run()") {
      auto plan = wp::distribute(spmv, g, ctx);
      c.apply();
      if (c.moves_range && p > 1) {
        // Root inspected the row pointers when the plan was made and cut val and col to each
        // rank's entries: before scattering, it finds that they no longer fit, and says so
        // on every rank (one rank runs everything in place and reads root's arrays instead).
        REQUIRE_THROWS_AS(plan.run(), wp::plan_error);
        const std::string msg = what_of([&] { plan.run(); });
        INFO(msg);
        REQUIRE_THAT(msg, Contains("on rank " + std::to_string(c.rank) + ",") &&
                              Contains("'spmv'") && Contains("distribute the map again"));
        REQUIRE(same_everywhere(ctx.comm(), msg) == "");
        good();
        plan.run();
        REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
      } else {
        REQUIRE_THROWS_AS(plan.run(), wp::shape_error);
        const std::string msg = what_of([&] { plan.run(); });
        INFO(msg);
        REQUIRE_THAT(msg, Contains("rank " + std::to_string(c.rank) + ":") && Contains("'spmv'") &&
                              Contains(c.contains));
        REQUIRE(same_everywhere(ctx.comm(), msg) == "");
        // the same plan runs again once root's data is repaired
        good();
        plan.run();
        REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
      }
    }
    SECTION(c.what + ", from execute()") {
      c.apply();
      auto plan = wp::distribute(spmv, g, ctx);
      plan.scatter();
      REQUIRE_THROWS_AS(plan.execute(), wp::shape_error);
      // a second execute() on the same bad data fails alike
      REQUIRE_THROWS_AS(plan.execute(), wp::shape_error);
      good();
      // a new plan on repaired data works
      auto plan2 = wp::distribute(spmv, g, ctx);
      plan2.run();
      REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
    }
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("errors: a failing rank's error does not depend on which ranks are idle",
          "[mpi][distribute][errors][csr]") {
  // Grid (1): only rank 0 runs, the others idle; the error still reaches all of them.
  wp::context ctx(g_argc, g_argv);
  auto [i] = wp::indices<1>();
  constexpr index_t m = 7, n = 13;
  wp::array<std::int64_t, 1> idx("idx", {m});
  wp::array<float, 1> x("x", {n}), y("y", {m});
  fill1(idx, [](index_t a) { return (a * 3) % n; });
  fill1(x, [](index_t a) { return float(a) * 0.5f; });
  auto gather = wp::map("gather", wp::space(m), y(i) = x(idx(i)) + 1.0f);
  if (std::int64_t* d = idx.data()) d[5] = n;  // past the end
  for (const wp::grid_shape& g : {wp::grid_shape{1}, wp::grid_shape{index_t(ctx.size())}}) {
    INFO("grid " << g.str());
    auto plan = wp::distribute(gather, g, ctx);
    REQUIRE_THROWS_AS(plan.run(), wp::shape_error);
    const std::string msg = what_of([&] { plan.run(); });
    REQUIRE_THAT(msg, Contains("'gather'") && Contains("'x'") && Contains("at 13"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  if (std::int64_t* d = idx.data()) d[5] = 4;
  auto plan = wp::distribute(gather, wp::grid_shape{index_t(ctx.size())}, ctx);
  plan.run();
  std::vector<double> want(m);
  for (index_t a = 0; a < m; ++a) want[a] = double(float(a == 5 ? 4 : (a * 3) % n) * 0.5f + 1.0f);
  REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("errors: a communicator subset that leaves this rank out", "[mpi][distribute][errors]") {
  boost::mpi::communicator world;
  // The last rank is left out of the subset (it gets a null communicator) when there are 2+.
  const bool member = world.size() == 1 || world.rank() < world.size() - 1;
  // Boost.MPI gives a null communicator for MPI_UNDEFINED (a default-constructed one is world).
  const boost::mpi::communicator sub = world.split(member ? 0 : MPI_UNDEFINED, world.rank());
  REQUIRE(bool(sub) == member);
  if (!member) {
    REQUIRE_THROWS_AS(wp::context(g_argc, g_argv, sub), wp::plan_error);
    REQUIRE_THROWS_WITH(wp::context(g_argc, g_argv, sub), Contains("not in the communicator"));
  } else {
    // The members distribute over the subset alone; its rank 0 is root.
    wp::context ctx(g_argc, g_argv, sub);
    auto [i] = wp::indices<1>();
    constexpr index_t n = 11;
    wp::array<double, 1> x("x", {n}), y("y", {n});
    x.init([](std::array<index_t, 1> g) { return double(g[0]) * 1.5; });
    auto plan = wp::distribute(wp::map("sub", wp::space(n), y(i) = x(i) + 1.0),
                               wp::grid_shape{index_t(ctx.size())}, ctx);
    plan.run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) want[a] = double(a) * 1.5 + 1.0;
    // judged on the subset's root, asserted on every member alike (no rank left waiting)
    REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
  }
  // Nobody hung: the world still communicates.
  REQUIRE(boost::mpi::all_reduce(world, 1, std::plus<int>()) == world.size());
}

TEST_CASE("errors: init() on root only is refused on every rank", "[mpi][distribute][errors]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 13;
  wp::array<double, 1> x("x", {n}), out("out", {n});
  if (ctx.is_root()) x.init([](std::array<index_t, 1> g) { return double(g[0]); });
  auto m = wp::map("rootinit", wp::space(n), out(i) = x(i) * 2.0);
  if (p == 1) {
    // One rank: root is every rank, so in-place generation works.
    auto plan = wp::distribute(m, wp::grid_shape{1}, ctx);
    plan.run();
    for (index_t a = 0; a < n; ++a) REQUIRE(out.data()[a] == 2.0 * double(a));
  } else {
    const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{p}, ctx); });
    REQUIRE_THAT(msg, Contains("'x' has init() on root but not on every rank"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    // Once root holds a copy (data() asked for), the same map distributes from root's values.
    if (ctx.is_root()) x.data();
    auto plan = wp::distribute(m, wp::grid_shape{p}, ctx);
    plan.run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) want[a] = 2.0 * double(a);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
  }
  // A grid of one: no rank but root generates anything, so init() on root alone suffices.
  {
    wp::array<double, 1> z("z", {n}), o("o", {n});
    if (ctx.is_root()) z.init([](std::array<index_t, 1> g) { return double(g[0]) + 0.25; });
    auto plan = wp::distribute(wp::map("rootonly", wp::space(n), o(i) = z(i) - 1.0),
                               wp::grid_shape{1}, ctx);
    plan.run();
    std::vector<double> want(n);
    for (index_t a = 0; a < n; ++a) want[a] = double(a) - 0.75;
    REQUIRE(compare_on_root(ctx.comm(), o, want) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("errors: init() called again on root only is refused at the next scatter",
          "[mpi][distribute][errors]") {
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  auto [i] = wp::indices<1>();
  constexpr index_t n = 13;
  wp::array<double, 1> x("x", {n}), out("out", {n});
  x.init([](std::array<index_t, 1> g) { return double(g[0]); });
  auto plan = wp::distribute(wp::map("reinit_root", wp::space(n), out(i) = x(i) * 2.0),
                             wp::grid_shape{p}, ctx);
  if (ctx.is_root()) x.data();  // root's copy: scattered from now on
  plan.run();
  if (ctx.is_root()) x.init([](std::array<index_t, 1> g) { return -double(g[0]); });
  std::vector<double> want(n);
  if (p == 1) {
    plan.run();
    for (index_t a = 0; a < n; ++a) want[a] = -2.0 * double(a);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
  } else {
    // the other ranks would generate from the old generator: refused on every rank
    const std::string msg = what_of([&] { plan.run(); });
    REQUIRE_THAT(msg, Contains("'x'") && Contains("init() called 2 time(s) on some ranks and 1"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
    // calling it on the other ranks too makes the ranks agree again
    if (!ctx.is_root()) x.init([](std::array<index_t, 1> g) { return -double(g[0]); });
    plan.run();
    for (index_t a = 0; a < n; ++a) want[a] = -2.0 * double(a);
    REQUIRE(compare_on_root(ctx.comm(), out, want) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("errors: a box too large for an MPI count is refused on every rank",
          "[mpi][distribute][errors]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j] = wp::indices<2>();
  // Arrays generated in place and never allocated: the plans are refused first.
  SECTION("an axis longer than 2^31 - 1") {
    const index_t n = (index_t(1) << 31) + 5;
    wp::array<float, 1> x("x", {n}), y("y", {n});
    x.init([](std::array<index_t, 1> g) { return float(g[0] % 7); });
    auto m = wp::map("huge_axis", wp::space(n), y(i) = x(i) * 2.0f);
    const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{1}, ctx); });
    REQUIRE_THAT(msg, Contains("[workpart.plan_error]") && Contains("'huge_axis'") &&
                          Contains(std::to_string(n) + " elements along one axis") &&
                          Contains("more than an MPI count can carry"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  SECTION("a box of 2^31 + 2^16 elements on one rank") {
    const index_t r = index_t(1) << 16, c = (index_t(1) << 15) + 1;
    wp::array<float, 2> x("x", {r, c}), y("y", {r, c});
    x.init([](std::array<index_t, 2> g) { return float((g[0] + g[1]) % 7); });
    auto m = wp::map("huge_box", wp::space(r, c), y(i, j) = x(i, j) * 2.0f);
    const std::string msg = what_of([&] { wp::distribute(m, wp::grid_shape{1, 1}, ctx); });
    REQUIRE_THAT(msg, Contains("[workpart.plan_error]") && Contains("'huge_box'") &&
                          Contains("rank 0 would hold " + std::to_string(r * c) + " elements") &&
                          Contains("more than an MPI count can carry"));
    REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

// (a rank out of memory: tests/mpi/test_memory_limits.cpp, in the build without sanitizers)

TEST_CASE("errors: an array's global data off root: data() is nullptr, at() says where it is",
          "[mpi][errors][root]") {
  wp::context ctx(g_argc, g_argv);
  wp::array<double, 2> a("weights", {3, 4});
  if (ctx.is_root()) {
    REQUIRE(a.data() != nullptr);
    a.at({2, 3}) = 5.0;
    REQUIRE(a.data()[11] == 5.0);
  } else {
    REQUIRE(a.data() == nullptr);
    REQUIRE(a.matrix().size() == 0);
    REQUIRE_THROWS_AS(a.at({0, 0}), wp::plan_error);
    REQUIRE_THROWS_WITH(
        a.at({0, 0}), Contains("wp::array 'weights': at() on rank " + std::to_string(ctx.rank())) &&
                          Contains("only root (rank 0) holds") &&
                          Contains("plan.gather(weights)") && Contains("plan.local(weights)"));
  }
}
