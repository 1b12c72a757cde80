// Affine subscripts: their type-level structure, their values and text, and what a map
// that reads through them computes (compared with plain loops over the same data).

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <workpart/workpart.hpp>

namespace wp = workpart;
using std::int64_t;

namespace {

// Distinct, non-trivial values so that a wrong element read is always visible.
template <class T, int N>
void fill_distinct(wp::array<T, N>& a, double scale = 1.0) {
  T* p = a.data();
  for (int64_t k = 0; k < a.size(); ++k) p[k] = static_cast<T>(scale * (3.0 * double(k) + 1.25));
}

template <class T>
std::vector<T> copy_of(wp::array<T, 1>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

}  // namespace

TEST_CASE("affine: type-level structure of subscripts", "[affine][core]") {
  auto [i, j, k] = wp::indices<3>();
  using wp::detail::affine_sig;
  using wp::detail::dim_bit;

  // A plain index.
  STATIC_REQUIRE(decltype(wp::detail::to_affine(i))::sig.is_plain());
  STATIC_REQUIRE(decltype(wp::detail::to_affine(k))::sig.is_plain());
  STATIC_REQUIRE(decltype(wp::detail::to_affine(k))::sig.plain_dim() == 2);
  STATIC_REQUIRE(wp::detail::plain_sig(1).is_plain());
  STATIC_REQUIRE(!decltype(wp::detail::to_affine(i))::sig.has_offset);
  STATIC_REQUIRE(decltype(+i)::sig == wp::detail::plain_sig(0));

  // Offsets: structure keeps "has an offset", the value is a runtime value.
  STATIC_REQUIRE(decltype(i + 1)::sig.has_offset);
  STATIC_REQUIRE(decltype(i - 1)::sig.has_offset);
  STATIC_REQUIRE(decltype(1 + i)::sig.has_offset);
  STATIC_REQUIRE(!decltype(i + 1)::sig.is_plain());
  STATIC_REQUIRE(decltype(i + 1)::sig.present == dim_bit(0));
  STATIC_REQUIRE(decltype(i + 1)::sig.coef[0] == 1);
  STATIC_REQUIRE(std::is_same_v<decltype(i + 1), decltype(i + 5)>);  // offset is a value
  STATIC_REQUIRE(std::is_same_v<decltype(i + 1), decltype(i - 5)>);

  // Negative coefficients are visible in the type.
  STATIC_REQUIRE(decltype(-i)::sig.coef[0] == -1);
  STATIC_REQUIRE(!decltype(-i)::sig.has_offset);
  STATIC_REQUIRE(decltype(7 - 1 - i)::sig.coef[0] == -1);
  STATIC_REQUIRE(decltype(7 - 1 - i)::sig.has_offset);
  STATIC_REQUIRE(decltype(7 - 1 - i)::sig.static_coef(0));
  STATIC_REQUIRE(decltype(-i + 3)::sig.coef[0] == -1);
  STATIC_REQUIRE(decltype(-i + 3)::sig.has_offset);

  // Runtime coefficients: the dimension is present and dynamic, no static coefficient.
  STATIC_REQUIRE(decltype(2 * i)::sig.present == dim_bit(0));
  STATIC_REQUIRE(decltype(2 * i)::sig.dynamic == dim_bit(0));
  STATIC_REQUIRE(!decltype(2 * i)::sig.static_coef(0));
  STATIC_REQUIRE(!decltype(2 * i)::sig.has_offset);
  STATIC_REQUIRE(decltype(i * 3)::sig.dynamic == dim_bit(0));
  STATIC_REQUIRE(decltype(2 * i + j)::sig.dynamic == dim_bit(0));
  STATIC_REQUIRE(decltype(2 * i + j)::sig.static_coef(1));
  STATIC_REQUIRE(decltype(2 * i + i)::sig.dynamic == dim_bit(0));  // dynamic absorbs static

  // Sums of indices.
  STATIC_REQUIRE(decltype(i + j)::sig.terms() == 2);
  STATIC_REQUIRE(decltype(i + j)::sig.present == (dim_bit(0) | dim_bit(1)));
  STATIC_REQUIRE(decltype(i + j)::sig.coef[0] == 1);
  STATIC_REQUIRE(decltype(i + j)::sig.coef[1] == 1);
  STATIC_REQUIRE(decltype(i - k)::sig.coef[2] == -1);
  STATIC_REQUIRE(decltype(i + j + k)::sig.terms() == 3);
  STATIC_REQUIRE(decltype(i + i)::sig.coef[0] == 2);
  STATIC_REQUIRE(decltype(i + j)::sig.slot(1) == 1);
  STATIC_REQUIRE(decltype(j + k)::sig.slot(2) == 1);

  // i - i cancels out of the type.
  STATIC_REQUIRE(decltype(i - i)::sig.present == 0);
  STATIC_REQUIRE(decltype(i + j - i)::sig.present == dim_bit(1));
  STATIC_REQUIRE(decltype(i + j - i)::sig.is_plain());

  // Integer constants.
  STATIC_REQUIRE(wp::detail::constant_sig().present == 0);
  STATIC_REQUIRE(wp::detail::constant_sig().has_offset);
  STATIC_REQUIRE(decltype(wp::detail::to_affine(int64_t{4}))::sig == wp::detail::constant_sig());

  // The values of an affine form are usable in constant expressions.
  constexpr auto a = 7 - 1 - i;
  STATIC_REQUIRE(a.offset == 6);
  STATIC_REQUIRE(a.coef_of(0) == -1);
  STATIC_REQUIRE(a.coef_of(1) == 0);
  constexpr auto b = 2 * i - 3 * k + 4;
  STATIC_REQUIRE(b.coef_of(0) == 2);
  STATIC_REQUIRE(b.coef_of(2) == -3);
  STATIC_REQUIRE(b.offset == 4);
  constexpr auto c = 3 * (i + 2);
  STATIC_REQUIRE(c.coef_of(0) == 3);
  STATIC_REQUIRE(c.offset == 6);
  constexpr auto d = -(2 * j - 5);
  STATIC_REQUIRE(d.coef_of(1) == -2);
  STATIC_REQUIRE(d.offset == 5);
  constexpr auto e = 10 - (i + 1);
  STATIC_REQUIRE(e.coef_of(0) == -1);
  STATIC_REQUIRE(e.offset == 9);
}

TEST_CASE("affine: access types record the structure of each axis", "[affine][expr]") {
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> A("A", {5, 6});
  wp::array<double, 1> x("x", {13});
  using wp::detail::step_kind;

  using Aij = decltype(A(i, j));
  STATIC_REQUIRE(Aij::axis_sig<0>().is_plain());
  STATIC_REQUIRE(Aij::axis_sig<1>().is_plain());
  STATIC_REQUIRE(Aij::axis_sig<1>().plain_dim() == 1);
  STATIC_REQUIRE(Aij::step_along<1>() == step_kind::unit);
  STATIC_REQUIRE(Aij::step_along<0>() == step_kind::strided);
  STATIC_REQUIRE(decltype(A(j, i))::step_along<0>() == step_kind::unit);

  using Ai0 = decltype(A(i, 0));
  STATIC_REQUIRE(Ai0::axis_sig<1>().present == 0);
  STATIC_REQUIRE(Ai0::axis_sig<1>().has_offset);
  STATIC_REQUIRE(Ai0::step_along<1>() == step_kind::zero);
  STATIC_REQUIRE(Ai0::info.free == wp::detail::dim_bit(0));

  STATIC_REQUIRE(decltype(x(i + 1))::step_along<0>() == step_kind::unit);
  STATIC_REQUIRE(decltype(x(2 * i))::step_along<0>() == step_kind::strided);
  STATIC_REQUIRE(decltype(x(12 - i))::step_along<0>() == step_kind::strided);
  STATIC_REQUIRE(decltype(x(i + j))::step_along<0>() == step_kind::unit);
  STATIC_REQUIRE(decltype(x(i + j))::step_along<1>() == step_kind::unit);
  STATIC_REQUIRE(decltype(x(i))::step_along<1>() == step_kind::zero);
  STATIC_REQUIRE(decltype(x(i + j))::info.free ==
                 (wp::detail::dim_bit(0) | wp::detail::dim_bit(1)));
  STATIC_REQUIRE(decltype(x(i + j))::all_affine);

  // The runtime offsets and coefficients are kept in the access.
  const auto f = x(12 - 2 * i).axis_forms();
  CHECK(f[0].kind == wp::detail::axis_kind::affine);
  CHECK(f[0].offset == 12);
  CHECK(f[0].coef[0] == -2);
  CHECK(f[0].coef[1] == 0);
  const auto g = A(i, 4).axis_forms();
  CHECK(g[1].offset == 4);
  CHECK(g[1].coef[0] == 0);
  CHECK(g[0].coef[0] == 1);
}

TEST_CASE("affine: str() text", "[affine][core]") {
  auto [i, j, k] = wp::indices<3>();
  const int64_t N = 7;
  CHECK(wp::detail::to_affine(i).str() == "i0");
  CHECK((i + 1).str() == "i0 + 1");
  CHECK((i - 1).str() == "i0 - 1");
  CHECK((1 + j).str() == "i1 + 1");
  CHECK((N - 1 - i).str() == "-i0 + 6");
  CHECK((N - i).str() == "-i0 + 7");
  CHECK((-i + 3).str() == "-i0 + 3");
  CHECK((-i).str() == "-i0");
  CHECK((2 * i).str() == "2*i0");
  CHECK((i * 3 - 2).str() == "3*i0 - 2");
  CHECK((-2 * i).str() == "-2*i0");
  CHECK((i + j).str() == "i0 + i1");
  CHECK((i - k).str() == "i0 - i2");
  CHECK((2 * i - 3 * j + k + 4).str() == "2*i0 - 3*i1 + i2 + 4");
  CHECK((i + i).str() == "2*i0");
  CHECK((i - i).str() == "0");
  CHECK((i + j - i).str() == "i1");
  CHECK((i + 0).str() == "i0");
  CHECK(wp::detail::to_affine(int64_t{5}).str() == "5");
  CHECK(wp::detail::to_affine(-3).str() == "-3");

  wp::array<float, 2> A("A", {4, 9});
  wp::array<float, 1> x("x", {13});
  CHECK(x(i + 1).str() == "x(i0 + 1)");
  CHECK(x(N - 1 - i).str() == "x(-i0 + 6)");
  CHECK(A(i, 0).str() == "A(i0, 0)");
  CHECK(A(j, 2 * i + 1).str() == "A(i1, 2*i0 + 1)");
  CHECK(A(i, wp::all).str() == "A(i0, :)");
}

TEST_CASE("affine: values at points", "[affine][core]") {
  auto [i, j, k] = wp::indices<3>();
  const int64_t N = 11, s = 3, o = -4;
  const auto f1 = N - 1 - i;
  const auto f2 = s * i + o;
  const auto f3 = i - 2 * j + k + 5;
  const auto f4 = -i + s;
  const auto f5 = (i + j) * s;
  int64_t pt[wp::detail::max_dims] = {};
  for (int64_t a = -3; a < 5; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t c = 0; c < 3; ++c) {
        pt[0] = a;
        pt[1] = b;
        pt[2] = c;
        REQUIRE(f1(pt) == N - 1 - a);
        REQUIRE(f2(pt) == s * a + o);
        REQUIRE(f3(pt) == a - 2 * b + c + 5);
        REQUIRE(f4(pt) == -a + s);
        REQUIRE(f5(pt) == (a + b) * s);
      }
}

TEST_CASE("affine: reads through offsets", "[affine][expr]") {
  auto [i] = wp::indices<1>();
  constexpr int64_t n = 13;
  wp::array<double, 1> x("x", {n});
  wp::array<double, 1> out("out", {n});
  fill_distinct(x);
  const auto xs = copy_of(x);

  SECTION("x(i + 3) over [0, n - 3)") {
    wp::run(wp::map("plus3", wp::space(n - 3), out(i) = x(i + 3)));
    for (int64_t a = 0; a < n - 3; ++a) REQUIRE(out.data()[a] == xs[a + 3]);
    for (int64_t a = n - 3; a < n; ++a) REQUIRE(out.data()[a] == 0.0);
  }
  SECTION("x(i - 2) over [2, n)") {
    wp::run(wp::map("minus2", wp::space({2, n}), out(i) = x(i - 2)));
    for (int64_t a = 0; a < 2; ++a) REQUIRE(out.data()[a] == 0.0);
    for (int64_t a = 2; a < n; ++a) REQUIRE(out.data()[a] == xs[a - 2]);
  }
  SECTION("runtime offsets") {
    const int64_t off = 5;
    wp::run(
        wp::map("runtime_off", wp::space(n - off), out(i) = x(i + off) - x(off + i - 1 - 4 + 4)));
    for (int64_t a = 0; a < n - off; ++a) REQUIRE(out.data()[a] == xs[a + off] - xs[a + off - 1]);
  }
  SECTION("offset on both sides with a shifted space") {
    wp::run(wp::map("shifted", wp::space({-2, n - 4}), out(i + 2) = x(i + 4) + x(i + 2)));
    for (int64_t a = 0; a < n - 2; ++a) REQUIRE(out.data()[a] == xs[a + 2] + xs[a]);
    for (int64_t a = n - 2; a < n; ++a) REQUIRE(out.data()[a] == 0.0);
  }
}

TEST_CASE("affine: negative coefficients", "[affine][expr]") {
  auto [i] = wp::indices<1>();
  constexpr int64_t n = 13;
  wp::array<float, 1> x("x", {n});
  wp::array<float, 1> out("out", {n});
  fill_distinct(x);
  const auto xs = copy_of(x);

  SECTION("reversal N - 1 - i") {
    const int64_t N = n;
    wp::run(wp::map("reverse", wp::space(n), out(i) = x(N - 1 - i)));
    for (int64_t a = 0; a < n; ++a) REQUIRE(out.data()[a] == xs[n - 1 - a]);
  }
  SECTION("-i + c over a sub-range") {
    const int64_t c = 9;
    wp::run(wp::map("neg_plus_c", wp::space(c + 1), out(i) = x(-i + c)));
    for (int64_t a = 0; a <= c; ++a) REQUIRE(out.data()[a] == xs[c - a]);
    for (int64_t a = c + 1; a < n; ++a) REQUIRE(out.data()[a] == 0.0f);
  }
  SECTION("reversed left-hand side") {
    wp::run(wp::map("reverse_lhs", wp::space(n), out(n - 1 - i) = x(i)));
    for (int64_t a = 0; a < n; ++a) REQUIRE(out.data()[n - 1 - a] == xs[a]);
  }
  SECTION("runtime negative coefficient -2 * i + (n - 1)") {
    const int64_t m = (n + 1) / 2;  // i in [0, 7): n - 1 - 2 i in [0, 12]
    wp::run(wp::map("neg_stride", wp::space(m), out(i) = x(-2 * i + (n - 1))));
    for (int64_t a = 0; a < m; ++a) REQUIRE(out.data()[a] == xs[n - 1 - 2 * a]);
    for (int64_t a = m; a < n; ++a) REQUIRE(out.data()[a] == 0.0f);
  }
}

TEST_CASE("affine: runtime coefficients (strides)", "[affine][expr]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t n = 37;
  wp::array<double, 1> x("x", {n});
  fill_distinct(x, 0.5);
  const auto xs = copy_of(x);

  SECTION("2 * i") {
    constexpr int64_t m = (n + 1) / 2;  // 19 points, reads 0 .. 36
    wp::array<double, 1> out("out", {m});
    wp::run(wp::map("stride2", wp::space(m), out(i) = x(2 * i)));
    for (int64_t a = 0; a < m; ++a) REQUIRE(out.data()[a] == xs[2 * a]);
  }
  SECTION("runtime stride and offset, s * i + o") {
    const int64_t s = 5, o = 3;
    const int64_t m = (n - 1 - o) / s + 1;  // 7 points: 3, 8, ..., 33
    wp::array<double, 1> out("out", {m});
    wp::run(wp::map("stride_s", wp::space(m), out(i) = x(s * i + o) * 2.0));
    for (int64_t a = 0; a < m; ++a) REQUIRE(out.data()[a] == xs[s * a + o] * 2.0);
  }
  SECTION("strided write, out(3 * i + 1)") {
    wp::array<double, 1> out("out", {n});
    const int64_t m = (n - 2) / 3 + 1;  // writes 1, 4, ..., 34
    for (int64_t a = 0; a < n; ++a) out.data()[a] = -1.0 - double(a);
    wp::run(wp::map("stride_write", wp::space(m), out(3 * i + 1) = x(i)));
    for (int64_t a = 0; a < n; ++a) {
      if (a % 3 == 1 && (a - 1) / 3 < m)
        REQUIRE(out.data()[a] == xs[(a - 1) / 3]);
      else
        REQUIRE(out.data()[a] == -1.0 - double(a));
    }
  }
  SECTION("strides in two dimensions, 2 * i + 3 * j") {
    constexpr int64_t R = 7, C = 5;  // max 2*6 + 3*4 = 24 < 37
    wp::array<double, 2> out("out", {R, C});
    wp::run(wp::map("stride2d", wp::space(R, C), out(i, j) = x(2 * i + 3 * j)));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) REQUIRE(out.data()[a * C + b] == xs[2 * a + 3 * b]);
  }
}

TEST_CASE("affine: sums of indices", "[affine][expr]") {
  auto [i, j, k] = wp::indices<3>();
  constexpr int64_t R = 7, C = 13, n = R + C - 1;
  wp::array<double, 1> x("x", {n});
  fill_distinct(x);
  const auto xs = copy_of(x);

  SECTION("x(i + j) (Hankel matrix)") {
    wp::array<double, 2> out("out", {R, C});
    wp::run(wp::map("hankel", wp::space(R, C), out(i, j) = x(i + j)));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) REQUIRE(out.data()[a * C + b] == xs[a + b]);
  }
  SECTION("x(i - j + (C - 1)) (Toeplitz matrix)") {
    wp::array<double, 2> out("out", {R, C});
    wp::run(wp::map("toeplitz", wp::space(R, C), out(i, j) = x(i - j + (C - 1))));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) REQUIRE(out.data()[a * C + b] == xs[a - b + C - 1]);
  }
  SECTION("three indices, x(i + j + k)") {
    constexpr int64_t P = 3, Q = 4, S = 5;
    wp::array<double, 3> out("out", {P, Q, S});
    wp::run(wp::map("sum3", wp::space(P, Q, S), out(i, j, k) = x(i + j + k) - x(2 * k)));
    for (int64_t a = 0; a < P; ++a)
      for (int64_t b = 0; b < Q; ++b)
        for (int64_t c = 0; c < S; ++c)
          REQUIRE(out.data()[(a * Q + b) * S + c] == xs[a + b + c] - xs[2 * c]);
  }
  SECTION("cancelling terms, x(i + j - i)") {
    wp::array<double, 2> out("out", {R, C});
    wp::run(wp::map("cancel", wp::space(R, C), out(i, j) = x(i + j - i)));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) REQUIRE(out.data()[a * C + b] == xs[b]);
  }
  SECTION("sum of indices on the left side (sum into diagonals)") {
    wp::array<double, 2> M("M", {R, C});
    fill_distinct(M, 0.25);
    std::vector<double> ms(M.data(), M.data() + M.size());
    wp::array<double, 1> diag("diag", {n});
    for (int64_t a = 0; a < n; ++a) diag.data()[a] = double(a);
    wp::run(wp::map("antidiag", wp::space(R, C), diag(i + j) += M(i, j)));
    std::vector<double> expect(n);
    for (int64_t a = 0; a < n; ++a) expect[a] = double(a);
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) expect[a + b] += ms[a * C + b];
    for (int64_t a = 0; a < n; ++a) REQUIRE(diag.data()[a] == Approx(expect[a]).epsilon(1e-12));
  }
}

TEST_CASE("affine: integer constant subscripts", "[affine][expr]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 5;
  wp::array<int64_t, 2> A("A", {R, C});
  fill_distinct(A);
  std::vector<int64_t> as(A.data(), A.data() + A.size());

  SECTION("x(i, 0): the first column") {
    wp::array<int64_t, 1> out("out", {R});
    wp::run(wp::map("col0", wp::space(R), out(i) = A(i, 0)));
    for (int64_t a = 0; a < R; ++a) REQUIRE(out.data()[a] == as[a * C + 0]);
  }
  SECTION("runtime constant column and row") {
    const int64_t col = 3, row = C - 1;  // row 4 of 7
    wp::array<int64_t, 1> out("out", {R});
    wp::array<int64_t, 1> out2("out2", {C});
    wp::run(wp::program(wp::map("colc", wp::space(R), out(i) = A(i, col)),
                        wp::map("rowc", wp::space(C), out2(i) = A(row, i))));
    for (int64_t a = 0; a < R; ++a) REQUIRE(out.data()[a] == as[a * C + col]);
    for (int64_t b = 0; b < C; ++b) REQUIRE(out2.data()[b] == as[row * C + b]);
  }
  SECTION("constant on the left side: out(2, j) += A(i, j) sums the columns into row 2") {
    wp::array<int64_t, 2> out("out", {3, C});
    for (int64_t k = 0; k < 3 * C; ++k) out.data()[k] = 100 + k;
    wp::run(wp::map("colsum", wp::space(R, C), out(2, j) += A(i, j)));
    for (int64_t b = 0; b < C; ++b) {
      int64_t s = 100 + 2 * C + b;
      for (int64_t a = 0; a < R; ++a) s += as[a * C + b];
      REQUIRE(out.data()[2 * C + b] == s);
      REQUIRE(out.data()[0 * C + b] == 100 + b);
      REQUIRE(out.data()[1 * C + b] == 100 + C + b);
    }
  }
  SECTION("a constant mixed with an affine form, A(i, j + 1) - A(i, 0)") {
    wp::array<int64_t, 2> out("out", {R, C - 1});
    wp::run(wp::map("diff0", wp::space(R, C - 1), out(i, j) = A(i, j + 1) - A(i, 0)));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C - 1; ++b)
        REQUIRE(out.data()[a * (C - 1) + b] == as[a * C + b + 1] - as[a * C]);
  }
}

TEST_CASE("affine: mixed 2-D subscripts (transpose, shifts, strides)", "[affine][expr]") {
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<float, 2> A("A", {C, R});
  fill_distinct(A, 0.125);
  std::vector<float> as(A.data(), A.data() + A.size());

  SECTION("transpose A(j, i)") {
    wp::array<float, 2> out("out", {R, C});
    wp::run(wp::map("transpose", wp::space(R, C), out(i, j) = A(j, i)));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) REQUIRE(out.data()[a * C + b] == as[b * R + a]);
  }
  SECTION("A(2 * j + 1, R - 1 - i) over a smaller space") {
    constexpr int64_t C2 = (C - 1) / 2;  // 2*5 + 1 = 11 < 13
    wp::array<float, 2> out("out", {R, C2});
    wp::run(wp::map("mixed", wp::space(R, C2), out(i, j) = A(2 * j + 1, R - 1 - i)));
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C2; ++b)
        REQUIRE(out.data()[a * C2 + b] == as[(2 * b + 1) * R + (R - 1 - a)]);
  }
}
