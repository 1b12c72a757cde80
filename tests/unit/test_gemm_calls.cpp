/// \file test_gemm_calls.cpp
/// The device backend's cuBLAS calls, checked without a GPU: the strided-batched GEMMs that
/// exec/device/gemm_calls.hpp plans for a contraction (what cublas.hpp passes to
/// `cublas?gemmStridedBatched`) are executed here by a plain column-major GEMM that also
/// checks cuBLAS's argument rules, and the result is compared with a nested loop over the
/// statement. Covers transposed operands and output, batches, scaling, index groups, sub-boxes
/// of the space, blocks held at an offset (a rank's buffers), and the forms that are refused.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>
#include <workpart/exec/device/gemm_calls.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace wp = workpart;
using wp::index_t;
using wp::detail::strided_gemm;

namespace {

/// cuBLAS's rules for one call (CUBLAS_STATUS_INVALID_VALUE otherwise), then the call itself:
/// C_b (m x n, column-major) += alpha op(A_b) op(B_b) for b < count.
template <class T>
std::string host_gemm(const strided_gemm<T>& g) {
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.count < 1) return "negative size or count";
  if (g.lda < std::max(1, g.trans_a ? g.k : g.m)) return "lda too small";
  if (g.ldb < std::max(1, g.trans_b ? g.n : g.k)) return "ldb too small";
  if (g.ldc < std::max(1, g.m)) return "ldc too small";
  for (int b = 0; b < g.count; ++b) {
    const T* A = g.a + b * g.stride_a;
    const T* B = g.b + b * g.stride_b;
    T* C = g.c + b * g.stride_c;
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < g.n; ++j) {
        T acc = 0;
        for (int p = 0; p < g.k; ++p) {
          const T a =
              g.trans_a ? A[p + std::ptrdiff_t(i) * g.lda] : A[i + std::ptrdiff_t(p) * g.lda];
          const T bb =
              g.trans_b ? B[j + std::ptrdiff_t(p) * g.ldb] : B[p + std::ptrdiff_t(j) * g.ldb];
          acc += a * bb;
        }
        C[i + std::ptrdiff_t(j) * g.ldc] += g.alpha * acc;
      }
  }
  return "";
}

/// A whole array's view (origin 0, row-major strides).
template <class T, int R>
wp::detail::raw_view whole(wp::array<T, R>& a) {
  wp::detail::raw_view v;
  v.data = a.data();
  index_t s = 1;
  for (int x = R - 1; x >= 0; --x) {
    v.extent[x] = a.shape()[std::size_t(x)];
    v.stride[x] = s;
    s *= v.extent[x];
  }
  return v;
}

template <class T, int R>
void fill(wp::array<T, R>& a, int seed) {
  for (index_t e = 0; e < a.size(); ++e) a.data()[e] = T(((e * 7 + seed * 13) % 17) - 8) / T(4);
}

/// Plans st over [lo, hi) on the views, runs the calls with host_gemm; the number of calls,
/// or -1 when the plan refuses the form. `problem` receives an argument-rule violation.
template <int N, class Stmt>
int run_planned(const Stmt& st, const wp::detail::buffer_env& env, const std::array<index_t, N>& lo,
                const std::array<index_t, N>& hi, std::string& problem) {
  using T = typename Stmt::value_type;
  int calls = 0;
  const bool ok = wp::detail::plan_strided_gemms<N>(st, env, env, lo.data(), hi.data(),
                                                    [&](const strided_gemm<T>& g) {
                                                      ++calls;
                                                      const std::string p = host_gemm(g);
                                                      if (!p.empty() && problem.empty())
                                                        problem = p;
                                                    });
  return ok ? calls : -1;
}

template <class T>
double max_diff(const T* got, const std::vector<double>& want) {
  double m = 0;
  for (std::size_t e = 0; e < want.size(); ++e) m = std::max(m, std::abs(double(got[e]) - want[e]));
  return m;
}

}  // namespace

TEST_CASE("gemm calls: 2-D contractions in every operand layout", "[device][gemm]") {
  const index_t M = 7, N = 5, K = 6;
  auto [i, j, k] = wp::indices<3>();
  wp::array<double, 2> A("A", {M, K}), At("At", {K, M}), B("B", {K, N}), Bt("Bt", {N, K});
  wp::array<double, 2> C("C", {M, N}), Ct("Ct", {N, M});
  fill(A, 1);
  fill(B, 2);
  for (index_t x = 0; x < M; ++x)
    for (index_t y = 0; y < K; ++y) At.data()[y * M + x] = A.data()[x * K + y];
  for (index_t x = 0; x < K; ++x)
    for (index_t y = 0; y < N; ++y) Bt.data()[y * K + x] = B.data()[x * N + y];
  wp::detail::buffer_env env;
  env.add(&A, whole(A));
  env.add(&At, whole(At));
  env.add(&B, whole(B));
  env.add(&Bt, whole(Bt));
  env.add(&C, whole(C));
  env.add(&Ct, whole(Ct));
  // the reference, C = 0.5 + A B, over a sub-box of the space [1, M) x [0, N - 1) x [2, K)
  const std::array<index_t, 3> lo{1, 0, 2}, hi{M, N - 1, K};
  auto want_at = [&](index_t x, index_t y, double scale) {
    double s = 0.5;
    if (x >= lo[0] && x < hi[0] && y >= lo[1] && y < hi[1])
      for (index_t p = lo[2]; p < hi[2]; ++p)
        s += scale * A.data()[x * K + p] * B.data()[p * N + y];
    return s;
  };
  std::vector<double> want(std::size_t(M * N)), want_t(std::size_t(M * N)),
      want_s(std::size_t(M * N));
  for (index_t x = 0; x < M; ++x)
    for (index_t y = 0; y < N; ++y) {
      want[std::size_t(x * N + y)] = want_at(x, y, 1.0);
      want_t[std::size_t(y * M + x)] = want_at(x, y, 1.0);
      want_s[std::size_t(x * N + y)] = want_at(x, y, -2.5);
    }
  auto reset = [&] {
    std::fill(C.data(), C.data() + C.size(), 0.5);
    std::fill(Ct.data(), Ct.data() + Ct.size(), 0.5);
  };
  std::string problem;
  SECTION("C(i,j) += A(i,k) B(k,j)") {
    reset();
    REQUIRE(run_planned<3>(C(i, j) += A(i, k) * B(k, j), env, lo, hi, problem) == 1);
    REQUIRE(max_diff(C.data(), want) < 1e-12);
  }
  SECTION("A transposed: C(i,j) += At(k,i) B(k,j)") {
    reset();
    REQUIRE(run_planned<3>(C(i, j) += At(k, i) * B(k, j), env, lo, hi, problem) == 1);
    REQUIRE(max_diff(C.data(), want) < 1e-12);
  }
  SECTION("B transposed: C(i,j) += A(i,k) Bt(j,k)") {
    reset();
    REQUIRE(run_planned<3>(C(i, j) += A(i, k) * Bt(j, k), env, lo, hi, problem) == 1);
    REQUIRE(max_diff(C.data(), want) < 1e-12);
  }
  SECTION("both transposed, C transposed: Ct(j,i) += At(k,i) Bt(j,k)") {
    reset();
    REQUIRE(run_planned<3>(Ct(j, i) += At(k, i) * Bt(j, k), env, lo, hi, problem) == 1);
    REQUIRE(max_diff(Ct.data(), want_t) < 1e-12);
  }
  SECTION("scaled: C(i,j) += -2.5 * A(i,k) * B(k,j)") {
    reset();
    REQUIRE(run_planned<3>(C(i, j) += -2.5 * A(i, k) * B(k, j), env, lo, hi, problem) == 1);
    REQUIRE(max_diff(C.data(), want_s) < 1e-12);
  }
  SECTION("operands in another axis order of the space: C(i,j) += B(k,j) A(i,k)") {
    reset();
    REQUIRE(run_planned<3>(C(i, j) += B(k, j) * A(i, k), env, lo, hi, problem) == 1);
    REQUIRE(max_diff(C.data(), want) < 1e-12);
  }
  REQUIRE(problem == "");
}

TEST_CASE("gemm calls: a rank's blocks held at an offset", "[device][gemm]") {
  // A rank of grid (2,2,1) holding C[3:7, 2:5], A[3:7, 0:K], B[0:K, 2:5] in its own buffers.
  const index_t M = 7, N = 5, K = 4;
  auto [i, j, k] = wp::indices<3>();
  wp::array<float, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill(A, 3);
  fill(B, 4);
  const std::array<index_t, 3> lo{3, 2, 0}, hi{M, N, K};
  std::vector<float> a_blk, b_blk, c_blk;
  for (index_t x = lo[0]; x < hi[0]; ++x)
    for (index_t p = 0; p < K; ++p) a_blk.push_back(A.data()[x * K + p]);
  for (index_t p = 0; p < K; ++p)
    for (index_t y = lo[1]; y < hi[1]; ++y) b_blk.push_back(B.data()[p * N + y]);
  c_blk.assign(std::size_t((hi[0] - lo[0]) * (hi[1] - lo[1])), 1.0f);
  auto view = [](std::vector<float>& buf, index_t o0, index_t e0, index_t o1, index_t e1) {
    wp::detail::raw_view v;
    v.data = buf.data();
    v.origin[0] = o0;
    v.origin[1] = o1;
    v.extent[0] = e0;
    v.extent[1] = e1;
    v.stride[0] = e1;
    v.stride[1] = 1;
    return v;
  };
  wp::detail::buffer_env env;
  env.add(&A, view(a_blk, lo[0], hi[0] - lo[0], 0, K));
  env.add(&B, view(b_blk, 0, K, lo[1], hi[1] - lo[1]));
  env.add(&C, view(c_blk, lo[0], hi[0] - lo[0], lo[1], hi[1] - lo[1]));
  std::string problem;
  REQUIRE(run_planned<3>(C(i, j) += A(i, k) * B(k, j), env, lo, hi, problem) == 1);
  REQUIRE(problem == "");
  std::string bad;
  for (index_t x = lo[0]; x < hi[0]; ++x)
    for (index_t y = lo[1]; y < hi[1]; ++y) {
      double s = 1.0;
      for (index_t p = 0; p < K; ++p)
        s += double(A.data()[x * K + p]) * double(B.data()[p * N + y]);
      const float got = c_blk[std::size_t((x - lo[0]) * (hi[1] - lo[1]) + (y - lo[1]))];
      if (std::abs(got - s) > 1e-5) bad = "C(" + std::to_string(x) + "," + std::to_string(y) + ")";
    }
  REQUIRE(bad == "");
}

TEST_CASE("gemm calls: batches, index groups, and what is refused", "[device][gemm]") {
  const index_t Bn = 3, M = 4, N = 5, K = 6;
  std::string problem;
  SECTION("batch outermost: one strided-batched call") {
    auto [b, i, j, k] = wp::indices<4>();
    wp::array<double, 3> A("A", {Bn, M, K}), B("B", {Bn, K, N}), C("C", {Bn, M, N});
    fill(A, 5);
    fill(B, 6);
    std::fill(C.data(), C.data() + C.size(), 0.0);
    wp::detail::buffer_env env;
    env.add(&A, whole(A));
    env.add(&B, whole(B));
    env.add(&C, whole(C));
    REQUIRE(run_planned<4>(C(b, i, j) += A(b, i, k) * B(b, k, j), env, {0, 0, 0, 0}, {Bn, M, N, K},
                           problem) == 1);
    std::vector<double> want;
    for (index_t q = 0; q < Bn; ++q)
      for (index_t x = 0; x < M; ++x)
        for (index_t y = 0; y < N; ++y) {
          double s = 0;
          for (index_t p = 0; p < K; ++p)
            s += A.data()[(q * M + x) * K + p] * B.data()[(q * K + p) * N + y];
          want.push_back(s);
        }
    REQUIRE(max_diff(C.data(), want) < 1e-12);
  }
  SECTION("attention's projection: Q(b,s,h,d) += X(b,s,e) W(e,h,d), (h,d) fused") {
    const index_t S = 3, E = 4, H = 2, D = 3;
    auto [b, s, h, d, e] = wp::indices<5>();
    wp::array<double, 3> X("X", {Bn, S, E}), W("W", {E, H, D});
    wp::array<double, 4> Q("Q", {Bn, S, H, D});
    fill(X, 7);
    fill(W, 8);
    std::fill(Q.data(), Q.data() + Q.size(), 0.0);
    wp::detail::buffer_env env;
    env.add(&X, whole(X));
    env.add(&W, whole(W));
    env.add(&Q, whole(Q));
    // (b, s) fuse into one m of Bn*S rows, (h, d) into one n: a single GEMM
    REQUIRE(run_planned<5>(Q(b, s, h, d) += X(b, s, e) * W(e, h, d), env, {0, 0, 0, 0, 0},
                           {Bn, S, H, D, E}, problem) == 1);
    std::vector<double> want;
    for (index_t q = 0; q < Bn; ++q)
      for (index_t t = 0; t < S; ++t)
        for (index_t x = 0; x < H; ++x)
          for (index_t y = 0; y < D; ++y) {
            double acc = 0;
            for (index_t p = 0; p < E; ++p)
              acc += X.data()[(q * S + t) * E + p] * W.data()[(p * H + x) * D + y];
            want.push_back(acc);
          }
    REQUIRE(max_diff(Q.data(), want) < 1e-12);
  }
  SECTION("a contracted index left unfused: calls add into one C, in order") {
    // k1 outer and k2 inner contracted, but A holds them apart (A(i, k2, k1)): the outer one loops
    auto [i, j, k1, k2] = wp::indices<4>();
    const index_t K1 = 3, K2 = 2;
    wp::array<double, 3> A("A", {M, K2, K1}), B("B", {K1, K2, N});
    wp::array<double, 2> C("C", {M, N});
    fill(A, 9);
    fill(B, 10);
    std::fill(C.data(), C.data() + C.size(), 0.0);
    wp::detail::buffer_env env;
    env.add(&A, whole(A));
    env.add(&B, whole(B));
    env.add(&C, whole(C));
    const int calls = run_planned<4>(C(i, j) += A(i, k2, k1) * B(k1, k2, j), env, {0, 0, 0, 0},
                                     {M, N, K1, K2}, problem);
    REQUIRE(calls >= 1);
    std::vector<double> want;
    for (index_t x = 0; x < M; ++x)
      for (index_t y = 0; y < N; ++y) {
        double acc = 0;
        for (index_t p = 0; p < K1; ++p)
          for (index_t r = 0; r < K2; ++r)
            acc += A.data()[(x * K2 + r) * K1 + p] * B.data()[(p * K2 + r) * N + y];
        want.push_back(acc);
      }
    REQUIRE(max_diff(C.data(), want) < 1e-12);
  }
  SECTION("batch innermost: no matrix axis contiguous, refused (the kernel runs it)") {
    auto [i, j, k, b] = wp::indices<4>();
    wp::array<double, 3> A("A", {M, K, Bn}), B("B", {K, N, Bn}), C("C", {M, N, Bn});
    wp::detail::buffer_env env;
    env.add(&A, whole(A));
    env.add(&B, whole(B));
    env.add(&C, whole(C));
    REQUIRE(run_planned<4>(C(i, j, b) += A(i, k, b) * B(k, j, b), env, {0, 0, 0, 0}, {M, N, K, Bn},
                           problem) == -1);
  }
  SECTION("integer elements: refused (cuBLAS has no integer GEMM)") {
    auto [i, j, k] = wp::indices<3>();
    wp::array<std::int64_t, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
    wp::detail::buffer_env env;
    env.add(&A, whole(A));
    env.add(&B, whole(B));
    env.add(&C, whole(C));
    REQUIRE(run_planned<3>(C(i, j) += A(i, k) * B(k, j), env, {0, 0, 0}, {M, N, K}, problem) == -1);
  }
  SECTION("an empty box: nothing to do, no call") {
    auto [i, j, k] = wp::indices<3>();
    wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
    wp::detail::buffer_env env;
    env.add(&A, whole(A));
    env.add(&B, whole(B));
    env.add(&C, whole(C));
    REQUIRE(run_planned<3>(C(i, j) += A(i, k) * B(k, j), env, {2, 0, 0}, {2, N, K}, problem) == 0);
  }
  REQUIRE(problem == "");
}
