/// \file test_gemm_packed.cpp
/// Contractions beyond plain subscripts run as GEMMs (exec/contraction_affine.hpp,
/// exec/cpu/gemm_packed.hpp): convolutions with channels written as nested wp::sum ranges or
/// as `+=` over the extended space, the input packed as a matrix (im2col) on either side of
/// the product, true convolutions (negative coefficients), an output whose channel axis is
/// innermost, matrix products written as sums over a range or over wp::all, empty ranges,
/// packed blocks far smaller than a matrix, the three maps of a grouped, strided, padded
/// convolution layer (its forward with a padded input packed, its weight gradient, its input
/// gradient added from a buffer), and the forms that stay loops. Every result is compared
/// with a nested loop written here; the counters show which path ran.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace {

template <class T>
T value_at(index_t k, index_t salt) {
  return static_cast<T>(double((k * 7 + salt * 5) % 17 - 8) * 0.25);
}

template <class T, int R>
std::vector<T> fill(wp::array<T, R>& a, index_t salt) {
  for (index_t k = 0; k < a.size(); ++k) a.data()[k] = value_at<T>(k, salt);
  return std::vector<T>(a.data(), a.data() + a.size());
}

template <class T, int R>
void set_all(wp::array<T, R>& a, T v) {
  for (index_t k = 0; k < a.size(); ++k) a.data()[k] = v;
}

/// got == want elementwise (relative to the largest |want|: a GEMM sums in another order).
template <class T, int R>
void require_close(const wp::array<T, R>& got, const std::vector<double>& want) {
  REQUIRE(index_t(want.size()) == got.size());
  double scale = 1;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  const double tol = std::is_same_v<T, float> ? 2e-5 : std::is_floating_point_v<T> ? 1e-12 : 0;
  for (index_t k = 0; k < got.size(); ++k) {
    INFO("element " << k << ": got " << double(got.data()[k]) << ", want " << want[k]);
    REQUIRE(std::fabs(double(got.data()[k]) - want[k]) <= tol * scale);
  }
}

struct path_counts {
  long gemms = wp::detail::counters().gemm_calls.load();
  long packed = wp::detail::counters().packed_elements.load();
  long loops = wp::detail::counters().loop_statements.load();
  long unpacked = wp::detail::counters().unpacked_elements.load();
  long gemms_since() const { return wp::detail::counters().gemm_calls.load() - gemms; }
  long packed_since() const { return wp::detail::counters().packed_elements.load() - packed; }
  long loops_since() const { return wp::detail::counters().loop_statements.load() - loops; }
  long unpacked_since() const { return wp::detail::counters().unpacked_elements.load() - unpacked; }
};

/// A small budget for the packed operand: many blocks, rows split between them.
struct budget_scope {
  std::size_t saved = wp::detail::packed_operand_budget_bytes();
  explicit budget_scope(std::size_t bytes) { wp::detail::packed_operand_budget_bytes() = bytes; }
  ~budget_scope() { wp::detail::packed_operand_budget_bytes() = saved; }
};

/// out(n, k, y, x) = sum_c,r,s w(k, c, r, s) in(n, c, y + r, x + s) (valid), by plain loops.
template <class T>
std::vector<double> conv_ref(const std::vector<T>& in, const std::vector<T>& w, index_t N,
                             index_t C, index_t K, index_t H, index_t W, index_t R, index_t S) {
  const index_t OH = H - R + 1, OW = W - S + 1;
  std::vector<double> out(static_cast<std::size_t>(N * K * OH * OW));
  for (index_t n = 0; n < N; ++n)
    for (index_t k = 0; k < K; ++k)
      for (index_t y = 0; y < OH; ++y)
        for (index_t x = 0; x < OW; ++x) {
          double a = 0;
          for (index_t c = 0; c < C; ++c)
            for (index_t r = 0; r < R; ++r)
              for (index_t s = 0; s < S; ++s)
                a += double(w[std::size_t(((k * C + c) * R + r) * S + s)]) *
                     double(in[std::size_t(((n * C + c) * H + y + r) * W + x + s)]);
          out[std::size_t(((n * K + k) * OH + y) * OW + x)] = a;
        }
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("packed gemm: 2-D convolution with channels as nested sums and as +=",
                   "[local][gemm][packed]", float, double) {
  using T = TestType;
  // Uneven extents, a 3 x 2 filter; the output starts full of 7s (`=` overwrites them).
  constexpr index_t N = 2, C = 5, K = 9, H = 11, W = 13, R = 3, S = 2;
  constexpr index_t OH = H - R + 1, OW = W - S + 1;
  wp::array<T, 4> in("in", {N, C, H, W}), w("w", {K, C, R, S}), out("out", {N, K, OH, OW}),
      acc("acc", {N, K, OH, OW});
  const auto iv = fill(in, 1), wv = fill(w, 2);
  const auto want = conv_ref(iv, wv, N, C, K, H, W, R, S);
  auto [n, k, y, x, c, r, s] = wp::indices<7>();
  auto nested =
      wp::map("conv", wp::space(N, K, OH, OW),
              out(n, k, y, x) = wp::sum(
                  wp::range(c, 0, C),
                  wp::sum(wp::range(r, 0, R),
                          wp::sum(wp::range(s, 0, S), w(k, c, r, s) * in(n, c, y + r, x + s)))));
  const std::string text = wp::explain_local(nested);
  INFO(text);
  REQUIRE(text.find("gemm: C[i1 x (i0,i2,i3)] += A[i1 x (i4,i5,i6)]") != std::string::npos);
  REQUIRE(text.find("B packed as a matrix (im2col)") != std::string::npos);
  REQUIRE(text.find("`=` over the sums: C overwritten by the GEMM") != std::string::npos);

  SECTION("nested sums, one block per image and blocks of a few columns") {
    for (std::size_t budget : {std::size_t(16) << 20, std::size_t(5 * C * R * S * sizeof(T))}) {
      INFO("packed budget " << budget << " bytes");
      budget_scope b(budget);
      set_all(out, T(7));
      const path_counts before;
      wp::run(nested);
      require_close(out, want);
      REQUIRE(before.gemms_since() >= N);
      REQUIRE(before.packed_since() == N * C * R * S * OH * OW);  // each image's matrix, once
      REQUIRE(before.loops_since() == 0);
    }
  }
  SECTION("+= over the space extended by the channel and filter indices adds to what is there") {
    set_all(acc, T(1));
    const path_counts before;
    wp::run(wp::map("conv_acc", wp::space(N, K, OH, OW, C, R, S),
                    acc(n, k, y, x) += w(k, c, r, s) * in(n, c, y + r, x + s)));
    std::vector<double> want1 = want;
    for (double& v : want1) v += 1;
    require_close(acc, want1);
    REQUIRE(before.packed_since() > 0);
    REQUIRE(before.loops_since() == 0);
  }
  SECTION("weights laid out (c, k, r, s): the channel index is left to a loop, C zeroed first") {
    wp::array<T, 4> wc("wc", {C, K, R, S});
    for (index_t q = 0; q < C; ++q)
      for (index_t kk = 0; kk < K; ++kk)
        for (index_t rr = 0; rr < R; ++rr)
          for (index_t ss = 0; ss < S; ++ss)
            wc.data()[((q * K + kk) * R + rr) * S + ss] =
                wv[std::size_t(((kk * C + q) * R + rr) * S + ss)];
    set_all(out, T(7));
    const path_counts before;
    wp::run(wp::map(
        "conv_ckrs", wp::space(N, K, OH, OW),
        out(n, k, y, x) = wp::sum(
            wp::range(c, 0, C),
            wp::sum(wp::range(r, 0, R),
                    wp::sum(wp::range(s, 0, S), wc(c, k, r, s) * in(n, c, y + r, x + s))))));
    require_close(out, want);
    REQUIRE(before.gemms_since() == N * C);  // one GEMM per image and channel
    REQUIRE(before.loops_since() == 0);
  }
  SECTION("the input on the left of the product, scaled: A is packed, in blocks of rows") {
    budget_scope b(7 * C * R * S * sizeof(T));
    const path_counts before;
    wp::run(wp::map("conv_swapped", wp::space(N, K, OH, OW),
                    out(n, k, y, x) = wp::sum(
                        wp::range(c, 0, C),
                        wp::sum(wp::range(r, 0, R),
                                wp::sum(wp::range(s, 0, S),
                                        T(0.5) * (in(n, c, y + r, x + s) * w(k, c, r, s)))))));
    std::vector<double> half = want;
    for (double& v : half) v *= 0.5;
    require_close(out, half);
    REQUIRE(before.packed_since() == N * C * R * S * OH * OW);
    REQUIRE(before.loops_since() == 0);
  }
}

TEMPLATE_TEST_CASE("packed gemm: a true convolution (reversed filter) into channels-last output",
                   "[local][gemm][packed]", float, double) {
  using T = TestType;
  // o(n, y, x, k) = sum_c,r,s w(k, c, r, s) in(n, c, y + 2 - r, x + 1 - s): negative
  // coefficients, and C's m axis (k) innermost, so C is column-major for the GEMM.
  constexpr index_t N = 3, C = 4, K = 10, H = 9, W = 8, R = 3, S = 2;
  constexpr index_t OH = H - R + 1, OW = W - S + 1;
  wp::array<T, 4> in("in", {N, C, H, W}), w("w", {K, C, R, S}), o("o", {N, OH, OW, K});
  const auto iv = fill(in, 3), wv = fill(w, 4);
  std::vector<double> want(static_cast<std::size_t>(N * OH * OW * K));
  for (index_t b = 0; b < N; ++b)
    for (index_t yy = 0; yy < OH; ++yy)
      for (index_t xx = 0; xx < OW; ++xx)
        for (index_t kk = 0; kk < K; ++kk) {
          double a = 0;
          for (index_t cc = 0; cc < C; ++cc)
            for (index_t rr = 0; rr < R; ++rr)
              for (index_t ss = 0; ss < S; ++ss)
                a += double(wv[std::size_t(((kk * C + cc) * R + rr) * S + ss)]) *
                     double(iv[std::size_t(((b * C + cc) * H + yy + 2 - rr) * W + xx + 1 - ss)]);
          want[std::size_t(((b * OH + yy) * OW + xx) * K + kk)] = a;
        }
  auto [n, y, x, k, c, r, s] = wp::indices<7>();
  set_all(o, T(-3));
  const path_counts before;
  wp::run(wp::map(
      "true_conv", wp::space(N, OH, OW, K),
      o(n, y, x, k) = wp::sum(
          wp::range(c, 0, C),
          wp::sum(wp::range(r, 0, R),
                  wp::sum(wp::range(s, 0, S), w(k, c, r, s) * in(n, c, y + 2 - r, x + 1 - s))))));
  require_close(o, want);
  REQUIRE(before.packed_since() > 0);
  REQUIRE(before.loops_since() == 0);
}

TEMPLATE_TEST_CASE("packed gemm: matrix products written as sums over a range or over wp::all",
                   "[local][gemm]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  constexpr index_t M = 7, K = 11, N = 5;
  wp::array<T, 2> a("a", {M, K}), b("b", {K, N}), c1("c1", {M, N}), c2("c2", {M, N}),
      c3("c3", {M, N});
  const auto av = fill(a, 5), bv = fill(b, 6);
  std::vector<double> want(static_cast<std::size_t>(M * N)), want3(want.size());
  for (index_t i = 0; i < M; ++i)
    for (index_t j = 0; j < N; ++j) {
      double t = 0, t3 = 0;
      for (index_t q = 0; q < K; ++q) {
        t += double(av[std::size_t(i * K + q)]) * double(bv[std::size_t(q * N + j)]);
        if (q >= 2 && q < 9)
          t3 += double(av[std::size_t(i * K + q)]) * double(bv[std::size_t(q * N + j)]);
      }
      want[std::size_t(i * N + j)] = t;
      want3[std::size_t(i * N + j)] = 3 * t3 + 1;
    }
  auto [i, j, q] = wp::indices<3>();
  set_all(c1, T(9));
  set_all(c2, T(9));
  set_all(c3, T(1));
  const path_counts before;
  wp::run(wp::map("mm_range", wp::space(M, N),
                  c1(i, j) = wp::sum(wp::range(q, 0, K), a(i, q) * b(q, j))));
  wp::run(wp::map("mm_all", wp::space(M, N), c2(i, j) = wp::sum(a(i, wp::all) * b(wp::all, j))));
  wp::run(wp::map("mm_part", wp::space(M, N),
                  c3(i, j) += wp::sum(wp::range(q, 2, 9), a(i, q) * b(q, j) * T(3))));
  require_close(c1, want);
  require_close(c2, want);
  require_close(c3, want3);
  REQUIRE(before.gemms_since() == 3);
  REQUIRE(before.packed_since() == 0);  // plain subscripts: the operands are used in place
  REQUIRE(before.loops_since() == 0);
}

TEST_CASE("packed gemm: empty ranges give zero sums; `+=` over them changes nothing",
          "[local][gemm][packed]") {
  constexpr index_t N = 2, K = 9, H = 6, W = 7;
  wp::array<double, 3> in("in", {N, H, W});
  wp::array<double, 3> w("w", {K, 2, 3});
  wp::array<double, 3> o("o", {N, K, H}), o2("o2", {N, K, H});
  fill(in, 1);
  fill(w, 2);
  set_all(o, 5.0);
  set_all(o2, 5.0);
  auto [n, k, y, c, r] = wp::indices<5>();
  for (index_t hi : {0, -2}) {  // [0, 0) and [0, -2) hold no channel
    const path_counts before;
    wp::run(
        wp::map("empty", wp::space(N, K, H),
                o(n, k, y) = wp::sum(wp::range(c, 0, hi),
                                     wp::sum(wp::range(r, 0, 3), w(k, c, r) * in(n, y, c + r)))));
    wp::run(wp::map(
        "empty_acc", wp::space(N, K, H),
        o2(n, k, y) +=
        wp::sum(wp::range(c, 0, hi), wp::sum(wp::range(r, 0, 3), w(k, c, r) * in(n, y, c + r)))));
    require_close(o, std::vector<double>(std::size_t(N * K * H), 0.0));
    require_close(o2, std::vector<double>(std::size_t(N * K * H), 5.0));
    REQUIRE(before.loops_since() == 0);
  }
}

namespace {

/// A grouped, strided, zero- (or fill-) padded 2-D convolution's shapes, as wp::nn::conv2d
/// writes it: x (N, C, H, W), w (K, C/G, Rh, Rw), y (N, K, Ho, Wo).
struct grouped_conv {
  index_t N, C, H, W, K, G, Rh, Rw, st, ph, pw;
  index_t Cg() const { return C / G; }
  index_t Kg() const { return K / G; }
  index_t Ho() const { return (H + 2 * ph - Rh) / st + 1; }
  index_t Wo() const { return (W + 2 * pw - Rw) / st + 1; }
  /// The input gradient's padded extents: every row and column a window reads.
  index_t Hp() const { return st * (Ho() - 1) + Rh; }
  index_t Wp() const { return st * (Wo() - 1) + Rw; }

  /// x at (n, c, h, v), `fill` outside it.
  template <class T>
  double x_at(const std::vector<T>& x, index_t n, index_t c, index_t h, index_t v,
              double fill) const {
    if (h < 0 || h >= H || v < 0 || v >= W) return fill;
    return double(x[std::size_t(((n * C + c) * H + h) * W + v)]);
  }
  template <class T>
  double w_at(const std::vector<T>& w, index_t k, index_t c, index_t r, index_t s) const {
    return double(w[std::size_t(((k * Cg() + c) * Rh + r) * Rw + s)]);
  }
  template <class T>
  double y_at(const std::vector<T>& y, index_t n, index_t k, index_t i, index_t j) const {
    return double(y[std::size_t(((n * K + k) * Ho() + i) * Wo() + j)]);
  }

  /// y0 + the convolution, by plain loops.
  template <class T>
  std::vector<double> forward(const std::vector<T>& x, const std::vector<T>& w, double y0,
                              double fill) const {
    std::vector<double> y(std::size_t(N * K * Ho() * Wo()), y0);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t i = 0; i < Ho(); ++i)
          for (index_t j = 0; j < Wo(); ++j) {
            double a = 0;
            const index_t g = k / Kg();
            for (index_t c = 0; c < Cg(); ++c)
              for (index_t r = 0; r < Rh; ++r)
                for (index_t s = 0; s < Rw; ++s)
                  a += w_at(w, k, c, r, s) *
                       x_at(x, n, g * Cg() + c, st * i + r - ph, st * j + s - pw, fill);
            y[std::size_t(((n * K + k) * Ho() + i) * Wo() + j)] += a;
          }
    return y;
  }
  /// dw0 + the weights' gradient for the output gradient dy.
  template <class T>
  std::vector<double> weight_gradient(const std::vector<T>& x, const std::vector<T>& dy, double dw0,
                                      double fill) const {
    std::vector<double> dw(std::size_t(K * Cg() * Rh * Rw), dw0);
    for (index_t k = 0; k < K; ++k)
      for (index_t c = 0; c < Cg(); ++c)
        for (index_t r = 0; r < Rh; ++r)
          for (index_t s = 0; s < Rw; ++s) {
            double a = 0;
            const index_t g = k / Kg();
            for (index_t n = 0; n < N; ++n)
              for (index_t i = 0; i < Ho(); ++i)
                for (index_t j = 0; j < Wo(); ++j)
                  a += y_at(dy, n, k, i, j) *
                       x_at(x, n, g * Cg() + c, st * i + r - ph, st * j + s - pw, fill);
            dw[std::size_t(((k * Cg() + c) * Rh + r) * Rw + s)] += a;
          }
    return dw;
  }
  /// dxp0 + the input gradient over the padded extents (N, C, Hp, Wp).
  template <class T>
  std::vector<double> input_gradient(const std::vector<T>& w, const std::vector<T>& dy,
                                     double dxp0) const {
    std::vector<double> dxp(std::size_t(N * C * Hp() * Wp()), dxp0);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t i = 0; i < Ho(); ++i)
          for (index_t j = 0; j < Wo(); ++j)
            for (index_t c = 0; c < Cg(); ++c)
              for (index_t r = 0; r < Rh; ++r)
                for (index_t s = 0; s < Rw; ++s) {
                  const index_t cc = (k / Kg()) * Cg() + c;
                  dxp[std::size_t(((n * C + cc) * Hp() + st * i + r) * Wp() + st * j + s)] +=
                      y_at(dy, n, k, i, j) * w_at(w, k, c, r, s);
                }
    return dxp;
  }
};

}  // namespace

namespace {

/// wp::nn::conv2d's three maps for the shapes g, written here, against the loops of g: the
/// forward with the padded input packed (fill 0 and 0.5), the weight gradient, the input
/// gradient added from the GEMM's buffer; each with the default budget and one of a few rows.
template <class T>
void check_conv_layer_maps(const grouped_conv& g) {
  const index_t N = g.N, C = g.C, K = g.K, G = g.G, Cg = g.Cg(), Kg = g.Kg(), Rh = g.Rh, Rw = g.Rw,
                st = g.st, ph = g.ph, pw = g.pw;
  wp::array<T, 4> x("x", {N, C, g.H, g.W}), w("w", {K, Cg, Rh, Rw}), y("y", {N, K, g.Ho(), g.Wo()}),
      dy("dy", {N, K, g.Ho(), g.Wo()}), dw("dw", {K, Cg, Rh, Rw}),
      dxp("dxp", {N, C, g.Hp(), g.Wp()});
  const auto xv = fill(x, 1), wv = fill(w, 2), dyv = fill(dy, 3);
  auto [n, gg, k, i, j, c, r, s] = wp::indices<8>();
  const auto space = wp::space(N, G, Kg, g.Ho(), g.Wo(), Cg, Rh, Rw);
  const index_t window_elements = N * G * g.Ho() * g.Wo() * Cg * Rh * Rw;
  for (std::size_t budget : {std::size_t(16) << 20, std::size_t(3 * Cg * Rh * Rw * sizeof(T))}) {
    INFO("packed budget " << budget << " bytes");
    budget_scope b(budget);
    for (const T fill_value : {T(0), T(0.5)}) {
      INFO("forward: the padded input packed, fill " << double(fill_value));
      set_all(y, T(0.25));
      auto xp = wp::padded(x, fill_value);
      auto conv =
          wp::map("conv", space,
                  y(n, Kg * gg + k, i, j) +=
                  xp(n, Cg * gg + c, st * i + r - ph, st * j + s - pw) * w(Kg * gg + k, c, r, s));
      const std::string text = wp::explain_local(conv);
      INFO(text);
      REQUIRE(text.find("A packed as a matrix (im2col) per batch point (the padded read's fill") !=
              std::string::npos);
      const path_counts before;
      wp::run(conv);
      require_close(y, g.forward(xv, wv, 0.25, double(fill_value)));
      REQUIRE(before.gemms_since() >= N * G);
      REQUIRE(before.packed_since() == window_elements);  // each image's matrix, once a group
      REQUIRE(before.loops_since() == 0);
    }
    {
      INFO("weight gradient: dy used in place, the padded input packed on the right");
      set_all(dw, T(-1));
      const path_counts before;
      wp::run(wp::map("dconv.w", space,
                      dw(Kg * gg + k, c, r, s) +=
                      dy(n, Kg * gg + k, i, j) *
                      wp::padded(x, T(0))(n, Cg * gg + c, st * i + r - ph, st * j + s - pw)));
      require_close(dw, g.weight_gradient(xv, dyv, -1, 0));
      REQUIRE(before.packed_since() == window_elements);
      REQUIRE(before.unpacked_since() == 0);
      REQUIRE(before.loops_since() == 0);
    }
    {
      INFO("input gradient: the left side overlaps itself, added from the GEMM's buffer");
      set_all(dxp, T(2));
      auto dconv = wp::map("dconv.x", space,
                           dxp(n, Cg * gg + c, st * i + r, st * j + s) +=
                           dy(n, Kg * gg + k, i, j) * w(Kg * gg + k, c, r, s));
      const std::string text = wp::explain_local(dconv);
      INFO(text);
      REQUIRE(text.find("C overlaps itself as a matrix") != std::string::npos);
      const path_counts before;
      wp::run(dconv);
      require_close(dxp, g.input_gradient(wv, dyv, 2));
      REQUIRE(before.packed_since() == 0);  // dy and w are used in place
      REQUIRE(before.unpacked_since() == window_elements);
      REQUIRE(before.loops_since() == 0);
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("packed gemm: a grouped, strided, padded convolution layer's three maps",
                   "[local][gemm][packed]", float, double) {
  // Uneven extents; the packed matrices laid out along whichever side runs longer.
  SECTION("2 groups of 9 output channels, stride 2, 3 x 2 padded by 1 and 2: along the output") {
    check_conv_layer_maps<TestType>(grouped_conv{2, 6, 11, 10, 18, 2, 3, 2, 2, 1, 2});
  }
  SECTION("a filter wider than the output (3 x 5 over 4 columns padded by 1): along the filter") {
    check_conv_layer_maps<TestType>(grouped_conv{3, 4, 5, 4, 24, 3, 3, 5, 1, 1, 1});
  }
}

TEMPLATE_TEST_CASE("packed gemm: a padded true convolution (negative coefficients along the run)",
                   "[local][gemm][packed]", float, double) {
  using T = TestType;
  // o(n, k, y, x) = sum_c,r,s w(k, c, r, s) in(n, c, y + 1 - r, x + 2 - s), zero outside: the
  // packed runs along s step backwards through the input and leave it at both ends.
  constexpr index_t N = 2, C = 3, K = 8, H = 7, W = 12, R = 3, S = 5;
  wp::array<T, 4> in("in", {N, C, H, W}), w("w", {K, C, R, S}), o("o", {N, K, H, W});
  const auto iv = fill(in, 5), wv = fill(w, 6);
  std::vector<double> want(static_cast<std::size_t>(N * K * H * W));
  for (index_t b = 0; b < N; ++b)
    for (index_t kk = 0; kk < K; ++kk)
      for (index_t yy = 0; yy < H; ++yy)
        for (index_t xx = 0; xx < W; ++xx) {
          double a = 0;
          for (index_t cc = 0; cc < C; ++cc)
            for (index_t rr = 0; rr < R; ++rr)
              for (index_t ss = 0; ss < S; ++ss) {
                const index_t h = yy + 1 - rr, v = xx + 2 - ss;
                if (h >= 0 && h < H && v >= 0 && v < W)
                  a += double(wv[std::size_t(((kk * C + cc) * R + rr) * S + ss)]) *
                       double(iv[std::size_t(((b * C + cc) * H + h) * W + v)]);
              }
          want[std::size_t(((b * K + kk) * H + yy) * W + xx)] = a;
        }
  auto [n, k, y, x, c, r, s] = wp::indices<7>();
  const path_counts before;
  wp::run(wp::map(
      "true_conv", wp::space(N, K, H, W),
      o(n, k, y, x) = wp::sum(
          wp::range(c, 0, C),
          wp::sum(wp::range(r, 0, R),
                  wp::sum(wp::range(s, 0, S),
                          w(k, c, r, s) * wp::padded(in, T(0))(n, c, y + 1 - r, x + 2 - s))))));
  require_close(o, want);
  REQUIRE(before.packed_since() == N * C * R * S * H * W);
  REQUIRE(before.loops_since() == 0);
}

TEST_CASE("packed gemm: short loop rows take the GEMM at any reuse", "[local][gemm][packed]") {
  // Three output channels a group: each packed input element serves 3 outputs, each
  // buffered input-gradient element sums 3 terms -- fewer than 8, but the loop's rows run
  // along the filter's 3 taps, so the GEMMs run (a 1-D convolution's long rows stay a loop:
  // "forms that stay loops").
  const grouped_conv g{2, 4, 6, 7, 6, 2, 3, 3, 1, 1, 1};
  const index_t Cg = g.Cg(), Kg = g.Kg();
  wp::array<double, 4> x("x", {g.N, g.C, g.H, g.W}), w("w", {g.K, Cg, g.Rh, g.Rw}),
      yv("y", {g.N, g.K, g.Ho(), g.Wo()}), dxp("dxp", {g.N, g.C, g.Hp(), g.Wp()});
  const auto xv = fill(x, 1), wv = fill(w, 2);
  set_all(yv, 0.0);
  set_all(dxp, 0.0);
  auto [n, gg, k, y, x2, c, r2, s] = wp::indices<8>();
  const auto space = wp::space(g.N, g.G, Kg, g.Ho(), g.Wo(), Cg, g.Rh, g.Rw);
  auto conv = wp::map(
      "conv", space,
      yv(n, Kg * gg + k, y, x2) +=
      wp::padded(x, 0.0)(n, Cg * gg + c, y + r2 - 1, x2 + s - 1) * w(Kg * gg + k, c, r2, s));
  REQUIRE(wp::explain_local(conv).find("the loop's rows are vectors of 32 elements or more") !=
          std::string::npos);
  const path_counts before;
  wp::run(conv);
  require_close(yv, g.forward(xv, wv, 0, 0));
  wp::run(wp::map(
      "dconv.x", space,
      dxp(n, Cg * gg + c, y + r2, x2 + s) += yv(n, Kg * gg + k, y, x2) * w(Kg * gg + k, c, r2, s)));
  const std::vector<double> yd(yv.data(), yv.data() + yv.size());
  require_close(dxp, g.input_gradient(wv, yd, 0));
  REQUIRE(before.gemms_since() > 0);
  REQUIRE(before.packed_since() == g.N * g.G * g.Ho() * g.Wo() * Cg * g.Rh * g.Rw);
  REQUIRE(before.unpacked_since() == g.N * g.G * g.Ho() * g.Wo() * Cg * g.Rh * g.Rw);
  REQUIRE(before.loops_since() == 0);
}

TEST_CASE("packed gemm: a padded read's scalar rows take the GEMM at any reuse, long or not",
          "[local][gemm][packed]") {
  // A weight gradient with 2 output channels: each packed input element serves 2 of them,
  // fewer than 8, and the loop's rows would run along 40 output columns. Read through
  // padding, those rows are scalar (checked point by point), so the GEMM runs; read from an
  // array that holds the border, they are vectors, and the loop runs (ResNet's stem weight
  // gradient split over 4 ranks ran the padded loop at 30x the GEMM's time).
  constexpr index_t N = 2, C = 3, K = 2, Ho = 5, Wo = 40, R = 3, S = 3;
  wp::array<double, 4> x("x", {N, C, Ho, Wo}), xb("xb", {N, C, Ho + R - 1, Wo + S - 1}),
      dy("dy", {N, K, Ho, Wo}), dw("dw", {K, C, R, S});
  const auto xv = fill(x, 1), dyv = fill(dy, 2);
  set_all(xb, 0.0);  // x inside a border of zeros
  for (index_t b = 0; b < N; ++b)
    for (index_t cc = 0; cc < C; ++cc)
      for (index_t h = 0; h < Ho; ++h)
        for (index_t v = 0; v < Wo; ++v)
          xb.data()[((b * C + cc) * (Ho + R - 1) + h + 1) * (Wo + S - 1) + v + 1] =
              xv[std::size_t(((b * C + cc) * Ho + h) * Wo + v)];
  std::vector<double> want(std::size_t(K * C * R * S));
  for (index_t kk = 0; kk < K; ++kk)
    for (index_t cc = 0; cc < C; ++cc)
      for (index_t rr = 0; rr < R; ++rr)
        for (index_t ss = 0; ss < S; ++ss) {
          double a = 0;
          for (index_t b = 0; b < N; ++b)
            for (index_t h = 0; h < Ho; ++h)
              for (index_t v = 0; v < Wo; ++v) {
                const index_t hx = h + rr - 1, vx = v + ss - 1;
                if (hx >= 0 && hx < Ho && vx >= 0 && vx < Wo)
                  a += dyv[std::size_t(((b * K + kk) * Ho + h) * Wo + v)] *
                       xv[std::size_t(((b * C + cc) * Ho + hx) * Wo + vx)];
              }
          want[std::size_t(((kk * C + cc) * R + rr) * S + ss)] = a;
        }
  auto [n, k, y, x2, c, r, s] = wp::indices<7>();
  const auto space = wp::space(N, K, Ho, Wo, C, R, S);
  SECTION("padded: the GEMM, the input packed with its fill") {
    set_all(dw, 0.0);
    auto dconv = wp::map(
        "dconv.w", space,
        dw(k, c, r, s) += dy(n, k, y, x2) * wp::padded(x, 0.0)(n, c, y + r - 1, x2 + s - 1));
    INFO(wp::explain_local(dconv));
    REQUIRE(wp::explain_local(dconv).find("scalar rows") != std::string::npos);
    const path_counts before;
    wp::run(dconv);
    require_close(dw, want);
    REQUIRE(before.gemms_since() > 0);
    REQUIRE(before.packed_since() == N * Ho * Wo * C * R * S);
    REQUIRE(before.loops_since() == 0);
  }
  SECTION("the border held in the array: vector rows, the loop") {
    set_all(dw, 0.0);
    auto dconv =
        wp::map("dconv.w", space, dw(k, c, r, s) += dy(n, k, y, x2) * xb(n, c, y + r, x2 + s));
    INFO(wp::explain_local(dconv));
    REQUIRE(wp::explain_local(dconv).find("vector rows") != std::string::npos);
    const path_counts before;
    wp::run(dconv);
    require_close(dw, want);
    REQUIRE(before.gemms_since() == 0);
    REQUIRE(before.packed_since() == 0);
    REQUIRE(before.loops_since() == 1);
  }
}

TEST_CASE("packed gemm: forms that stay loops", "[local][gemm][packed]") {
  auto [i, j, r] = wp::indices<3>();
  SECTION("a 1-D convolution with one output channel: each packed element would be used once") {
    constexpr index_t n = 50, R = 7;
    wp::array<double, 1> x("x", {n + R - 1}), w("w", {R}), y("y", {n});
    const auto xv = fill(x, 1), wv = fill(w, 2);
    std::vector<double> want(std::size_t{n});
    for (index_t t = 0; t < n; ++t)
      for (index_t q = 0; q < R; ++q)
        want[std::size_t(t)] += wv[std::size_t(q)] * xv[std::size_t(t + q)];
    auto conv =
        wp::map("conv1d", wp::space(n), y(i) = wp::sum(wp::range(r, 0, R), w(r) * x(i + r)));
    REQUIRE(wp::explain_local(conv).find("m < 8") != std::string::npos);
    const path_counts before;
    wp::run(conv);
    require_close(y, want);
    REQUIRE(before.gemms_since() == 0);
    REQUIRE(before.packed_since() == 0);
    REQUIRE(before.loops_since() == 1);
  }
  SECTION("`=` over a space index the left side lacks overwrites; it is not summed") {
    using S = decltype(std::declval<wp::array<double, 1>&>()(i) = wp::sum(
                           wp::range(r, 0, 3), std::declval<wp::array<double, 2>&>()(r, j) *
                                                   std::declval<wp::array<double, 1>&>()(r)));
    STATIC_REQUIRE_FALSE(wp::detail::is_affine_contraction_v<2, S>);
  }
  SECTION("max over a range is not a sum") {
    using S = decltype(std::declval<wp::array<double, 1>&>()(i) = wp::max_of(
                           wp::range(r, 0, 3), std::declval<wp::array<double, 2>&>()(i, r) *
                                                   std::declval<wp::array<double, 1>&>()(r)));
    STATIC_REQUIRE_FALSE(wp::detail::is_affine_contraction_v<1, S>);
  }
}
