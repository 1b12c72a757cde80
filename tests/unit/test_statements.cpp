// Statements (=, +=, max_into, min_into), maps of several statements, programs, views,
// rank-0 arrays, bounds of spaces and snapshot semantics, each compared with plain loops.

#include "statements_checks.hpp"

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
