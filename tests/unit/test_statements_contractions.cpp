// Contractions run as GEMMs add into pre-filled values, in every element type, against loops
// (tests/unit/test_statements.cpp has the statement forms, test_statements_kernels.cpp the
// other kernels).

#include "statements_checks.hpp"

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
