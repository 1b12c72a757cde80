// Statements (=, +=, max_into, min_into), maps of several statements, programs, views,
// rank-0 arrays, bounds of spaces and snapshot semantics, each compared with plain loops.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <workpart/workpart.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace wp = workpart;
using std::int32_t;
using std::int64_t;

namespace {

// Distinct values with mixed signs (fractions for floating types).
template <class T>
T value_at(int64_t k, int64_t salt = 0) {
  const double v = double((k * 7 + salt * 3) % 19 - 9);
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v * 0.625);
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
  INFO("element " << at);
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

TEMPLATE_TEST_CASE("statements: '=' writes every point of the space", "[statements]",
                   WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<T, 2> A("A", {R, C});
  wp::array<T, 2> out("out", {R, C});
  const auto as = fill(A);
  for (int64_t k = 0; k < out.size(); ++k) out.data()[k] = T(99);
  wp::run(wp::map("assign", wp::space(R, C), out(i, j) = A(i, j) * 3 - 1));
  std::vector<double> expect(R * C);
  for (int64_t k = 0; k < R * C; ++k) expect[k] = double(as[k] * 3 - 1);
  require_equal(out, expect);
}

TEMPLATE_TEST_CASE("statements: '+=' adds into pre-filled values exactly once", "[statements]",
                   WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<T, 2> A("A", {R, C});
  const auto as = fill(A);

  SECTION("elementwise") {
    wp::array<T, 2> out("out", {R, C});
    const auto os = fill(out, 5);
    wp::run(wp::map("add_elem", wp::space(R, C), out(i, j) += A(i, j) * 2));
    std::vector<double> expect(R * C);
    for (int64_t k = 0; k < R * C; ++k) expect[k] = double(os[k] + as[k] * 2);
    require_equal(out, expect);
  }
  SECTION("row sums: out(i) += A(i, j)") {
    wp::array<T, 1> out("out", {R});
    const auto os = fill(out, 1);
    wp::run(wp::map("row_sums", wp::space(R, C), out(i) += A(i, j)));
    std::vector<double> expect(os.begin(), os.end());
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) expect[a] += double(as[a * C + b]);
    require_equal(out, expect);
  }
  SECTION("column sums: out(j) += A(i, j)") {
    wp::array<T, 1> out("out", {C});
    const auto os = fill(out, 2);
    wp::run(wp::map("col_sums", wp::space(R, C), out(j) += A(i, j)));
    std::vector<double> expect(os.begin(), os.end());
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) expect[b] += double(as[a * C + b]);
    require_equal(out, expect);
  }
  SECTION("column sums through a transposed read: out(i) += A(j, i)") {
    wp::array<T, 1> out("out", {C});
    const auto os = fill(out, 3);
    wp::run(wp::map("col_sums_t", wp::space(C, R), out(i) += A(j, i)));
    std::vector<double> expect(os.begin(), os.end());
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) expect[b] += double(as[a * C + b]);
    require_equal(out, expect);
  }
  SECTION("the same element from several points of a sum of indices") {
    wp::array<T, 1> out("out", {R + C - 1});
    const auto os = fill(out, 4);
    wp::run(wp::map("antidiag", wp::space(R, C), out(i + j) += A(i, j) + 1));
    std::vector<double> expect(os.begin(), os.end());
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) expect[a + b] += double(as[a * C + b] + 1);
    require_equal(out, expect);
  }
}

TEMPLATE_TEST_CASE("statements: max_into and min_into combine with pre-filled values",
                   "[statements]", WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<T, 2> A("A", {R, C});
  const auto as = fill(A);

  SECTION("elementwise max_into / min_into") {
    wp::array<T, 2> hi("hi", {R, C});
    wp::array<T, 2> lo("lo", {R, C});
    const auto hs = fill(hi, 7);
    const auto ls = fill(lo, 7);
    wp::run(wp::map("mm_elem", wp::space(R, C), wp::max_into(hi(i, j), A(i, j)),
                    wp::min_into(lo(i, j), A(i, j))));
    std::vector<double> eh(R * C), el(R * C);
    for (int64_t k = 0; k < R * C; ++k) {
      eh[k] = double(std::max(hs[k], as[k]));
      el[k] = double(std::min(ls[k], as[k]));
    }
    // Both outcomes happen: some pre-filled values win, some are replaced.
    int kept = 0, replaced = 0;
    for (int64_t k = 0; k < R * C; ++k) (hs[k] >= as[k] ? kept : replaced)++;
    REQUIRE(kept > 0);
    REQUIRE(replaced > 0);
    require_equal(hi, eh);
    require_equal(lo, el);
  }
  SECTION("row max / column min") {
    wp::array<T, 1> rmax("rmax", {R});
    wp::array<T, 1> cmin("cmin", {C});
    auto rs = fill(rmax, 11);
    auto cs = fill(cmin, 12);
    rmax.data()[2] = T(100);  // a pre-filled value above every input stays
    cmin.data()[5] = T(-100);
    rs[2] = T(100);
    cs[5] = T(-100);
    wp::run(wp::map("rmax", wp::space(R, C), wp::max_into(rmax(i), A(i, j))));
    wp::run(wp::map("cmin", wp::space(R, C), wp::min_into(cmin(j), A(i, j))));
    std::vector<double> er(rs.begin(), rs.end()), ec(cs.begin(), cs.end());
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) {
        er[a] = std::max(er[a], double(as[a * C + b]));
        ec[b] = std::min(ec[b], double(as[a * C + b]));
      }
    REQUIRE(er[2] == 100.0);
    REQUIRE(ec[5] == -100.0);
    require_equal(rmax, er);
    require_equal(cmin, ec);
  }
  SECTION("scalar right-hand sides") {
    wp::array<T, 2> out("out", {R, C});
    const auto os = fill(out, 2);
    wp::run(
        wp::map("clamp", wp::space(R, C), wp::max_into(out(i, j), -2), wp::min_into(out(i, j), 3)));
    std::vector<double> e(R * C);
    for (int64_t k = 0; k < R * C; ++k) e[k] = std::min(std::max(double(os[k]), -2.0), 3.0);
    require_equal(out, e);
  }
}

TEST_CASE("statements: a map's statements run in order, each over the whole space",
          "[statements]") {
  auto [i] = wp::indices<1>();
  constexpr int64_t n = 13;
  wp::array<double, 1> x("x", {n});
  wp::array<double, 1> t("t", {n});
  wp::array<double, 1> out("out", {n});
  const auto xs = fill(x);
  auto m = wp::map("ordered", wp::space(n),
                   t(i) = x(i) + 1,                 // 1: t from x
                   out(i) = t(n - 1 - i) * 2,       // 2: reads t at other points: needs all of 1
                   t(i) += out(i),                  // 3: t again, from 2's result
                   out(i) = t(n - 1 - i) - out(i),  // 4: reads 3's t and 2's out
                   t(i) = t(n - 1 - i));            // 5: reverses t in place (a snapshot)
  STATIC_REQUIRE(decltype(m)::statement_count == 5);
  wp::run(m);
  std::vector<double> T1(n), O2(n), T3(n), O4(n), T5(n);
  for (int64_t a = 0; a < n; ++a) T1[a] = xs[a] + 1;
  for (int64_t a = 0; a < n; ++a) O2[a] = T1[n - 1 - a] * 2;
  for (int64_t a = 0; a < n; ++a) T3[a] = T1[a] + O2[a];
  for (int64_t a = 0; a < n; ++a) O4[a] = T3[n - 1 - a] - O2[a];
  for (int64_t a = 0; a < n; ++a) T5[a] = T3[n - 1 - a];
  require_equal(out, O4);
  require_equal(t, T5);
}

TEST_CASE("statements: scalar right-hand sides convert to the element type", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 5;
  wp::array<double, 2> d("d", {R, C});
  wp::array<int32_t, 2> k("k", {R, C});
  wp::array<float, 1> f("f", {C});
  fill(d);
  fill(k);
  fill(f);
  const double half = 2.5;
  wp::run(wp::program(wp::map("zero", wp::space(R, C), d(i, j) = 0.0, k(i, j) = 2.75),
                      wp::map("rt", wp::space(C), f(i) = half)));
  for (int64_t a = 0; a < R * C; ++a) {
    REQUIRE(d.data()[a] == 0.0);
    REQUIRE(k.data()[a] == 2);
  }
  for (int64_t a = 0; a < C; ++a) REQUIRE(f.data()[a] == 2.5f);
}

TEST_CASE("statements: affine left-hand sides and untouched elements", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t n = 13;
  wp::array<double, 1> x("x", {n});
  wp::array<double, 1> out("out", {n});
  const auto xs = fill(x);

  SECTION("out(i + 1) = x(i)") {
    const auto os = fill(out, 9);
    wp::run(wp::map("shift_lhs", wp::space(n - 1), out(i + 1) = x(i) * 2));
    std::vector<double> e(os.begin(), os.end());
    for (int64_t a = 0; a < n - 1; ++a) e[a + 1] = xs[a] * 2;
    REQUIRE(out.data()[0] == os[0]);  // never written: keeps root's value
    require_equal(out, e);
  }
  SECTION("out(n - 1 - i) += x(i) over part of the space") {
    const auto os = fill(out, 3);
    wp::run(wp::map("rev_lhs", wp::space({2, 9}), out(n - 1 - i) += x(i)));
    std::vector<double> e(os.begin(), os.end());
    for (int64_t a = 2; a < 9; ++a) e[n - 1 - a] += xs[a];
    require_equal(out, e);
  }
  SECTION("the diagonal: D(i, i) = x(i)") {
    wp::array<double, 2> D("D", {n, n});
    const auto ds = fill(D, 2);
    wp::run(wp::map("diag", wp::space(n), D(i, i) = x(i) * 3));
    std::vector<double> e(ds.begin(), ds.end());
    for (int64_t a = 0; a < n; ++a) e[a * n + a] = xs[a] * 3;
    require_equal(D, e);
    wp::run(wp::map("diag_read", wp::space(n), out(i) = D(i, i) + D(n - 1 - i, i)));
    for (int64_t a = 0; a < n; ++a) REQUIRE(out.data()[a] == e[a * n + a] + e[(n - 1 - a) * n + a]);
  }
  SECTION("2-D: a block of a larger array, B(i + 1, 2 * j) = ...") {
    constexpr int64_t R = 4, C = 5;
    wp::array<double, 2> B("B", {R + 2, 2 * C + 1});
    const auto bs = fill(B, 6);
    wp::run(wp::map("block", wp::space(R, C), B(i + 1, 2 * j) = x(i + j) + 0.5));
    std::vector<double> e(bs.begin(), bs.end());
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) e[(a + 1) * (2 * C + 1) + 2 * b] = xs[a + b] + 0.5;
    require_equal(B, e);
  }
}

TEST_CASE("statements: spaces with lo/hi bounds", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 9, C = 13;
  wp::array<int64_t, 2> A("A", {R, C});
  wp::array<int64_t, 2> out("out", {R, C});
  const auto as = fill(A);
  const auto os = fill(out, 8);
  const int64_t r0 = 2, r1 = 7, c0 = 3, c1 = 12;
  wp::run(
      wp::map("interior", wp::space({r0, r1}, {c0, c1}), out(i, j) = A(i, j) * 10 + wp::val(j)));
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) {
      const bool inside = a >= r0 && a < r1 && b >= c0 && b < c1;
      INFO(a << "," << b);
      REQUIRE(out.data()[a * C + b] == (inside ? as[a * C + b] * 10 + b : os[a * C + b]));
    }
  STATIC_REQUIRE(decltype(wp::space({1, 2}, {3, 4}))::rank == 2);
  const auto sp = wp::space({r0, r1}, {c0, c1});
  REQUIRE(sp.extent(0) == 5);
  REQUIRE(sp.extent(1) == 9);
  REQUIRE(sp.points() == 45);
  REQUIRE(sp.str() == "[2:7, 3:12]");
}

TEST_CASE("statements: zero-extent spaces change nothing", "[statements]") {
  auto [i, j, k] = wp::indices<3>();
  constexpr int64_t n = 7;
  wp::array<double, 1> x("x", {n});
  wp::array<double, 1> out("out", {n});
  wp::array<double, 2> C("C", {n, n});
  fill(x);
  const auto os = fill(out, 2);
  const auto cs = fill(C, 3);

  wp::run(wp::map("empty1", wp::space(0), out(i) = x(i) + 1));
  wp::run(wp::map("empty_lohi", wp::space({4, 4}), out(i) += x(i)));
  wp::run(wp::map("empty_2d", wp::space(n, 0), C(i, j) = 5.0));
  wp::run(wp::map("empty_2d_first", wp::space(0, n), wp::max_into(C(i, j), 100.0)));
  // An empty space reads nothing, so nothing is out of bounds either.
  wp::run(wp::map("empty_oob", wp::space(0), out(i + 100) = x(i - 100)));
  // A contraction with an empty k: C += A * B adds nothing.
  wp::array<double, 2> A("A", {n, 0});
  wp::array<double, 2> B("B", {0, n});
  wp::run(wp::map("empty_k", wp::space(n, n, 0), C(i, j) += A(i, k) * B(k, j)));
  std::vector<double> eo(os.begin(), os.end()), ec(cs.begin(), cs.end());
  require_equal(out, eo);
  require_equal(C, ec);
}

TEST_CASE("statements: rank-0 arrays", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t n = 13;
  wp::array<double, 1> x("x", {n});
  wp::array<double, 1> y("y", {n});
  const auto xs = fill(x);
  const auto ys = fill(y, 4);
  wp::array<double, 0> s("s", {});
  REQUIRE(s.size() == 1);
  s.data()[0] = 1.5;

  SECTION("rank-0 space: '=' and '+=' with an inner reduction") {
    auto [r] = wp::indices<1>();
    wp::run(wp::map("set", wp::space(), s() = s() * 2 + 1));
    REQUIRE(s.data()[0] == 4.0);
    wp::run(wp::map("sum0", wp::space(), s() += wp::sum(wp::range(r, 0, n), x(r))));
    double e = 4.0;
    for (int64_t a = 0; a < n; ++a) e += xs[a];
    REQUIRE(s.data()[0] == Approx(e).epsilon(1e-12));
  }
  SECTION("rank-1 space: sum, max and min into a rank-0 array") {
    wp::array<double, 0> mx("mx", {});
    wp::array<double, 0> mn("mn", {});
    mx.data()[0] = -1.0;
    mn.data()[0] = 0.0;
    wp::run(wp::map("reduce0", wp::space(n), s() += x(i) * 2, wp::max_into(mx(), x(i)),
                    wp::min_into(mn(), x(i) + 100)));
    double e = 1.5, emax = -1.0, emin = 0.0;
    for (int64_t a = 0; a < n; ++a) {
      e += xs[a] * 2;
      emax = std::max(emax, xs[a]);
      emin = std::min(emin, xs[a] + 100);
    }
    REQUIRE(s.data()[0] == Approx(e).epsilon(1e-12));
    REQUIRE(mx.data()[0] == emax);
    REQUIRE(mn.data()[0] == 0.0);  // the pre-filled value is below every x + 100
  }
  SECTION("rank-1 space: a dot product into a rank-0 array") {
    wp::run(wp::map("dot", wp::space(n), s() += x(i) * y(i)));
    double e = 1.5;
    for (int64_t a = 0; a < n; ++a) e += xs[a] * ys[a];
    REQUIRE(s.data()[0] == Approx(e).epsilon(1e-12));
  }
  SECTION("rank-2 space: the old value is counted once over many rows") {
    constexpr int64_t R = 7;
    wp::array<double, 2> A("A", {R, n});
    const auto as = fill(A, 1);
    wp::run(wp::map("total", wp::space(R, n), s() += A(i, j)));
    double e = 1.5;
    for (int64_t k = 0; k < R * n; ++k) e += as[k];
    REQUIRE(s.data()[0] == Approx(e).epsilon(1e-12));
  }
  SECTION("reading a rank-0 array in an expression") {
    wp::array<double, 1> out("out", {n});
    wp::run(wp::map("scale", wp::space(n), out(i) = x(i) * s() + s()));
    for (int64_t a = 0; a < n; ++a) REQUIRE(out.data()[a] == xs[a] * 1.5 + 1.5);
  }
}

TEST_CASE("statements: a program of maps connected through arrays", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<double, 2> A("A", {R, C});
  wp::array<double, 1> rowsum("rowsum", {R});
  wp::array<double, 2> centered("centered", {R, C});
  wp::array<double, 1> colmax("colmax", {C});
  wp::array<double, 0> total("total", {});
  const auto as = fill(A);
  for (int64_t b = 0; b < C; ++b) colmax.data()[b] = -1e300;
  total.data()[0] = 0.25;

  auto m1 = wp::map("rowsum", wp::space(R, C), rowsum(i) += A(i, j));
  auto m2 = wp::map("center", wp::space(R, C), centered(i, j) = A(i, j) - rowsum(i) / double(C));
  auto m3 = wp::map("colmax", wp::space(R, C), wp::max_into(colmax(j), centered(i, j)));
  auto m4 = wp::map("total", wp::space(C), total() += colmax(i));
  wp::run(wp::program(m1, m2, m3, m4));

  std::vector<double> rs(R, 0.0), cen(R * C), cm(C, -1e300);
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) rs[a] += as[a * C + b];
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) cen[a * C + b] = as[a * C + b] - rs[a] / double(C);
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) cm[b] = std::max(cm[b], cen[a * C + b]);
  double tot = 0.25;
  for (int64_t b = 0; b < C; ++b) tot += cm[b];
  require_equal(rowsum, rs);
  require_equal(centered, cen);
  require_equal(colmax, cm);
  REQUIRE(total.data()[0] == Approx(tot).epsilon(1e-12));

  // Running the program again works on the current values (the sums grow).
  wp::run(wp::program(m1));
  for (int64_t a = 0; a < R; ++a)
    REQUIRE(rowsum.data()[a] == Approx(2 * rs[a]).epsilon(1e-12).margin(1e-12));
}

TEST_CASE("statements: views over a user's buffer", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t K = 7, N = 13;
  std::vector<float> abuf(K * N), bbuf(K * N, -3.0f);
  for (int64_t k = 0; k < K * N; ++k) abuf[k] = value_at<float>(k, 2);
  wp::array<float, 2> A("A", {K, N}, abuf.data());
  wp::array<float, 2> B("B", {K, N}, bbuf.data());
  REQUIRE(B.is_view());
  REQUIRE(B.data() == bbuf.data());
  REQUIRE(A.data() == abuf.data());

  // Writes land in the user's buffer, reads come from it; part of B is not written.
  wp::run(wp::map("view", wp::space(K, N - 2), B(i, j) = A(i, j + 2) * 2.0f + A(i, j)));
  for (int64_t a = 0; a < K; ++a)
    for (int64_t b = 0; b < N; ++b) {
      const float e = b < N - 2 ? abuf[a * N + b + 2] * 2.0f + abuf[a * N + b] : -3.0f;
      REQUIRE(bbuf[a * N + b] == Approx(e));
    }
  // Changes the user makes to the buffer are seen by the next run.
  abuf[0] = 1000.0f;
  const float b00 = bbuf[0];
  wp::run(wp::map("view2", wp::space(K, N), B(i, j) += A(i, j)));
  REQUIRE(bbuf[0] == Approx(b00 + 1000.0f));
  REQUIRE(bbuf[N - 1] == Approx(-3.0f + abuf[N - 1]));

  // A view through Eigen's matrix() sees the same data.
  auto Bm = B.matrix();
  REQUIRE(Bm.rows() == K);
  REQUIRE(Bm.cols() == N);
  REQUIRE(Bm(3, 4) == bbuf[3 * N + 4]);
}

TEST_CASE("statements: an owned array's matrix() reads and writes root's data", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 5, C = 7;
  wp::array<double, 2> A("A", {R, C}), B("B", {R, C});
  // Written through Eigen (row-major, as the array), read by a map.
  A.matrix() = Eigen::MatrixXd::Constant(R, C, 0.5);
  A.matrix()(2, 3) = -4.0;
  A.matrix().row(4).setLinSpaced(C, 0.0, 6.0);  // 0, 1, ..., 6
  wp::run(wp::map("scale", wp::space(R, C), B(i, j) = A(i, j) * 3.0 + wp::val(j)));
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) {
      const double av = a == 2 && b == 3 ? -4.0 : a == 4 ? double(b) : 0.5;
      INFO("element " << a << ", " << b);
      REQUIRE(A.data()[a * C + b] == av);
      REQUIRE(B.data()[a * C + b] == av * 3.0 + double(b));
      REQUIRE(B.matrix()(a, b) == B.data()[a * C + b]);  // the map's writes, seen through Eigen
    }
  REQUIRE(B.matrix().rows() == R);
  REQUIRE(B.matrix().cols() == C);
}

TEST_CASE("statements: init generates inputs lazily", "[statements]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<double, 2> A("A", {R, C});
  int calls = 0;
  A.init([&calls](std::array<int64_t, 2> g) {
    ++calls;
    return double(g[0] * 100 + g[1]) * 0.5;
  });
  REQUIRE(A.has_generator());
  REQUIRE(calls == 0);  // nothing generated before the data is needed
  wp::array<double, 2> out("out", {R, C});
  wp::run(wp::map("from_init", wp::space(R, C), out(i, j) = A(i, j) + 1));
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) REQUIRE(out.data()[a * C + b] == double(a * 100 + b) * 0.5 + 1);
  REQUIRE(calls == R * C);
  REQUIRE(A.data()[2 * C + 3] == 101.5);
  REQUIRE(calls == R * C);  // generated once
}

TEST_CASE("statements: snapshot semantics when a statement reads its own output", "[statements]") {
  auto [i, j, k] = wp::indices<3>();
  constexpr int64_t n = 13;

  SECTION("1-D stencil x(i) = x(i - 1) + x(i + 1)") {
    wp::array<double, 1> x("x", {n});
    const auto old = fill(x);
    wp::run(wp::map("stencil", wp::space({1, n - 1}), x(i) = x(i - 1) + x(i + 1)));
    std::vector<double> e(old.begin(), old.end());
    for (int64_t a = 1; a < n - 1; ++a) e[a] = old[a - 1] + old[a + 1];
    require_equal(x, e);
  }
  SECTION("x(i + 1) += x(i): a shift reads old values") {
    wp::array<int32_t, 1> x("x", {n});
    const auto old = fill(x);
    wp::run(wp::map("prefix_step", wp::space(n - 1), x(i + 1) += x(i)));
    std::vector<double> e(old.begin(), old.end());
    for (int64_t a = 0; a < n - 1; ++a) e[a + 1] = old[a + 1] + old[a];
    require_equal(x, e);
  }
  SECTION("reversal in place x(i) = x(n - 1 - i)") {
    wp::array<float, 1> x("x", {n});
    const auto old = fill(x);
    wp::run(wp::map("reverse", wp::space(n), x(i) = x(n - 1 - i)));
    std::vector<double> e(n);
    for (int64_t a = 0; a < n; ++a) e[a] = old[n - 1 - a];
    require_equal(x, e);
  }
  SECTION("max_into(x(i), x(n - 1 - i)) reads old values") {
    wp::array<int64_t, 1> x("x", {n});
    const auto old = fill(x);
    wp::run(wp::map("sym_max", wp::space(n), wp::max_into(x(i), x(n - 1 - i) * 2)));
    std::vector<double> e(n);
    for (int64_t a = 0; a < n; ++a) e[a] = double(std::max(old[a], old[n - 1 - a] * 2));
    require_equal(x, e);
  }
  SECTION("in-place transpose A(i, j) = A(j, i)") {
    constexpr int64_t m = 7;
    wp::array<double, 2> A("A", {m, m});
    const auto old = fill(A);
    wp::run(wp::map("transpose", wp::space(m, m), A(i, j) = A(j, i) + 0.5));
    std::vector<double> e(m * m);
    for (int64_t a = 0; a < m; ++a)
      for (int64_t b = 0; b < m; ++b) e[a * m + b] = old[b * m + a] + 0.5;
    require_equal(A, e);
  }
  SECTION("a fixed element read by every point: x(i) = x(0) + x(i)") {
    wp::array<double, 1> x("x", {n});
    const auto old = fill(x);
    REQUIRE(old[0] != 0.0);
    wp::run(wp::map("first", wp::space(n), x(i) = x(0) + x(i)));
    std::vector<double> e(n);
    for (int64_t a = 0; a < n; ++a) e[a] = old[0] + old[a];
    require_equal(x, e);
  }
  SECTION("the same element under '=' is read before it is written") {
    wp::array<double, 1> x("x", {n});
    const auto old = fill(x);
    wp::run(wp::map("inplace", wp::space(n), x(i) = x(i) * 2 + 1));
    std::vector<double> e(n);
    for (int64_t a = 0; a < n; ++a) e[a] = old[a] * 2 + 1;
    require_equal(x, e);
  }
  SECTION("a contraction reading its own output: C(i, j) += C(i, k) * B(k, j)") {
    constexpr int64_t m = 7;
    wp::array<double, 2> Cm("C", {m, m});
    wp::array<double, 2> B("B", {m, m});
    const auto c0 = fill(Cm, 1);
    const auto b0 = fill(B, 2);
    auto mp = wp::map("self_gemm", wp::space(m, m, m), Cm(i, j) += Cm(i, k) * B(k, j));
    REQUIRE_THAT(wp::explain_local(mp), Catch::Contains("snapshot"));
    wp::run(mp);
    std::vector<double> e(c0.begin(), c0.end());
    for (int64_t a = 0; a < m; ++a)
      for (int64_t b = 0; b < m; ++b)
        for (int64_t c = 0; c < m; ++c) e[a * m + b] += c0[a * m + c] * b0[c * m + b];
    require_equal(Cm, e);
  }
  SECTION("a 2-D stencil large enough to run on threads") {
    constexpr int64_t R = 203, C = 181;  // > 2^15 points
    wp::array<double, 2> G("G", {R, C});
    const auto old = fill(G);
    wp::run(wp::map("stencil2d", wp::space({1, R - 1}, {1, C - 1}),
                    G(i, j) = G(i - 1, j) + G(i, j + 1) - G(i + 1, j - 1) * 0.5));
    std::vector<double> e(old.begin(), old.end());
    for (int64_t a = 1; a < R - 1; ++a)
      for (int64_t b = 1; b < C - 1; ++b)
        e[a * C + b] = old[(a - 1) * C + b] + old[a * C + b + 1] - old[(a + 1) * C + b - 1] * 0.5;
    require_equal(G, e);
  }
}

TEST_CASE("statements: a(i) = b(i) with identical access types builds a statement",
          "[statements]") {
  auto [i] = wp::indices<1>();
  constexpr int64_t n = 13;
  wp::array<double, 1> a("a", {n});
  wp::array<double, 1> b("b", {n});
  STATIC_REQUIRE(std::is_same_v<decltype(a(i)), decltype(b(i))>);
  STATIC_REQUIRE(wp::detail::is_statement_v<decltype(a(i) = b(i))>);
  STATIC_REQUIRE(wp::detail::is_statement_v<decltype(a(i + 1) = b(i + 2))>);
  const auto bs = fill(b);
  fill(a, 3);
  wp::run(wp::map("copy", wp::space(n), a(i) = b(i)));
  for (int64_t k = 0; k < n; ++k) REQUIRE(a.data()[k] == bs[k]);
  fill(a, 3);
  wp::run(wp::map("copy_shift", wp::space(n - 2), a(i + 1) = b(i + 2)));
  for (int64_t k = 0; k < n - 2; ++k) REQUIRE(a.data()[k + 1] == bs[k + 2]);
  REQUIRE(a.data()[0] == value_at<double>(0, 3));
  REQUIRE(a.data()[n - 1] == value_at<double>(n - 1, 3));
}

TEMPLATE_TEST_CASE("statements: contractions (GEMM) add into pre-filled values",
                   "[statements][gemm]", float, double, int32_t, int64_t) {
  using T = TestType;
  auto [i, j, k, l] = wp::indices<4>();
  constexpr int64_t M = 7, N = 5, K = 13;
  wp::array<T, 2> A("A", {M, K});
  wp::array<T, 2> At("At", {K, M});
  wp::array<T, 2> B("B", {K, N});
  wp::array<T, 2> Bt("Bt", {N, K});
  const auto as = fill(A, 1);
  const auto ats = fill(At, 2);
  const auto bs = fill(B, 3);
  const auto bts = fill(Bt, 4);
  auto& cnt = wp::detail::counters();

  SECTION("C(i, j) += A(i, k) * B(k, j)") {
    wp::array<T, 2> Cm("C", {M, N});
    const auto cs = fill(Cm, 5);
    auto mm = wp::map("matmul", wp::space(M, N, K), Cm(i, j) += A(i, k) * B(k, j));
    REQUIRE_THAT(wp::explain_local(mm), Catch::Contains("gemm: "));
    const long before = cnt.gemm_calls.load();
    wp::run(mm);
    REQUIRE(cnt.gemm_calls.load() - before == 1);
    std::vector<double> e(cs.begin(), cs.end());
    for (int64_t a = 0; a < M; ++a)
      for (int64_t b = 0; b < N; ++b)
        for (int64_t c = 0; c < K; ++c)
          e[a * N + b] += double(as[a * K + c]) * double(bs[c * N + b]);
    require_equal(Cm, e);
  }
  SECTION("transposed operands and output: Ct(j, i) += At(k, i) * Bt(j, k)") {
    wp::array<T, 2> Ct("Ct", {N, M});
    const auto cs = fill(Ct, 6);
    wp::run(wp::map("matmul_t", wp::space(M, N, K), Ct(j, i) += At(k, i) * Bt(j, k)));
    std::vector<double> e(cs.begin(), cs.end());
    for (int64_t a = 0; a < M; ++a)
      for (int64_t b = 0; b < N; ++b)
        for (int64_t c = 0; c < K; ++c)
          e[b * M + a] += double(ats[c * M + a]) * double(bts[b * K + c]);
    require_equal(Ct, e);
  }
  SECTION("scaled by an integer: C(i, j) += 3 * A(i, k) * B(k, j) and ... * 2") {
    wp::array<T, 2> Cm("C", {M, N});
    const auto cs = fill(Cm, 5);
    wp::run(
        wp::program(wp::map("scaled_l", wp::space(M, N, K), Cm(i, j) += 3 * (A(i, k) * B(k, j))),
                    wp::map("scaled_r", wp::space(M, N, K), Cm(i, j) += A(i, k) * B(k, j) * 2),
                    wp::map("scaled_m", wp::space(M, N, K), Cm(i, j) += -1 * A(i, k) * B(k, j))));
    std::vector<double> e(cs.begin(), cs.end());
    for (int64_t a = 0; a < M; ++a)
      for (int64_t b = 0; b < N; ++b)
        for (int64_t c = 0; c < K; ++c)
          e[a * N + b] += 4.0 * double(as[a * K + c]) * double(bs[c * N + b]);
    require_equal(Cm, e);
  }
  SECTION("a sub-box of the space: lo > 0 in every dimension") {
    wp::array<T, 2> Cm("C", {M, N});
    const auto cs = fill(Cm, 5);
    wp::run(wp::map("matmul_box", wp::space({1, M}, {2, N}, {3, K - 1}),
                    Cm(i, j) += A(i, k) * B(k, j)));
    std::vector<double> e(cs.begin(), cs.end());
    for (int64_t a = 1; a < M; ++a)
      for (int64_t b = 2; b < N; ++b)
        for (int64_t c = 3; c < K - 1; ++c)
          e[a * N + b] += double(as[a * K + c]) * double(bs[c * N + b]);
    require_equal(Cm, e);
  }
  SECTION("batched: C(l, i, j) += A3(l, i, k) * B3(l, k, j)") {
    constexpr int64_t L = 3;
    wp::array<T, 3> A3("A3", {L, M, K});
    wp::array<T, 3> B3("B3", {L, K, N});
    wp::array<T, 3> C3("C3", {L, M, N});
    const auto a3 = fill(A3, 7);
    const auto b3 = fill(B3, 8);
    const auto c3 = fill(C3, 9);
    const long before = cnt.gemm_calls.load();
    wp::run(wp::map("bmm", wp::space(M, N, K, L), C3(l, i, j) += A3(l, i, k) * B3(l, k, j)));
    REQUIRE(cnt.gemm_calls.load() - before == L);
    std::vector<double> e(c3.begin(), c3.end());
    for (int64_t q = 0; q < L; ++q)
      for (int64_t a = 0; a < M; ++a)
        for (int64_t b = 0; b < N; ++b)
          for (int64_t c = 0; c < K; ++c)
            e[(q * M + a) * N + b] +=
                double(a3[(q * M + a) * K + c]) * double(b3[(q * K + c) * N + b]);
    require_equal(C3, e);
  }
  SECTION(
      "batched with the batch index last (strided operands): C(i, j, l) += A(i, k, l) * B(k, j, "
      "l)") {
    constexpr int64_t L = 3;
    wp::array<T, 3> A3("A3", {M, K, L});
    wp::array<T, 3> B3("B3", {K, N, L});
    wp::array<T, 3> C3("C3", {M, N, L});
    const auto a3 = fill(A3, 7);
    const auto b3 = fill(B3, 8);
    const auto c3 = fill(C3, 9);
    wp::run(wp::map("bmm_last", wp::space(M, N, K, L), C3(i, j, l) += A3(i, k, l) * B3(k, j, l)));
    std::vector<double> e(c3.begin(), c3.end());
    for (int64_t q = 0; q < L; ++q)
      for (int64_t a = 0; a < M; ++a)
        for (int64_t b = 0; b < N; ++b)
          for (int64_t c = 0; c < K; ++c)
            e[(a * N + b) * L + q] +=
                double(a3[(a * K + c) * L + q]) * double(b3[(c * N + b) * L + q]);
    require_equal(C3, e);
  }
  SECTION("a rank-0 operand and an elementwise product") {
    wp::array<T, 0> s("s", {});
    wp::array<T, 1> v("v", {K});
    wp::array<T, 1> u("u", {K});
    wp::array<T, 1> y1("y1", {K});
    wp::array<T, 1> y2("y2", {K});
    s.data()[0] = T(3);
    const auto vs = fill(v, 1);
    const auto us = fill(u, 2);
    const auto y1s = fill(y1, 3);
    const auto y2s = fill(y2, 4);
    wp::run(wp::program(wp::map("axpy", wp::space(K), y1(i) += s() * v(i), y2(i) += v(i) * s()),
                        wp::map("hadamard", wp::space(K), y1(i) += v(i) * u(i))));
    std::vector<double> e1(K), e2(K);
    for (int64_t c = 0; c < K; ++c) {
      e1[c] = double(y1s[c]) + 3.0 * double(vs[c]) + double(vs[c]) * double(us[c]);
      e2[c] = double(y2s[c]) + double(vs[c]) * 3.0;
    }
    require_equal(y1, e1);
    require_equal(y2, e2);
  }
  SECTION("matrix-vector and outer product") {
    wp::array<T, 1> v("v", {K});
    wp::array<T, 1> yv("yv", {M});
    wp::array<T, 1> w("w", {N});
    wp::array<T, 2> O("O", {M, N});
    const auto vs = fill(v, 1);
    const auto ys = fill(yv, 2);
    const auto ws = fill(w, 3);
    const auto o0 = fill(O, 4);
    wp::run(wp::program(wp::map("gemv", wp::space(M, K), yv(i) += A(i, j) * v(j)),
                        wp::map("outer", wp::space(M, N), O(i, j) += yv(i) * w(j))));
    std::vector<double> ey(ys.begin(), ys.end()), eo(o0.begin(), o0.end());
    for (int64_t a = 0; a < M; ++a)
      for (int64_t c = 0; c < K; ++c) ey[a] += double(as[a * K + c]) * double(vs[c]);
    for (int64_t a = 0; a < M; ++a)
      for (int64_t b = 0; b < N; ++b) eo[a * N + b] += ey[a] * double(ws[b]);
    require_equal(yv, ey);
    require_equal(O, eo);
  }
}

TEMPLATE_TEST_CASE("statements: a fractional scalar on an integer contraction",
                   "[statements][gemm]", int32_t, int64_t) {
  // C(i, j) += 0.5 * A(i, k) * B(k, j) on integer arrays: the right side is a double, every
  // product A*B is even, so 0.5 * A * B is an exact integer and every reading of "+=" gives
  // the same result. (The loop executor gets it right; see the elementwise check below.)
  using T = TestType;
  auto [i, j, k] = wp::indices<3>();
  constexpr int64_t M = 7, N = 5, K = 13;
  wp::array<T, 2> A("A", {M, K});
  wp::array<T, 2> B("B", {K, N});
  wp::array<T, 2> Cm("C", {M, N});
  for (int64_t q = 0; q < M * K; ++q) A.data()[q] = T(2 * (q % 5) - 3);  // even-times-any is even
  for (int64_t q = 0; q < M * K; ++q) A.data()[q] *= T(2);
  for (int64_t q = 0; q < K * N; ++q) B.data()[q] = T(q % 7 - 2);
  for (int64_t q = 0; q < M * N; ++q) Cm.data()[q] = T(q);
  std::vector<double> e(M * N);
  for (int64_t a = 0; a < M; ++a)
    for (int64_t b = 0; b < N; ++b) {
      double s = double(a * N + b);
      for (int64_t c = 0; c < K; ++c)
        s += 0.5 * double(A.data()[a * K + c]) * double(B.data()[c * N + b]);
      e[a * N + b] = s;
    }
  SECTION("elementwise form (loop executor)") {
    wp::run(wp::map("half_loop", wp::space(M, N, K), Cm(i, j) += 0.5 * (A(i, k) * B(k, j)) + 0));
    require_equal(Cm, e);
  }
  SECTION("contraction form") {
    wp::run(wp::map("half_gemm", wp::space(M, N, K), Cm(i, j) += 0.5 * A(i, k) * B(k, j)));
    require_equal(Cm, e);
  }
}

TEST_CASE("statements: large statements split over threads", "[statements]") {
  auto [i, j] = wp::indices<2>();
  // Above wp::detail::parallel_threshold (2^18 points), with two threads asked for even on a
  // one-core machine: the threaded branches themselves run, and the counters prove it.
  constexpr int64_t R = 611, C = 463;
  STATIC_REQUIRE(R * C >= wp::detail::parallel_threshold);
#if defined(_OPENMP)
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(2);
#endif
  // Fusion off: each statement's own threaded branch runs (fused blocks on threads are
  // tested in test_fusion.cpp).
  const std::size_t budget = wp::detail::fusion_budget_bytes();
  wp::detail::fusion_budget_bytes() = std::size_t(-1) / 2;
  auto& cnt = wp::detail::counters();
  auto threaded = [&] { return cnt.threaded_outer.load() + cnt.threaded_rows.load(); };
  const long threaded0 = threaded(), outer0 = cnt.threaded_outer.load();
  const long rows0 = cnt.threaded_rows.load();
  wp::array<double, 2> A("A", {R, C});
  wp::array<double, 2> out("out", {R, C});
  wp::array<double, 1> rmax("rmax", {R});
  wp::array<double, 1> rsum("rsum", {R});
  const auto as = fill(A);
  const auto os = fill(out, 1);
  const auto ms = fill(rmax, 2);
  const auto ss = fill(rsum, 3);
  auto m = wp::map("big", wp::space(R, C), out(i, j) += A(i, j) * 2 - wp::val(i),
                   wp::max_into(rmax(i), A(i, j) + wp::val(j) * 0.01), rsum(i) += A(i, j));
  REQUIRE_THAT(wp::explain_local(m), Catch::Contains("loop: rows along i1, threads over i0"));
  wp::run(m);
  wp::detail::fusion_budget_bytes() = budget;
#if defined(_OPENMP)
  REQUIRE(cnt.threaded_outer.load() - outer0 >= 1);  // out(i, j): threads over i0
  REQUIRE(threaded() - threaded0 == 3);              // every statement ran on threads
#else
  WARN("built without OpenMP: statements run on one thread, the threaded branches are not run");
#endif
  std::vector<double> eo(os.begin(), os.end()), em(ms.begin(), ms.end()), es(ss.begin(), ss.end());
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) {
      eo[a * C + b] += as[a * C + b] * 2 - double(a);
      em[a] = std::max(em[a], as[a * C + b] + double(b) * 0.01);
      es[a] += as[a * C + b];
    }
  require_equal(out, eo);
  require_equal(rmax, em);
  require_equal(rsum, es);

  SECTION("one long row (1-D), and a left side shared by several rows (anti-diagonals)") {
    constexpr int64_t L = 300007;
    STATIC_REQUIRE(L - 1 >= wp::detail::parallel_threshold);
    wp::array<double, 1> x("x", {L});
    wp::array<double, 1> y("y", {L});
    const auto xs = fill(x, 4);
    const auto ys = fill(y, 5);
    wp::array<double, 1> d("d", {R + C - 1});
    const auto d0 = fill(d, 6);
    wp::run(wp::program(wp::map("long_row", wp::space({1, L}), y(i) += x(i) * 2 - x(i - 1)),
                        wp::map("antidiag", wp::space(R, C), d(i + j) += A(i, j))));
#if defined(_OPENMP)
    // The long row is split over threads; the anti-diagonals (no left axis owned by one
    // dimension) run on one thread, as splitting them would race.
    REQUIRE(threaded() - threaded0 == 3 + 1);
    REQUIRE(cnt.threaded_rows.load() - rows0 >= 1);
#endif
    std::vector<double> ey(ys.begin(), ys.end()), ed(d0.begin(), d0.end());
    for (int64_t a = 1; a < L; ++a) ey[a] += xs[a] * 2 - xs[a - 1];
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) ed[a + b] += as[a * C + b];
    require_equal(y, ey);
    require_equal(d, ed);
  }
#if defined(_OPENMP)
  omp_set_num_threads(threads_before);
#endif
}

// ================================================================ scatter-add

TEMPLATE_TEST_CASE("statements: a scatter-add h(idx(i)) += e through an indirect left side",
                   "[statements][scatter]", double, float, int64_t) {
  using T = TestType;
  auto [i, j, k] = wp::indices<3>();
  SECTION("a histogram with repeated and unused bins, into pre-filled values") {
    const int64_t n = 23, bins = 9;
    wp::array<int32_t, 1> idx("idx", {n});
    wp::array<T, 1> x("x", {n}), h("h", {bins});
    for (int64_t t = 0; t < n; ++t) idx.data()[t] = int32_t((t * 5) % 7);  // bins 7, 8 unused
    const std::vector<T> xv = fill(x, 1), h0 = fill(h, 2);
    std::vector<T> want = h0;
    for (int64_t t = 0; t < n; ++t) want[std::size_t(idx.data()[t])] += xv[std::size_t(t)];
    wp::run(wp::map("hist", wp::space(n), h(idx(i)) += x(i) * 2 - x(i)));
    REQUIRE(std::vector<T>(h.data(), h.data() + bins) == want);
  }
  SECTION("an embedding's gradient dE(tok(b, s), d) += g(b, s, d), large enough for threads") {
    // 6 x 131 x 400 points: over the loop executor's threshold, so rows split over threads
    const int64_t B = 6, S = 131, D = 400, V = 37;
    wp::array<int64_t, 2> tok("tok", {B, S});
    wp::array<T, 3> g("g", {B, S, D});
    wp::array<T, 2> dE("dE", {V, D});
    for (int64_t t = 0; t < B * S; ++t) tok.data()[t] = (t * t + 3 * t) % (V - 2);
    const std::vector<T> gv = fill(g, 3), e0 = fill(dE, 4);
    std::vector<T> want = e0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d)
          want[std::size_t(tok.data()[b * S + s] * D + d)] += gv[std::size_t((b * S + s) * D + d)];
    auto m = wp::map("demb", wp::space(B, S, D), dE(tok(i, j), k) += g(i, j, k));
    wp::run(m);
    for (int64_t t = 0; t < V * D; ++t) {
      INFO("element " << t);
      if constexpr (std::is_integral_v<T>)
        REQUIRE(dE.data()[t] == want[std::size_t(t)]);
      else  // the order of the additions is the loop's own: compare to rounding
        REQUIRE(double(dE.data()[t]) ==
                Approx(double(want[std::size_t(t)])).epsilon(1e-5).margin(1e-3));
    }
  }
}

TEST_CASE("statements: a scatter-add is refused where it would be wrong", "[statements][scatter]") {
  auto [i] = wp::indices<1>();
  const int64_t n = 8;
  wp::array<int32_t, 1> idx("idx", {n}), hi("hi", {n});
  wp::array<double, 1> x("x", {n}), h("h", {5});
  for (int64_t t = 0; t < n; ++t) idx.data()[t] = int32_t(t % 5);
  fill(x, 1);
  fill(h, 2);
  SECTION("a subscript outside the array: a shape_error naming the access (under ASan too)") {
    idx.data()[6] = 5;
    REQUIRE_THROWS_WITH(wp::run(wp::map("hist", wp::space(n), h(idx(i)) += x(i))),
                        Catch::Contains("[workpart.shape_error]") && Catch::Contains("'hist'") &&
                            Catch::Contains("h(idx(i0))") && Catch::Contains("outside [0, 5)"));
    idx.data()[6] = -1;
    REQUIRE_THROWS_WITH(wp::run(wp::map("hist", wp::space(n), h(idx(i)) += x(i))),
                        Catch::Contains("-1") && Catch::Contains("outside [0, 5)"));
  }
  SECTION("subscripts read from the array the statement writes") {
    wp::array<int32_t, 1> self("self", {n});
    for (int64_t t = 0; t < n; ++t) self.data()[t] = int32_t(t % 3);
    REQUIRE_THROWS_WITH(wp::map("self", wp::space(n), self(self(i)) += 1),
                        Catch::Contains("[workpart.shape_error]") &&
                            Catch::Contains("subscripted by 'self', the array it writes"));
  }
}
