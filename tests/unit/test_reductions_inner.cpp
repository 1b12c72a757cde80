// Inner sequential reductions: wp::sum / max_of / min_of over wp::range (constant, affine
// and data-dependent bounds, empty and nested ranges) and over wp::all axes, each compared
// with plain loops.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <workpart/workpart.hpp>

namespace wp = workpart;
using std::int32_t;
using std::int64_t;

namespace {

template <class T>
T value_at(int64_t k, int64_t salt = 0) {
  const double v = double((k * 7 + salt * 5) % 17 - 8);
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v * 0.375);
  else
    return static_cast<T>(v);
}

template <class T, int N>
std::vector<T> fill(wp::array<T, N>& a, int64_t salt = 0) {
  for (int64_t k = 0; k < a.size(); ++k) a.data()[k] = value_at<T>(k, salt);
  return std::vector<T>(a.data(), a.data() + a.size());
}

template <class T>
void require_close(T got, double expect, int64_t at) {
  INFO("element " << at << ": got " << got << ", expected " << expect);
  if constexpr (std::is_floating_point_v<T>) {
    const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    REQUIRE(double(got) == Approx(expect).epsilon(eps).margin(eps));
  } else {
    REQUIRE(got == static_cast<T>(expect));
  }
}

template <class T, int N>
void require_equal(wp::array<T, N>& a, const std::vector<double>& expect) {
  REQUIRE(int64_t(expect.size()) == a.size());
  for (int64_t k = 0; k < a.size(); ++k) require_close<T>(a.data()[k], expect[k], k);
}

}  // namespace

#define WP_ELEMENT_TYPES float, double, int32_t, int64_t

TEMPLATE_TEST_CASE("reductions: constant bounds", "[reduce]", WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i, r] = wp::indices<2>();
  constexpr int64_t n = 37, R = 5, m = n - R + 1;
  wp::array<T, 1> x("x", {n});
  wp::array<T, 1> w("w", {R});
  const auto xs = fill(x);
  const auto ws = fill(w, 3);

  SECTION("convolution: sum(range(r, 0, R), w(r) * x(i + r))") {
    wp::array<T, 1> y("y", {m});
    wp::run(wp::map("conv", wp::space(m), y(i) = wp::sum(wp::range(r, 0, R), w(r) * x(i + r))));
    std::vector<double> e(m, 0.0);
    for (int64_t a = 0; a < m; ++a)
      for (int64_t b = 0; b < R; ++b) e[a] += double(ws[b]) * double(xs[a + b]);
    require_equal(y, e);
  }
  SECTION("sliding max and min over a window") {
    wp::array<T, 1> mx("mx", {m});
    wp::array<T, 1> mn("mn", {m});
    wp::run(wp::map("window", wp::space(m), mx(i) = wp::max_of(wp::range(r, 0, R), x(i + r)),
                    mn(i) = wp::min_of(wp::range(r, 0, R), x(i + r) * 2)));
    std::vector<double> emx(m), emn(m);
    for (int64_t a = 0; a < m; ++a) {
      T hi = xs[a], lo = T(xs[a] * 2);
      for (int64_t b = 1; b < R; ++b) {
        hi = std::max(hi, xs[a + b]);
        lo = std::min(lo, T(xs[a + b] * 2));
      }
      emx[a] = double(hi);
      emn[a] = double(lo);
    }
    require_equal(mx, emx);
    require_equal(mn, emn);
  }
  SECTION("runtime bounds, a strided body and a range not starting at 0") {
    const int64_t lo = 2, hi = 9;  // i + 2 r: at most 7 + 16 = 23 < 37 for i < 8
    wp::array<T, 1> y("y", {8});
    fill(y, 1);
    wp::run(
        wp::map("strided", wp::space(8), y(i) += wp::sum(wp::range(r, lo, hi), x(2 * r + i) - 1)));
    std::vector<double> e(8);
    for (int64_t a = 0; a < 8; ++a) {
      double s = 0;
      for (int64_t b = lo; b < hi; ++b) s += double(T(xs[2 * b + a] - 1));
      e[a] = double(value_at<T>(a, 1)) + s;
    }
    require_equal(y, e);
  }
  SECTION("the inner index through wp::val") {
    wp::array<T, 1> y("y", {m});
    wp::run(wp::map("val_inner", wp::space(m),
                    y(i) = wp::sum(wp::range(r, 1, R + 1), wp::val(r) * x(i + r - 1))));
    std::vector<double> e(m, 0.0);
    for (int64_t a = 0; a < m; ++a)
      for (int64_t b = 1; b <= R; ++b) e[a] += double(b) * double(xs[a + b - 1]);
    require_equal(y, e);
  }
}

TEST_CASE("reductions: a sum of comparisons counts (rank of each element)", "[reduce]") {
  auto [i, r] = wp::indices<2>();
  constexpr int64_t n = 13;
  wp::array<double, 1> x("x", {n});
  wp::array<int32_t, 1> rank("rank", {n});
  for (int64_t a = 0; a < n; ++a) x.data()[a] = double((a * 5) % n) + 0.5;  // a permutation
  wp::run(wp::map("rank", wp::space(n), rank(i) = wp::sum(wp::range(r, 0, n), x(r) < x(i))));
  for (int64_t a = 0; a < n; ++a) {
    int c = 0;
    for (int64_t b = 0; b < n; ++b) c += x.data()[b] < x.data()[a];
    REQUIRE(rank.data()[a] == c);
  }
}

TEMPLATE_TEST_CASE("reductions: affine bounds that depend on outer indices", "[reduce]",
                   WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i, j, r] = wp::indices<3>();
  constexpr int64_t n = 13;
  wp::array<T, 1> x("x", {n});
  wp::array<T, 2> L("L", {n, n});
  const auto xs = fill(x);
  const auto ls = fill(L, 2);

  SECTION("prefix sums: range(r, 0, i + 1)") {
    wp::array<T, 1> p("p", {n});
    wp::run(wp::map("prefix", wp::space(n), p(i) = wp::sum(wp::range(r, 0, i + 1), x(r))));
    std::vector<double> e(n);
    double s = 0;
    for (int64_t a = 0; a < n; ++a) e[a] = (s += double(xs[a]));
    require_equal(p, e);
  }
  SECTION("suffix max: range(r, i, n)") {
    wp::array<T, 1> p("p", {n});
    wp::run(wp::map("suffix_max", wp::space(n), p(i) = wp::max_of(wp::range(r, i, n), x(r))));
    std::vector<double> e(n);
    for (int64_t a = 0; a < n; ++a) e[a] = double(*std::max_element(xs.begin() + a, xs.end()));
    require_equal(p, e);
  }
  SECTION("lower-triangular matrix-vector product") {
    wp::array<T, 1> y("y", {n});
    const auto ys = fill(y, 4);
    wp::run(wp::map("trmv", wp::space(n), y(i) += wp::sum(wp::range(r, 0, i + 1), L(i, r) * x(r))));
    std::vector<double> e(n);
    for (int64_t a = 0; a < n; ++a) {
      double s = double(ys[a]);
      for (int64_t b = 0; b <= a; ++b) s += double(ls[a * n + b]) * double(xs[b]);
      e[a] = s;
    }
    require_equal(y, e);
  }
  SECTION("backward window: range(r, i - 3, i + 1) over [3, n)") {
    wp::array<T, 1> y("y", {n});
    const auto ys = fill(y, 5);
    wp::run(
        wp::map("back", wp::space({3, n}), y(i) = wp::min_of(wp::range(r, i - 3, i + 1), x(r))));
    std::vector<double> e(ys.begin(), ys.end());
    for (int64_t a = 3; a < n; ++a)
      e[a] = double(*std::min_element(xs.begin() + a - 3, xs.begin() + a + 1));
    require_equal(y, e);
  }
  SECTION("bounds from two outer indices: range(r, j, i + 1), empty where j > i") {
    wp::array<T, 2> S("S", {n, n});
    wp::run(
        wp::map("band", wp::space(n, n), S(i, j) = wp::sum(wp::range(r, j, i + 1), x(r) * 2 + 1)));
    std::vector<double> e(n * n, 0.0);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < n; ++b)
        for (int64_t c = b; c <= a; ++c) e[a * n + b] += double(T(xs[c] * 2 + 1));
    require_equal(S, e);
  }
}

TEST_CASE("reductions: data-dependent bounds (CSR)", "[reduce][csr]") {
  auto [i, jj] = wp::indices<2>();
  constexpr int64_t rows = 7, cols = 13;
  // Row lengths 3, 0, 2, 4, 0, 1, 4 (two empty rows).
  const std::vector<int64_t> ptr = {0, 3, 3, 5, 9, 9, 10, 14};
  constexpr int64_t nnz = 14;
  wp::array<int64_t, 1> row("row", {rows + 1});
  wp::array<int32_t, 1> col("col", {nnz});
  wp::array<double, 1> vals("vals", {nnz});
  wp::array<double, 1> x("x", {cols});
  for (int64_t a = 0; a <= rows; ++a) row.data()[a] = ptr[a];
  for (int64_t q = 0; q < nnz; ++q) {
    col.data()[q] = int32_t((q * 5 + 3) % cols);
    vals.data()[q] = 0.5 * double(q) - 3.25;
  }
  const auto xs = fill(x);

  SECTION("sparse matrix-vector product") {
    wp::array<double, 1> y("y", {rows});
    fill(y, 9);
    wp::run(wp::map("spmv", wp::space(rows),
                    y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), vals(jj) * x(col(jj)))));
    std::vector<double> e(rows, 0.0);
    for (int64_t a = 0; a < rows; ++a)
      for (int64_t q = ptr[a]; q < ptr[a + 1]; ++q) e[a] += vals.data()[q] * xs[col.data()[q]];
    REQUIRE(e[1] == 0.0);  // the empty rows sum to 0
    REQUIRE(e[4] == 0.0);
    require_equal(y, e);
  }
  SECTION("row max with max_into: empty rows keep their values") {
    wp::array<double, 1> y("y", {rows});
    const auto ys = fill(y, 9);
    wp::run(
        wp::map("rowmax", wp::space(rows),
                wp::max_into(y(i), wp::max_of(wp::range(jj, row(i), row(i + 1)), vals(jj) * 2))));
    std::vector<double> e(ys.begin(), ys.end());
    for (int64_t a = 0; a < rows; ++a)
      for (int64_t q = ptr[a]; q < ptr[a + 1]; ++q) e[a] = std::max(e[a], vals.data()[q] * 2);
    require_equal(y, e);
    REQUIRE(y.data()[1] == ys[1]);
    REQUIRE(y.data()[4] == ys[4]);
  }
  SECTION("integer values: row min with min_of and row sums, int32 and int64") {
    wp::array<int32_t, 1> iv("iv", {nnz});
    wp::array<int64_t, 1> lv("lv", {nnz});
    for (int64_t q = 0; q < nnz; ++q) {
      iv.data()[q] = int32_t((q * 7) % 11 - 5);
      lv.data()[q] = int64_t(q * q) - 40;
    }
    wp::array<int32_t, 1> mn("mn", {rows});
    wp::array<int64_t, 1> sm("sm", {rows});
    for (int64_t a = 0; a < rows; ++a) mn.data()[a] = 100 + int32_t(a);
    const std::vector<int32_t> mn0(mn.data(), mn.data() + rows);
    wp::run(wp::map("int_rows", wp::space(rows),
                    wp::min_into(mn(i), wp::min_of(wp::range(jj, row(i), row(i + 1)), iv(jj) * 3)),
                    sm(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), lv(jj) * col(jj))));
    for (int64_t a = 0; a < rows; ++a) {
      int32_t m = mn0[a];  // empty rows keep their values
      int64_t t = 0;
      for (int64_t q = ptr[a]; q < ptr[a + 1]; ++q) {
        m = std::min(m, int32_t(iv.data()[q] * 3));
        t += lv.data()[q] * int64_t(col.data()[q]);
      }
      INFO("row " << a);
      REQUIRE(mn.data()[a] == m);
      REQUIRE(sm.data()[a] == t);
    }
    REQUIRE(mn.data()[1] == 101);
  }
  SECTION("a data-dependent lower bound with a constant upper bound") {
    wp::array<double, 1> y("y", {rows});
    wp::run(wp::map("tail", wp::space(rows),
                    y(i) = wp::sum(wp::range(jj, row(i), nnz), vals(jj) + wp::val(jj))));
    std::vector<double> e(rows, 0.0);
    for (int64_t a = 0; a < rows; ++a)
      for (int64_t q = ptr[a]; q < nnz; ++q) e[a] += vals.data()[q] + double(q);
    require_equal(y, e);
  }
  SECTION("data-dependent bounds on a space with lo > 0") {
    wp::array<double, 1> y("y", {rows});
    const auto ys = fill(y, 2);
    wp::run(wp::map("spmv_part", wp::space({2, rows}),
                    y(i) += wp::sum(wp::range(jj, row(i), row(i + 1)), vals(jj) * x(col(jj)))));
    std::vector<double> e(ys.begin(), ys.end());
    for (int64_t a = 2; a < rows; ++a)
      for (int64_t q = ptr[a]; q < ptr[a + 1]; ++q) e[a] += vals.data()[q] * xs[col.data()[q]];
    require_equal(y, e);
  }
}

TEST_CASE("reductions: empty ranges give the identity", "[reduce]") {
  auto [i, r] = wp::indices<2>();
  constexpr int64_t n = 13;
  wp::array<double, 1> x("x", {n});
  wp::array<int32_t, 1> xi("xi", {n});
  const auto xs = fill(x);
  fill(xi);

  SECTION("a sum over an empty range is 0") {
    wp::array<double, 1> y("y", {n});
    fill(y, 3);
    const int64_t five = 5;
    wp::run(
        wp::map("empty_sum", wp::space(n), y(i) = wp::sum(wp::range(r, five, five), x(r)) + 1.5));
    for (int64_t a = 0; a < n; ++a) REQUIRE(y.data()[a] == 1.5);
  }
  SECTION("a reversed range (hi < lo) is empty") {
    wp::array<double, 1> y("y", {n});
    wp::run(wp::map("reversed", wp::space(n), y(i) = wp::sum(wp::range(r, i, 4), x(r))));
    for (int64_t a = 0; a < n; ++a) {
      double s = 0;
      for (int64_t b = a; b < 4; ++b) s += xs[b];
      REQUIRE(y.data()[a] == Approx(s).margin(1e-12));
    }
    for (int64_t a = 4; a < n; ++a) REQUIRE(y.data()[a] == 0.0);
  }
  SECTION("triangular range(r, 0, i) is empty at i = 0") {
    wp::array<int32_t, 1> y("y", {n});
    fill(y, 3);
    wp::run(wp::map("strict_prefix", wp::space(n), y(i) = wp::sum(wp::range(r, 0, i), xi(r))));
    int32_t s = 0;
    for (int64_t a = 0; a < n; ++a) {
      REQUIRE(y.data()[a] == s);
      s += xi.data()[a];
    }
  }
  SECTION("max_into / min_into with an empty max_of / min_of leave the values") {
    wp::array<double, 1> hi("hi", {n});
    wp::array<int32_t, 1> lo("lo", {n});
    const auto hs = fill(hi, 4);
    const auto los = fill(lo, 5);
    const int64_t zero = 0;
    wp::run(wp::map("empty_max", wp::space(n),
                    wp::max_into(hi(i), wp::max_of(wp::range(r, zero, zero), x(r))),
                    wp::min_into(lo(i), wp::min_of(wp::range(r, i, i), xi(r)))));
    for (int64_t a = 0; a < n; ++a) {
      REQUIRE(hi.data()[a] == hs[a]);
      REQUIRE(lo.data()[a] == los[a]);
    }
  }
  SECTION("an empty range's body is never read, so it is not out of bounds") {
    wp::array<double, 1> y("y", {n});
    REQUIRE_NOTHROW(wp::run(wp::map("never_read", wp::space(n),
                                    y(i) = wp::sum(wp::range(r, 0, 0), x(r + 100)) + x(i))));
    for (int64_t a = 0; a < n; ++a) REQUIRE(y.data()[a] == xs[a]);
  }
}

TEST_CASE("reductions: nested inner reductions over two inner indices", "[reduce]") {
  auto [i, r, s] = wp::indices<3>();
  constexpr int64_t n = 13, R = 3, S = 5;
  wp::array<double, 2> A("A", {n + R - 1, S});
  wp::array<double, 1> w("w", {R});
  wp::array<double, 1> x("x", {n});
  const auto as = fill(A);
  const auto ws = fill(w, 2);
  const auto xs = fill(x, 3);

  SECTION("constant bounds: sum over r of the max over s") {
    wp::array<double, 1> y("y", {n});
    wp::run(wp::map(
        "summax", wp::space(n),
        y(i) = wp::sum(wp::range(r, 0, R), w(r) * wp::max_of(wp::range(s, 0, S), A(i + r, s)))));
    std::vector<double> e(n, 0.0);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < R; ++b) {
        double m = -1e300;
        for (int64_t c = 0; c < S; ++c) m = std::max(m, as[(a + b) * S + c]);
        e[a] += ws[b] * m;
      }
    require_equal(y, e);
  }
  SECTION("the inner body uses both inner indices") {
    wp::array<double, 1> y("y", {n});
    wp::run(
        wp::map("both", wp::space(n),
                y(i) = wp::min_of(wp::range(r, 0, R),
                                  wp::sum(wp::range(s, 0, S), A(i + r, s) * w(r) + wp::val(s)))));
    std::vector<double> e(n);
    for (int64_t a = 0; a < n; ++a) {
      double m = 1e300;
      for (int64_t b = 0; b < R; ++b) {
        double t = 0;
        for (int64_t c = 0; c < S; ++c) t += as[(a + b) * S + c] * ws[b] + double(c);
        m = std::min(m, t);
      }
      e[a] = m;
    }
    require_equal(y, e);
  }
  SECTION("triangular nest: the inner range depends on the outer inner index") {
    wp::array<double, 1> y("y", {n});
    wp::run(wp::map(
        "tri_nest", wp::space(n),
        y(i) = wp::sum(wp::range(r, 0, i + 1), wp::sum(wp::range(s, r, i + 1), x(s) * x(r)))));
    std::vector<double> e(n, 0.0);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b <= a; ++b)
        for (int64_t c = b; c <= a; ++c) e[a] += xs[c] * xs[b];
    require_equal(y, e);
  }
}

TEST_CASE("reductions: over wp::all axes", "[reduce][all]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<double, 2> A("A", {R, C});
  wp::array<double, 1> b("b", {C});
  wp::array<double, 1> c("c", {R});
  const auto as = fill(A);
  const auto bs = fill(b, 1);
  const auto cs = fill(c, 2);

  SECTION("row sums: wp::sum(A(i, wp::all))") {
    wp::array<double, 1> y("y", {R});
    wp::run(wp::map("rowsum", wp::space(R), y(i) = wp::sum(A(i, wp::all))));
    std::vector<double> e(R, 0.0);
    for (int64_t a = 0; a < R; ++a)
      for (int64_t q = 0; q < C; ++q) e[a] += as[a * C + q];
    require_equal(y, e);
  }
  SECTION("column max and min: wp::max_of(A(wp::all, i))") {
    wp::array<double, 1> mx("mx", {C});
    wp::array<double, 1> mn("mn", {C});
    wp::run(wp::map("colext", wp::space(C), mx(i) = wp::max_of(A(wp::all, i)),
                    mn(i) = wp::min_of(A(wp::all, i) * 2)));
    for (int64_t q = 0; q < C; ++q) {
      double hi = -1e300, lo = 1e300;
      for (int64_t a = 0; a < R; ++a) {
        hi = std::max(hi, as[a * C + q]);
        lo = std::min(lo, as[a * C + q] * 2);
      }
      REQUIRE(mx.data()[q] == hi);
      REQUIRE(mn.data()[q] == lo);
    }
  }
  SECTION("matrix-vector product: wp::sum(A(i, wp::all) * b(wp::all))") {
    wp::array<double, 1> y("y", {R});
    const auto ys = fill(y, 3);
    wp::run(wp::map("gemv_all", wp::space(R), y(i) += wp::sum(A(i, wp::all) * b(wp::all))));
    std::vector<double> e(ys.begin(), ys.end());
    for (int64_t a = 0; a < R; ++a)
      for (int64_t q = 0; q < C; ++q) e[a] += as[a * C + q] * bs[q];
    require_equal(y, e);
  }
  SECTION("transposed product in a 2-D space: c(wp::all) * A(wp::all, j)") {
    wp::array<double, 2> y("y", {2, C});
    wp::run(wp::map("gevm_all", wp::space(2, C),
                    y(i, j) = wp::sum(c(wp::all) * A(wp::all, j)) * wp::val(i)));
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t q = 0; q < C; ++q) {
        double s = 0;
        for (int64_t a = 0; a < R; ++a) s += cs[a] * as[a * C + q];
        REQUIRE(y.data()[p * C + q] == Approx(s * double(p)).margin(1e-12));
      }
  }
  SECTION("into a rank-0 array over a rank-0 space") {
    wp::array<double, 0> s("s", {});
    s.data()[0] = 0.5;
    wp::run(wp::map("total", wp::space(), s() += wp::sum(b(wp::all) * b(wp::all))));
    double e = 0.5;
    for (int64_t q = 0; q < C; ++q) e += bs[q] * bs[q];
    REQUIRE(s.data()[0] == Approx(e).epsilon(1e-12));
  }
  SECTION("a wp::all reduction nested in another") {
    wp::array<double, 1> y("y", {R});
    wp::run(wp::map("nested_all", wp::space(R),
                    y(i) = wp::sum(A(i, wp::all) - wp::max_of(b(wp::all)))));
    const double bmax = *std::max_element(bs.begin(), bs.end());
    std::vector<double> e(R, 0.0);
    for (int64_t a = 0; a < R; ++a)
      for (int64_t q = 0; q < C; ++q) e[a] += as[a * C + q] - bmax;
    require_equal(y, e);
  }
  SECTION("the middle axis of a rank-3 array, with an offset on another axis") {
    wp::array<double, 3> T3("T3", {R + 1, 4, 5});
    const auto ts = fill(T3, 4);
    wp::array<double, 2> y("y", {R, 5});
    wp::run(
        wp::map("mid", wp::space(R, 5), y(i, j) = wp::max_of(T3(i + 1, wp::all, j) + wp::val(j))));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t q = 0; q < 5; ++q) {
        double m = -1e300;
        for (int64_t t = 0; t < 4; ++t) m = std::max(m, ts[((a + 1) * 4 + t) * 5 + q] + double(q));
        REQUIRE(y.data()[a * 5 + q] == m);
      }
  }
  SECTION("a zero-extent axis sums to 0") {
    wp::array<double, 2> E("E", {R, 0});
    wp::array<double, 1> y("y", {R});
    fill(y, 1);
    wp::run(wp::map("empty_axis", wp::space(R), y(i) = wp::sum(E(i, wp::all)) + 2.0));
    for (int64_t a = 0; a < R; ++a) REQUIRE(y.data()[a] == 2.0);
  }
  SECTION("wp::all inside an indirect subscript: a sparse dot product") {
    constexpr int64_t nnz = 5;
    wp::array<int64_t, 1> idx("idx", {nnz});
    wp::array<double, 1> v("v", {nnz});
    wp::array<double, 0> s("s", {});
    const int64_t cols[nnz] = {12, 0, 7, 3, 7};
    for (int64_t q = 0; q < nnz; ++q) {
      idx.data()[q] = cols[q];
      v.data()[q] = double(q) + 0.25;
    }
    wp::run(wp::map("sdot", wp::space(), s() = wp::sum(v(wp::all) * b(idx(wp::all)))));
    double e = 0;
    for (int64_t q = 0; q < nnz; ++q) e += (double(q) + 0.25) * bs[cols[q]];
    REQUIRE(s.data()[0] == Approx(e).epsilon(1e-12));
  }
  SECTION("integer arrays") {
    wp::array<int32_t, 2> Ai("Ai", {R, C});
    wp::array<int32_t, 1> y("y", {R});
    const auto ais = fill(Ai, 6);
    wp::run(wp::map("int_all", wp::space(R), y(i) = wp::sum(Ai(i, wp::all) * Ai(i, wp::all))));
    for (int64_t a = 0; a < R; ++a) {
      int32_t s = 0;
      for (int64_t q = 0; q < C; ++q) s += ais[a * C + q] * ais[a * C + q];
      REQUIRE(y.data()[a] == s);
    }
  }
}

TEST_CASE("reductions: wp::all axes of different extents are an error", "[reduce][all][errors]") {
  auto [i] = wp::indices<1>();
  constexpr int64_t R = 7, C = 13;
  wp::array<double, 2> A("A", {R, C});
  wp::array<double, 1> bad("bad", {C + 1});
  wp::array<double, 1> good("good", {C});
  REQUIRE_THROWS_AS(wp::sum(A(i, wp::all) * bad(wp::all)), wp::shape_error);
  REQUIRE_THROWS_AS(wp::max_of(A(i, wp::all) - bad(wp::all)), wp::error);
  REQUIRE_THROWS_AS(wp::min_of(bad(wp::all) + A(wp::all, i)), wp::shape_error);
  REQUIRE_THROWS_WITH(wp::sum(A(i, wp::all) * bad(wp::all)),
                      Catch::Contains("axis 1") && Catch::Contains("axis 0"));
  REQUIRE_THROWS_WITH(wp::sum(A(i, wp::all) * bad(wp::all)),
                      Catch::Contains("bad") && Catch::Contains("13") && Catch::Contains("14"));
  REQUIRE_NOTHROW(wp::sum(A(i, wp::all) * good(wp::all)));
}
