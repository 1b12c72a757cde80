// Run-time misuse: out-of-bounds affine accesses (when the map is built), negative
// extents, and data-dependent subscripts or ranges that leave their arrays (from wp::run).
// Every error is a wp::shape_error whose message names the map, the array, the axis and the
// value; nothing is ever written outside an array.

#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <workpart/workpart.hpp>

namespace wp = workpart;
using Catch::Contains;
using std::int32_t;
using std::int64_t;

namespace {

constexpr int64_t n = 13;

// A buffer with `guard` sentinel elements on each side of `size` elements: arrays are views
// of its middle, so a write out of bounds changes a sentinel.
template <class T>
struct guarded {
  static constexpr int64_t guard = 16;
  std::vector<T> buf;
  T sentinel;
  guarded(int64_t size, T s) : buf(static_cast<std::size_t>(size + 2 * guard), s), sentinel(s) {}
  T* data() { return buf.data() + guard; }
  int64_t size() const { return int64_t(buf.size()) - 2 * guard; }
  bool guards_intact() const {
    for (int64_t k = 0; k < guard; ++k)
      if (buf[k] != sentinel || buf[buf.size() - 1 - k] != sentinel) return false;
    return true;
  }
};

using arr1 = wp::array<double, 1>;
using arr2 = wp::array<double, 2>;
using arr3i = wp::array<int32_t, 3>;

}  // namespace

TEST_CASE("errors: the hierarchy", "[errors]") {
  STATIC_REQUIRE(std::is_base_of_v<wp::error, wp::shape_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, wp::error>);
  auto [i] = wp::indices<1>();
  arr1 x("x", {n});
  arr1 out("out", {n});
  REQUIRE_THROWS_AS(wp::map("m", wp::space(n), out(i) = x(i + 1)), wp::error);
  REQUIRE_THROWS_AS(wp::map("m", wp::space(n), out(i) = x(i + 1)), std::runtime_error);
  REQUIRE_THROWS_WITH(wp::map("m", wp::space(n), out(i) = x(i + 1)),
                      Catch::StartsWith("[workpart.shape_error]"));
}

TEST_CASE("errors: affine accesses that leave the array when the map is built", "[errors]") {
  auto [i, j, r] = wp::indices<3>();
  arr1 x("x", {n});
  arr1 out("out", {n});

  SECTION("x(i + 1) over the whole extent reads n") {
    REQUIRE_THROWS_AS(wp::map("shift_up", wp::space(n), out(i) = x(i + 1)), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::map("shift_up", wp::space(n), out(i) = x(i + 1)),
                        Contains("'shift_up'") && Contains("'x'") && Contains("axis 0") &&
                            Contains("at 13") && Contains("[0, 13)"));
  }
  SECTION("x(i - 1) at i = 0 reads -1") {
    REQUIRE_THROWS_AS(wp::map("shift_down", wp::space(n), out(i) = x(i - 1)), wp::shape_error);
    REQUIRE_THROWS_WITH(
        wp::map("shift_down", wp::space(n), out(i) = x(i - 1)),
        Contains("'shift_down'") && Contains("'x'") && Contains("axis 0") && Contains("at -1"));
  }
  SECTION("reversed x(N - i) reads N") {
    const int64_t N = n;
    REQUIRE_THROWS_AS(wp::map("reverse", wp::space(n), out(i) = x(N - i)), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::map("reverse", wp::space(n), out(i) = x(N - i)),
                        Contains("'reverse'") && Contains("'x'") && Contains("at 13"));
    REQUIRE_NOTHROW(wp::map("reverse_ok", wp::space(n), out(i) = x(N - 1 - i)));
  }
  SECTION("stride x(2 * i) overrunning") {
    REQUIRE_NOTHROW(wp::map("stride_ok", wp::space(7), out(i) = x(2 * i)));  // reads 0 .. 12
    REQUIRE_THROWS_AS(wp::map("stride", wp::space(8), out(i) = x(2 * i)), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::map("stride", wp::space(8), out(i) = x(2 * i)),
                        Contains("'stride'") && Contains("'x'") && Contains("at 14"));
    REQUIRE_THROWS_WITH(wp::map("neg_stride", wp::space(8), out(i) = x(12 - 2 * i)),
                        Contains("'neg_stride'") && Contains("'x'") && Contains("at -2"));
  }
  SECTION("sums x(i + r) with an inner range that overruns") {
    REQUIRE_NOTHROW(
        wp::map("conv_ok", wp::space(n - 3), out(i) = wp::sum(wp::range(r, 0, 4), x(i + r))));
    REQUIRE_THROWS_AS(
        wp::map("conv", wp::space(n - 2), out(i) = wp::sum(wp::range(r, 0, 4), x(i + r))),
        wp::shape_error);
    REQUIRE_THROWS_WITH(
        wp::map("conv", wp::space(n - 2), out(i) = wp::sum(wp::range(r, 0, 4), x(i + r))),
        Contains("'conv'") && Contains("'x'") && Contains("axis 0") && Contains("at 13"));
    // An affine range bound that depends on the outer index.
    REQUIRE_THROWS_WITH(
        wp::map("tri", wp::space(n), out(i) = wp::sum(wp::range(r, 0, i + 2), x(r))),
        Contains("'tri'") && Contains("'x'") && Contains("at 13"));
    REQUIRE_THROWS_WITH(
        wp::map("tri_lo", wp::space(n), out(i) = wp::max_of(wp::range(r, i - 1, i + 1), x(r))),
        Contains("'tri_lo'") && Contains("'x'") && Contains("at -1"));
  }
  SECTION("a left-hand side that overruns") {
    REQUIRE_THROWS_AS(wp::map("lhs", wp::space(n), out(i + 1) = x(i)), wp::shape_error);
    REQUIRE_THROWS_WITH(
        wp::map("lhs", wp::space(n), out(i + 1) = x(i)),
        Contains("'lhs'") && Contains("'out'") && Contains("writes") && Contains("at 13"));
    REQUIRE_THROWS_WITH(wp::map("lhs_add", wp::space(n), out(i - 1) += x(i)),
                        Contains("'lhs_add'") && Contains("'out'") && Contains("at -1"));
    REQUIRE_THROWS_WITH(wp::map("lhs_max", wp::space({0, n + 1}), wp::max_into(out(i), 1.0)),
                        Contains("'lhs_max'") && Contains("'out'") && Contains("at 13"));
  }
  SECTION("the axis at fault is named") {
    arr2 A("A", {5, 7});
    arr2 B("B", {5, 7});
    REQUIRE_THROWS_WITH(
        wp::map("axis1", wp::space(5, 7), B(i, j) = A(i, j + 1)),
        Contains("'axis1'") && Contains("'A'") && Contains("axis 1") && Contains("at 7"));
    REQUIRE_THROWS_WITH(
        wp::map("axis0", wp::space(5, 7), B(i, j) = A(4 - i + 1, j)),
        Contains("'axis0'") && Contains("'A'") && Contains("axis 0") && Contains("at 5"));
    REQUIRE_THROWS_WITH(
        wp::map("const_sub", wp::space(5), out(i) = A(i, 7)),
        Contains("'const_sub'") && Contains("'A'") && Contains("axis 1") && Contains("at 7"));
  }
  SECTION("constant subscripts in a rank-0 space") {
    wp::array<double, 0> s("s", {});
    REQUIRE_NOTHROW(wp::map("pt_ok", wp::space(), s() = x(n - 1)));
    REQUIRE_THROWS_WITH(wp::map("pt", wp::space(), s() = x(n)),
                        Contains("'pt'") && Contains("'x'") && Contains("at 13"));
    REQUIRE_THROWS_WITH(wp::map("pt_lhs", wp::space(), x(-1) = s()),
                        Contains("'pt_lhs'") && Contains("'x'") && Contains("at -1"));
  }
  SECTION("a space whose bounds go below 0") {
    REQUIRE_THROWS_WITH(wp::map("neg_lo", wp::space({-1, n}), out(i) = x(i)),
                        Contains("'neg_lo'") && Contains("at -1"));
  }
  SECTION("the error is raised by the second statement too, and in a wp::all reduction") {
    arr2 A("A", {5, 7});
    REQUIRE_THROWS_WITH(
        wp::map("second", wp::space(n - 1), out(i) = x(i), out(i + 1) = x(i + 1) + x(i + 2)),
        Contains("'second'") && Contains("'x'") && Contains("at 13"));
    REQUIRE_THROWS_WITH(
        wp::map("all_row", wp::space(6), out(i) = wp::sum(A(i, wp::all))),
        Contains("'all_row'") && Contains("'A'") && Contains("axis 0") && Contains("at 5"));
  }
}

TEST_CASE("errors: ranges empty at some points are bounded exactly where they run", "[errors]") {
  auto [i, j, r] = wp::indices<3>();
  // range(r, i, 4) runs only for i <= 3; there r - 2i + 6 spans [3, 9] (at r = i = 3 and at
  // r = 3, i = 0). The points i > 3 run nothing and must not widen the span.
  arr1 x10("x10", {10}), x9("x9", {9}), y("y", {13});
  for (int64_t a = 0; a < 10; ++a) x10.data()[a] = double(a * a) - 7.0;
  for (int64_t a = 0; a < 13; ++a) y.data()[a] = -1.0;
  REQUIRE_NOTHROW(wp::run(
      wp::map("tri_ok", wp::space(13), y(i) = wp::sum(wp::range(r, i, 4), x10(r - 2 * i + 6)))));
  for (int64_t a = 0; a < 13; ++a) {
    double e = 0;  // empty rows sum to 0
    for (int64_t q = a; q < 4; ++q) e += double((q - 2 * a + 6) * (q - 2 * a + 6)) - 7.0;
    INFO("y(" << a << ")");
    REQUIRE(y.data()[a] == e);
  }
  REQUIRE_THROWS_WITH(
      wp::map("tri_bad", wp::space(13), y(i) = wp::sum(wp::range(r, i, 4), x9(r - 2 * i + 6))),
      Contains("'tri_bad'") && Contains("'x9'") && Contains("at 9") && Contains("span [3, 9]"));
  // Two outer dimensions: range(r, j, i + 1) runs where j <= i (a lower triangle). There
  // x(r - 2j + i) spans [0, 2(m - 1)] (min at r = j = i, max at r = i = m - 1, j = 0); over the
  // whole square it would reach -(m - 1) at i = 0, j = m - 1, where the range is empty.
  constexpr int64_t m = 6;
  arr1 x11("x11", {2 * m - 1});
  for (int64_t a = 0; a < 2 * m - 1; ++a) x11.data()[a] = double(a) + 0.5;
  wp::array<double, 2> S("S", {m, m});
  REQUIRE_NOTHROW(wp::run(wp::map("band", wp::space(m, m),
                                  S(i, j) = wp::sum(wp::range(r, j, i + 1), x11(r - 2 * j + i)))));
  for (int64_t a = 0; a < m; ++a)
    for (int64_t b = 0; b < m; ++b) {
      double e = 0;
      for (int64_t q = b; q <= a; ++q) e += double(q - 2 * b + a) + 0.5;
      REQUIRE(S.data()[a * m + b] == e);
    }
}

TEST_CASE("errors: a stencil restricted by its space is in bounds", "[errors]") {
  auto [i, j] = wp::indices<2>();
  arr1 x("x", {n});
  arr1 out("out", {n});
  for (int64_t a = 0; a < n; ++a) x.data()[a] = double(a * a);
  REQUIRE_NOTHROW(
      wp::run(wp::map("stencil", wp::space({1, n - 1}), out(i) = x(i - 1) - 2 * x(i) + x(i + 1))));
  for (int64_t a = 1; a < n - 1; ++a) REQUIRE(out.data()[a] == 2.0);  // second difference of a^2
  REQUIRE(out.data()[0] == 0.0);
  REQUIRE(out.data()[n - 1] == 0.0);
  arr2 G("G", {7, 9});
  arr2 H("H", {7, 9});
  REQUIRE_NOTHROW(
      wp::run(wp::map("stencil2d", wp::space({1, 6}, {1, 8}),
                      H(i, j) = G(i - 1, j) + G(i + 1, j) + G(i, j - 1) + G(i, j + 1))));
}

TEST_CASE("errors: negative extents", "[errors]") {
  REQUIRE_THROWS_AS(arr1("neg", {-1}), wp::shape_error);
  REQUIRE_THROWS_WITH(arr1("neg", {-1}), Contains("'neg'") && Contains("-1"));
  REQUIRE_THROWS_AS(arr2("neg2", {3, -4}), wp::shape_error);
  REQUIRE_THROWS_WITH(arr2("neg2", {3, -4}),
                      Contains("'neg2'") && Contains("-4") && Contains("axis 1"));
  REQUIRE_THROWS_AS(arr3i("neg3", {-2, 3, 4}), wp::shape_error);
  REQUIRE_NOTHROW(arr2("zero", {0, 4}));

  REQUIRE_THROWS_AS(wp::space(int64_t{-3}), wp::shape_error);
  REQUIRE_THROWS_WITH(wp::space(int64_t{-3}), Contains("-3"));
  REQUIRE_THROWS_AS(wp::space(4, -1), wp::shape_error);
  REQUIRE_THROWS_WITH(wp::space(4, -1), Contains("-1") && Contains("dimension 1"));
  REQUIRE_THROWS_AS(wp::space({5, 2}), wp::shape_error);
  REQUIRE_THROWS_AS(wp::space({0, 3}, {4, 1}), wp::shape_error);
  REQUIRE_NOTHROW(wp::space({3, 3}));
  REQUIRE_NOTHROW(wp::space(0, 0));

  // A view needs a buffer on root.
  REQUIRE_THROWS_AS(arr1("null_view", {5}, nullptr), wp::shape_error);
  REQUIRE_THROWS_WITH(arr1("null_view", {5}, nullptr), Contains("'null_view'"));
}

TEST_CASE("errors: a CSR with a corrupt row pointer throws from wp::run", "[errors][csr]") {
  auto [i, jj] = wp::indices<2>();
  constexpr int64_t rows = 5, nnz = 9;
  arr1 x("x", {n});
  wp::array<int64_t, 1> row("row", {rows + 1});
  wp::array<int32_t, 1> col("col", {nnz});
  guarded<double> vbuf(nnz, -777.0);
  arr1 vals("vals", {nnz}, vbuf.data());
  guarded<double> ybuf(rows, 555.0);
  arr1 y("y", {rows}, ybuf.data());
  const std::vector<int64_t> good = {0, 2, 2, 5, 7, 9};
  for (int64_t a = 0; a <= rows; ++a) row.data()[a] = good[a];
  for (int64_t q = 0; q < nnz; ++q) {
    col.data()[q] = int32_t((q * 4 + 1) % n);
    vals.data()[q] = double(q) + 0.5;
  }
  for (int64_t a = 0; a < n; ++a) x.data()[a] = double(a) - 6.0;
  auto spmv = [&] {
    return wp::map("spmv", wp::space(rows),
                   y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), vals(jj) * x(col(jj))));
  };
  // The map is fine with good data.
  REQUIRE_NOTHROW(wp::run(spmv()));
  for (int64_t a = 0; a < rows; ++a) {
    double s = 0;
    for (int64_t q = good[a]; q < good[a + 1]; ++q) s += vals.data()[q] * x.data()[col.data()[q]];
    REQUIRE(y.data()[a] == Approx(s));
  }

  SECTION("the last row pointer points one past the end") {
    row.data()[rows] = nnz + 1;  // the last row reads vals(9) and col(9)
    auto m = spmv();             // building the map cannot see the data
    REQUIRE_THROWS_AS(wp::run(m), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(m), Contains("'spmv'") &&
                                        (Contains("'vals'") || Contains("'col'")) &&
                                        Contains("at 9") && Contains("[0, 9)"));
  }
  SECTION("a row pointer far past the end") {
    row.data()[3] = nnz + 40;
    row.data()[4] = nnz + 50;
    REQUIRE_THROWS_AS(wp::run(spmv()), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(spmv()),
                        Contains("'spmv'") && (Contains("'vals'") || Contains("'col'")));
  }
  SECTION("a negative row pointer") {
    row.data()[0] = -1;
    REQUIRE_THROWS_AS(wp::run(spmv()), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(spmv()), Contains("'spmv'") && Contains("at -1"));
  }
  SECTION("an affine body access past the end inside a data-dependent range") {
    // vals(jj + 1) is in bounds except for the last entry of the last row.
    auto m = wp::map("next", wp::space(rows),
                     y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), vals(jj + 1)));
    REQUIRE_THROWS_AS(wp::run(m), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(m), Contains("'next'") && Contains("'vals'") && Contains("at 9"));
  }
  SECTION("an affine inner range nested in a data-dependent one reads past the end") {
    // For each entry jj, a window vals(jj), vals(jj + 1): the last entry's window leaves vals.
    const wp::index<2> r;
    auto m = wp::map("window", wp::space(rows),
                     y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)),
                                    wp::sum(wp::range(r, jj, jj + 2), vals(r))));
    REQUIRE_THROWS_AS(wp::run(m), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(m), Contains("'window'") && Contains("'vals'") && Contains("at 9"));
  }
  SECTION("a column index out of range") {
    col.data()[4] = int32_t(n + 2);
    REQUIRE_THROWS_AS(wp::run(spmv()), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(spmv()), Contains("'spmv'") && Contains("'x'") &&
                                             Contains("at 15") && Contains("[0, 13)"));
  }
  // Whatever failed, nothing was written around the arrays.
  REQUIRE(ybuf.guards_intact());
  REQUIRE(vbuf.guards_intact());
}

TEST_CASE("errors: an indirect subscript x(col(j)) out of range throws from wp::run", "[errors]") {
  auto [i] = wp::indices<1>();
  constexpr int64_t m = 7;
  guarded<float> xbuf(n, 12345.0f);
  wp::array<float, 1> x("x", {n}, xbuf.data());
  wp::array<int64_t, 1> col("col", {m});
  guarded<float> ybuf(m, -999.0f);
  wp::array<float, 1> y("y", {m}, ybuf.data());
  for (int64_t a = 0; a < n; ++a) x.data()[a] = float(a) * 0.5f;
  for (int64_t a = 0; a < m; ++a) col.data()[a] = (a * 3) % n;

  auto gather = wp::map("gather", wp::space(m), y(i) = x(col(i)) + 1.0f);
  REQUIRE_NOTHROW(wp::run(gather));
  for (int64_t a = 0; a < m; ++a) REQUIRE(y.data()[a] == float((a * 3) % n) * 0.5f + 1.0f);

  SECTION("past the end") {
    col.data()[5] = n;
    REQUIRE_THROWS_AS(wp::run(gather), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(gather), Contains("'gather'") && Contains("'x'") &&
                                             Contains("axis 0") && Contains("at 13") &&
                                             Contains("[0, 13)"));
  }
  SECTION("negative") {
    col.data()[0] = -2;
    REQUIRE_THROWS_AS(wp::run(gather), wp::shape_error);
    REQUIRE_THROWS_WITH(wp::run(gather),
                        Contains("'gather'") && Contains("'x'") && Contains("at -2"));
  }
  SECTION("far out, with the subscript computed from the data") {
    wp::array<int64_t, 1> big("big", {m});
    for (int64_t a = 0; a < m; ++a) big.data()[a] = a * 1000;
    auto m2 = wp::map("gather_far", wp::space(m), y(i) = x(big(i) / 1000));
    REQUIRE_NOTHROW(wp::run(m2));  // big(i) / 1000 = i: in bounds
    big.data()[6] = 1000 * 1000;
    REQUIRE_THROWS_WITH(wp::run(m2),
                        Contains("'gather_far'") && Contains("'x'") && Contains("at 1000"));
  }
  SECTION("an error in one run does not stick to the next") {
    col.data()[2] = 100;
    REQUIRE_THROWS_AS(wp::run(gather), wp::shape_error);
    col.data()[2] = 4;
    REQUIRE_NOTHROW(wp::run(gather));
    REQUIRE(y.data()[2] == 4 * 0.5f + 1.0f);
  }
  REQUIRE(ybuf.guards_intact());
  REQUIRE(xbuf.guards_intact());
}

TEST_CASE("errors: an out-of-range indirect subscript is never read", "[errors]") {
  // x is a view into a buffer whose guard elements hold a sentinel; a subscript that lands
  // in the guard must be reported, and the sentinel must never reach an output.
  auto [i, j, r] = wp::indices<3>();
  constexpr int64_t m = 5, C = 7;
  guarded<double> xbuf(n, 12345.0);
  arr1 x("x", {n}, xbuf.data());
  for (int64_t a = 0; a < n; ++a) x.data()[a] = double(a);
  wp::array<int64_t, 1> col("col", {m});
  for (int64_t a = 0; a < m; ++a) col.data()[a] = a;
  col.data()[3] = n + 2;  // inside the guard: x.data()[15] holds the sentinel

  auto no_sentinel = [](arr2& a) {
    for (int64_t k = 0; k < a.size(); ++k)
      if (a.data()[k] == 12345.0) return false;
    return true;
  };
  SECTION("constant along the row of the loop: Y(i, j) = x(col(i))") {
    arr2 Y("Y", {m, C});
    auto mp = wp::map("bcast", wp::space(m, C), Y(i, j) = x(col(i)));
    REQUIRE_THROWS_WITH(wp::run(mp), Contains("'bcast'") && Contains("'x'") && Contains("at 15"));
    CHECK(no_sentinel(Y));
  }
  SECTION("constant along an inner range: sum(range(r, 0, C), x(col(i)))") {
    arr2 Y("Y", {m, 1});
    auto mp =
        wp::map("inner_bcast", wp::space(m, 1), Y(i, j) = wp::sum(wp::range(r, 0, C), x(col(i))));
    REQUIRE_THROWS_WITH(wp::run(mp),
                        Contains("'inner_bcast'") && Contains("'x'") && Contains("at 15"));
    for (int64_t a = 0; a < m; ++a) CHECK(Y.data()[a] != Approx(12345.0 * C));
  }
  REQUIRE(xbuf.guards_intact());
}

TEST_CASE("errors: nothing is written out of bounds when a map is refused", "[errors]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 5, C = 7;
  guarded<double> obuf(R * C, 31.0);
  arr2 out("out", {R, C}, obuf.data());
  arr2 A("A", {R, C});
  for (int64_t k = 0; k < R * C; ++k) {
    A.data()[k] = double(k);
    out.data()[k] = -1.0;
  }
  REQUIRE_THROWS_AS(wp::run(wp::map("over_rows", wp::space(R + 1, C), out(i, j) = 1.0)),
                    wp::shape_error);
  REQUIRE_THROWS_AS(wp::run(wp::map("over_cols", wp::space(R, C), out(i, j + 1) += A(i, j))),
                    wp::shape_error);
  REQUIRE_THROWS_AS(
      wp::run(wp::map("under", wp::space(R, C), wp::min_into(out(i, j - 1), A(i, j)))),
      wp::shape_error);
  REQUIRE(obuf.guards_intact());
  // The map was refused before anything ran: the array itself is untouched too.
  for (int64_t k = 0; k < R * C; ++k) REQUIRE(out.data()[k] == -1.0);
  // The same statements restricted to the array run and write only inside it.
  wp::run(wp::map("ok_cols", wp::space(R, C - 1), out(i, j + 1) += A(i, j)));
  REQUIRE(obuf.guards_intact());
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b)
      REQUIRE(out.data()[a * C + b] == (b == 0 ? -1.0 : -1.0 + A.data()[a * C + b - 1]));
}
