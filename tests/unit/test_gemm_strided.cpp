/// \file test_gemm_strided.cpp
/// The CPU's GEMM (exec/cpu/gemm.hpp `gemm_strided`) against a plain triple loop: every
/// layout of A, B and C (row-major, column-major, neither axis contiguous, padded leading
/// dimensions), matrix times vector and vector times matrix, products below and above the
/// size where the BLAS is called (WORKPART_HAVE_BLAS: sgemm/dgemm, sgemv/dgemv; else Eigen),
/// scaled, added into C or overwriting it (C's old values, NaN here, never read).

#include <catch2/catch.hpp>

#include <workpart/exec/cpu/gemm.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace {

enum class layout { rows, cols, strided };

/// The steps of an r x c operand stored in `l` (padded leading dimensions; `strided`: neither
/// axis contiguous), and how many elements its storage spans.
struct steps {
  index_t rs, cs, span;
};
steps steps_of(layout l, index_t r, index_t c) {
  switch (l) {
    case layout::rows:
      return {c + 3, 1, r * (c + 3)};
    case layout::cols:
      return {1, r + 2, c * (r + 2)};
    default:
      return {2 * c * 2, 2, r * 4 * c};
  }
}

template <class T>
void check(index_t m, index_t n, index_t k, layout la, layout lb, layout lc, T alpha,
           bool overwrite) {
  const steps sa = steps_of(la, m, k), sb = steps_of(lb, k, n), sc = steps_of(lc, m, n);
  std::vector<T> a(std::size_t(sa.span)), b(std::size_t(sb.span));
  for (std::size_t x = 0; x < a.size(); ++x) a[x] = T(std::sin(0.37 * double(x) + 0.1));
  for (std::size_t x = 0; x < b.size(); ++x) b[x] = T(std::cos(0.23 * double(x) + 0.2));
  std::vector<T> c(std::size_t(sc.span), std::numeric_limits<T>::quiet_NaN());
  std::vector<double> want(std::size_t(m * n));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      const T old = T(0.5 * double(i) - 0.25 * double(j));
      if (!overwrite) c[std::size_t(i * sc.rs + j * sc.cs)] = old;
      double s = 0;
      for (index_t p = 0; p < k; ++p)
        s += double(a[std::size_t(i * sa.rs + p * sa.cs)]) *
             double(b[std::size_t(p * sb.rs + j * sb.cs)]);
      want[std::size_t(i * n + j)] = double(alpha) * s + (overwrite ? 0.0 : double(old));
    }
  wp::detail::gemm_strided<T>(m, n, k, alpha, a.data(), sa.rs, sa.cs, b.data(), sb.rs, sb.cs,
                              c.data(), sc.rs, sc.cs, overwrite);
  const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-12;
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      const double got = double(c[std::size_t(i * sc.rs + j * sc.cs)]);
      const double w = want[std::size_t(i * n + j)];
      INFO("m " << m << " n " << n << " k " << k << " layouts " << int(la) << int(lb) << int(lc)
                << " alpha " << alpha << " overwrite " << overwrite << " at " << i << ", " << j);
      REQUIRE(std::abs(got - w) <= tol * (1 + std::abs(w) + double(k)));
    }
}

template <class T>
void check_all() {
  // (m, n, k): below Eigen's and workpart's size for a BLAS call (m + n + k < 20), above it,
  // a vector on either side, a depth of one
  const index_t shapes[][3] = {{1, 1, 1},    {3, 5, 4},   {1, 40, 30}, {40, 1, 30},
                               {25, 33, 17}, {64, 48, 1}, {1, 1, 50},  {7, 9, 29}};
  const layout all[] = {layout::rows, layout::cols, layout::strided};
  for (const auto& s : shapes)
    for (layout la : all)
      for (layout lb : all)
        for (layout lc : all)
          for (bool overwrite : {false, true}) {
            check<T>(s[0], s[1], s[2], la, lb, lc, T(1), overwrite);
            check<T>(s[0], s[1], s[2], la, lb, lc, T(-0.5), overwrite);
          }
}

}  // namespace

TEST_CASE("gemm_strided: every layout, vectors, small and large, against a loop", "[gemm]") {
  SECTION("float") { check_all<float>(); }
  SECTION("double") { check_all<double>(); }
}
