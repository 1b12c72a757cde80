// Fusion inside a map (exec/cpu/fusion.hpp) through wp::run, against plain loops written
// here that run the statements one after another over the whole space, as a map means:
//  - softmax over the last axis (max, exp, sum, normalise: four statements) and a layer norm
//    (mean, variance, scale), float and double, extents no multiple of a vector width, NaN
//    and infinities in some rows, at cache budgets from one row to more than the whole box;
//  - maps that must not be blocked along some dimension (a shifted or transposed read of
//    what an earlier statement wrote): fused along the others or not at all, same results;
//  - a later statement writing what an earlier one reads (the earlier reads the old values);
//  - a statement wp::backward pruned: not bound (its arrays have no buffers), not run;
//  - a column sum inside a fused map, on one thread and on OpenMP threads (blocks then go to
//    threads only along the dimension every left side moves along);
//  - data-dependent subscripts and statements reading their own output: never fused;
//  - explain_local() says which ran and why.
// Which path ran is read from the executor's counters, not inferred from timings.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <workpart/workpart.hpp>

#include "../omp_threads.hpp"

namespace wp = workpart;
using std::int64_t;

namespace {

/// Sets the fusion budget (bytes a block's working set may take) while it lives.
struct budget_scope {
  std::size_t saved = wp::detail::fusion_budget_bytes();
  explicit budget_scope(std::size_t bytes) { wp::detail::fusion_budget_bytes() = bytes; }
  ~budget_scope() { wp::detail::fusion_budget_bytes() = saved; }
};

long fused_maps() { return wp::detail::counters().fused_maps.load(); }

/// |got - want| within tol of max(1, |want|), NaN exactly where want is NaN, infinities
/// exactly. Returns the first mismatch as text (empty: all agree).
template <class T>
std::string compare(const T* got, const std::vector<double>& want, double tol) {
  for (std::size_t e = 0; e < want.size(); ++e) {
    const double g = double(got[e]), w = want[e];
    bool ok;
    if (std::isnan(w))
      ok = std::isnan(g);
    else if (std::isinf(w))
      ok = g == w;
    else
      ok = std::abs(g - w) <= tol * std::max(1.0, std::abs(w));
    if (!ok)
      return "[" + std::to_string(e) + "] = " + std::to_string(g) + ", expected " +
             std::to_string(w);
  }
  return "";
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

template <class T>
T value(int64_t k) {  // spread over [-6, 6), no multiple of a simple fraction
  return T(std::sin(0.731 * double(k) + 0.25) * 6.0);
}

}  // namespace

TEMPLATE_TEST_CASE("fusion: softmax as one map of four statements, at every block size",
                   "[local][fusion]", float, double) {
  using T = TestType;
  const int64_t B = 3, S = 37, L = 301;  // 111 rows of 301: no multiple of any vector width
  std::vector<T> xv(std::size_t(B * S * L));
  for (std::size_t k = 0; k < xv.size(); ++k) xv[k] = value<T>(int64_t(k));
  const T inf = std::numeric_limits<T>::infinity();
  xv[std::size_t(5 * L + 17)] = std::numeric_limits<T>::quiet_NaN();  // row 5: NaN throughout
  xv[std::size_t(40 * L + L - 1)] = -inf;                             // row 40: one zero
  xv[std::size_t(77 * L)] = inf;                                      // row 77: NaN (inf - inf)
  std::vector<double> want(xv.size());
  for (int64_t r = 0; r < B * S; ++r) {  // the four statements, one after another, in T
    const T* x = xv.data() + r * L;
    T m = -inf;
    for (int64_t j = 0; j < L; ++j) m = std::isnan(x[j]) || x[j] > m ? x[j] : m;
    std::vector<T> e(static_cast<std::size_t>(L));
    T s = 0;
    for (int64_t j = 0; j < L; ++j) e[std::size_t(j)] = std::exp(x[j] - m);
    for (int64_t j = 0; j < L; ++j) s += e[std::size_t(j)];
    for (int64_t j = 0; j < L; ++j) want[std::size_t(r * L + j)] = double(e[std::size_t(j)] / s);
  }
  const std::size_t whole = std::size_t(B * S * L) * (3 + 2) * sizeof(T);  // bytes a point
  for (const std::size_t budget :
       {std::size_t(64), std::size_t(4) << 10, std::size_t(100) << 10, whole / 2, whole + 1}) {
    INFO("budget " << budget << " bytes");
    budget_scope bs(budget);
    wp::array<T, 3> x("x", {B, S, L}, xv.data()), e("e", {B, S, L}), y("y", {B, S, L});
    wp::array<T, 2> mx("mx", {B, S}), sum("sum", {B, S});
    std::fill(mx.data(), mx.data() + mx.size(), -inf);
    std::fill(sum.data(), sum.data() + sum.size(), T(0));
    auto [b, s, l] = wp::indices<3>();
    auto sm = wp::map("softmax", wp::space(B, S, L), wp::max_into(mx(b, s), x(b, s, l)),
                      e(b, s, l) = wp::exp(x(b, s, l) - mx(b, s)), sum(b, s) += e(b, s, l),
                      y(b, s, l) = e(b, s, l) / sum(b, s));
    const long before = fused_maps();
    wp::run(sm);
    const bool fused = budget < whole;
    CHECK(fused_maps() - before == (fused ? 1 : 0));
    const std::string text = wp::explain_local(sm);
    CHECK(text.find(fused ? "statements: fused:" : "not fused: the whole box fits in cache") !=
          std::string::npos);
    REQUIRE(compare(y.data(), want, tolerance<T>()) == "");
  }
}

TEMPLATE_TEST_CASE("fusion: a layer norm as one map, rows of uneven length", "[local][fusion]",
                   float, double) {
  using T = TestType;
  const int64_t N = 53, D = 97;
  std::vector<T> xv(static_cast<std::size_t>(N * D)), gv(static_cast<std::size_t>(D)),
      bv(static_cast<std::size_t>(D));
  for (std::size_t k = 0; k < xv.size(); ++k) xv[k] = value<T>(int64_t(k));
  for (int64_t k = 0; k < D; ++k) {
    gv[std::size_t(k)] = T(1) + value<T>(k + 7) / T(12);
    bv[std::size_t(k)] = value<T>(k + 11) / T(6);
  }
  const T inv = T(1) / T(D), eps = T(1e-5);
  std::vector<double> want(xv.size());
  for (int64_t r = 0; r < N; ++r) {
    T mu = 0, var = 0;
    for (int64_t j = 0; j < D; ++j) mu += xv[std::size_t(r * D + j)] * inv;
    for (int64_t j = 0; j < D; ++j) {
      const T c = xv[std::size_t(r * D + j)] - mu;
      var += c * c * inv;
    }
    for (int64_t j = 0; j < D; ++j)
      want[std::size_t(r * D + j)] =
          double((xv[std::size_t(r * D + j)] - mu) / std::sqrt(var + eps) * gv[std::size_t(j)] +
                 bv[std::size_t(j)]);
  }
  for (const std::size_t budget : {std::size_t(256), std::size_t(3000), std::size_t(1) << 30}) {
    INFO("budget " << budget << " bytes");
    budget_scope bs(budget);
    wp::array<T, 2> x("x", {N, D}, xv.data()), z("z", {N, D});
    wp::array<T, 1> mu("mu", {N}), var("var", {N}), g("g", {D}, gv.data()), be("b", {D}, bv.data());
    std::fill(mu.data(), mu.data() + N, T(0));
    std::fill(var.data(), var.data() + N, T(0));
    auto [i, n] = wp::indices<2>();
    auto ln = wp::map("layernorm", wp::space(N, D), mu(i) += x(i, n) * inv,
                      var(i) += (x(i, n) - mu(i)) * (x(i, n) - mu(i)) * inv,
                      z(i, n) = (x(i, n) - mu(i)) / wp::sqrt(var(i) + eps) * g(n) + be(n));
    const long before = fused_maps();
    wp::run(ln);
    CHECK(fused_maps() - before == (budget < (std::size_t(1) << 30) ? 1 : 0));
    REQUIRE(compare(z.data(), want, tolerance<T>() * 10) == "");
  }
}

TEST_CASE("fusion: reads that cross blocks keep a dimension from being blocked",
          "[local][fusion]") {
  budget_scope bs(256);  // any box is larger: fused wherever it is legal
  auto [i, j] = wp::indices<2>();
  SECTION("a shifted read y(i + 1) of what the first statement wrote: not fused") {
    const int64_t n = 1001;
    std::vector<double> xv(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) xv[std::size_t(k)] = value<double>(k);
    wp::array<double, 1> x("x", {n}, xv.data()), y("y", {n}), z("z", {n});
    std::fill(y.data(), y.data() + n, -3.0);
    std::fill(z.data(), z.data() + n, -4.0);
    auto m = wp::map("shift", wp::space(n - 1), y(i) = x(i) * 2.0, z(i) = y(i + 1) + y(i));
    const long before = fused_maps();
    wp::run(m);
    CHECK(fused_maps() == before);
    CHECK(wp::explain_local(m).find("not fused: no dimension keeps") != std::string::npos);
    std::vector<double> wy(std::size_t(n), -3.0), wz(std::size_t(n), -4.0);
    for (int64_t k = 0; k < n - 1; ++k) wy[std::size_t(k)] = xv[std::size_t(k)] * 2.0;
    for (int64_t k = 0; k < n - 1; ++k)
      wz[std::size_t(k)] = wy[std::size_t(k + 1)] + wy[std::size_t(k)];
    REQUIRE(compare(z.data(), wz, 0.0) == "");
    REQUIRE(compare(y.data(), wy, 0.0) == "");
  }
  SECTION("a transposed read y(j, i): neither dimension, not fused") {
    const int64_t n = 67;
    wp::array<double, 2> x("x", {n, n}), y("y", {n, n}), z("z", {n, n});
    for (int64_t k = 0; k < n * n; ++k) x.data()[k] = value<double>(k);
    auto m = wp::map("transpose", wp::space(n, n), y(i, j) = x(i, j) + 1.0, z(i, j) = y(j, i));
    const long before = fused_maps();
    wp::run(m);
    CHECK(fused_maps() == before);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < n; ++b) REQUIRE(z.data()[a * n + b] == x.data()[b * n + a] + 1.0);
  }
  SECTION("y(i, j + 1) read on a space with a lower bound: blocked along i only") {
    const int64_t R = 211, C = 45;
    wp::array<double, 2> x("x", {R, C}), y("y", {R, C}), z("z", {R, C});
    for (int64_t k = 0; k < R * C; ++k) x.data()[k] = value<double>(k);
    std::fill(y.data(), y.data() + R * C, -1.0);
    std::fill(z.data(), z.data() + R * C, -2.0);
    auto m = wp::map("right", wp::space({3, R}, {0, C - 1}), y(i, j) = x(i, j) * 3.0,
                     z(i, j) = y(i, j + 1) - y(i, j));
    const std::string text = wp::explain_local(m);
    CHECK(text.find("fused:") != std::string::npos);
    CHECK(text.find("i0 in chunks of") != std::string::npos);
    const long before = fused_maps();
    wp::run(m);
    CHECK(fused_maps() - before == 1);
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) {
        const double* xr = x.data() + a * C;
        const bool in = a >= 3 && b < C - 1;
        const double wy = in ? xr[b] * 3.0 : -1.0;
        // y(a, C - 1) is never written: it keeps -1
        const double wy1 = in ? (b + 1 < C - 1 ? xr[b + 1] * 3.0 : -1.0) : 0.0;
        REQUIRE(y.data()[a * C + b] == wy);
        REQUIRE(z.data()[a * C + b] == (in ? wy1 - wy : -2.0));
      }
  }
}

TEST_CASE("fusion: a later statement writes what an earlier one reads", "[local][fusion]") {
  budget_scope bs(512);
  const int64_t n = 3001;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n}), a("a", {n}), b("b", {n});
  for (int64_t k = 0; k < n; ++k) {
    x.data()[k] = value<double>(k);
    b.data()[k] = double(k % 17);
  }
  auto m = wp::map("anti", wp::space(n), a(i) = x(i) + b(i), b(i) = x(i) * 2.0);
  const long before = fused_maps();
  wp::run(m);
  CHECK(fused_maps() - before == 1);
  for (int64_t k = 0; k < n; ++k) {
    REQUIRE(a.data()[k] == x.data()[k] + double(k % 17));  // the old b
    REQUIRE(b.data()[k] == x.data()[k] * 2.0);
  }
}

TEST_CASE("fusion: a statement wp::backward pruned is neither bound nor run", "[local][fusion]") {
  // A pruned statement's arrays have no buffers (wp::backward prunes the statements writing
  // gradients nobody needs): binding it for the fused blocks raised "has no buffer" (met in
  // AlexNet's training step, examples/networks/).
  budget_scope bs(512);
  const int64_t n = 3001;
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n}), a("a", {n}), y("y", {n}), b("b", {n}), c("c", {n});
  for (int64_t k = 0; k < n; ++k) {
    x.data()[k] = value<double>(k);
    b.data()[k] = -1.0;
  }
  auto m =
      wp::map("pruned", wp::space(n), a(i) = x(i) + 1.0, b(i) = y(i) * 2.0, c(i) = a(i) * x(i));
  m.prune_statement(1);
  const long before = fused_maps();
  wp::run(m);
  CHECK(fused_maps() - before == 1);
  for (int64_t k = 0; k < n; ++k) {
    REQUIRE(a.data()[k] == x.data()[k] + 1.0);
    REQUIRE(c.data()[k] == (x.data()[k] + 1.0) * x.data()[k]);
    REQUIRE(b.data()[k] == -1.0);  // not run
  }
}

TEST_CASE("fusion: a column sum in a fused map, on one thread and on OpenMP threads",
          "[local][fusion][threads]") {
  auto [i, j] = wp::indices<2>();
  for (const int64_t R : {int64_t(37), int64_t(520)}) {  // 520 x 509 >= 2^18: threads
    const int64_t C = 509;
    INFO(R << " x " << C);
    at_least_threads th(2);
    budget_scope bs(8192);
    wp::array<double, 2> x("x", {R, C}), y("y", {R, C});
    wp::array<double, 1> c("c", {C});
    for (int64_t k = 0; k < R * C; ++k) x.data()[k] = value<double>(k);
    std::fill(c.data(), c.data() + C, 1.5);
    auto m = wp::map("colsum", wp::space(R, C), y(i, j) = x(i, j) * 2.0, c(j) += y(i, j));
    const std::string text = wp::explain_local(m);
    const long before = fused_maps();
    wp::run(m);
    CHECK(fused_maps() - before == 1);
    if (R * C >= (int64_t(1) << 18) && wp::detail::worker_threads() > 1) {
      // c(j) moves along j only: blocks along j, threads over them
      CHECK(text.find("i1 in chunks of") != std::string::npos);
      CHECK(text.find("threads over blocks") != std::string::npos);
    }
    std::vector<double> wc(std::size_t(C), 1.5), wy(std::size_t(R * C));
    double mag = 0;
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) {
        wy[std::size_t(a * C + b)] = x.data()[a * C + b] * 2.0;
        wc[std::size_t(b)] += wy[std::size_t(a * C + b)];
        mag = std::max(mag, std::abs(wy[std::size_t(a * C + b)]));
      }
    REQUIRE(compare(y.data(), wy, 0.0) == "");
    REQUIRE(compare(c.data(), wc, 1e-13 * double(R) * mag) == "");
  }
}

TEST_CASE("fusion: softmax rows on OpenMP threads over blocks", "[local][fusion][threads]") {
  at_least_threads th(2);
  budget_scope bs(16 << 10);
  const int64_t R = 613, L = 515;  // >= 2^18 points
  wp::array<float, 2> x("x", {R, L}), e("e", {R, L}), y("y", {R, L});
  wp::array<float, 1> mx("mx", {R}), s("s", {R});
  for (int64_t k = 0; k < R * L; ++k) x.data()[k] = value<float>(k);
  std::fill(mx.data(), mx.data() + R, -std::numeric_limits<float>::infinity());
  std::fill(s.data(), s.data() + R, 0.0f);
  auto [r, l] = wp::indices<2>();
  auto sm = wp::map("softmax", wp::space(R, L), wp::max_into(mx(r), x(r, l)),
                    e(r, l) = wp::exp(x(r, l) - mx(r)), s(r) += e(r, l), y(r, l) = e(r, l) / s(r));
  const long before = fused_maps(), threaded = wp::detail::counters().threaded_outer.load();
  wp::run(sm);
  CHECK(fused_maps() - before == 1);
  if (wp::detail::worker_threads() > 1)
    CHECK(wp::detail::counters().threaded_outer.load() - threaded == 1);
  std::vector<double> want(std::size_t(R * L));
  for (int64_t a = 0; a < R; ++a) {
    const float* xr = x.data() + a * L;
    float m = -std::numeric_limits<float>::infinity(), t = 0;
    for (int64_t b = 0; b < L; ++b) m = std::max(m, xr[b]);
    for (int64_t b = 0; b < L; ++b) t += std::exp(xr[b] - m);
    for (int64_t b = 0; b < L; ++b) want[std::size_t(a * L + b)] = double(std::exp(xr[b] - m) / t);
  }
  REQUIRE(compare(y.data(), want, 2e-5) == "");
}

TEST_CASE("fusion: data-dependent subscripts and reads of a statement's own output are not fused",
          "[local][fusion]") {
  budget_scope bs(64);
  auto [i] = wp::indices<1>();
  const int64_t n = 2000, bins = 7;
  SECTION("a histogram h(idx(i)) += y(i) after y(i) = 2 x(i)") {
    wp::array<double, 1> x("x", {n}), y("y", {n}), h("h", {bins});
    wp::array<std::int64_t, 1> idx("idx", {n});
    for (int64_t k = 0; k < n; ++k) {
      x.data()[k] = value<double>(k);
      idx.data()[k] = (k * 5) % bins;
    }
    std::fill(h.data(), h.data() + bins, 0.0);
    auto m = wp::map("hist", wp::space(n), y(i) = x(i) * 2.0, h(idx(i)) += y(i));
    CHECK(wp::explain_local(m).find("not fused: a data-dependent subscript") != std::string::npos);
    const long before = fused_maps();
    wp::run(m);
    CHECK(fused_maps() == before);
    std::vector<double> wh(std::size_t(bins), 0.0);
    for (int64_t k = 0; k < n; ++k) wh[std::size_t((k * 5) % bins)] += x.data()[k] * 2.0;
    REQUIRE(compare(h.data(), wh, 1e-12 * double(n)) == "");
  }
  SECTION("two views of one buffer, one written by the first statement, read by the second") {
    std::vector<double> buf(static_cast<std::size_t>(n) + 1, 0.0), out(static_cast<std::size_t>(n));
    for (int64_t k = 0; k <= n; ++k) buf[std::size_t(k)] = value<double>(k);
    // a views buf[0, n), b views buf[1, n + 1): b(i) is a(i + 1)
    wp::array<double, 1> a("a", {n}, buf.data()), b("b", {n}, buf.data() + 1),
        y("y", {n}, out.data());
    std::vector<double> orig(buf);
    auto m = wp::map("views", wp::space(n), a(i) = a(i) * 2.0, y(i) = b(i) + 1.0);
    CHECK(wp::explain_local(m).find("not fused: two of its arrays view overlapping memory") !=
          std::string::npos);
    const long before = fused_maps();
    wp::run(m);
    CHECK(fused_maps() == before);
    for (int64_t k = 0; k < n; ++k) {  // the first statement doubled every a(i) = b(i - 1)
      const double b_k = k + 1 < n ? orig[std::size_t(k + 1)] * 2.0 : orig[std::size_t(n)];
      REQUIRE(out[std::size_t(k)] == b_k + 1.0);
    }
  }
  SECTION("x(i) = y(i) + x(n - 1 - i) after y(i) = x(i) + 1: x is read reversed") {
    std::vector<double> xv(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) xv[std::size_t(k)] = value<double>(k);
    wp::array<double, 1> x("x", {n}, xv.data()), y("y", {n});
    auto m = wp::map("rev", wp::space(n), y(i) = x(i) + 1.0, x(i) = y(i) + x(n - 1 - i));
    CHECK(wp::explain_local(m).find("not fused: a statement reads its own output") !=
          std::string::npos);
    std::vector<double> orig(xv.begin(), xv.end());
    const long before = fused_maps();
    wp::run(m);
    CHECK(fused_maps() == before);
    for (int64_t k = 0; k < n; ++k)  // the second statement reads x as it was before it
      REQUIRE(x.data()[k] == (orig[std::size_t(k)] + 1.0) + orig[std::size_t(n - 1 - k)]);
  }
}
