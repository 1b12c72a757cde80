// Every expression form, for every element type, each compared with a plain loop over
// the same inputs that follows C++ arithmetic (the library's stated value semantics).

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <workpart/workpart.hpp>

namespace wp = workpart;
using std::int32_t;
using std::int64_t;

namespace {

constexpr int64_t n = 37;

// Value for position a: integers for integer types, fractions for floating types.
template <class T>
T make_value(double v) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v * 0.375);
  else
    return static_cast<T>(v);
}

// Compares one element: exact for integers, relative tolerance for floating types.
template <class T, class V>
void check_element(T got, V expect_value, int64_t at) {
  const T expect = static_cast<T>(expect_value);
  INFO("element " << at << ": got " << got << ", expected " << expect);
  if constexpr (std::is_floating_point_v<T>) {
    const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    REQUIRE(double(got) == Approx(double(expect)).epsilon(eps).margin(eps));
  } else {
    REQUIRE(got == expect);
  }
}

template <class T>
struct inputs {
  wp::array<T, 1> x{"x", {n}};  // mixed signs
  wp::array<T, 1> y{"y", {n}};  // positive, nonzero
  wp::array<T, 1> z{"z", {n}};  // equal to x at every third point, above or below elsewhere
  wp::array<T, 1> s{"s", {n}};  // small, for exp
  wp::array<T, 1> out{"out", {n}};
  std::vector<T> xs, ys, zs, ss;
  inputs() {
    for (int64_t a = 0; a < n; ++a) {
      x.data()[a] = make_value<T>(double((a * 7) % 23 - 11));
      y.data()[a] = make_value<T>(double(1 + (a * 5) % 13));
      const T xa = x.data()[a];
      z.data()[a] = a % 3 == 0 ? xa : a % 3 == 1 ? T(xa + T(1)) : T(xa - T(2));
      s.data()[a] = make_value<T>(double(a % 7 - 3));
    }
    xs.assign(x.data(), x.data() + n);
    ys.assign(y.data(), y.data() + n);
    zs.assign(z.data(), z.data() + n);
    ss.assign(s.data(), s.data() + n);
  }
  // Runs `stmt` (which writes out(i)) over [0, n) and compares out with ref(a).
  template <class Stmt, class Ref>
  void check(const std::string& name, const Stmt& stmt, Ref ref) {
    auto [i] = wp::indices<1>();
    (void)i;
    for (int64_t a = 0; a < n; ++a) out.data()[a] = T(-77);
    wp::run(wp::map(name, wp::space(n), stmt));
    INFO("map " << name);
    for (int64_t a = 0; a < n; ++a) check_element<T>(out.data()[a], ref(a), a);
  }
};

// C++ arithmetic on the element type, as the reference: exp(int) works on double.
template <class T>
auto real(T v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<double>(v);
  else
    return v;
}

}  // namespace

#define WP_ELEMENT_TYPES float, double, int32_t, int64_t

TEMPLATE_TEST_CASE("expressions: arithmetic between accesses", "[expr][ops]", WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i] = wp::indices<1>();
  inputs<T> in;
  auto& x = in.x;
  auto& y = in.y;
  auto& out = in.out;
  const auto& xs = in.xs;
  const auto& ys = in.ys;

  in.check("add", out(i) = x(i) + y(i), [&](int64_t a) { return xs[a] + ys[a]; });
  in.check("sub", out(i) = x(i) - y(i), [&](int64_t a) { return xs[a] - ys[a]; });
  in.check("mul", out(i) = x(i) * y(i), [&](int64_t a) { return xs[a] * ys[a]; });
  in.check("div", out(i) = x(i) / y(i), [&](int64_t a) { return xs[a] / ys[a]; });
  in.check("neg", out(i) = -x(i), [&](int64_t a) { return -xs[a]; });
  in.check("neg_of_sum", out(i) = -(x(i) + y(i)), [&](int64_t a) { return -(xs[a] + ys[a]); });
  in.check("unary_plus", out(i) = +x(i), [&](int64_t a) { return xs[a]; });
  in.check("precedence", out(i) = x(i) + y(i) * x(i) - y(i) / y(i),
           [&](int64_t a) { return xs[a] + ys[a] * xs[a] - ys[a] / ys[a]; });
  in.check("same_array_twice", out(i) = x(i) * x(i) - x(i),
           [&](int64_t a) { return xs[a] * xs[a] - xs[a]; });
}

TEMPLATE_TEST_CASE("expressions: scalars on either side", "[expr][ops]", WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i] = wp::indices<1>();
  inputs<T> in;
  auto& x = in.x;
  auto& y = in.y;
  auto& out = in.out;
  const auto& xs = in.xs;
  const auto& ys = in.ys;

  // Integer literals.
  in.check("lit_add_r", out(i) = x(i) + 3, [&](int64_t a) { return xs[a] + 3; });
  in.check("lit_add_l", out(i) = 3 + x(i), [&](int64_t a) { return 3 + xs[a]; });
  in.check("lit_sub_r", out(i) = x(i) - 4, [&](int64_t a) { return xs[a] - 4; });
  in.check("lit_sub_l", out(i) = 4 - x(i), [&](int64_t a) { return 4 - xs[a]; });
  in.check("lit_mul_r", out(i) = x(i) * 3, [&](int64_t a) { return xs[a] * 3; });
  in.check("lit_mul_l", out(i) = 2 * x(i), [&](int64_t a) { return 2 * xs[a]; });
  in.check("lit_div_r", out(i) = x(i) / 2, [&](int64_t a) { return xs[a] / 2; });
  in.check("lit_div_l", out(i) = 60 / y(i), [&](int64_t a) { return 60 / ys[a]; });

  // Floating literals (promote integer arrays to double; the result converts back).
  in.check("dlit_mul_r", out(i) = x(i) * 0.5, [&](int64_t a) { return xs[a] * 0.5; });
  in.check("dlit_add_l", out(i) = 2.25 + x(i), [&](int64_t a) { return 2.25 + xs[a]; });
  in.check("dlit_div_l", out(i) = 7.5 / y(i), [&](int64_t a) { return 7.5 / ys[a]; });
  in.check("flit_sub_l", out(i) = 1.5f - x(i), [&](int64_t a) { return 1.5f - xs[a]; });

  // Runtime scalars of the element type and of other types.
  const T s = make_value<T>(5.0);
  const int64_t k = -3;
  const double d = 1.75;
  in.check("rt_add_r", out(i) = x(i) + s, [&](int64_t a) { return xs[a] + s; });
  in.check("rt_sub_l", out(i) = s - x(i), [&](int64_t a) { return s - xs[a]; });
  in.check("rt_mul_l", out(i) = s * x(i), [&](int64_t a) { return s * xs[a]; });
  in.check("rt_div_r", out(i) = x(i) / s, [&](int64_t a) { return xs[a] / s; });
  in.check("rt_div_l", out(i) = s / y(i), [&](int64_t a) { return s / ys[a]; });
  in.check("rt_i64", out(i) = k * x(i) - k, [&](int64_t a) { return k * xs[a] - k; });
  in.check("rt_double", out(i) = x(i) * d + d, [&](int64_t a) { return xs[a] * d + d; });

  // A scalar alone on the right side converts to the element type.
  in.check("scalar_only_int", out(i) = 6, [&](int64_t) { return 6; });
  in.check("scalar_only_double", out(i) = 2.0, [&](int64_t) { return 2.0; });
  in.check("scalar_only_rt", out(i) = s, [&](int64_t) { return s; });
}

TEST_CASE("expressions: runtime scalars are captured by value", "[expr][ops]") {
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n});
  wp::array<double, 1> out("out", {n});
  for (int64_t a = 0; a < n; ++a) x.data()[a] = 0.5 * double(a) - 3.0;
  double s = 2.0;
  int64_t off = 1;
  auto m = wp::map("captured", wp::space(n - 1), out(i) = x(i + off) * s + s);
  s = 100.0;  // changing the variables after the map is built changes nothing
  off = 0;
  wp::run(m);
  for (int64_t a = 0; a < n - 1; ++a) REQUIRE(out.data()[a] == Approx(x.data()[a + 1] * 2.0 + 2.0));
  REQUIRE(out.data()[n - 1] == 0.0);
}

TEMPLATE_TEST_CASE("expressions: functions exp log sqrt tanh abs", "[expr][ops]",
                   WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i] = wp::indices<1>();
  inputs<T> in;
  auto& x = in.x;
  auto& y = in.y;
  auto& s = in.s;
  auto& out = in.out;
  const auto& xs = in.xs;
  const auto& ys = in.ys;
  const auto& ss = in.ss;

  in.check("exp", out(i) = wp::exp(s(i)), [&](int64_t a) { return std::exp(real(ss[a])); });
  in.check("log", out(i) = wp::log(y(i)), [&](int64_t a) { return std::log(real(ys[a])); });
  in.check("sqrt", out(i) = wp::sqrt(y(i)), [&](int64_t a) { return std::sqrt(real(ys[a])); });
  in.check("tanh", out(i) = wp::tanh(x(i)), [&](int64_t a) { return std::tanh(real(xs[a])); });
  in.check("abs", out(i) = wp::abs(x(i)),
           [&](int64_t a) { return xs[a] < T(0) ? T(-xs[a]) : xs[a]; });
  // Results in double for integer arrays: scaling before the conversion keeps the fraction.
  in.check("log_scaled", out(i) = wp::log(y(i)) * 100,
           [&](int64_t a) { return std::log(real(ys[a])) * 100; });
  in.check("sqrt_scaled", out(i) = 10 * wp::sqrt(y(i) + 2),
           [&](int64_t a) { return 10 * std::sqrt(real(T(ys[a] + 2))); });
  in.check("tanh_scaled", out(i) = wp::tanh(s(i)) * 1000,
           [&](int64_t a) { return std::tanh(real(ss[a])) * 1000; });
  in.check("nested", out(i) = wp::sqrt(wp::abs(x(i) * y(i)) + 1) - wp::exp(s(i)) / 8,
           [&](int64_t a) {
             const T p = T(xs[a] * ys[a]);
             const T ap = p < T(0) ? T(-p) : p;
             return std::sqrt(real(T(ap + 1))) - std::exp(real(ss[a])) / 8;
           });
  in.check("log_of_exp", out(i) = wp::log(wp::exp(s(i))) * 1000,
           [&](int64_t a) { return std::log(std::exp(real(ss[a]))) * 1000; });
}

TEMPLATE_TEST_CASE("expressions: wp::max and wp::min", "[expr][ops]", WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i] = wp::indices<1>();
  inputs<T> in;
  auto& x = in.x;
  auto& z = in.z;
  auto& out = in.out;
  const auto& xs = in.xs;
  const auto& zs = in.zs;
  auto mx = [](auto p, auto q) {
    using C = std::common_type_t<decltype(p), decltype(q)>;
    return C(p) < C(q) ? C(q) : C(p);
  };
  auto mn = [](auto p, auto q) {
    using C = std::common_type_t<decltype(p), decltype(q)>;
    return C(q) < C(p) ? C(q) : C(p);
  };
  const T t = make_value<T>(2.0);

  in.check("max_ee", out(i) = wp::max(x(i), z(i)), [&](int64_t a) { return mx(xs[a], zs[a]); });
  in.check("min_ee", out(i) = wp::min(x(i), z(i)), [&](int64_t a) { return mn(xs[a], zs[a]); });
  in.check("max_es", out(i) = wp::max(x(i), 0), [&](int64_t a) { return mx(xs[a], 0); });
  in.check("min_es", out(i) = wp::min(x(i), t), [&](int64_t a) { return mn(xs[a], t); });
  in.check("max_se", out(i) = wp::max(-1, x(i)), [&](int64_t a) { return mx(-1, xs[a]); });
  in.check("min_se", out(i) = wp::min(t, x(i)), [&](int64_t a) { return mn(t, xs[a]); });
  in.check("max_double", out(i) = wp::max(x(i), 1.5), [&](int64_t a) { return mx(xs[a], 1.5); });
  in.check("clamp", out(i) = wp::min(wp::max(x(i), -2), 3),
           [&](int64_t a) { return mn(mx(xs[a], -2), 3); });
  in.check("max_of_exprs", out(i) = wp::max(x(i) * 2, z(i) - x(i)),
           [&](int64_t a) { return mx(T(xs[a] * 2), T(zs[a] - xs[a])); });
}

TEMPLATE_TEST_CASE("expressions: comparisons and wp::select", "[expr][ops]", WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i] = wp::indices<1>();
  inputs<T> in;
  auto& x = in.x;
  auto& z = in.z;
  auto& out = in.out;
  const auto& xs = in.xs;
  const auto& zs = in.zs;

  // The inputs make every outcome occur.
  int lt = 0, eq = 0, gt = 0;
  for (int64_t a = 0; a < n; ++a) (xs[a] < zs[a] ? lt : xs[a] == zs[a] ? eq : gt)++;
  REQUIRE(lt > 0);
  REQUIRE(eq > 0);
  REQUIRE(gt > 0);

  in.check("lt", out(i) = wp::select(x(i) < z(i), x(i), z(i) * 2),
           [&](int64_t a) { return xs[a] < zs[a] ? xs[a] : T(zs[a] * 2); });
  in.check("le", out(i) = wp::select(x(i) <= z(i), x(i), z(i) * 2),
           [&](int64_t a) { return xs[a] <= zs[a] ? xs[a] : T(zs[a] * 2); });
  in.check("gt", out(i) = wp::select(x(i) > z(i), x(i), z(i) * 2),
           [&](int64_t a) { return xs[a] > zs[a] ? xs[a] : T(zs[a] * 2); });
  in.check("ge", out(i) = wp::select(x(i) >= z(i), x(i), z(i) * 2),
           [&](int64_t a) { return xs[a] >= zs[a] ? xs[a] : T(zs[a] * 2); });
  in.check("eq", out(i) = wp::select(x(i) == z(i), x(i), z(i) * 2),
           [&](int64_t a) { return xs[a] == zs[a] ? xs[a] : T(zs[a] * 2); });
  in.check("ne", out(i) = wp::select(x(i) != z(i), x(i), z(i) * 2),
           [&](int64_t a) { return xs[a] != zs[a] ? xs[a] : T(zs[a] * 2); });

  // Scalars in comparisons and as branches.
  in.check("cmp_scalar_r", out(i) = wp::select(x(i) > 0, x(i), -x(i)),
           [&](int64_t a) { return xs[a] > 0 ? xs[a] : T(-xs[a]); });
  in.check("cmp_scalar_l", out(i) = wp::select(1 <= x(i), 10, 20),
           [&](int64_t a) { return 1 <= xs[a] ? 10 : 20; });
  in.check("branch_scalars", out(i) = wp::select(x(i) == z(i), 1.5, x(i)),
           [&](int64_t a) { return xs[a] == zs[a] ? T(1.5) : xs[a]; });
  in.check("nested_select", out(i) = wp::select(x(i) < 0, -1, wp::select(x(i) > 0, 1, 0)),
           [&](int64_t a) { return xs[a] < 0 ? -1 : (xs[a] > 0 ? 1 : 0); });
  // A comparison used as a number (true = 1).
  in.check("cmp_value", out(i) = (x(i) < z(i)) + (x(i) == z(i)) * 2,
           [&](int64_t a) { return int(xs[a] < zs[a]) + int(xs[a] == zs[a]) * 2; });
  in.check("cmp_assigned", out(i) = (x(i) != z(i)), [&](int64_t a) { return xs[a] != zs[a]; });
}

TEMPLATE_TEST_CASE("expressions: wp::val gives global coordinates", "[expr][ops]",
                   WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i, j] = wp::indices<2>();
  inputs<T> in;
  auto& x = in.x;
  auto& out = in.out;
  const auto& xs = in.xs;

  in.check("val", out(i) = wp::val(i), [&](int64_t a) { return a; });
  in.check("val_plus_x", out(i) = x(i) + wp::val(i), [&](int64_t a) { return xs[a] + a; });
  in.check("val_times_x", out(i) = x(i) * wp::val(i) - 1, [&](int64_t a) { return xs[a] * a - 1; });
  in.check("val_float_mix", out(i) = wp::val(i) * 0.25 + x(i),
           [&](int64_t a) { return double(a) * 0.25 + xs[a]; });
  in.check("val_int_div", out(i) = wp::val(i) / 4, [&](int64_t a) { return a / 4; });
  in.check("val_in_select", out(i) = wp::select(wp::val(i) < 10, x(i), 0),
           [&](int64_t a) { return a < 10 ? xs[a] : T(0); });

  SECTION("a space with lo > 0") {
    const int64_t lo = 5, hi = 29;
    for (int64_t a = 0; a < n; ++a) out.data()[a] = T(-9);
    wp::run(wp::map("val_lo", wp::space({lo, hi}), out(i) = wp::val(i) * 2 + x(i - lo)));
    for (int64_t a = 0; a < n; ++a) {
      if (a >= lo && a < hi)
        check_element<T>(out.data()[a], 2 * a + xs[a - lo], a);
      else
        check_element<T>(out.data()[a], T(-9), a);
    }
  }
  SECTION("a space with lo > 0 mixed with floats") {
    const int64_t lo = 3, hi = 20;
    for (int64_t a = 0; a < n; ++a) out.data()[a] = T(0);
    wp::run(wp::map("val_lo_f", wp::space({lo, hi}),
                    out(i) = wp::val(i) * 0.5f + wp::sqrt(wp::val(i) + x(i) * 0)));
    for (int64_t a = lo; a < hi; ++a)
      check_element<T>(out.data()[a], double(a) * 0.5f + std::sqrt(double(a + xs[a] * 0)), a);
    for (int64_t a = 0; a < lo; ++a) check_element<T>(out.data()[a], T(0), a);
  }
  SECTION("two dimensions, rows along either index, shifted bounds") {
    constexpr int64_t R = 7, C = 13;
    wp::array<T, 2> M("M", {R + 2, C + 1});
    wp::array<T, 2> Mt("Mt", {C + 1, R + 2});
    for (int64_t a = 0; a < M.size(); ++a) M.data()[a] = T(-5);
    for (int64_t a = 0; a < Mt.size(); ++a) Mt.data()[a] = T(-5);
    // M(i, j): rows along j; Mt(j, i): rows along i.
    wp::run(wp::program(wp::map("val2d", wp::space({2, R + 2}, {1, C + 1}),
                                M(i, j) = wp::val(i) * 100 + wp::val(j)),
                        wp::map("val2dt", wp::space({2, R + 2}, {1, C + 1}),
                                Mt(j, i) = wp::val(i) * 100 - wp::val(j))));
    for (int64_t a = 0; a < R + 2; ++a)
      for (int64_t b = 0; b < C + 1; ++b) {
        const bool inside = a >= 2 && b >= 1;
        check_element<T>(M.data()[a * (C + 1) + b], inside ? a * 100 + b : -5, a * 100 + b);
        check_element<T>(Mt.data()[b * (R + 2) + a], inside ? a * 100 - b : -5, a * 100 + b);
      }
  }
}

TEMPLATE_TEST_CASE("expressions: two-dimensional expressions with strided rows", "[expr][ops]",
                   WP_ELEMENT_TYPES) {
  using T = TestType;
  auto [i, j] = wp::indices<2>();
  constexpr int64_t R = 7, C = 13;
  wp::array<T, 2> A("A", {R, C});
  wp::array<T, 2> B("B", {C, R});
  wp::array<T, 1> v("v", {C});
  wp::array<T, 2> out("out", {R, C});
  for (int64_t a = 0; a < R * C; ++a) {
    A.data()[a] = make_value<T>(double((a * 5) % 17 - 8));
    B.data()[a] = make_value<T>(double(1 + (a * 3) % 11));
  }
  for (int64_t b = 0; b < C; ++b) v.data()[b] = make_value<T>(double(b - 6));
  const T s = make_value<T>(3.0);
  wp::run(wp::map(
      "mix2d", wp::space(R, C),
      out(i, j) = wp::select(A(i, j) > v(j), A(i, j) * B(j, i) - s, wp::abs(v(j)) + s * A(i, j)) /
                  B(j, i)));
  for (int64_t a = 0; a < R; ++a)
    for (int64_t b = 0; b < C; ++b) {
      const T av = A.data()[a * C + b], bv = B.data()[b * R + a], vv = v.data()[b];
      const T abs_v = vv < T(0) ? T(-vv) : vv;
      const T num = av > vv ? T(av * bv - s) : T(abs_v + s * av);
      check_element<T>(out.data()[a * C + b], num / bv, a * C + b);
    }
}

TEST_CASE("expressions: str() text", "[expr][ops]") {
  auto [i] = wp::indices<1>();
  wp::array<double, 1> x("x", {n});
  wp::array<double, 1> y("y", {n});
  CHECK((x(i) + y(i)).str() == "(x(i0) + y(i0))");
  CHECK((x(i) * 2.5).str() == "(x(i0) * 2.5)");
  CHECK((3 - x(i + 1)).str() == "(3 - x(i0 + 1))");
  CHECK((-x(i)).str() == "-(x(i0))");
  CHECK(wp::exp(x(i)).str() == "exp(x(i0))");
  CHECK(wp::max(x(i), 0).str() == "max(x(i0), 0)");
  CHECK(wp::select(x(i) < y(i), x(i), 1).str() == "select((x(i0) < y(i0)), x(i0), 1)");
  CHECK((wp::val(i) * 2).str() == "(val(i0) * 2)");
}

TEST_CASE("expressions: value types follow C++ arithmetic", "[expr][ops]") {
  auto [i] = wp::indices<1>();
  wp::array<float, 1> f("f", {n});
  wp::array<int32_t, 1> a("a", {n});
  wp::array<int64_t, 1> b("b", {n});
  STATIC_REQUIRE(std::is_same_v<decltype(f(i) + f(i))::value_type, float>);
  STATIC_REQUIRE(std::is_same_v<decltype(f(i) * 2.0)::value_type, double>);
  STATIC_REQUIRE(std::is_same_v<decltype(a(i) + b(i))::value_type, int64_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(a(i) * f(i))::value_type, float>);
  STATIC_REQUIRE(std::is_same_v<decltype(wp::val(i) + a(i))::value_type, int64_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(wp::val(i) * f(i))::value_type, float>);
  STATIC_REQUIRE(std::is_same_v<decltype(wp::exp(a(i)))::value_type, double>);
  STATIC_REQUIRE(std::is_same_v<decltype(wp::exp(f(i)))::value_type, float>);
  STATIC_REQUIRE(std::is_same_v<decltype(a(i) < b(i))::value_type, bool>);
  STATIC_REQUIRE(std::is_same_v<decltype(wp::select(a(i) < b(i), a(i), f(i)))::value_type, float>);
  STATIC_REQUIRE(std::is_same_v<decltype(wp::max(a(i), 1.5))::value_type, double>);
  STATIC_REQUIRE(std::is_same_v<decltype(-a(i))::value_type, int>);
}
