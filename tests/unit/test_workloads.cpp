/// \file test_workloads.cpp
/// The reference workloads (DESIGN.md, thesis chapter 8) at small, uneven sizes, run on one
/// process with wp::run. Every result is compared with a plain nested loop written here, over
/// plain std::vector buffers, that does not use the library. Contractions also check that they
/// were dispatched to GEMM (explain_local and detail::counters().gemm_calls), and forms that
/// must not be dispatched check that they fall back to the loop executor and still agree.

#include "workloads_checks.hpp"

TEMPLATE_TEST_CASE("matmul 37x41x29 in every axis order of the space runs as one GEMM",
                   "[workloads][matmul][gemm]", float, double) {
  matmul_in_axis_order<TestType, 0, 1, 2>();  // space(M, N, K)
  matmul_in_axis_order<TestType, 0, 2, 1>();  // space(M, K, N)
  matmul_in_axis_order<TestType, 1, 0, 2>();  // space(N, M, K)
  matmul_in_axis_order<TestType, 1, 2, 0>();  // space(K, M, N)
  matmul_in_axis_order<TestType, 2, 0, 1>();  // space(N, K, M)
  matmul_in_axis_order<TestType, 2, 1, 0>();  // space(K, N, M)
}

// ---------------------------------------------------------------- transposed operands

namespace {

/// A stored (k, m) and read A(k, i) when TA; B stored (n, k) and read B(j, k) when TB;
/// C stored (n, m) and written C(j, i) when TC.
template <class T, bool TA, bool TB, bool TC>
void matmul_transposed(index_t m, index_t n, index_t kk) {
  INFO("transposed: A " << TA << ", B " << TB << ", C " << TC << "; m " << m << ", n " << n
                        << ", k " << kk);
  using shape = std::array<index_t, 2>;
  wp::array<T, 2> A("A", TA ? shape{kk, m} : shape{m, kk});
  wp::array<T, 2> B("B", TB ? shape{n, kk} : shape{kk, n});
  wp::array<T, 2> C("C", TC ? shape{n, m} : shape{m, n});
  fill_random(A, 11);
  fill_random(B, 12);
  fill_random(C, 13);
  const auto a = as_doubles(A), b = as_doubles(B);
  auto want = as_doubles(C);
  std::vector<double> mag;
  reference_matmul(
      m, n, kk, 1.0, [&](index_t i, index_t k) { return TA ? a[k * m + i] : a[i * kk + k]; },
      [&](index_t k, index_t j) { return TB ? b[j * kk + k] : b[k * n + j]; },
      [&](index_t i, index_t j) { return std::size_t(TC ? j * m + i : i * n + j); }, want, mag);

  // Index objects named by type: the lambdas below use them (no structured-binding captures).
  constexpr wp::index<0> i{};
  constexpr wp::index<1> j{};
  constexpr wp::index<2> k{};
  auto acc_a = [&] {
    if constexpr (TA)
      return A(k, i);
    else
      return A(i, k);
  }();
  auto acc_b = [&] {
    if constexpr (TB)
      return B(j, k);
    else
      return B(k, j);
  }();
  auto acc_c = [&] {
    if constexpr (TC)
      return C(j, i);
    else
      return C(i, j);
  }();
  auto mm = wp::map("matmul_t", wp::space(m, n, kk), acc_c += acc_a * acc_b);
  const std::string text = wp::explain_local(mm);
  INFO(text);
  CHECK_THAT(text, Catch::Contains(gemm_text(0, 1, 2)));

  const long before = gemm_calls();
  wp::run(mm);
  CHECK(gemm_calls() - before == 1);
  check_array(C, want, mag);
}

template <class T, bool TA, bool TB, bool TC>
void matmul_transposed_sizes() {
  // The workload's size, then every extent 1 or 2 in turn (vector and scalar edge cases of
  // the strides).
  const index_t sizes[][3] = {{M, N, K}, {1, N, K}, {M, 1, K}, {M, N, 1}, {1, 1, K},
                              {1, N, 1}, {M, 1, 1}, {1, 1, 1}, {2, 3, 2}, {3, 2, 1}};
  for (const auto& sz : sizes) matmul_transposed<T, TA, TB, TC>(sz[0], sz[1], sz[2]);
}

}  // namespace

TEMPLATE_TEST_CASE("matmul with transposed operands and a transposed output runs as one GEMM",
                   "[workloads][matmul][gemm]", float, double) {
  matmul_transposed_sizes<TestType, false, false, false>();
  matmul_transposed_sizes<TestType, true, false, false>();
  matmul_transposed_sizes<TestType, false, true, false>();
  matmul_transposed_sizes<TestType, true, true, false>();
  matmul_transposed_sizes<TestType, false, false, true>();
  matmul_transposed_sizes<TestType, true, false, true>();
  matmul_transposed_sizes<TestType, false, true, true>();
  matmul_transposed_sizes<TestType, true, true, true>();
}

// ---------------------------------------------------------------- scaled

namespace {
template <class T, class MakeStmt>
void matmul_scaled(const char* form, MakeStmt make) {
  INFO("form: " << form);
  wp::array<T, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill_random(A, 21);
  fill_random(B, 22);
  fill_random(C, 23);
  const auto a = as_doubles(A), b = as_doubles(B);
  auto want = as_doubles(C);
  std::vector<double> mag;
  reference_matmul(
      M, N, K, 2.5, [&](index_t i, index_t k) { return a[i * K + k]; },
      [&](index_t k, index_t j) { return b[k * N + j]; },
      [](index_t i, index_t j) { return std::size_t(i * N + j); }, want, mag);

  auto mm = wp::map("scaled", wp::space(M, N, K), make(A, B, C));
  const std::string text = wp::explain_local(mm);
  INFO(text);
  CHECK_THAT(text, Catch::Contains(gemm_text(0, 1, 2)));
  const long before = gemm_calls();
  wp::run(mm);
  CHECK(gemm_calls() - before == 1);
  check_array(C, want, mag);
}
}  // namespace

TEMPLATE_TEST_CASE("scaled matmul 2.5 * A * B runs as one GEMM", "[workloads][matmul][gemm]", float,
                   double) {
  constexpr wp::index<0> i{};
  constexpr wp::index<1> j{};
  constexpr wp::index<2> k{};
  matmul_scaled<TestType>("2.5 * A(i, k) * B(k, j)", [=](auto& A, auto& B, auto& C) {
    return C(i, j) += 2.5 * A(i, k) * B(k, j);
  });
  matmul_scaled<TestType>("2.5 * (A(i, k) * B(k, j))", [=](auto& A, auto& B, auto& C) {
    return C(i, j) += 2.5 * (A(i, k) * B(k, j));
  });
  matmul_scaled<TestType>("A(i, k) * B(k, j) * 2.5", [=](auto& A, auto& B, auto& C) {
    return C(i, j) += A(i, k) * B(k, j) * 2.5;
  });
}

// ---------------------------------------------------------------- batched

namespace {
/// The extents of a batched matmul's operands A, B and C.
struct batched_extents {
  std::array<index_t, 3> a, b, c;
};

/// Runs a batched matmul C += A * B (Bt batches of m x kk times kk x n): `build(A, B, C)` makes
/// the map; at_a/at_b/at_c(q, x, y) give the linear offset of batch q, row x, column y in each
/// operand's layout. Checks that explain_local names `gemm_line`, that one GEMM ran per batch
/// and that C matches a plain nested loop over the same offsets.
template <class T, class Build, class AtA, class AtB, class AtC>
void batched_matmul(index_t Bt, index_t m, index_t n, index_t kk, unsigned seed,
                    batched_extents ext, Build build, AtA at_a, AtB at_b, AtC at_c,
                    const std::string& gemm_line) {
  wp::array<T, 3> A("A", ext.a), B("B", ext.b), C("C", ext.c);
  fill_random(A, seed);
  fill_random(B, seed + 1);
  fill_random(C, seed + 2);
  const auto a = as_doubles(A), b = as_doubles(B);
  auto want = as_doubles(C);
  std::vector<double> mag(want.size());
  for (index_t q = 0; q < Bt; ++q)
    for (index_t x = 0; x < m; ++x)
      for (index_t y = 0; y < n; ++y) {
        const std::size_t c = std::size_t(at_c(q, x, y));
        double s = 0.0, g = std::abs(want[c]);
        for (index_t z = 0; z < kk; ++z) {
          const double t = a[std::size_t(at_a(q, x, z))] * b[std::size_t(at_b(q, z, y))];
          s += t;
          g += std::abs(t);
        }
        want[c] += s;
        mag[c] = g;
      }
  auto mm = build(A, B, C);
  const std::string text = wp::explain_local(mm);
  INFO(text);
  CHECK_THAT(text, Catch::Contains(gemm_line));
  const long before = gemm_calls();
  wp::run(mm);
  CHECK(gemm_calls() - before == Bt);
  check_array(C, want, mag);
}
}  // namespace

TEMPLATE_TEST_CASE("batched matmul 3x7x5x6 runs one GEMM per batch point",
                   "[workloads][matmul][gemm]", float, double) {
  constexpr index_t Bt = 3, m = 7, n = 5, kk = 6;
  auto [bi, i, j, k] = wp::indices<4>();
  batched_matmul<TestType>(
      Bt, m, n, kk, 31, batched_extents{{Bt, m, kk}, {Bt, kk, n}, {Bt, m, n}},
      [=](auto& A, auto& B, auto& C) {
        return wp::map("bmm", wp::space(Bt, m, n, kk), C(bi, i, j) += A(bi, i, k) * B(bi, k, j));
      },
      [](index_t q, index_t x, index_t z) { return (q * m + x) * kk + z; },
      [](index_t q, index_t z, index_t y) { return (q * kk + z) * n + y; },
      [](index_t q, index_t x, index_t y) { return (q * m + x) * n + y; },
      "gemm: C[i1 x i2] += A[i1 x i3] * B[i3 x i2], batched over i0");
}

TEMPLATE_TEST_CASE("batched matmul with the batch axis in the middle of every operand",
                   "[workloads][matmul][gemm]", float, double) {
  // C(i, b, j) += A(i, b, k) * B(k, b, j) over space(m, Bt, n, kk): the batch is dimension 1.
  constexpr index_t Bt = 4, m = 7, n = 5, kk = 6;
  auto [i, bi, j, k] = wp::indices<4>();
  batched_matmul<TestType>(
      Bt, m, n, kk, 34, batched_extents{{m, Bt, kk}, {kk, Bt, n}, {m, Bt, n}},
      [=](auto& A, auto& B, auto& C) {
        return wp::map("bmm_mid", wp::space(m, Bt, n, kk),
                       C(i, bi, j) += A(i, bi, k) * B(k, bi, j));
      },
      [](index_t q, index_t x, index_t z) { return (x * Bt + q) * kk + z; },
      [](index_t q, index_t z, index_t y) { return (z * Bt + q) * n + y; },
      [](index_t q, index_t x, index_t y) { return (x * Bt + q) * n + y; },
      "gemm: C[i0 x i2] += A[i0 x i3] * B[i3 x i2], batched over i1");
}

TEMPLATE_TEST_CASE("batched matmul with the batch axis last in every operand",
                   "[workloads][matmul][gemm]", float, double) {
  // C(i, j, b) += A(i, k, b) * B(k, j, b): no operand has a unit stride along its matrix axes.
  constexpr index_t Bt = 3, m = 7, n = 5, kk = 6;
  auto [bi, i, j, k] = wp::indices<4>();
  batched_matmul<TestType>(
      Bt, m, n, kk, 37, batched_extents{{m, kk, Bt}, {kk, n, Bt}, {m, n, Bt}},
      [=](auto& A, auto& B, auto& C) {
        return wp::map("bmm_last", wp::space(Bt, m, n, kk),
                       C(i, j, bi) += A(i, k, bi) * B(k, j, bi));
      },
      [](index_t q, index_t x, index_t z) { return (x * kk + z) * Bt + q; },
      [](index_t q, index_t z, index_t y) { return (z * n + y) * Bt + q; },
      [](index_t q, index_t x, index_t y) { return (x * n + y) * Bt + q; },
      "gemm: C[i1 x i2] += A[i1 x i3] * B[i3 x i2], batched over i0");
}

TEMPLATE_TEST_CASE("matmul over an empty contraction dimension leaves C as it was",
                   "[workloads][matmul][gemm]", float, double) {
  using T = TestType;
  wp::array<T, 2> A("A", {M, 0}), B("B", {0, N}), C("C", {M, N});
  fill_random(C, 65);
  const auto want = as_doubles(C);
  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("empty_k", wp::space(M, N, 0), C(i, j) += A(i, k) * B(k, j));
  CHECK_THAT(wp::explain_local(mm), Catch::Contains("gemm"));
  wp::run(mm);
  check_array(C, want);
}

// ---------------------------------------------------------------- vectors

TEMPLATE_TEST_CASE("matrix-vector, vector-matrix, outer and inner products run as GEMM",
                   "[workloads][matmul][gemm]", float, double) {
  using T = TestType;
  wp::array<T, 2> A("A", {M, K});
  wp::array<T, 1> x("x", {K}), u("u", {M}), y("y", {M}), z("z", {K}), v("v", {N});
  wp::array<T, 2> O("O", {M, N});
  wp::array<T, 0> dot("dot", {});
  fill_random(A, 41);
  fill_random(x, 42);
  fill_random(u, 43);
  fill_random(y, 44);
  fill_random(z, 45);
  fill_random(v, 46);
  fill_random(O, 47);
  dot.data()[0] = T(0.5);
  const auto a = as_doubles(A), xs = as_doubles(x), us = as_doubles(u), vs = as_doubles(v);

  SECTION("y(i) += A(i, k) * x(k)") {
    auto want = as_doubles(y);
    std::vector<double> mag(want.size());
    for (index_t i = 0; i < M; ++i) {
      mag[i] = std::abs(want[i]);
      for (index_t k = 0; k < K; ++k) {
        want[i] += a[i * K + k] * xs[k];
        mag[i] += std::abs(a[i * K + k] * xs[k]);
      }
    }
    auto [i, k] = wp::indices<2>();
    auto mv = wp::map("matvec", wp::space(M, K), y(i) += A(i, k) * x(k));
    const std::string text = wp::explain_local(mv);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(mv);
    CHECK(gemm_calls() - before == 1);
    check_array(y, want, mag);
  }
  SECTION("z(k) += u(i) * A(i, k)") {
    auto want = as_doubles(z);
    std::vector<double> mag(want.size());
    for (index_t k = 0; k < K; ++k) {
      mag[k] = std::abs(want[k]);
      for (index_t i = 0; i < M; ++i) {
        want[k] += us[i] * a[i * K + k];
        mag[k] += std::abs(us[i] * a[i * K + k]);
      }
    }
    auto [k, i] = wp::indices<2>();
    auto vm = wp::map("vecmat", wp::space(K, M), z(k) += u(i) * A(i, k));
    const std::string text = wp::explain_local(vm);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(vm);
    CHECK(gemm_calls() - before == 1);
    check_array(z, want, mag);
  }
  SECTION("O(i, j) += u(i) * v(j)") {
    auto want = as_doubles(O);
    for (index_t i = 0; i < M; ++i)
      for (index_t j = 0; j < N; ++j) want[i * N + j] += us[i] * vs[j];
    auto [i, j] = wp::indices<2>();
    auto op = wp::map("outer", wp::space(M, N), O(i, j) += u(i) * v(j));
    const std::string text = wp::explain_local(op);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(op);
    CHECK(gemm_calls() - before == 1);
    check_array(O, want);
  }
  SECTION("dot() += x(k) * z(k) into a rank-0 array") {
    const auto zs = as_doubles(z);
    double want = 0.5, mag = 0.5;
    for (index_t k = 0; k < K; ++k) {
      want += xs[k] * zs[k];
      mag += std::abs(xs[k] * zs[k]);
    }
    auto [k] = wp::indices<1>();
    auto dp = wp::map("dot", wp::space(K), dot() += x(k) * z(k));
    const std::string text = wp::explain_local(dp);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(dp);
    CHECK(gemm_calls() - before == 1);
    check_array(dot, {want}, {mag});
  }
}

// ---------------------------------------------------------------- integer matmul

TEMPLATE_TEST_CASE("integer matmul 37x41x29 is exact", "[workloads][matmul][gemm]", std::int32_t,
                   std::int64_t) {
  using T = TestType;
  wp::array<T, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill_random(A, 51);
  fill_random(B, 52);
  fill_random(C, 53);
  std::vector<std::int64_t> want(C.data(), C.data() + C.size());
  for (index_t i = 0; i < M; ++i)
    for (index_t j = 0; j < N; ++j)
      for (index_t k = 0; k < K; ++k)
        want[i * N + j] += std::int64_t(A.data()[i * K + k]) * std::int64_t(B.data()[k * N + j]);

  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("imatmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
  const std::string text = wp::explain_local(mm);
  INFO(text);
  CHECK_THAT(text, Catch::Contains(gemm_text(0, 1, 2)));
  const long before = gemm_calls();
  wp::run(mm);
  CHECK(gemm_calls() - before == 1);
  check_exact(C.data(), want);
}

TEMPLATE_TEST_CASE("integer matmul with a fractional scale 2.5 * A * B is exact",
                   "[workloads][matmul][gemm]", std::int32_t, std::int64_t) {
  using T = TestType;
  // Every A value is even and every value is >= 0, so each term 2.5 * a * b is an integer and
  // the C++ meaning of the statement (per term or summed first, then converted) is exact.
  wp::array<T, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  std::mt19937 rng(54);
  std::uniform_int_distribution<int> d(0, 3);
  for (index_t e = 0; e < A.size(); ++e) A.data()[e] = T(2 * d(rng));
  for (index_t e = 0; e < B.size(); ++e) B.data()[e] = T(d(rng));
  for (index_t e = 0; e < C.size(); ++e) C.data()[e] = T(d(rng));
  std::vector<std::int64_t> want(C.data(), C.data() + C.size());
  for (index_t i = 0; i < M; ++i)
    for (index_t j = 0; j < N; ++j)
      for (index_t k = 0; k < K; ++k)
        want[i * N + j] +=
            std::int64_t(2.5 * double(A.data()[i * K + k]) * double(B.data()[k * N + j]));

  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("iscaled", wp::space(M, N, K), C(i, j) += 2.5 * A(i, k) * B(k, j));
  INFO(wp::explain_local(mm));
  wp::run(mm);
  check_exact(C.data(), want);
}

// ---------------------------------------------------------------- sub-box of the space

TEMPLATE_TEST_CASE("matmul over a space that starts above zero runs one GEMM on the sub-block",
                   "[workloads][matmul][gemm]", float, double) {
  using T = TestType;
  // Rows [3, M) and columns [2, N - 1) of C; k over [1, K): the rest of C keeps its values.
  wp::array<T, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill_random(A, 61);
  fill_random(B, 62);
  fill_random(C, 63);
  const auto a = as_doubles(A), b = as_doubles(B);
  auto want = as_doubles(C);
  std::vector<double> mag(want.size(), 1.0);
  for (index_t i = 3; i < M; ++i)
    for (index_t j = 2; j < N - 1; ++j)
      for (index_t k = 1; k < K; ++k) {
        want[i * N + j] += a[i * K + k] * b[k * N + j];
        mag[i * N + j] += std::abs(a[i * K + k] * b[k * N + j]);
      }
  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("sub", wp::space({3, M}, {2, N - 1}, {1, K}), C(i, j) += A(i, k) * B(k, j));
  CHECK_THAT(wp::explain_local(mm), Catch::Contains("gemm"));
  const long before = gemm_calls();
  wp::run(mm);
  CHECK(gemm_calls() - before == 1);
  check_array(C, want, mag);
}

// ---------------------------------------------------------------- index groups per role

TEMPLATE_TEST_CASE("contractions with several indices per role fuse them into one GEMM",
                   "[workloads][matmul][gemm]", float, double) {
  using T = TestType;
  // Attention's projection: Q(b, s, h, d) += X(b, s, e) * W(e, h, d): rows (b, s), columns
  // (h, d), contracted e; both groups are contiguous in every operand: one GEMM.
  constexpr index_t Bt = 3, S = 5, H = 4, D = 3, E = 7;
  auto [b, s, h, d, e] = wp::indices<5>();
  wp::array<T, 3> X("X", {Bt, S, E}), W("W", {E, H, D});
  wp::array<T, 4> Q("Q", {Bt, S, H, D});
  fill_random(X, 91);
  fill_random(W, 92);
  fill_random(Q, 93);
  const auto x = as_doubles(X), w = as_doubles(W);
  auto want = as_doubles(Q);
  std::vector<double> mag(want.size());
  for (index_t p = 0; p < Bt; ++p)
    for (index_t q = 0; q < S; ++q)
      for (index_t r = 0; r < H; ++r)
        for (index_t t = 0; t < D; ++t) {
          const std::size_t o = std::size_t(((p * S + q) * H + r) * D + t);
          mag[o] = std::abs(want[o]);
          for (index_t u = 0; u < E; ++u) {
            const double v =
                x[std::size_t((p * S + q) * E + u)] * w[std::size_t((u * H + r) * D + t)];
            want[o] += v;
            mag[o] += std::abs(v);
          }
        }
  auto proj = wp::map("proj", wp::space(Bt, S, H, D, E), Q(b, s, h, d) += X(b, s, e) * W(e, h, d));
  const std::string text = wp::explain_local(proj);
  INFO(text);
  CHECK_THAT(text,
             Catch::Contains("gemm: C[(i0,i1) x (i2,i3)] += A[(i0,i1) x i4] * B[i4 x (i2,i3)]"));
  const long before = gemm_calls();
  wp::run(proj);
  CHECK(gemm_calls() - before == 1);
  check_array(Q, want, mag);

  // The output projection: Y(b, s, f) += O(b, s, h, d) * V(h, d, f): two contracted indices.
  constexpr index_t Fo = 6;
  auto [b2, s2, f2, h2, d2] = wp::indices<5>();
  wp::array<T, 3> Y("Y", {Bt, S, Fo});
  wp::array<T, 3> V("V", {H, D, Fo});
  fill_random(V, 94);
  fill_random(Y, 95);
  const auto q = as_doubles(Q), v = as_doubles(V);
  auto want_y = as_doubles(Y);
  std::vector<double> mag_y(want_y.size());
  for (index_t p = 0; p < Bt * S; ++p)
    for (index_t f = 0; f < Fo; ++f) {
      const std::size_t o = std::size_t(p * Fo + f);
      mag_y[o] = std::abs(want_y[o]);
      for (index_t u = 0; u < H * D; ++u) {
        const double t = q[std::size_t(p * H * D + u)] * v[std::size_t(u * Fo + f)];
        want_y[o] += t;
        mag_y[o] += std::abs(t);
      }
    }
  auto out = wp::map("out", wp::space(Bt, S, Fo, H, D),
                     Y(b2, s2, f2) += Q(b2, s2, h2, d2) * V(h2, d2, f2));
  const long before_y = gemm_calls();
  wp::run(out);
  CHECK(gemm_calls() - before_y == 1);
  check_array(Y, want_y, mag_y);
}

TEMPLATE_TEST_CASE("index groups that are not contiguous in an operand batch the outer index",
                   "[workloads][matmul][gemm]", float, double) {
  using T = TestType;
  // C(i, j, l) += A(j, i, k) * B(k, l): rows (i, j) in C's order, but A holds j outside i, so
  // i cannot fuse with j: one GEMM over j per i.
  constexpr index_t I = 4, J = 5, L = 6, K = 7;
  auto [i, j, l, k] = wp::indices<4>();
  wp::array<T, 3> A("A", {J, I, K}), C("C", {I, J, L});
  wp::array<T, 2> B("B", {K, L});
  fill_random(A, 96);
  fill_random(B, 97);
  fill_random(C, 98);
  const auto a = as_doubles(A), bb = as_doubles(B);
  auto want = as_doubles(C);
  std::vector<double> mag(want.size());
  for (index_t x = 0; x < I; ++x)
    for (index_t y = 0; y < J; ++y)
      for (index_t z = 0; z < L; ++z) {
        const std::size_t o = std::size_t((x * J + y) * L + z);
        mag[o] = std::abs(want[o]);
        for (index_t u = 0; u < K; ++u) {
          const double t = a[std::size_t((y * I + x) * K + u)] * bb[std::size_t(u * L + z)];
          want[o] += t;
          mag[o] += std::abs(t);
        }
      }
  auto mm = wp::map("strided_rows", wp::space(I, J, L, K), C(i, j, l) += A(j, i, k) * B(k, l));
  const long before = gemm_calls();
  wp::run(mm);
  CHECK(gemm_calls() - before == I);
  check_array(C, want, mag);
}

// ---------------------------------------------------------------- forms that must not dispatch

TEMPLATE_TEST_CASE("contraction-like statements that are not a GEMM run as loops and agree",
                   "[workloads][matmul][loop]", float, double) {
  using T = TestType;
  auto [i, j, k] = wp::indices<3>();

  SECTION("C(i, j) += A(i, k) * B(k, j) + 1.0 adds K to every element") {
    wp::array<T, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
    fill_random(A, 71);
    fill_random(B, 72);
    fill_random(C, 73);
    const auto a = as_doubles(A), b = as_doubles(B);
    auto want = as_doubles(C);
    std::vector<double> mag(want.size());
    for (index_t x = 0; x < M; ++x)
      for (index_t y = 0; y < N; ++y) {
        mag[x * N + y] = std::abs(want[x * N + y]);
        for (index_t z = 0; z < K; ++z) {
          want[x * N + y] += a[x * K + z] * b[z * N + y] + 1.0;
          mag[x * N + y] += std::abs(a[x * K + z] * b[z * N + y]) + 1.0;
        }
      }
    auto mm = wp::map("plus_one", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j) + 1.0);
    const std::string text = wp::explain_local(mm);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("loop") && !Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(mm);
    CHECK(gemm_calls() == before);
    check_array(C, want, mag);
  }
  SECTION("A(i, j) += A(i, k) * A(k, j) reads a snapshot of A") {
    constexpr index_t n = 23;
    wp::array<T, 2> A("A", {n, n});
    fill_random(A, 74);
    const auto a = as_doubles(A);  // the values before the statement
    auto want = a;
    std::vector<double> mag(want.size());
    for (index_t x = 0; x < n; ++x)
      for (index_t y = 0; y < n; ++y) {
        mag[x * n + y] = std::abs(a[x * n + y]);
        for (index_t z = 0; z < n; ++z) {
          want[x * n + y] += a[x * n + z] * a[z * n + y];
          mag[x * n + y] += std::abs(a[x * n + z] * a[z * n + y]);
        }
      }
    auto mm = wp::map("square", wp::space(n, n, n), A(i, j) += A(i, k) * A(k, j));
    const std::string text = wp::explain_local(mm);
    INFO(text);
    CHECK_THAT(text,
               Catch::Contains("loop") && Catch::Contains("snapshot") && !Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(mm);
    CHECK(gemm_calls() == before);
    check_array(A, want, mag);
  }
  SECTION("max_into(C(i, j), A(i, k) * B(k, j)) is a max-times product") {
    wp::array<T, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
    fill_random(A, 75);
    fill_random(B, 76);
    fill_random(C, 77);
    const auto a = as_doubles(A), b = as_doubles(B);
    auto want = as_doubles(C);
    for (index_t x = 0; x < M; ++x)
      for (index_t y = 0; y < N; ++y)
        for (index_t z = 0; z < K; ++z)
          want[x * N + y] = std::max(want[x * N + y], double(T(a[x * K + z] * b[z * N + y])));
    auto mm = wp::map("maxtimes", wp::space(M, N, K), wp::max_into(C(i, j), A(i, k) * B(k, j)));
    const std::string text = wp::explain_local(mm);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("loop") && !Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(mm);
    CHECK(gemm_calls() == before);
    check_array(C, want);
  }
  SECTION("operands of another element type than the output") {
    using U = std::conditional_t<std::is_same_v<T, float>, double, float>;
    wp::array<U, 2> A("A", {M, K}), B("B", {K, N});
    wp::array<T, 2> C("C", {M, N});
    fill_random(A, 78);
    fill_random(B, 79);
    fill_random(C, 80);
    const auto a = as_doubles(A), b = as_doubles(B);
    auto want = as_doubles(C);
    std::vector<double> mag;
    reference_matmul(
        M, N, K, 1.0, [&](index_t x, index_t z) { return a[x * K + z]; },
        [&](index_t z, index_t y) { return b[z * N + y]; },
        [](index_t x, index_t y) { return std::size_t(x * N + y); }, want, mag);
    auto mm = wp::map("mixed", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
    const std::string text = wp::explain_local(mm);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("loop") && !Catch::Contains("gemm"));
    const long before = gemm_calls();
    wp::run(mm);
    CHECK(gemm_calls() == before);
    // Float parts round each product: compare at float's tolerance.
    const comparison c = compare(C.data(), std::size_t(C.size()), want, mag);
    INFO("worst element " << c.where << ": " << c.got << " vs " << c.want);
    CHECK(c.worst <= tolerance<float>());
  }
}

// ---------------------------------------------------------------- elementwise with broadcasting
