/// \file test_inspect.cpp
/// Inner ranges whose bounds read data (CSR SpMV): root inspects the row pointers when the
/// plan is made, so every rank receives exactly the values and column indices of its rows
/// (checked against the tiling by hand, through plan.local() and through the bytes), the
/// result matches a plain loop, values that keep within the inspected ranges run again on the
/// same plan, and bounds root cannot read (generated in place) keep the whole axis.

#include "mpi_test_support.hpp"

#include <cmath>
#include <random>

namespace {

using namespace mpitest;

/// A CSR matrix with power-law row lengths (a few long rows, many short or empty ones).
struct power_law_csr {
  index_t rows, cols;
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int32_t> col;
  std::vector<double> val;
  power_law_csr(index_t r, index_t c, unsigned seed) : rows(r), cols(c) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (index_t a = 0; a < rows; ++a) {
      // Pareto-like: length = floor(2 / u^0.8) - 2, capped at cols; many rows get 0 or 1.
      const double len_d = std::floor(2.0 / std::pow(std::max(u(rng), 1e-3), 0.8)) - 2.0;
      const index_t len = std::min<index_t>(cols, index_t(len_d));
      for (index_t q = 0; q < len; ++q) {
        col.push_back(std::int32_t(rng() % std::uint32_t(cols)));
        val.push_back(double(int(rng() % 17) - 8) / 4.0);
      }
      ptr.push_back(std::int64_t(col.size()));
    }
  }
  index_t nnz() const { return index_t(col.size()); }
  std::vector<double> times(const std::function<double(index_t)>& x) const {
    std::vector<double> y(std::size_t(rows), 0.0);
    for (index_t a = 0; a < rows; ++a)
      for (std::int64_t q = ptr[std::size_t(a)]; q < ptr[std::size_t(a + 1)]; ++q)
        y[std::size_t(a)] += val[std::size_t(q)] * x(col[std::size_t(q)]);
    return y;
  }
};

double xf(index_t c) { return double(c % 7) - 2.5; }

}  // namespace

TEST_CASE("inspect: CSR SpMV sends each rank exactly its rows' entries",
          "[mpi][distribute][inspect][csr]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, jj] = wp::indices<2>();
  for (const unsigned seed : {7u, 2024u}) {
    const power_law_csr A(37, 23, seed);
    const index_t nnz = A.nnz();
    INFO("seed " << seed << ", nnz " << nnz << ", " << P << " ranks");
    wp::array<std::int64_t, 1> row("row", {A.rows + 1});
    wp::array<std::int32_t, 1> col("col", {std::max<index_t>(nnz, 1)});
    wp::array<double, 1> val("val", {std::max<index_t>(nnz, 1)}), x("x", {A.cols}),
        y("y", {A.rows});
    fill1(row, [&](index_t a) { return A.ptr[std::size_t(a)]; });
    fill1(col, [&](index_t q) { return q < nnz ? A.col[std::size_t(q)] : 0; });
    fill1(val, [&](index_t q) { return q < nnz ? A.val[std::size_t(q)] : 0.0; });
    fill1(x, xf);
    const std::vector<double> want = A.times(xf);
    auto spmv = wp::map("spmv", wp::space(A.rows),
                        y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj))));
    auto plan = wp::distribute(spmv, wp::grid_shape{index_t(P)}, ctx);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");

    // This rank's val and col blocks are its rows' entries, ptr[start] .. ptr[end].
    const block b = block_of(A.rows, P, ctx.rank());
    const index_t lo = A.ptr[std::size_t(b.start)], hi = A.ptr[std::size_t(b.end())];
    std::ostringstream mine;
    for (const auto& blk : {plan.local(val).offset[0], plan.local(col).offset[0]})
      if (hi > lo && blk != lo)
        mine << "local block starts at " << blk << ", expected " << lo << "; ";
    if (hi > lo) {
      if (plan.local(val).extent[0] != hi - lo)
        mine << "val's local extent " << plan.local(val).extent[0] << ", expected " << hi - lo
             << "; ";
      if (plan.local(col).extent[0] != hi - lo)
        mine << "col's local extent " << plan.local(col).extent[0] << ", expected " << hi - lo
             << "; ";
    } else if (P > 1 && plan.local(val).extent[0] > 0) {
      mine << "a rank whose rows are empty holds " << plan.local(val).extent[0] << " values; ";
    }
    REQUIRE(all_problems(ctx.comm(), mine.str()) == "");

    // Bytes by hand: row with the one-element overlap, the entries, x whole, y back.
    bytes_by_rank want_b(P);
    for (int r = 1; r < P; ++r) {
      const block rb = block_of(A.rows, P, r);
      const index_t entries = A.ptr[std::size_t(rb.end())] - A.ptr[std::size_t(rb.start)];
      want_b.scatter(0, r, (rb.size + 1) * 8 + entries * (4 + 8) + A.cols * 8);
      want_b.gather(r, 0, rb.size * 8);
    }
    REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
    REQUIRE(explain_differs(ctx.comm(), plan) == "");
    if (P > 1) REQUIRE_THAT(plan.explain(), Catch::Contains("inspected on root"));

    // New values inside the inspected ranges run on the same plan: other values and column
    // indices, and a row pointer moved inside a rank's block (rows swap entries, the rank's
    // entries stay the same set).
    std::vector<std::int64_t> ptr2 = A.ptr;
    for (int r = 0; r < P; ++r) {
      const block rb = block_of(A.rows, P, r);
      if (rb.size >= 2) {  // move the pointer between the rank's first two rows to its middle
        const std::size_t k = std::size_t(rb.start + 1);
        ptr2[k] = (ptr2[k - 1] + ptr2[std::size_t(rb.end())]) / 2;
      }
    }
    fill1(row, [&](index_t a) { return ptr2[std::size_t(a)]; });
    fill1(col, [&](index_t q) {
      return q < nnz ? std::int32_t((A.col[std::size_t(q)] + 5) % A.cols) : 0;
    });
    std::vector<double> want2(std::size_t(A.rows), 0.0);
    for (index_t a = 0; a < A.rows; ++a)
      for (std::int64_t q = ptr2[std::size_t(a)]; q < ptr2[std::size_t(a + 1)]; ++q)
        want2[std::size_t(a)] += A.val[std::size_t(q)] * xf((A.col[std::size_t(q)] + 5) % A.cols);
    plan.run();
    REQUIRE(compare_on_root(ctx.comm(), y, want2) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan, 2, 2)) == "");
  }
}

TEST_CASE("inspect: bounds root holds no copy of keep the whole axis",
          "[mpi][distribute][inspect][csr]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, jj] = wp::indices<2>();
  // Banded rows generated in place: row(a) = 2a, every row has two entries.
  constexpr index_t rows = 13, cols = 11, nnz = 2 * rows;
  wp::array<std::int64_t, 1> row("row", {rows + 1});
  row.init([](std::array<index_t, 1> c) { return std::int64_t(2 * c[0]); });
  wp::array<std::int32_t, 1> col("col", {nnz});
  wp::array<double, 1> val("val", {nnz}), x("x", {cols}), y("y", {rows});
  fill1(col, [](index_t q) { return std::int32_t((q * 3) % cols); });
  fill1(val, [](index_t q) { return double(q) / 4.0; });
  fill1(x, xf);
  std::vector<double> want(rows, 0.0);
  for (index_t a = 0; a < rows; ++a)
    for (index_t q = 2 * a; q < 2 * a + 2; ++q)
      want[std::size_t(a)] += double(q) / 4.0 * xf((q * 3) % cols);
  auto plan = wp::distribute(
      wp::map("spmv", wp::space(rows),
              y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj)))),
      wp::grid_shape{index_t(P)}, ctx);
  plan.run();
  REQUIRE(compare_on_root(ctx.comm(), y, want) == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  REQUIRE_THAT(plan.explain(), !Catch::Contains("inspected on root"));
  if (P > 1) REQUIRE(has(plan.collectives(val), "Bcast"));  // every rank gets all values
  bytes_by_rank want_b(P);
  for (int r = 1; r < P; ++r) {
    const block rb = block_of(rows, P, r);
    want_b.scatter(0, r, nnz * (4 + 8) + cols * 8);  // row is generated on each rank
    want_b.gather(r, 0, rb.size * 8);
  }
  REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want_b, ctx.rank())) == "");
}

TEST_CASE("inspect: a program's maps keep whole axes (an earlier map may write the bounds)",
          "[mpi][distribute][inspect][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  auto [i, jj] = wp::indices<2>();
  const power_law_csr A(19, 13, 99u);
  const index_t nnz = A.nnz();
  wp::array<std::int64_t, 1> row("row", {A.rows + 1});
  wp::array<std::int32_t, 1> col("col", {nnz});
  wp::array<double, 1> val("val", {nnz}), x("x", {A.cols}), y("y", {A.rows}), z("z", {A.rows});
  fill1(row, [&](index_t a) { return A.ptr[std::size_t(a)]; });
  fill1(col, [&](index_t q) { return A.col[std::size_t(q)]; });
  fill1(val, [&](index_t q) { return A.val[std::size_t(q)]; });
  fill1(x, xf);
  const std::vector<double> y_want = A.times(xf);
  std::vector<double> want(y_want.size());
  for (std::size_t a = 0; a < want.size(); ++a) want[a] = 2.0 * y_want[a];
  auto spmv = wp::map("spmv", wp::space(A.rows),
                      y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj))));
  auto twice = wp::map("twice", wp::space(A.rows), z(i) = y(i) * 2.0);
  wp::schedule s;
  s.set(spmv, wp::grid_shape{index_t(P)});
  s.set(twice, wp::grid_shape{index_t(P)});
  auto plan = wp::distribute(wp::program(spmv, twice), s, ctx);
  plan.run();
  REQUIRE(compare_on_root(ctx.comm(), z, want) == "");
  REQUIRE_THAT(plan.explain(), !Catch::Contains("inspected on root"));
}
