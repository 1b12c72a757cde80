// Statements' kernels against loops: a statement that reads its own output (a snapshot),
// integer contractions with fractional scalars, statements split over threads, scatter-adds through
// an indirect left side and their refusals. tests/unit/test_statements.cpp has the statement forms
// themselves.

#include "statements_checks.hpp"

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
