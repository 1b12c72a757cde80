// Workloads beyond matmul against plain loops: broadcasting, row and column reductions,
// softmax, CSR SpMV, a 1-D convolution, Monte Carlo. tests/unit/test_workloads.cpp has the
// matmul family.

#include "workloads_checks.hpp"

namespace {
template <class T>
void broadcast_add(index_t n0, index_t n1, index_t n2) {
  INFO("space " << n0 << " x " << n1 << " x " << n2);
  wp::array<T, 3> x("x", {n0, n1, n2}), out("out", {n0, n1, n2});
  wp::array<T, 2> y("y", {n1, n2});
  fill_random(x, 81);
  fill_random(y, 82);
  fill_random(out, 83);  // every element is written: old values must not show through
  const auto xs = as_doubles(x), ys = as_doubles(y);
  std::vector<double> want(std::size_t(n0 * n1 * n2));
  for (index_t a = 0; a < n0; ++a)
    for (index_t b = 0; b < n1; ++b)
      for (index_t c = 0; c < n2; ++c)
        want[(a * n1 + b) * n2 + c] = double(T(xs[(a * n1 + b) * n2 + c]) + T(ys[b * n2 + c]));
  auto [i, j, k] = wp::indices<3>();
  auto add = wp::map("add", wp::space(n0, n1, n2), out(i, j, k) = x(i, j, k) + y(j, k));
  CHECK_THAT(wp::explain_local(add), Catch::Contains("loop"));
  wp::run(add);
  check_array(out, want);
}
}  // namespace

TEMPLATE_TEST_CASE("elementwise add with broadcasting out(i, j, k) = x(i, j, k) + y(j, k)",
                   "[workloads][elementwise]", float, double, std::int32_t, std::int64_t) {
  broadcast_add<TestType>(4, 8, 16);
  broadcast_add<TestType>(3, 5, 7);
  broadcast_add<TestType>(41, 31, 29);  // above the threading threshold
}

// ---------------------------------------------------------------- row reductions

TEMPLATE_TEST_CASE("row and column reductions: sum, max and min into 15x13",
                   "[workloads][reduction]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  constexpr index_t R = 15, L = 13;
  wp::array<T, 2> x("x", {R, L});
  fill_random(x, 91, -4.0, 4.0);
  const auto xs = as_doubles(x);
  auto [i, j] = wp::indices<2>();
  constexpr T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                            : std::numeric_limits<T>::lowest();
  constexpr T highest = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                             : std::numeric_limits<T>::max();

  SECTION("out(i) += x(i, j)") {
    wp::array<T, 1> out("out", {R});
    std::vector<double> want(R, 0.0), mag(R, 0.0);
    for (index_t a = 0; a < R; ++a)
      for (index_t b = 0; b < L; ++b) {
        want[a] += xs[a * L + b];
        mag[a] += std::abs(xs[a * L + b]);
      }
    wp::run(wp::map("row_sum", wp::space(R, L), out(i) += x(i, j)));
    check_array(out, want, mag);
  }
  SECTION("out(i) = wp::sum(x(i, wp::all)) and wp::max_of / wp::min_of") {
    wp::array<T, 1> sum("sum", {R}), mx("mx", {R}), mn("mn", {R});
    fill_random(sum, 92);  // plain '=': old values must not show through
    std::vector<double> want_sum(R, 0.0), mag(R, 0.0), want_max(R), want_min(R);
    for (index_t a = 0; a < R; ++a) {
      want_max[a] = want_min[a] = xs[a * L];
      for (index_t b = 0; b < L; ++b) {
        want_sum[a] += xs[a * L + b];
        mag[a] += std::abs(xs[a * L + b]);
        want_max[a] = std::max(want_max[a], xs[a * L + b]);
        want_min[a] = std::min(want_min[a], xs[a * L + b]);
      }
    }
    wp::run(wp::map("row_all", wp::space(R), sum(i) = wp::sum(x(i, wp::all)),
                    mx(i) = wp::max_of(x(i, wp::all)), mn(i) = wp::min_of(x(i, wp::all))));
    check_array(sum, want_sum, mag);
    check_array(mx, want_max);
    check_array(mn, want_min);
  }
  SECTION("out(j) += x(i, j) sums columns") {
    wp::array<T, 1> out("out", {L});
    std::vector<double> want(L, 0.0), mag(L, 0.0);
    for (index_t a = 0; a < R; ++a)
      for (index_t b = 0; b < L; ++b) {
        want[b] += xs[a * L + b];
        mag[b] += std::abs(xs[a * L + b]);
      }
    wp::run(wp::map("col_sum", wp::space(R, L), out(j) += x(i, j)));
    check_array(out, want, mag);
  }
  SECTION("max_into(out(i), x(i, j)) from the lowest value") {
    wp::array<T, 1> out("out", {R});
    std::fill(out.data(), out.data() + R, lowest);
    std::vector<double> want(R, -std::numeric_limits<double>::infinity());
    for (index_t a = 0; a < R; ++a)
      for (index_t b = 0; b < L; ++b) want[a] = std::max(want[a], xs[a * L + b]);
    wp::run(wp::map("row_max", wp::space(R, L), wp::max_into(out(i), x(i, j))));
    check_array(out, want);
  }
  SECTION("max_into keeps a larger old value") {
    wp::array<T, 1> out("out", {R});
    std::fill(out.data(), out.data() + R, T(0));
    out.data()[4] = T(100);
    std::vector<double> want(R, 0.0);
    for (index_t a = 0; a < R; ++a)
      for (index_t b = 0; b < L; ++b) want[a] = std::max(want[a], xs[a * L + b]);
    want[4] = 100.0;
    wp::run(wp::map("row_max0", wp::space(R, L), wp::max_into(out(i), x(i, j))));
    check_array(out, want);
  }
  SECTION("min_into(out(j), x(i, j)) from the highest value") {
    wp::array<T, 1> out("out", {L});
    std::fill(out.data(), out.data() + L, highest);
    std::vector<double> want(L, std::numeric_limits<double>::infinity());
    for (index_t a = 0; a < R; ++a)
      for (index_t b = 0; b < L; ++b) want[b] = std::min(want[b], xs[a * L + b]);
    wp::run(wp::map("col_min", wp::space(R, L), wp::min_into(out(j), x(i, j))));
    check_array(out, want);
  }
  // A rank-0 target stays put along every row: the executor combines whole rows into it.
  SECTION("g() += x(i, j) adds the total to the old value") {
    wp::array<T, 0> g("g", {});
    g.data()[0] = T(3);
    double want = 3.0, mag = 3.0;
    for (const double v : xs) {
      want += v;
      mag += std::abs(v);
    }
    wp::run(wp::map("total", wp::space(R, L), g() += x(i, j)));
    check_array(g, {want}, {mag});
  }
  SECTION("max_into(g(), x(i, j)) and min_into(h(), x(i, j)) over the whole array") {
    wp::array<T, 0> g("g", {}), h("h", {});
    g.data()[0] = lowest;
    h.data()[0] = highest;
    wp::run(wp::map("extremes", wp::space(R, L), wp::max_into(g(), x(i, j)),
                    wp::min_into(h(), x(i, j))));
    check_array(g, {*std::max_element(xs.begin(), xs.end())});
    check_array(h, {*std::min_element(xs.begin(), xs.end())});
  }
  SECTION("max_into(g(), x(i, j)) and min_into(h(), x(i, j)) keep old values that win") {
    wp::array<T, 0> g("g", {}), h("h", {});
    g.data()[0] = T(100);
    h.data()[0] = T(-100);
    wp::run(wp::map("extremes", wp::space(R, L), wp::max_into(g(), x(i, j)),
                    wp::min_into(h(), x(i, j))));
    check_array(g, {100.0});
    check_array(h, {-100.0});
  }
}

// ---------------------------------------------------------------- softmax

namespace {
struct softmax_reference {
  std::vector<double> mx, e, s, y;
};
template <class T>
softmax_reference softmax_of(const std::vector<double>& x, index_t R, index_t L) {
  softmax_reference r;
  r.mx.assign(R, -std::numeric_limits<double>::infinity());
  r.e.assign(R * L, 0.0);
  r.s.assign(R, 0.0);
  r.y.assign(R * L, 0.0);
  for (index_t a = 0; a < R; ++a) {
    for (index_t b = 0; b < L; ++b) r.mx[a] = std::max(r.mx[a], x[a * L + b]);
    for (index_t b = 0; b < L; ++b) {
      r.e[a * L + b] = std::exp(x[a * L + b] - r.mx[a]);
      r.s[a] += r.e[a * L + b];
    }
    for (index_t b = 0; b < L; ++b) r.y[a * L + b] = r.e[a * L + b] / r.s[a];
  }
  return r;
}

template <class T>
struct softmax_arrays {
  static constexpr index_t R = 9, L = 13;
  wp::array<T, 2> x{"x", {R, L}}, e{"e", {R, L}}, y{"y", {R, L}};
  wp::array<T, 1> mx{"mx", {R}}, s{"s", {R}};
  softmax_arrays() {
    fill_random(x, 101, -3.0, 3.0);
    std::fill(mx.data(), mx.data() + R, -std::numeric_limits<T>::infinity());
    std::fill(s.data(), s.data() + R, T(0));
  }
  void check() {
    const auto ref = softmax_of<T>(as_doubles(x), R, L);
    check_array(mx, ref.mx);
    check_array(e, ref.e);
    check_array(s, ref.s);
    check_array(y, ref.y);
    // Each row of the result sums to one.
    double worst = 0.0;
    for (index_t a = 0; a < R; ++a) {
      double t = 0.0;
      for (index_t b = 0; b < L; ++b) t += double(y.data()[a * L + b]);
      worst = std::max(worst, std::abs(t - 1.0));
    }
    CHECK(worst <= 10 * tolerance<T>());
  }
};
}  // namespace

TEMPLATE_TEST_CASE("softmax over the rows of 9x13", "[workloads][softmax]", float, double) {
  using T = TestType;
  constexpr index_t R = softmax_arrays<T>::R, L = softmax_arrays<T>::L;
  auto [i, j] = wp::indices<2>();

  SECTION("as a program of four maps") {
    softmax_arrays<T> a;
    auto m1 = wp::map("max", wp::space(R, L), wp::max_into(a.mx(i), a.x(i, j)));
    auto m2 = wp::map("exp", wp::space(R, L), a.e(i, j) = wp::exp(a.x(i, j) - a.mx(i)));
    auto m3 = wp::map("sum", wp::space(R, L), a.s(i) += a.e(i, j));
    auto m4 = wp::map("norm", wp::space(R, L), a.y(i, j) = a.e(i, j) / a.s(i));
    wp::run(wp::program(m1, m2, m3, m4));
    a.check();
  }
  SECTION("as one map of four statements, run in order") {
    softmax_arrays<T> a;
    auto sm = wp::map("softmax", wp::space(R, L), wp::max_into(a.mx(i), a.x(i, j)),
                      a.e(i, j) = wp::exp(a.x(i, j) - a.mx(i)), a.s(i) += a.e(i, j),
                      a.y(i, j) = a.e(i, j) / a.s(i));
    const std::string text = wp::explain_local(sm);
    INFO(text);
    CHECK_THAT(text, Catch::Contains("max_into") && Catch::Contains("exp"));
    wp::run(sm);
    a.check();
  }
  SECTION("fused into one statement with wp::max_of and wp::sum over wp::all") {
    softmax_arrays<T> a;
    auto sm = wp::map("softmax_fused", wp::space(R, L),
                      a.y(i, j) = wp::exp(a.x(i, j) - wp::max_of(a.x(i, wp::all))) /
                                  wp::sum(wp::exp(a.x(i, wp::all) - wp::max_of(a.x(i, wp::all)))));
    wp::run(sm);
    const auto ref = softmax_of<T>(as_doubles(a.x), R, L);
    check_array(a.y, ref.y);
  }
  SECTION("as a program of a reduction map and a map of the rest") {
    softmax_arrays<T> a;
    auto m1 = wp::map("max", wp::space(R, L), wp::max_into(a.mx(i), a.x(i, j)),
                      a.e(i, j) = wp::exp(a.x(i, j) - a.mx(i)), a.s(i) += a.e(i, j));
    auto m2 = wp::map("norm", wp::space(R, L), a.y(i, j) = a.e(i, j) / a.s(i));
    wp::run(wp::program(m1, m2));
    a.check();
  }
}

// ---------------------------------------------------------------- CSR SpMV

namespace {
template <class I, class V>
struct csr_types {
  using index_type = I;
  using value_type = V;
};

/// A random CSR matrix with some rows empty (fixed seed).
template <class I>
struct csr_pattern {
  std::vector<I> row, col;
  std::vector<double> val;
};
template <class I>
csr_pattern<I> random_csr(index_t rows, index_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0), p(0.0, 1.0);
  csr_pattern<I> c;
  c.row.push_back(0);
  for (index_t r = 0; r < rows; ++r) {
    const bool empty = r == 0 || r == 7 || r == 8 || r == rows - 1 || p(rng) < 0.15;
    for (index_t q = 0; q < cols && !empty; ++q)
      if (p(rng) < 0.2 || q == (r * 5) % cols) {
        c.col.push_back(static_cast<I>(q));
        c.val.push_back(d(rng));
      }
    c.row.push_back(static_cast<I>(c.col.size()));
  }
  return c;
}
}  // namespace

TEMPLATE_TEST_CASE("CSR SpMV y(i) = sum(range(jj, row(i), row(i + 1)), val(jj) * x(col(jj)))",
                   "[workloads][spmv]", (csr_types<std::int32_t, double>),
                   (csr_types<std::int64_t, double>), (csr_types<std::int32_t, float>),
                   (csr_types<std::int64_t, float>)) {
  using I = typename TestType::index_type;
  using V = typename TestType::value_type;
  constexpr index_t rows = 40, cols = 31;
  const auto c = random_csr<I>(rows, cols, 2024);
  const index_t nnz = index_t(c.col.size());
  REQUIRE(nnz > 0);
  REQUIRE(c.row[1] == c.row[0]);            // row 0 is empty
  REQUIRE(c.row[rows] == c.row[rows - 1]);  // so is the last row

  wp::array<I, 1> row("row", {rows + 1}), col("col", {nnz});
  wp::array<V, 1> val("val", {nnz}), x("x", {cols}), y("y", {rows});
  std::copy(c.row.begin(), c.row.end(), row.data());
  std::copy(c.col.begin(), c.col.end(), col.data());
  for (index_t q = 0; q < nnz; ++q) val.data()[q] = V(c.val[q]);
  fill_random(x, 111);
  fill_random(y, 112);  // plain '=': the old values must be overwritten, empty rows with 0

  std::vector<double> want(rows, 0.0), mag(rows, 0.0);
  for (index_t r = 0; r < rows; ++r)
    for (index_t q = index_t(c.row[r]); q < index_t(c.row[r + 1]); ++q) {
      want[r] += double(val.data()[q]) * double(x.data()[c.col[q]]);
      mag[r] += std::abs(double(val.data()[q]) * double(x.data()[c.col[q]]));
    }

  auto [i, jj] = wp::indices<2>();
  auto spmv = wp::map("spmv", wp::space(rows),
                      y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj))));
  wp::run(spmv);
  check_array(y, want, mag);

  SECTION("a column index outside x is a wp::error, not an out-of-bounds read") {
    col.data()[nnz / 2] = static_cast<I>(cols);
    try {
      wp::run(spmv);
      FAIL("wp::run read x at " << cols << " without an error");
    } catch (const wp::error& err) {
      INFO(err.what());
      CHECK_THAT(std::string(err.what()), Catch::Contains("spmv") && Catch::Contains("'x'") &&
                                              Catch::Contains(std::to_string(cols)));
    }
  }
}

// ---------------------------------------------------------------- 1-D convolution

TEMPLATE_TEST_CASE("1-D convolution out(i) = sum(range(r, 0, R), w(r) * x(i + r)), n = 50, R = 5",
                   "[workloads][convolution]", float, double) {
  using T = TestType;
  constexpr index_t n = 50, R = 5, n_out = n - R + 1;
  wp::array<T, 1> x("x", {n}), w("w", {R}), out("out", {n_out});
  fill_random(x, 121);
  fill_random(w, 122);
  fill_random(out, 123);
  const auto xs = as_doubles(x), ws = as_doubles(w);
  std::vector<double> want(n_out, 0.0), mag(n_out, 0.0);
  for (index_t a = 0; a < n_out; ++a)
    for (index_t r = 0; r < R; ++r) {
      want[a] += ws[r] * xs[a + r];
      mag[a] += std::abs(ws[r] * xs[a + r]);
    }
  auto [i, r] = wp::indices<2>();
  wp::run(wp::map("conv", wp::space(n_out), out(i) = wp::sum(wp::range(r, 0, R), w(r) * x(i + r))));
  check_array(out, want, mag);

  SECTION("a space whose window leaves x is rejected when the map is built") {
    wp::array<T, 1> big("big", {n});
    try {
      auto m = wp::map("conv_too_long", wp::space(n),
                       big(i) = wp::sum(wp::range(r, 0, R), w(r) * x(i + r)));
      FAIL("the map was built: " << m.str());
    } catch (const wp::error& err) {
      INFO(err.what());
      CHECK_THAT(std::string(err.what()), Catch::Contains("conv_too_long") &&
                                              Catch::Contains("'x'") && Catch::Contains("53"));
    }
  }
}

// ---------------------------------------------------------------- Monte Carlo

namespace {
// A deterministic hash of the sample number s, written once as plain integers (the reference)
// and once as an expression of wp::val(s) (below); no step overflows std::int64_t for s < 1e6.
constexpr std::int64_t P = 65521, Q = 65536;
std::int64_t mod(std::int64_t a, std::int64_t m) { return a - (a / m) * m; }
std::int64_t hash_u(std::int64_t s) { return mod(mod(s * s, P) * 40503 + s * 69069 + 12345, Q); }
std::int64_t hash_v(std::int64_t s) { return mod(mod(s * 7919 + 17, P) * 30011 + s, Q); }
bool hit(std::int64_t s) {
  const double u = double(hash_u(s)) / double(Q), v = double(hash_v(s)) / double(Q);
  return u * u + v * v < 1.0;
}

template <class S>
auto expr_mod(const S& a, std::int64_t m) {
  return a - (a / m) * m;
}
/// The same hash and test as hit(), as an expression of the sample coordinate `s` (an int64
/// expression).
template <class S>
auto hit_expr(const S& s) {
  const auto u = expr_mod(
      expr_mod(s * s, P) * std::int64_t(40503) + s * std::int64_t(69069) + std::int64_t(12345), Q);
  const auto v =
      expr_mod(expr_mod(s * std::int64_t(7919) + std::int64_t(17), P) * std::int64_t(30011) + s, Q);
  const auto fu = u / double(Q);
  const auto fv = v / double(Q);
  return wp::select(fu * fu + fv * fv < 1.0, 1, 0);
}
}  // namespace

TEST_CASE("Monte Carlo over 100000 samples counts hits exactly", "[workloads][montecarlo]") {
  constexpr index_t samples = 100000;
  std::int64_t want = 0;
  for (std::int64_t s = 0; s < samples; ++s) want += hit(s) ? 1 : 0;
  // The hash is not degenerate: about pi/4 of the points fall inside the quarter circle.
  REQUIRE(want > 75000);
  REQUIRE(want < 82000);

  SECTION("into a rank-0 accumulator") {
    wp::array<std::int64_t, 0> hits("hits", {});
    auto [s] = wp::indices<1>();
    wp::run(wp::map("mc", wp::space(samples), hits() += hit_expr(wp::val(s))));
    CHECK(hits.data()[0] == want);
  }
  SECTION("into a rank-0 accumulator that already holds a count") {
    wp::array<std::int64_t, 0> hits("hits", {});
    hits.data()[0] = 1000;
    auto [s] = wp::indices<1>();
    wp::run(wp::map("mc", wp::space(samples), hits() += hit_expr(wp::val(s))));
    CHECK(hits.data()[0] == want + 1000);
  }
  SECTION("into element 0 of a rank-1 accumulator") {
    wp::array<std::int64_t, 1> hits("hits", {1});
    auto [s] = wp::indices<1>();
    wp::run(wp::map("mc", wp::space(samples), hits(0) += hit_expr(wp::val(s))));
    CHECK(hits.data()[0] == want);
  }
  SECTION("into one counter per block of a 4 x 25000 space") {
    constexpr index_t blocks = 4, per = samples / blocks;
    std::vector<std::int64_t> want_b(blocks, 0);
    for (std::int64_t s = 0; s < samples; ++s) want_b[s / per] += hit(s) ? 1 : 0;
    wp::array<std::int64_t, 1> hits("hits", {blocks});
    auto [b, s] = wp::indices<2>();
    wp::run(wp::map("mc_blocks", wp::space(blocks, per),
                    hits(b) += hit_expr(wp::val(b) * per + wp::val(s))));
    const std::vector<std::int64_t> got(hits.data(), hits.data() + blocks);
    CHECK(got == want_b);
  }
}
