/// \file test_limits.cpp
/// Regression tests for the defects of issue 12 that show on one process (wp::run and the
/// map's own checks). Each test case names its defect; each failed before the fix.
/// Results are compared with plain loops written here.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>

#include "../error_text.hpp"

#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace wp = workpart;
using Catch::Contains;
using wp::index_t;

namespace {

/// Brute force: does the left side a*i + b*j (+ c*k) send two points of the box to one
/// element? Counted with a set, independently of the library's algebra.
bool brute_force_race(const std::vector<std::vector<index_t>>& coef,
                      const std::vector<index_t>& ext) {
  std::set<std::vector<index_t>> seen;
  std::vector<index_t> pt(ext.size(), 0);
  for (index_t e : ext)
    if (e == 0) return false;
  for (;;) {
    std::vector<index_t> el;
    for (const auto& row : coef) {
      index_t v = 0;
      for (std::size_t d = 0; d < ext.size(); ++d) v += row[d] * pt[d];
      el.push_back(v);
    }
    if (!seen.insert(el).second) return true;
    int d = int(ext.size()) - 1;
    for (; d >= 0; --d) {
      if (++pt[d] < ext[d]) break;
      pt[d] = 0;
    }
    if (d < 0) return false;
  }
}

}  // namespace

TEST_CASE("a threaded 1-D map reads no lo/hi beyond the space's rank", "[robustness]") {
  // 300007 points >= 2^18 with 2 threads: the rows are split over threads. The copy of the
  // space's bounds used to read max_dims values from space<1>::lo.data() (ASan: stack overflow).
#if defined(_OPENMP)
  omp_set_num_threads(2);
#endif
  auto [i] = wp::indices<1>();
  constexpr index_t n = 300007;
  wp::array<double, 1> x("x", {n}), y("y", {n});
  for (index_t a = 0; a < n; ++a) x.data()[a] = double(a % 1000) - 3.5;
  const long rows0 = wp::detail::counters().threaded_rows.load();
  wp::run(wp::map("twice", wp::space(n), y(i) = x(i) * 2.0));
  index_t bad = 0;
  for (index_t a = 0; a < n; ++a) bad += y.data()[a] != (double(a % 1000) - 3.5) * 2.0;
  REQUIRE(bad == 0);
#if defined(_OPENMP)
  REQUIRE(wp::detail::counters().threaded_rows.load() - rows0 == 1);
#endif
}

TEST_CASE("subscripts whose extremes overflow 64 bits are refused, not wrapped", "[robustness]") {
  auto [i, j] = wp::indices<2>();
  wp::array<double, 1> x("x", {16}), y("y", {4}), y0("y0", {1});
  SECTION("2^44 * i + j over 2^20 x 2^20: the largest subscript is about 2^64") {
    const std::string msg = what_of([&] {
      wp::map("wide", wp::space(index_t(1) << 20, index_t(1) << 20),
              y0(0) += x((std::int64_t(1) << 44) * i + j));
    });
    REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("'wide'") && Contains("'x'") &&
                          Contains("18446726481524555775"));  // (2^20-1) * 2^44 + 2^20 - 1, exactly
  }
  SECTION("2^62 * i over 4 points") {
    const std::string msg =
        what_of([&] { wp::map("huge", wp::space(4), y(i) = x((std::int64_t(1) << 62) * i)); });
    REQUIRE_THAT(
        msg, Contains("[workpart.shape_error]") && Contains("13835058055282163712"));  // 3 * 2^62
    REQUIRE(y.data()[0] == 0.0);  // nothing ran
  }
  SECTION("i + INT64_MAX - 1 over 3 points") {
    const std::string msg = what_of([&] {
      wp::map("edge", wp::space(3), y(i) = x(i + std::numeric_limits<std::int64_t>::max() - 1));
    });
    REQUIRE_THAT(msg,
                 Contains("[workpart.shape_error]") && Contains("9223372036854775808"));  // 2^63
  }
  SECTION("an affine form whose own offset overflows") {
    const std::string msg =
        what_of([&] { wp::map("off", wp::space(3), y(i) = x((std::int64_t(1) << 62) * (i + 4))); });
    REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("overflows 64 bits"));
  }
}

TEST_CASE("a space whose point count overflows is refused", "[robustness]") {
  auto [i, j, k] = wp::indices<3>();
  REQUIRE_THROWS_AS(wp::space(index_t(1) << 32, index_t(1) << 32, 1), wp::shape_error);
  REQUIRE_THROWS_AS(wp::space(wp::bounds{std::numeric_limits<index_t>::min() / 2,
                                         std::numeric_limits<index_t>::max() / 2 + 2}),
                    wp::shape_error);
  wp::array<double, 2> A("A", {2, 1}), B("B", {1, 2}), C("C", {2, 2});
  const std::string msg = what_of([&] {
    wp::run(wp::map("gemm", wp::space(index_t(1) << 32, index_t(1) << 32, 1),
                    C(i, j) += A(i, k) * B(k, j)));
  });
  REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("2^63 - 1 points"));
  // the largest space that fits is still a space
  REQUIRE(wp::space(index_t(1) << 31, index_t(1) << 31, 1).points() == index_t(1) << 62);
  REQUIRE_THROWS_AS(wp::space(index_t(1) << 31, index_t(1) << 31, 2), wp::shape_error);  // 2^63
}

TEST_CASE("an array whose size overflows is refused", "[robustness]") {
  const std::string msg = what_of([] { wp::array<double, 2> A("A", {(index_t(1) << 62) + 1, 4}); });
  REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("'A'"));
  // more bytes than a 64-bit byte count holds, though the element count fits
  REQUIRE_THROWS_AS((wp::array<double, 1>("B", {index_t(1) << 61})), wp::shape_error);
  REQUIRE_NOTHROW((wp::array<float, 1>("C", {index_t(1) << 60})));  // never allocated
  // the write that used to overflow the heap cannot be built
  auto write_into_huge = [] {
    auto [i, j] = wp::indices<2>();
    wp::array<double, 2> A("A", {(index_t(1) << 62) + 1, 4});
    wp::run(wp::map("fill", wp::space(3, 4), A(i, j) = 1.0));
  };
  REQUIRE_THROWS_AS(write_into_huge(), wp::shape_error);
}

TEST_CASE("the race check of a plain '=' is exact at any size", "[robustness]") {
  auto [i, j, k] = wp::indices<3>();
  SECTION("y(c * i) = x(i) with c = 0 over 2^23 points") {
    const index_t n = index_t(1) << 23;
    wp::array<float, 1> x("x", {n}), y("y", {1});
    const std::int64_t c = 0;
    const std::string msg = what_of([&] { wp::map("zero", wp::space(n), y(c * i) = x(i)); });
    REQUIRE_THAT(msg, Contains("[workpart.shape_error]") && Contains("'zero'") &&
                          Contains("a race") && Contains("(0) and (1) both write y(0)"));
  }
  SECTION("a large injective left side is accepted, a large colliding one refused") {
    const index_t n = index_t(1) << 12;
    wp::array<float, 1> y("y", {n * n});
    wp::array<float, 2> x("x", {n, n});
    const std::int64_t s = n, t = n - 1;
    REQUIRE_NOTHROW(wp::map("rows", wp::space(n, n), y(s * i + j) = x(i, j)));
    // s = n - 1: point (1, 0) and (0, n - 1) both write element n - 1
    const std::string msg =
        what_of([&] { wp::map("fold", wp::space(n, n), y(t * i + j) = x(i, j)); });
    REQUIRE_THAT(msg, Contains("a race") && Contains("both write y("));
  }
  SECTION("agrees with brute force on every small left side") {
    // Rank-1 and rank-2 left sides over 2-D and 3-D spaces, coefficients in [-3, 3].
    std::mt19937 gen(12);
    std::uniform_int_distribution<int> cd(-3, 3), ed(1, 4);
    int races = 0, fine = 0;
    for (int trial = 0; trial < 300; ++trial) {
      const std::int64_t a = cd(gen), b = cd(gen), c = cd(gen), d = cd(gen), e = cd(gen),
                         f = cd(gen);
      const index_t e0 = ed(gen), e1 = ed(gen), e2 = ed(gen);
      INFO("trial " << trial << ": " << a << " " << b << " " << c << " / " << d << " " << e << " "
                    << f << " over " << e0 << "x" << e1 << "x" << e2);
      // shift the subscripts into [0, extent): offsets make every element non-negative
      const std::int64_t o1 = 3 * (e0 + e1 + e2), o2 = o1;
      wp::array<float, 1> y1("y1", {2 * o1 + 1});
      wp::array<float, 2> y2("y2", {2 * o1 + 1, 2 * o2 + 1});
      wp::array<float, 3> x("x", {e0, e1, e2});
      const bool want1 = brute_force_race({{a, b, c}}, {e0, e1, e2});
      const bool got1 =
          !what_of([&] {
             wp::map("one", wp::space(e0, e1, e2), y1(a * i + b * j + c * k + o1) = x(i, j, k));
           }).empty();
      REQUIRE(got1 == want1);
      const bool want2 = brute_force_race({{a, b, c}, {d, e, f}}, {e0, e1, e2});
      const bool got2 =
          !what_of([&] {
             wp::map("two", wp::space(e0, e1, e2),
                     y2(a * i + b * j + c * k + o1, d * i + e * j + f * k + o2) = x(i, j, k));
           }).empty();
      REQUIRE(got2 == want2);
      (want1 ? races : fine) += 1;
    }
    REQUIRE(races > 20);
    REQUIRE(fine > 20);
  }
}

TEST_CASE("max and min propagate NaN, on one process", "[robustness]") {
  auto [i, j] = wp::indices<2>();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  wp::array<double, 2> x("x", {3, 4});
  wp::array<double, 1> m("m", {3}), r("r", {3}), lo("lo", {3});
  for (index_t a = 0; a < 12; ++a) x.data()[a] = double(a % 5);
  x.data()[1 * 4 + 2] = nan;                                  // row 1 holds one NaN
  for (index_t b = 0; b < 4; ++b) x.data()[2 * 4 + b] = nan;  // row 2 is all NaN
  m.data()[0] = nan;                                          // an old value NaN
  m.data()[1] = 1.0;
  m.data()[2] = 1.0;
  lo.data()[0] = nan;
  wp::run(wp::map("rowmax", wp::space(3, 4), wp::max_into(m(i), x(i, j)),
                  wp::min_into(lo(i), x(i, j))));
  wp::run(wp::map("maxof", wp::space(3), r(i) = wp::max_of(x(i, wp::all))));
  for (index_t a = 0; a < 3; ++a) {
    INFO("row " << a);
    REQUIRE(std::isnan(m.data()[a]));  // old NaN, one NaN, all NaN
    REQUIRE(std::isnan(lo.data()[a]));
  }
  REQUIRE(r.data()[0] == 3.0);
  REQUIRE(std::isnan(r.data()[1]));
  REQUIRE(std::isnan(r.data()[2]));  // max_of of an all-NaN row is NaN, not -inf
  // wp::max / wp::min in expressions follow the same rule, whichever side the NaN is on
  wp::array<double, 1> u("u", {2}), v("v", {2}), w("w", {2});
  u.data()[0] = nan, u.data()[1] = 1.0;
  v.data()[0] = 1.0, v.data()[1] = nan;
  auto [k] = wp::indices<1>();
  wp::run(wp::map("mx", wp::space(2), w(k) = wp::max(u(k), v(k)) + wp::min(v(k), u(k))));
  REQUIRE(std::isnan(w.data()[0]));
  REQUIRE(std::isnan(w.data()[1]));
}

TEST_CASE("a statement reading its own output snapshots only the box it reads", "[robustness]") {
  // A view of 2^32 floats (16 GiB of address space, never touched but for a sliver): the
  // snapshot used to copy the whole array (bad_alloc, or 16 GiB of copying).
  const std::size_t n = std::size_t(1) << 32;
  void* mem = mmap(nullptr, n * sizeof(float), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    WARN("mmap of 16 GiB (no reserve) failed here; the sliver is checked on a small array only");
  }
  auto [i] = wp::indices<1>();
  auto check = [&](float* p, index_t size) {
    wp::array<float, 1> x("x", {size}, p);
    for (index_t a = 0; a < 12; ++a) p[a] = float(a);
    const long snap0 = wp::detail::counters().snapshot_elements.load();
    // x(i) = x(i + 1) * 2 over 10 points reads x[1, 11): an 10-element snapshot
    wp::run(wp::map("shift", wp::space(10), x(i) = x(i + 1) * 2.0f));
    REQUIRE(wp::detail::counters().snapshot_elements.load() - snap0 == 10);
    for (index_t a = 0; a < 10; ++a) REQUIRE(p[a] == float(a + 1) * 2.0f);  // old values read
    REQUIRE(p[10] == 10.0f);
  };
  std::vector<float> small(1000);
  check(small.data(), 1000);
  if (mem != MAP_FAILED) {
    check(static_cast<float*>(mem), index_t(n));
    munmap(mem, n * sizeof(float));
  }
}

TEST_CASE("long long arrays work, and the element types are documented", "[robustness]") {
  STATIC_REQUIRE(wp::detail::element_type<long long>);
  STATIC_REQUIRE(wp::detail::element_type<std::int64_t>);
  STATIC_REQUIRE(!wp::detail::element_type<short>);
  auto [i] = wp::indices<1>();
  wp::array<long long, 1> a("a", {5}), b("b", {5});
  for (int e = 0; e < 5; ++e) a.data()[e] = (1LL << 40) + e;
  wp::run(wp::map("ll", wp::space(5), b(i) = a(i) * 3LL + a(4 - i)));
  for (int e = 0; e < 5; ++e) REQUIRE(b.data()[e] == ((1LL << 40) + e) * 3 + (1LL << 40) + (4 - e));
}
