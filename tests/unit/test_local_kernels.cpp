// The local CPU executor's kernels (wp::run, exec/cpu/loop.hpp) against plain loops written
// here: elementwise arithmetic and math functions, special values (NaN, infinities, -0.0,
// denormals, overflowing and underflowing arguments) at the first, middle and last positions
// of rows, lengths and row starts that are no multiple of any vector width, rows along either
// axis of 2-D arrays, broadcasts, row and column reductions, inner wp::sum / max_of / min_of
// ranges with constant and affine bounds (windows, 3x3 stencils, triangles, ranges empty at
// some points), and spaces large enough to be split over OpenMP threads.
//
// What is compared how:
//  - exactly (the same bits; any NaN equals any NaN): + - * /, negation, sqrt (IEEE 754
//    rounds these correctly), max, min, select and comparisons, elementwise. (The references
//    are plain C++ expressions in the same order; the test build has no FMA contraction.)
//  - exactly up to the sign of a zero: abs (abs(-0.0) is +0.0, as std::abs gives: the case
//    at the end checks the sign), and row / window max and min, whose order of
//    combining may change which of -0.0 and +0.0 a tie keeps (the library documents NaN
//    propagation, not the sign of a zero).
//  - within 2 ulp: exp, log, tanh (4 ulp for tanh(x) * x and sigmoid); NaN exactly where the
//  reference
//    is NaN, infinities and zeros (with their signs) exactly.
//  - sums within 1e-5 (float) / 1e-12 (double) of the sum of the terms' magnitudes, since the
//    order of addition may change; NaN and infinite sums exactly.
// Max and min propagate NaN in either position (README, "Errors"); an empty max_of range
// gives -inf and an empty min_of range +inf (their identities, expr/reduce.hpp), an empty
// sum 0.

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <workpart/workpart.hpp>

#include "../omp_threads.hpp"

namespace wp = workpart;
using std::int64_t;

namespace {

// ---- comparisons -------------------------------------------------------------------------

template <class T>
using bits_of = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;

template <class T>
bits_of<T> bits(T v) {
  bits_of<T> b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

/// The same bits, or both NaN.
template <class T>
bool exact_equal(T got, T want) {
  if (std::isnan(want)) return std::isnan(got);
  return bits(got) == bits(want);
}

/// Equal values (-0.0 == +0.0), or both NaN.
template <class T>
bool value_equal(T got, T want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want;
}

/// Distance in units in the last place between two non-NaN values of one type, counted
/// through the denormals (-0.0 and +0.0 are one point).
template <class T>
std::uint64_t ulp_distance(T a, T b) {
  using I = bits_of<T>;
  auto ordered = [](T v) -> I {
    const I k = bits(v);
    return k < 0 ? I(std::numeric_limits<I>::min() - k) : k;  // negatives: minus the magnitude
  };
  const I x = ordered(a), y = ordered(b);
  using U = std::make_unsigned_t<I>;
  return x >= y ? std::uint64_t(U(x) - U(y)) : std::uint64_t(U(y) - U(x));
}

/// Within n ulp; NaN exactly where the reference is NaN; infinities exactly; a zero where
/// the reference is a zero has its sign.
template <class T>
bool within_ulps(T got, T want, std::uint64_t n) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  if (want == 0 && got == 0) return std::signbit(got) == std::signbit(want);
  return ulp_distance(got, want) <= n;
}

template <class T>
constexpr double sum_tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;

/// A sum: within sum_tolerance<T> of `magnitude` (the sum of the terms' magnitudes) of the
/// sum in double (n * 2^-53 * magnitude from the exact sum, far inside 1e-12 for these
/// lengths); a NaN or infinite sum exactly.
template <class T>
bool sum_close(T got, double want, double magnitude) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return std::isinf(got) && (got > 0) == (want > 0);
  if (!std::isfinite(got)) return false;
  const double tol = sum_tolerance<T> * magnitude + std::numeric_limits<T>::denorm_min();
  return std::fabs(got - want) <= tol;
}

template <class T>
std::string show(T v) {
  std::ostringstream o;
  o << std::setprecision(std::numeric_limits<T>::max_digits10) << v;
  if (std::isfinite(v)) o << " (" << std::hexfloat << v << ")";
  return o.str();
}

/// Counts the mismatches of one output; keeps the first few, described.
struct tally {
  std::string what;
  int64_t checked = 0, wrong = 0;
  std::string first;
  explicit tally(std::string w) : what(std::move(w)) {}
  template <class Describe>
  void add(bool ok, Describe&& describe) {
    ++checked;
    if (ok) return;
    if (++wrong <= 5) first += "\n    " + std::string(describe());
  }
};
void report(const tally& t) {
  INFO(t.what << ": " << t.wrong << " of " << t.checked << " elements wrong" << t.first);
  CHECK(t.wrong == 0);
}

enum class compare { exact, value, ulp2, ulp4 };

template <class T>
bool matches(compare how, T got, T want) {
  switch (how) {
    case compare::exact:
      return exact_equal(got, want);
    case compare::value:
      return value_equal(got, want);
    case compare::ulp2:
      return within_ulps(got, want, 2);
    case compare::ulp4:
      return within_ulps(got, want, 4);
  }
  return false;
}

// ---- references for the NaN-propagating max and min (README, "Errors") ---------------------

template <class T>
T ref_max(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a > b ? a : b;
}
template <class T>
T ref_min(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? a : b;
}

// ---- inputs ------------------------------------------------------------------------------

/// splitmix64: deterministic inputs.
struct rng {
  std::uint64_t s;
  explicit rng(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {}
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
};
std::uint64_t seed_of(std::initializer_list<int64_t> v) {
  std::uint64_t h = 1469598103934665603ull;
  for (int64_t x : v) h = (h ^ std::uint64_t(x)) * 1099511628211ull;
  return h;
}

/// General operands: mostly in [-6, 6], a quarter of small magnitude (down to 1e-9).
template <class T>
T random_x(rng& g) {
  const std::uint64_t k = g.next();
  if (k % 4 == 0) return T((k & 16 ? -1.0 : 1.0) * std::pow(10.0, g.uniform(-9.0, 0.0)));
  return T(g.uniform(-6.0, 6.0));
}
/// exp arguments: mostly in [-10, 10], a third over (almost) the whole finite range.
template <class T>
T random_e(rng& g) {
  const double wide = std::is_same_v<T, float> ? 87.0 : 700.0;
  return g.next() % 3 == 0 ? T(g.uniform(-wide, wide)) : T(g.uniform(-10.0, 10.0));
}
/// log arguments: positive, log-uniform over (almost) the normal range.
template <class T>
T random_l(rng& g) {
  const double e = std::is_same_v<T, float> ? 37.0 : 300.0;
  return T(std::pow(10.0, g.uniform(-e, e)));
}

template <class T>
struct special {
  static constexpr T nan = std::numeric_limits<T>::quiet_NaN();
  static constexpr T inf = std::numeric_limits<T>::infinity();
  static constexpr T dmin = std::numeric_limits<T>::denorm_min();
  static constexpr T norm_min = std::numeric_limits<T>::min();  // the smallest normal
  static constexpr T sub = norm_min / 4;                        // a denormal
  static constexpr T big = std::numeric_limits<T>::max();
  static constexpr T eps = std::numeric_limits<T>::epsilon();
};

/// Pairs (x, y) at one position: NaN in either operand or both, infinities, zeros of both
/// signs against each other, denormals, overflow, ties, tanh's saturation and small values.
template <class T>
std::vector<std::pair<T, T>> xy_specials() {
  using S = special<T>;
  return {{S::nan, T(1)},      {T(1), S::nan},      {S::nan, -S::inf},     {-S::inf, S::nan},
          {S::nan, S::nan},    {S::inf, T(2)},      {-S::inf, T(-2)},      {T(2), S::inf},
          {T(-0.0), T(0.0)},   {T(0.0), T(-0.0)},   {T(-0.0), T(-0.0)},    {T(0.0), T(0.0)},
          {S::dmin, -S::dmin}, {S::sub, T(3)},      {-S::sub, S::sub / 2}, {S::big, T(0.5)},
          {-S::big, -S::big},  {T(20), T(-20)},     {T(-20), T(20)},       {T(1e-8), T(1e-8)},
          {T(-1e-8), T(5)},    {T(9.01), T(1)},     {T(-9.01), T(-1)},     {T(0.55), T(0.55)},
          {T(-0.625), T(3)},   {T(1e-4), T(-1e-4)}, {T(1), T(0.0)},        {T(-1), T(-0.0)},
          {S::inf, S::inf},    {-S::inf, S::inf},   {T(1e30), T(-1e-30)},  {T(-3), T(-3)}};
}
/// exp arguments: overflow and underflow of float and double, denormal results, NaN, +-inf.
template <class T>
std::vector<T> exp_specials() {
  using S = special<T>;
  return {S::nan,    S::inf,    -S::inf,   T(-0.0),   T(0.0),    S::dmin,    -S::dmin,  T(100),
          T(-100),   T(88.8f),  T(-104.f), T(88.72f), T(-87.5f), T(-103.5f), T(709.7),  T(709.9),
          T(-708.5), T(-745.2), T(-1000),  T(1000),   T(1e-8),   T(-1e-8),   T(0.3465), T(-0.3465),
          T(1),      T(-1),     T(1e-30),  T(20),     T(-20),    T(0.5),     T(2),      T(-88.5f)};
}
/// log arguments: zeros, negatives, infinities, NaN, denormals, the extremes, around 1.
template <class T>
std::vector<T> log_specials() {
  using S = special<T>;
  const T above_1 = T(1) + S::eps, below_1 = T(1) - S::eps / 2;
  return {T(0.0),   T(-0.0), T(-1),       -S::inf,  S::inf,  S::nan,
          S::dmin,  S::sub,  S::norm_min, S::big,   T(1),    above_1,
          below_1,  T(2),    T(0.5),      T(1e-30), T(1e30), T(2.718281828459045),
          -S::dmin, T(0.999)};
}
/// Values for sums, maxima and minima (no large finite values: those would overflow a float
/// sum that the reference does in double).
template <class T>
std::vector<T> reduce_specials() {
  using S = special<T>;
  return {S::nan,  S::inf, -S::inf, T(-0.0), T(0.0), S::dmin,
          -S::sub, S::sub, T(1e-8), T(-20),  T(20)};
}

/// Position of special value k in a row of n elements: from the first element on (round 0),
/// from the last element back, i.e. in the vector tail (round 1), from the middle, spread
/// (round 2).
int64_t spot(int round, int64_t k, int64_t n) {
  switch (round % 3) {
    case 0:
      return k % n;
    case 1:
      return n - 1 - k % n;
    default:
      return (n / 2 + k * 5) % n;
  }
}

/// An array viewing a buffer one element past an allocation's start: its rows start off the
/// allocator's alignment, and its last element is the allocation's last (ASan sees overruns).
template <class T, int N>
struct offset_buffer {
  std::vector<T> store;
  wp::array<T, N> arr;
  offset_buffer(const char* name, std::array<int64_t, N> shape)
      : store(std::size_t(1 + count(shape))), arr(name, shape, store.data() + 1) {}
  static int64_t count(const std::array<int64_t, N>& s) {
    int64_t n = 1;
    for (int64_t e : s) n *= e;
    return n;
  }
  T& operator[](int64_t k) { return store[std::size_t(1 + k)]; }
};

template <class T>
constexpr T sentinel = T(-777.25);

template <class T, int N>
void fill_sentinel(wp::array<T, N>& a) {
  std::fill(a.data(), a.data() + a.size(), sentinel<T>);
}

constexpr int64_t lengths[] = {1, 2, 3, 7, 15, 17, 31, 33, 63, 65, 1000, 1023};

// ---- elementwise, 1-D --------------------------------------------------------------------

/// One map of elementwise statements over the space [lo, lo + n), x read at i + sh; special
/// values placed by `round`. Every output against the loop; outside the space unchanged.
template <class T>
void elementwise_1d(int64_t n, int64_t lo, int64_t sh, int round) {
  INFO("elementwise 1-D: space [" << lo << ", " << lo + n << "), x read at i + " << sh << ", round "
                                  << round);
  auto [i] = wp::indices<1>();
  const int64_t hi = lo + n;
  offset_buffer<T, 1> xb("x", {hi + sh}), yb("y", {hi}), eb("e", {hi}), lb("l", {hi});
  rng g(seed_of({n, lo, sh, round, int64_t(sizeof(T))}));
  for (int64_t p = 0; p < hi + sh; ++p) xb[p] = random_x<T>(g);
  for (int64_t p = 0; p < hi; ++p) {
    yb[p] = random_x<T>(g);
    eb[p] = random_e<T>(g);
    lb[p] = random_l<T>(g);
  }
  const auto xy = xy_specials<T>();
  for (std::size_t k = 0; k < xy.size(); ++k) {
    const int64_t t = lo + spot(round, int64_t(k), n);
    xb[t + sh] = xy[k].first;
    yb[t] = xy[k].second;
  }
  const auto es = exp_specials<T>();
  for (std::size_t k = 0; k < es.size(); ++k) eb[lo + spot(round, int64_t(k), n)] = es[k];
  const auto ls = log_specials<T>();
  for (std::size_t k = 0; k < ls.size(); ++k) lb[lo + spot(round, int64_t(k) + 3, n)] = ls[k];

  struct kernel {
    const char* name;
    compare how;
    std::function<T(T x, T y, T e, T l)> ref;
  };
  const T a = T(1.75), b = T(-0.3);
  const std::vector<kernel> ks = {
      {"a * x + b", compare::exact, [&](T x, T, T, T) { return a * x + b; }},
      {"x / y", compare::exact, [](T x, T y, T, T) { return x / y; }},
      {"-x", compare::exact, [](T x, T, T, T) { return -x; }},
      {"abs(x)", compare::value, [](T x, T, T, T) { return std::abs(x); }},
      {"sqrt(x)", compare::exact, [](T x, T, T, T) { return std::sqrt(x); }},
      {"max(x, y)", compare::exact, [](T x, T y, T, T) { return ref_max(x, y); }},
      {"min(x, y)", compare::exact, [](T x, T y, T, T) { return ref_min(x, y); }},
      {"select(x > 0, x, 0.1 * x)", compare::exact,
       [](T x, T, T, T) { return T(x > 0 ? double(x) : 0.1 * double(x)); }},
      {"select(x > 0, x, T(0.1) * x)", compare::exact,
       [](T x, T, T, T) { return x > 0 ? x : T(0.1) * x; }},
      {"select(x < y, x * y, x - y)", compare::exact,
       [](T x, T y, T, T) { return x < y ? x * y : x - y; }},
      {"min(max(x, 0), 6)", compare::exact,
       [](T x, T, T, T) { return ref_min(ref_max(x, T(0)), T(6)); }},
      {"max(-1, min(1.5, x))", compare::exact,
       [](T x, T, T, T) { return ref_max(T(-1), ref_min(T(1.5), x)); }},
      {"select(x != x, 0, x / 2)", compare::exact,
       [](T x, T, T, T) { return x != x ? T(0) : x / T(2); }},
      {"(x >= y) * 2 - (x == y) + x * 0.5", compare::exact,
       [](T x, T y, T, T) { return T(double(int(x >= y) * 2 - int(x == y)) + double(x) * 0.5); }},
      {"2.0f - x * y + x / 3", compare::exact,
       [](T x, T y, T, T) { return T(2.0f) - x * y + x / T(3); }},
      {"sqrt(l)", compare::exact, [](T, T, T, T l) { return std::sqrt(l); }},
      {"x / l", compare::exact, [](T x, T, T, T l) { return x / l; }},
      {"exp(e)", compare::ulp2, [](T, T, T e, T) { return std::exp(e); }},
      {"exp(x)", compare::ulp2, [](T x, T, T, T) { return std::exp(x); }},
      {"log(l)", compare::ulp2, [](T, T, T, T l) { return std::log(l); }},
      {"log(y)", compare::ulp2, [](T, T y, T, T) { return std::log(y); }},
      {"tanh(x)", compare::ulp2, [](T x, T, T, T) { return std::tanh(x); }},
      {"tanh(x) * x", compare::ulp4, [](T x, T, T, T) { return std::tanh(x) * x; }},
      // lane by lane inside the packet: the <cmath> function's bits
      {"erf(x)", compare::exact, [](T x, T, T, T) { return std::erf(x); }},
      {"log1p(l)", compare::exact, [](T, T, T, T l) { return std::log1p(l); }},
      {"expm1(e)", compare::exact, [](T, T, T e, T) { return std::expm1(e); }},
      {"pow(abs(x), y)", compare::exact, [](T x, T y, T, T) { return std::pow(std::abs(x), y); }},
      // 1 / (1 + exp(-x)) with the vector exp (within 2 ulp of std::exp)
      {"sigmoid(x)", compare::ulp4, [](T x, T, T, T) { return T(1) / (T(1) + std::exp(-x)); }},
  };
  std::deque<wp::array<T, 1>> out;
  for (std::size_t k = 0; k < ks.size(); ++k)
    out.emplace_back("o" + std::to_string(k), std::array<int64_t, 1>{hi + 1});
  for (auto& o : out) fill_sentinel(o);

  auto& y = yb.arr;
  auto& e = eb.arr;
  auto& l = lb.arr;
  const auto x = xb.arr(i + sh);
  wp::run(wp::map("elementwise", wp::space({lo, hi}),                    //
                  out[0](i) = a * x + b,                                 //
                  out[1](i) = x / y(i),                                  //
                  out[2](i) = -x,                                        //
                  out[3](i) = wp::abs(x),                                //
                  out[4](i) = wp::sqrt(x),                               //
                  out[5](i) = wp::max(x, y(i)),                          //
                  out[6](i) = wp::min(x, y(i)),                          //
                  out[7](i) = wp::select(x > 0, x, 0.1 * x),             //
                  out[8](i) = wp::select(x > 0, x, T(0.1) * x),          //
                  out[9](i) = wp::select(x < y(i), x * y(i), x - y(i)),  //
                  out[10](i) = wp::min(wp::max(x, 0), 6),                //
                  out[11](i) = wp::max(-1, wp::min(1.5, x)),             //
                  out[12](i) = wp::select(x != x, T(0), x / 2),          //
                  out[13](i) = (x >= y(i)) * 2 - (x == y(i)) + x * 0.5,  //
                  out[14](i) = 2.0f - x * y(i) + x / 3,                  //
                  out[15](i) = wp::sqrt(l(i)),                           //
                  out[16](i) = x / l(i),                                 //
                  out[17](i) = wp::exp(e(i)),                            //
                  out[18](i) = wp::exp(x),                               //
                  out[19](i) = wp::log(l(i)),                            //
                  out[20](i) = wp::log(y(i)),                            //
                  out[21](i) = wp::tanh(x),                              //
                  out[22](i) = wp::tanh(x) * x,                          //
                  out[23](i) = wp::erf(x),                               //
                  out[24](i) = wp::log1p(l(i)),                          //
                  out[25](i) = wp::expm1(e(i)),                          //
                  out[26](i) = wp::pow(wp::abs(x), y(i)),                //
                  out[27](i) = wp::sigmoid(x)));
  REQUIRE(ks.size() == 28);  // one reference per statement, in order

  for (std::size_t k = 0; k < ks.size(); ++k) {
    tally t(ks[k].name);
    const T* o = out[k].data();
    for (int64_t p = 0; p <= hi; ++p) {
      if (p < lo || p == hi) {
        t.add(exact_equal(o[p], sentinel<T>),
              [&] { return "outside the space, at " + std::to_string(p) + ": " + show(o[p]); });
        continue;
      }
      const T xv = xb[p + sh], yv = yb[p], ev = eb[p], lv = lb[p];
      const T want = ks[k].ref(xv, yv, ev, lv);
      t.add(matches(ks[k].how, o[p], want), [&] {
        return "at " + std::to_string(p) + " (x " + show(xv) + ", y " + show(yv) + ", e " +
               show(ev) + ", l " + show(lv) + "): got " + show(o[p]) + ", expected " + show(want);
      });
    }
    report(t);
  }
}

// ---- elementwise, 2-D --------------------------------------------------------------------

/// Statements over the box [r0, R) x [c0, C) of R x C arrays: transposed reads (exp(xt(j, i)))
/// and writes (ot(j, i)), broadcasts along rows (a(j)) and columns (c(i)).
template <class T>
void elementwise_2d(int64_t R, int64_t C, int64_t r0, int64_t c0, int round) {
  INFO("elementwise 2-D: " << R << " x " << C << ", box [" << r0 << ", " << R << ") x [" << c0
                           << ", " << C << "), round " << round);
  auto [i, j] = wp::indices<2>();
  offset_buffer<T, 2> xb("x", {R, C}), xtb("xt", {C, R}), lb("l", {R, C});
  offset_buffer<T, 1> ab("a", {C}), bb("b", {C}), cb("c", {R});
  rng g(seed_of({R, C, r0, c0, round, int64_t(sizeof(T)), 2}));
  for (int64_t q = 0; q < R * C; ++q) {
    xb[q] = random_x<T>(g);
    xtb[q] = random_x<T>(g);
    lb[q] = random_l<T>(g);
  }
  for (int64_t q = 0; q < C; ++q) {
    ab[q] = random_x<T>(g);
    bb[q] = random_x<T>(g);
  }
  for (int64_t q = 0; q < R; ++q) cb[q] = random_x<T>(g);
  // Special values in every row of the box, at the row's first / last / middle positions.
  const auto xy = xy_specials<T>();
  const auto ls = log_specials<T>();
  const int64_t width = C - c0;
  for (int64_t r = r0; r < R; ++r)
    for (int64_t q = 0; q < 4; ++q) {
      const int64_t col = c0 + spot(round, q + r, width);
      const auto& s = xy[std::size_t(r * 4 + q) % xy.size()];
      xb[r * C + col] = s.first;
      xtb[col * R + r] = s.second;
      lb[r * C + col] = ls[std::size_t(r * 4 + q) % ls.size()];
    }
  if (round == 1) ab[C - 1] = special<T>::nan;  // max(x, NaN) along a whole column
  if (round == 2) {
    ab[c0] = T(-0.0);
    cb[R - 1] = special<T>::inf;
  }

  std::deque<wp::array<T, 2>> out;
  for (int k = 0; k < 8; ++k)
    out.emplace_back("o" + std::to_string(k),
                     k == 1 ? std::array<int64_t, 2>{C, R} : std::array<int64_t, 2>{R, C});
  for (auto& o : out) fill_sentinel(o);
  auto& x = xb.arr;
  auto& xt = xtb.arr;
  auto& l = lb.arr;
  auto& a = ab.arr;
  auto& b = bb.arr;
  auto& c = cb.arr;
  wp::run(wp::map("elementwise2d", wp::space({r0, R}, {c0, C}),                        //
                  out[0](i, j) = wp::exp(xt(j, i)),                                    //
                  out[1](j, i) = wp::tanh(x(i, j)),                                    //
                  out[2](i, j) = x(i, j) * a(j) + b(j),                                //
                  out[3](i, j) = wp::max(x(i, j), a(j)) - c(i),                        //
                  out[4](i, j) = wp::select(x(i, j) > a(j), x(i, j), xt(j, i) * 0.5),  //
                  out[5](i, j) = wp::log(l(i, j)),                                     //
                  out[6](i, j) = wp::sqrt(wp::abs(xt(j, i))) + wp::min(x(i, j), c(i)),
                  out[7](i, j) = wp::tanh(xt(j, i)) * x(i, j)));

  struct kernel {
    const char* name;
    compare how;
    std::function<T(int64_t r, int64_t q)> ref;
  };
  auto X = [&](int64_t r, int64_t q) { return xb[r * C + q]; };
  auto XT = [&](int64_t r, int64_t q) { return xtb[q * R + r]; };  // xt(j = q, i = r)
  const std::vector<kernel> ks = {
      {"exp(xt(j, i))", compare::ulp2, [&](int64_t r, int64_t q) { return std::exp(XT(r, q)); }},
      {"ot(j, i) = tanh(x(i, j))", compare::ulp2,
       [&](int64_t r, int64_t q) { return std::tanh(X(r, q)); }},
      {"x(i, j) * a(j) + b(j)", compare::exact,
       [&](int64_t r, int64_t q) { return X(r, q) * ab[q] + bb[q]; }},
      {"max(x(i, j), a(j)) - c(i)", compare::exact,
       [&](int64_t r, int64_t q) { return ref_max(X(r, q), ab[q]) - cb[r]; }},
      {"select(x(i, j) > a(j), x(i, j), xt(j, i) * 0.5)", compare::exact,
       [&](int64_t r, int64_t q) {
         return T(X(r, q) > ab[q] ? double(X(r, q)) : double(XT(r, q)) * 0.5);
       }},
      {"log(l(i, j))", compare::ulp2,
       [&](int64_t r, int64_t q) { return std::log(lb[r * C + q]); }},
      {"sqrt(abs(xt(j, i))) + min(x(i, j), c(i))", compare::value,
       [&](int64_t r, int64_t q) {
         return std::sqrt(std::abs(XT(r, q))) + ref_min(X(r, q), cb[r]);
       }},
      {"tanh(xt(j, i)) * x(i, j)", compare::ulp4,
       [&](int64_t r, int64_t q) { return std::tanh(XT(r, q)) * X(r, q); }},
  };
  for (std::size_t k = 0; k < ks.size(); ++k) {
    tally t(ks[k].name);
    const T* o = out[k].data();
    for (int64_t r = 0; r < R; ++r)
      for (int64_t q = 0; q < C; ++q) {
        const int64_t at = k == 1 ? q * R + r : r * C + q;
        if (r < r0 || q < c0) {
          t.add(exact_equal(o[at], sentinel<T>), [&] {
            return "outside the box, at (" + std::to_string(r) + ", " + std::to_string(q) +
                   "): " + show(o[at]);
          });
          continue;
        }
        const T want = ks[k].ref(r, q);
        t.add(matches(ks[k].how, o[at], want), [&] {
          return "at (i " + std::to_string(r) + ", j " + std::to_string(q) + ") (x " +
                 show(X(r, q)) + ", xt " + show(XT(r, q)) + ", a " + show(ab[q]) + ", c " +
                 show(cb[r]) + "): got " + show(o[at]) + ", expected " + show(want);
        });
      }
    report(t);
  }
}

// ---- row and column reductions -----------------------------------------------------------

/// Row r's kind of content (r % 6): 0 plain; 1 a NaN; 2 +inf in x and in y at another spot
/// (x - y has +inf and -inf); 3 -inf; 4 plain, but NaN in the max / min accumulators' initial
/// values; 5 only zeros of both signs and denormals.
template <class T>
void fill_reduction_rows(offset_buffer<T, 2>& x, offset_buffer<T, 2>& y, offset_buffer<T, 2>& xt,
                         int64_t R, int64_t C, int64_t c0, int round, rng& g) {
  using S = special<T>;
  const T tiny[] = {T(-0.0), T(0.0), S::dmin, -S::dmin, S::sub, -S::sub / 3};
  for (int64_t r = 0; r < R; ++r)
    for (int64_t q = 0; q < C; ++q) {
      const bool zeros = r % 6 == 5;
      x[r * C + q] = zeros ? tiny[g.next() % 6] : T(g.uniform(-6.0, 6.0));
      y[r * C + q] = zeros ? tiny[g.next() % 6] : T(g.uniform(-6.0, 6.0));
      xt[q * R + r] = zeros ? tiny[g.next() % 6] : T(g.uniform(-6.0, 6.0));
    }
  const int64_t width = C - c0;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t p = c0 + spot(round, r / 6, width), p2 = c0 + spot(round, r / 6 + 2, width);
    switch (r % 6) {
      case 1:
        x[r * C + p] = S::nan;
        xt[p * R + r] = S::nan;
        break;
      case 2:
        x[r * C + p] = S::inf;
        y[r * C + p2] = S::inf;
        xt[p2 * R + r] = S::inf;
        break;
      case 3:
        x[r * C + p] = -S::inf;
        xt[p * R + r] = -S::inf;
        break;
      default:
        break;
    }
  }
}

/// Row sums, maxima and minima into existing values (+=, max_into, min_into) in both row
/// directions (s(i) += x(i, j) and s(i) += x(i, j) - y(i, j) run along different axes today),
/// through a transposed array, column sums / maxima / minima; then wp::all and constant-bound
/// inner ranges over the rows.
template <class T>
void row_reductions(int64_t R, int64_t C, int64_t c0, int round) {
  INFO("row reductions: " << R << " x " << C << ", columns [" << c0 << ", " << C << "), round "
                          << round);
  auto [i, j, k] = wp::indices<3>();
  offset_buffer<T, 2> xb("x", {R, C}), yb("y", {R, C}), xtb("xt", {C, R});
  rng g(seed_of({R, C, c0, round, int64_t(sizeof(T)), 3}));
  fill_reduction_rows(xb, yb, xtb, R, C, c0, round, g);
  auto X = [&](int64_t r, int64_t q) { return xb[r * C + q]; };
  auto D = [&](int64_t r, int64_t q) { return T(xb[r * C + q] - yb[r * C + q]); };
  auto XT = [&](int64_t r, int64_t q) { return xtb[q * R + r]; };

  // Outputs with their initial values: random; NaN for the max / min of rows of kind 4; 0 in
  // rows of kind 5 (so that their tiny sums, maxima and minima show).
  const char* row_names[] = {"s1", "s2", "m1", "m2", "n1", "n2", "ts",
                             "a1", "a2", "a3", "a4", "a5", "a6"};
  const char* col_names[] = {"cs", "cm", "cn"};
  std::deque<wp::array<T, 1>> rows, cols;
  for (const char* nm : row_names) rows.emplace_back(nm, std::array<int64_t, 1>{R});
  for (const char* nm : col_names) cols.emplace_back(nm, std::array<int64_t, 1>{C});
  std::vector<std::vector<T>> rows0, cols0;
  for (std::size_t s = 0; s < rows.size(); ++s) {
    for (int64_t r = 0; r < R; ++r)
      rows[s].data()[r] = (r % 6 == 4 && s >= 2 && s <= 5) ? special<T>::nan
                          : r % 6 == 5                     ? T(0)
                                                           : T(g.uniform(-8.0, 8.0));
    rows0.emplace_back(rows[s].data(), rows[s].data() + R);
  }
  for (auto& cl : cols) {
    for (int64_t q = 0; q < C; ++q) cl.data()[q] = T(g.uniform(-8.0, 8.0));
    cols0.emplace_back(cl.data(), cl.data() + C);
  }
  auto& x = xb.arr;
  auto& y = yb.arr;
  auto& xt = xtb.arr;
  wp::run(wp::map("rows", wp::space({0, R}, {c0, C}),           //
                  rows[0](i) += x(i, j),                        //
                  rows[1](i) += x(i, j) - y(i, j),              //
                  wp::max_into(rows[2](i), x(i, j)),            //
                  wp::max_into(rows[3](i), x(i, j) - y(i, j)),  //
                  wp::min_into(rows[4](i), x(i, j)),            //
                  wp::min_into(rows[5](i), x(i, j) - y(i, j)),  //
                  rows[6](i) += xt(j, i),                       //
                  cols[0](j) += x(i, j),                        //
                  wp::max_into(cols[1](j), x(i, j)),            //
                  wp::min_into(cols[2](j), xt(j, i))));
  wp::run(wp::map("row_ranges", wp::space(R),              //
                  rows[7](i) = wp::sum(x(i, wp::all)),     //
                  rows[8](i) = wp::max_of(x(i, wp::all)),  //
                  rows[9](i) = wp::min_of(x(i, wp::all)),  //
                  rows[10](i) = wp::sum(wp::range(k, c0, C), x(i, k) - y(i, k)),
                  rows[11](i) = wp::max_of(wp::range(k, c0, C), x(i, k)),
                  rows[12](i) = wp::min_of(wp::range(k, c0, C), x(i, k) - y(i, k))));

  enum kind { sum, max, min };
  struct reduction {
    const char* name;
    kind how;
    bool init;     // combined with the initial value (+=, max_into, min_into)
    int64_t from;  // first column
    std::function<T(int64_t r, int64_t q)> term;
  };
  const std::vector<reduction> row_red = {
      {"s(i) += x(i, j)", sum, true, c0, X},
      {"s(i) += x(i, j) - y(i, j)", sum, true, c0, D},
      {"max_into(m(i), x(i, j))", max, true, c0, X},
      {"max_into(m(i), x(i, j) - y(i, j))", max, true, c0, D},
      {"min_into(m(i), x(i, j))", min, true, c0, X},
      {"min_into(m(i), x(i, j) - y(i, j))", min, true, c0, D},
      {"s(i) += xt(j, i)", sum, true, c0, XT},
      {"sum(x(i, wp::all))", sum, false, 0, X},
      {"max_of(x(i, wp::all))", max, false, 0, X},
      {"min_of(x(i, wp::all))", min, false, 0, X},
      {"sum(range(k, c0, C), x(i, k) - y(i, k))", sum, false, c0, D},
      {"max_of(range(k, c0, C), x(i, k))", max, false, c0, X},
      {"min_of(range(k, c0, C), x(i, k) - y(i, k))", min, false, c0, D},
  };
  for (std::size_t s = 0; s < row_red.size(); ++s) {
    const auto& rd = row_red[s];
    tally t(rd.name);
    for (int64_t r = 0; r < R; ++r) {
      const T got = rows[s].data()[r];
      const T init = rows0[s][std::size_t(r)];
      double acc = rd.init ? init : 0.0, mag = rd.init ? std::fabs(init) : 0.0;
      T m = rd.init ? init : rd.how == max ? -special<T>::inf : special<T>::inf;
      for (int64_t q = rd.from; q < C; ++q) {
        const T v = rd.term(r, q);
        acc += v;
        mag += std::fabs(v);
        m = rd.how == max ? ref_max(m, v) : ref_min(m, v);
      }
      const bool ok = rd.how == sum ? sum_close(got, acc, mag) : value_equal(got, m);
      t.add(ok, [&] {
        return "row " + std::to_string(r) + ": got " + show(got) + ", expected " +
               (rd.how == sum ? show(acc) : show(m));
      });
    }
    report(t);
  }
  const std::vector<reduction> col_red = {
      {"c(j) += x(i, j)", sum, true, c0, X},
      {"max_into(c(j), x(i, j))", max, true, c0, X},
      {"min_into(c(j), xt(j, i))", min, true, c0, XT},
  };
  for (std::size_t s = 0; s < col_red.size(); ++s) {
    const auto& rd = col_red[s];
    tally t(rd.name);
    for (int64_t q = 0; q < C; ++q) {
      const T got = cols[s].data()[q];
      const T init = cols0[s][std::size_t(q)];
      if (q < c0) {  // outside the space: untouched
        t.add(exact_equal(got, init), [&] { return "column " + std::to_string(q) + " changed"; });
        continue;
      }
      double acc = init, mag = std::fabs(init);
      T m = init;
      for (int64_t r = 0; r < R; ++r) {
        const T v = rd.term(r, q);
        acc += v;
        mag += std::fabs(v);
        m = rd.how == max ? ref_max(m, v) : ref_min(m, v);
      }
      const bool ok = rd.how == sum ? sum_close(got, acc, mag) : value_equal(got, m);
      t.add(ok, [&] {
        return "column " + std::to_string(q) + ": got " + show(got) + ", expected " +
               (rd.how == sum ? show(acc) : show(m));
      });
    }
    report(t);
  }
}

// ---- inner ranges with constant bounds ---------------------------------------------------

/// Windows of W points over [lo, lo + n): sums (plain, weighted, of exp), max, min, a range
/// starting below 0, a max_of added into existing values.
template <class T>
void windows_1d(int64_t n, int64_t lo, int64_t W, int round) {
  INFO("windows: space [" << lo << ", " << lo + n << "), W = " << W << ", round " << round);
  auto [i, r] = wp::indices<2>();
  const int64_t hi = lo + n, len = hi + W - 1;
  offset_buffer<T, 1> xb("x", {len}), yb("y", {len}), wb("w", {W});
  rng g(seed_of({n, lo, W, round, int64_t(sizeof(T)), 4}));
  for (int64_t p = 0; p < len; ++p) {
    xb[p] = T(g.uniform(-6.0, 6.0));
    yb[p] = T(g.uniform(-6.0, 6.0));
  }
  for (int64_t p = 0; p < W; ++p) wb[p] = T(g.uniform(-2.0, 2.0));
  const auto sp = reduce_specials<T>();
  // Spread thin enough that most windows hold at most one special value.
  for (std::size_t k = 0; k < sp.size(); ++k) {
    const int64_t p = lo + spot(round, int64_t(k) * (W + 2), len - lo);
    xb[p] = sp[k];
  }
  std::deque<wp::array<T, 1>> out;
  for (int k = 0; k < 7; ++k)
    out.emplace_back("w" + std::to_string(k), std::array<int64_t, 1>{hi + 1});
  for (auto& o : out) fill_sentinel(o);
  for (int64_t p = lo; p < hi; ++p) out[6].data()[p] = T(g.uniform(-8.0, 8.0));
  const std::vector<T> init6(out[6].data(), out[6].data() + hi + 1);
  auto& x = xb.arr;
  auto& y = yb.arr;
  auto& w = wb.arr;
  wp::run(wp::map("windows", wp::space({lo, hi}),                                   //
                  out[0](i) = wp::sum(wp::range(r, 0, W), x(i + r)),                //
                  out[1](i) = wp::sum(wp::range(r, 0, W), w(r) * x(i + r)),         //
                  out[2](i) = wp::max_of(wp::range(r, 0, W), x(i + r)),             //
                  out[3](i) = wp::min_of(wp::range(r, 0, W), x(i + r) * y(i + r)),  //
                  out[4](i) = wp::sum(wp::range(r, 0, W), wp::exp(x(i + r))),       //
                  out[5](i) = wp::sum(wp::range(r, -1, W - 1), x(i + r + 1)),       //
                  out[6](i) += wp::max_of(wp::range(r, 0, W), x(i + r) - y(i + r))));

  enum kind { sum, max, min };
  struct window {
    const char* name;
    kind how;
    std::function<T(int64_t p, int64_t q)> term;  // the term at point p, window offset q
  };
  auto X = [&](int64_t p, int64_t q) { return xb[p + q]; };
  const std::vector<window> ws = {
      {"sum(range(r, 0, W), x(i + r))", sum, X},
      {"sum(range(r, 0, W), w(r) * x(i + r))", sum,
       [&](int64_t p, int64_t q) { return T(wb[q] * xb[p + q]); }},
      {"max_of(range(r, 0, W), x(i + r))", max, X},
      {"min_of(range(r, 0, W), x(i + r) * y(i + r))", min,
       [&](int64_t p, int64_t q) { return T(xb[p + q] * yb[p + q]); }},
      {"sum(range(r, 0, W), exp(x(i + r)))", sum,
       [&](int64_t p, int64_t q) { return std::exp(xb[p + q]); }},
      {"sum(range(r, -1, W - 1), x(i + r + 1))", sum, X},
      {"y(i) += max_of(range(r, 0, W), x(i + r) - y(i + r))", max,
       [&](int64_t p, int64_t q) { return T(xb[p + q] - yb[p + q]); }},
  };
  for (std::size_t k = 0; k < ws.size(); ++k) {
    tally t(ws[k].name);
    const T* o = out[k].data();
    for (int64_t p = 0; p <= hi; ++p) {
      if (p < lo || p == hi) {
        t.add(exact_equal(o[p], k == 6 ? init6[std::size_t(p)] : sentinel<T>),
              [&] { return "outside the space, at " + std::to_string(p) + ": " + show(o[p]); });
        continue;
      }
      double acc = 0, mag = 0;
      T m = ws[k].how == max ? -special<T>::inf : special<T>::inf;
      for (int64_t q = 0; q < W; ++q) {
        const T v = ws[k].term(p, q);
        acc += v;
        mag += std::fabs(v);
        m = ws[k].how == max ? ref_max(m, v) : ref_min(m, v);
      }
      if (k == 6) m = T(init6[std::size_t(p)] + m);  // += one exact maximum: exact
      const bool ok = ws[k].how == sum ? sum_close(o[p], acc, mag) : value_equal(o[p], m);
      t.add(ok, [&] {
        return "at " + std::to_string(p) + ": got " + show(o[p]) + ", expected " +
               (ws[k].how == sum ? show(acc) : show(m));
      });
    }
    report(t);
  }
}

/// A 3x3 stencil over the box [r0, R) x [c0, C) reading x(i + r, j + s) from an
/// (R + 2) x (C + 2) array: as nested ranges, as nine explicit terms (the same order of
/// additions as the reference: exact), a 3x3 max, a vertical min, a horizontal weighted sum.
template <class T>
void stencil_2d(int64_t R, int64_t C, int64_t r0, int64_t c0, int round) {
  INFO("stencil: " << R << " x " << C << ", box [" << r0 << ", " << R << ") x [" << c0 << ", " << C
                   << "), round " << round);
  auto [i, j, r, s] = wp::indices<4>();
  const int64_t XC = C + 2;
  offset_buffer<T, 2> xb("x", {R + 2, XC});
  wp::array<T, 2> w("w", {3, 3});
  rng g(seed_of({R, C, r0, c0, round, int64_t(sizeof(T)), 5}));
  for (int64_t q = 0; q < (R + 2) * XC; ++q) xb[q] = T(g.uniform(-6.0, 6.0));
  for (int64_t q = 0; q < 9; ++q) w.data()[q] = T(g.uniform(-2.0, 2.0));
  const auto sp = reduce_specials<T>();
  for (int64_t row = r0; row < R + 2; row += 3)  // every third row: special values spread thin
    for (int64_t q = 0; q < 3; ++q) {
      const int64_t col = spot(round, q * 4 + row, XC);
      xb[row * XC + col] = sp[std::size_t(row + q) % sp.size()];
    }
  std::deque<wp::array<T, 2>> out;
  for (int k = 0; k < 5; ++k)
    out.emplace_back("s" + std::to_string(k), std::array<int64_t, 2>{R, C});
  for (auto& o : out) fill_sentinel(o);
  auto& x = xb.arr;
  wp::run(wp::map(
      "stencil", wp::space({r0, R}, {c0, C}),
      out[0](i, j) =
          wp::sum(wp::range(r, 0, 3), wp::sum(wp::range(s, 0, 3), w(r, s) * x(i + r, j + s))),
      out[1](i, j) = w(0, 0) * x(i, j) + w(0, 1) * x(i, j + 1) + w(0, 2) * x(i, j + 2) +
                     w(1, 0) * x(i + 1, j) + w(1, 1) * x(i + 1, j + 1) + w(1, 2) * x(i + 1, j + 2) +
                     w(2, 0) * x(i + 2, j) + w(2, 1) * x(i + 2, j + 1) + w(2, 2) * x(i + 2, j + 2),
      out[2](i, j) =
          wp::max_of(wp::range(r, 0, 3), wp::max_of(wp::range(s, 0, 3), x(i + r, j + s))),
      out[3](i, j) = wp::min_of(wp::range(r, 0, 3), x(i + r, j + 1)),
      out[4](i, j) = wp::sum(wp::range(s, 0, 3), x(i + 1, j + s) * w(1, s))));

  auto X = [&](int64_t a, int64_t b) { return xb[a * XC + b]; };
  auto W = [&](int64_t a, int64_t b) { return w.data()[a * 3 + b]; };
  const char* names[] = {"nested sum of w(r, s) * x(i + r, j + s)", "nine explicit terms",
                         "3x3 max_of", "vertical min_of", "horizontal weighted sum"};
  for (int k = 0; k < 5; ++k) {
    tally t(names[k]);
    const T* o = out[std::size_t(k)].data();
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) {
        const T got = o[a * C + b];
        if (a < r0 || b < c0) {
          t.add(exact_equal(got, sentinel<T>), [&] { return "outside the box changed"; });
          continue;
        }
        double acc = 0, mag = 0;
        T want = T(0);
        bool ok = false;
        if (k == 0 || k == 4) {
          for (int64_t p = (k == 4 ? 1 : 0); p < (k == 4 ? 2 : 3); ++p)
            for (int64_t q = 0; q < 3; ++q) {
              const T v = k == 0 ? T(W(p, q) * X(a + p, b + q)) : T(X(a + p, b + q) * W(p, q));
              acc += v;
              mag += std::fabs(v);
            }
          ok = sum_close(got, acc, mag);
        } else if (k == 1) {
          want = W(0, 0) * X(a, b);
          for (int64_t p = 0; p < 3; ++p)
            for (int64_t q = 0; q < 3; ++q)
              if (p || q) want = want + W(p, q) * X(a + p, b + q);
          ok = exact_equal(got, want);
        } else if (k == 2) {
          want = -special<T>::inf;
          for (int64_t p = 0; p < 3; ++p)
            for (int64_t q = 0; q < 3; ++q) want = ref_max(want, X(a + p, b + q));
          ok = value_equal(got, want);
        } else {
          want = special<T>::inf;
          for (int64_t p = 0; p < 3; ++p) want = ref_min(want, X(a + p, b + 1));
          ok = value_equal(got, want);
        }
        t.add(ok, [&] {
          return "at (" + std::to_string(a) + ", " + std::to_string(b) + "): got " + show(got) +
                 ", expected " + (k == 0 || k == 4 ? show(acc) : show(want));
        });
      }
    report(t);
  }
}

// ---- inner ranges with affine bounds -----------------------------------------------------

/// Over [0, n): prefix sum / max / min (range(k, 0, i + 1)), a lower-triangular product, and
/// ranges empty at some points: range(k, i, min(4, n)) (empty from i = 4 on) and
/// range(k, i + 1, n) (empty at i = n - 1).
template <class T>
void triangular_1d(int64_t n, int round) {
  INFO("triangular: n = " << n << ", round " << round);
  auto [i, k] = wp::indices<2>();
  offset_buffer<T, 1> xb("x", {n}), yb("y", {n});
  offset_buffer<T, 2> Lb("L", {n, n});
  rng g(seed_of({n, round, int64_t(sizeof(T)), 6}));
  for (int64_t p = 0; p < n; ++p) {
    xb[p] = T(g.uniform(-6.0, 6.0));
    yb[p] = T(g.uniform(-6.0, 6.0));
  }
  for (int64_t p = 0; p < n * n; ++p) Lb[p] = T(g.uniform(-2.0, 2.0));
  const auto sp = reduce_specials<T>();
  if (round > 0)  // round 0: no special values (finite prefixes all along)
    for (std::size_t q = 0; q < sp.size(); ++q) xb[spot(round, int64_t(q) * 13 + 5, n)] = sp[q];
  const int64_t lim = std::min<int64_t>(4, n);
  std::deque<wp::array<T, 1>> out;
  for (int q = 0; q < 7; ++q) out.emplace_back("t" + std::to_string(q), std::array<int64_t, 1>{n});
  auto& x = xb.arr;
  auto& y = yb.arr;
  auto& L = Lb.arr;
  wp::run(wp::map("triangular", wp::space(n),                                   //
                  out[0](i) = wp::sum(wp::range(k, 0, i + 1), x(k)),            //
                  out[1](i) = wp::max_of(wp::range(k, 0, i + 1), x(k)),         //
                  out[2](i) = wp::min_of(wp::range(k, 0, i + 1), x(k) - y(k)),  //
                  out[3](i) = wp::sum(wp::range(k, 0, i + 1), L(i, k) * x(k)),  //
                  out[4](i) = wp::sum(wp::range(k, i, lim), x(k)),              //
                  out[5](i) = wp::max_of(wp::range(k, i, lim), x(k)),           //
                  out[6](i) = wp::min_of(wp::range(k, i + 1, n), x(k))));

  enum kind { sum, max, min };
  struct tri {
    const char* name;
    kind how;
    std::function<std::pair<int64_t, int64_t>(int64_t p)> bounds;  // the range at point p
    std::function<T(int64_t p, int64_t q)> term;
  };
  using span = std::pair<int64_t, int64_t>;
  auto prefix = [](int64_t p) { return span{0, p + 1}; };
  auto to_lim = [&](int64_t p) { return span{p, lim}; };
  auto after = [&](int64_t p) { return span{p + 1, n}; };
  auto X = [&](int64_t, int64_t q) { return xb[q]; };
  const std::vector<tri> ts = {
      {"sum(range(k, 0, i + 1), x(k))", sum, prefix, X},
      {"max_of(range(k, 0, i + 1), x(k))", max, prefix, X},
      {"min_of(range(k, 0, i + 1), x(k) - y(k))", min, prefix,
       [&](int64_t, int64_t q) { return T(xb[q] - yb[q]); }},
      {"sum(range(k, 0, i + 1), L(i, k) * x(k))", sum, prefix,
       [&](int64_t p, int64_t q) { return T(Lb[p * n + q] * xb[q]); }},
      {"sum(range(k, i, min(4, n)), x(k))", sum, to_lim, X},
      {"max_of(range(k, i, min(4, n)), x(k))", max, to_lim, X},
      {"min_of(range(k, i + 1, n), x(k))", min, after, X},
  };
  for (std::size_t q = 0; q < ts.size(); ++q) {
    tally t(ts[q].name);
    const T* o = out[q].data();
    for (int64_t p = 0; p < n; ++p) {
      const auto [b0, b1] = ts[q].bounds(p);
      double acc = 0, mag = 0;
      T m = ts[q].how == max ? -special<T>::inf : special<T>::inf;
      for (int64_t c = b0; c < b1; ++c) {
        const T v = ts[q].term(p, c);
        acc += v;
        mag += std::fabs(v);
        m = ts[q].how == max ? ref_max(m, v) : ref_min(m, v);
      }
      bool ok = ts[q].how == sum ? sum_close(o[p], acc, mag) : value_equal(o[p], m);
      if (b1 <= b0)  // empty: the identity, exactly (0, -inf, +inf)
        ok = exact_equal(o[p], ts[q].how == sum ? T(0) : m);
      t.add(ok, [&] {
        return "at " + std::to_string(p) + " (range [" + std::to_string(b0) + ", " +
               std::to_string(b1) + ")): got " + show(o[p]) + ", expected " +
               (ts[q].how == sum ? show(acc) : show(m));
      });
    }
    report(t);
  }
  // The identities, said outright.
  if (n > 4) {
    CHECK(out[4].data()[n - 1] == T(0));
    CHECK(out[5].data()[n - 1] == -std::numeric_limits<T>::infinity());
  }
  CHECK(out[6].data()[n - 1] == std::numeric_limits<T>::infinity());
}

/// A centred window with affine bounds, range(k, i - 2, i + 3), over [2, n - 2).
template <class T>
void affine_window_1d(int64_t n, int round) {
  INFO("affine window: n = " << n << ", round " << round);
  auto [i, k] = wp::indices<2>();
  offset_buffer<T, 1> xb("x", {n});
  rng g(seed_of({n, round, int64_t(sizeof(T)), 7}));
  for (int64_t p = 0; p < n; ++p) xb[p] = T(g.uniform(-6.0, 6.0));
  const auto sp = reduce_specials<T>();
  for (std::size_t q = 0; q < sp.size(); ++q) xb[spot(round, int64_t(q) * 7, n)] = sp[q];
  std::deque<wp::array<T, 1>> out;
  for (int q = 0; q < 3; ++q) out.emplace_back("a" + std::to_string(q), std::array<int64_t, 1>{n});
  for (auto& o : out) fill_sentinel(o);
  auto& x = xb.arr;
  wp::run(wp::map("affine_window", wp::space({2, n - 2}),  //
                  out[0](i) = wp::sum(wp::range(k, i - 2, i + 3), x(k)),
                  out[1](i) = wp::max_of(wp::range(k, i - 2, i + 3), x(k) * 2),
                  out[2](i) = wp::min_of(wp::range(k, i - 2, i + 3), wp::abs(x(k)))));
  const char* names[] = {"sum(range(k, i - 2, i + 3), x(k))",
                         "max_of(range(k, i - 2, i + 3), x(k) * 2)",
                         "min_of(range(k, i - 2, i + 3), abs(x(k)))"};
  for (int q = 0; q < 3; ++q) {
    tally t(names[q]);
    const T* o = out[std::size_t(q)].data();
    for (int64_t p = 0; p < n; ++p) {
      if (p < 2 || p >= n - 2) {
        t.add(exact_equal(o[p], sentinel<T>), [&] { return "outside the space changed"; });
        continue;
      }
      double acc = 0, mag = 0;
      T mx = -special<T>::inf, mn = special<T>::inf;
      for (int64_t c = p - 2; c < p + 3; ++c) {
        acc += xb[c];
        mag += std::fabs(xb[c]);
        mx = ref_max(mx, T(xb[c] * 2));
        mn = ref_min(mn, std::abs(xb[c]));
      }
      const bool ok = q == 0 ? sum_close(o[p], acc, mag) : value_equal(o[p], q == 1 ? mx : mn);
      t.add(ok, [&] {
        return "at " + std::to_string(p) + ": got " + show(o[p]) + ", expected " +
               (q == 0 ? show(acc) : show(q == 1 ? mx : mn));
      });
    }
    report(t);
  }
}

/// range(r, j, i + 1) over an n x n space: empty where j > i (sum 0, max_of -inf, min_of +inf).
template <class T>
void band_2d(int64_t n, int round) {
  INFO("band: n = " << n << ", round " << round);
  auto [i, j, r] = wp::indices<3>();
  offset_buffer<T, 1> xb("x", {n});
  rng g(seed_of({n, round, int64_t(sizeof(T)), 8}));
  for (int64_t p = 0; p < n; ++p) xb[p] = T(g.uniform(-6.0, 6.0));
  const auto sp = reduce_specials<T>();
  if (round > 0)
    for (std::size_t q = 0; q < sp.size(); ++q) xb[spot(round, int64_t(q) * 11, n)] = sp[q];
  wp::array<T, 2> S("S", {n, n}), M("M", {n, n}), N("N", {n, n});
  auto& x = xb.arr;
  wp::run(wp::map("band", wp::space(n, n),                          //
                  S(i, j) = wp::sum(wp::range(r, j, i + 1), x(r)),  //
                  M(i, j) = wp::max_of(wp::range(r, j, i + 1), x(r)),
                  N(i, j) = wp::min_of(wp::range(r, j, i + 1), x(r) + 1)));
  tally ts("sum(range(r, j, i + 1), x(r))"), tm("max_of(range(r, j, i + 1), x(r))"),
      tn("min_of(range(r, j, i + 1), x(r) + 1)");
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b) {
      double acc = 0, mag = 0;
      T mx = -special<T>::inf, mn = special<T>::inf;
      for (int64_t c = b; c <= a; ++c) {
        acc += xb[c];
        mag += std::fabs(xb[c]);
        mx = ref_max(mx, xb[c]);
        mn = ref_min(mn, T(xb[c] + 1));
      }
      const T s = S.data()[a * n + b], m = M.data()[a * n + b], v = N.data()[a * n + b];
      const bool empty = b > a;
      auto where = [&](T got, const std::string& want) {
        return "at (" + std::to_string(a) + ", " + std::to_string(b) + "): got " + show(got) +
               ", expected " + want;
      };
      ts.add(empty ? exact_equal(s, T(0)) : sum_close(s, acc, mag),
             [&] { return where(s, show(acc)); });
      tm.add(empty ? exact_equal(m, -special<T>::inf) : value_equal(m, mx),
             [&] { return where(m, show(mx)); });
      tn.add(empty ? exact_equal(v, special<T>::inf) : value_equal(v, mn),
             [&] { return where(v, show(mn)); });
    }
  report(ts);
  report(tm);
  report(tn);
}

}  // namespace

// ---- test cases --------------------------------------------------------------------------

TEMPLATE_TEST_CASE("local kernels: elementwise math, special values, any length and row start",
                   "[local][elementwise]", float, double) {
  using T = TestType;
  // (space start, read offset of x): aligned, a space starting at 3, x(i + 1), both.
  const std::pair<int64_t, int64_t> starts[] = {{0, 0}, {3, 0}, {0, 1}, {5, 3}};
  for (int64_t n : lengths)
    for (const auto& [lo, sh] : starts)
      for (int round = 0; round < 3; ++round) elementwise_1d<T>(n, lo, sh, round);
}

TEMPLATE_TEST_CASE("local kernels: 2-D elementwise, transposed reads and writes, broadcasts",
                   "[local][elementwise][2d]", float, double) {
  using T = TestType;
  // Odd row lengths: rows start at odd offsets.
  const std::pair<int64_t, int64_t> shapes[] = {{3, 1},   {1, 7},  {2, 3},    {5, 17},
                                                {4, 33},  {3, 65}, {2, 1023}, {33, 3},
                                                {17, 15}, {7, 63}, {65, 2},   {6, 31}};
  for (const auto& [R, C] : shapes)
    for (int round = 0; round < 3; ++round) {
      elementwise_2d<T>(R, C, 0, 0, round);
      if (R > 1 && C > 3) elementwise_2d<T>(R, C, 1, 3, round);
    }
}

TEMPLATE_TEST_CASE("local kernels: row and column sums, maxima, minima with NaN and infinities",
                   "[local][reduce][rows]", float, double) {
  using T = TestType;
  for (int64_t C : lengths)
    for (int round = 0; round < 3; ++round) {
      row_reductions<T>(6, C, 0, round);
      if (C > 3) row_reductions<T>(7, C, 3, round);
    }
}

TEMPLATE_TEST_CASE("local kernels: inner windows with constant bounds", "[local][reduce][inner]",
                   float, double) {
  using T = TestType;
  const int64_t widths[] = {1, 2, 3, 5, 8, 17};
  for (int64_t n : lengths)
    for (int64_t W : widths)
      for (int round = 0; round < 3; ++round) windows_1d<T>(n, (n + W) % 3, W, round);
}

TEMPLATE_TEST_CASE("local kernels: 3x3 stencils as nested ranges and as nine terms",
                   "[local][reduce][stencil]", float, double) {
  using T = TestType;
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1},  {3, 7},    {5, 17}, {4, 33},
                                                {2, 65}, {3, 1023}, {9, 15}, {6, 30}};
  for (const auto& [R, C] : shapes)
    for (int round = 0; round < 3; ++round) {
      stencil_2d<T>(R, C, 0, 0, round);
      if (R > 1 && C > 3) stencil_2d<T>(R, C, 1, 3, round);
    }
}

TEMPLATE_TEST_CASE("local kernels: inner ranges with affine bounds, empty at some points",
                   "[local][reduce][affine]", float, double) {
  using T = TestType;
  for (int64_t n : lengths)
    for (int round = 0; round < 3; ++round) {
      triangular_1d<T>(n, round);
      if (n >= 5) affine_window_1d<T>(n, round);
    }
  for (int64_t n : {1, 2, 3, 7, 17, 33, 65})
    for (int round = 0; round < 2; ++round) band_2d<T>(n, round);
}

TEMPLATE_TEST_CASE("local kernels: spaces large enough to run on OpenMP threads",
                   "[local][threads]", float, double) {
  using T = TestType;
  // At least 3 threads (an odd count: uneven parts) even on a machine with fewer cores; the
  // loop executor splits statements of >= 2^18 points.
  at_least_threads threads(3);
  SECTION("elementwise, 1-D, 270001 points") { elementwise_1d<T>(270001, 3, 1, 1); }
  SECTION("elementwise, 600 x 513") { elementwise_2d<T>(600, 513, 1, 3, 1); }
  SECTION("row and column reductions, 600 x 513") {
    row_reductions<T>(600, 513, 0, 1);
    row_reductions<T>(600, 513, 3, 2);
  }
  SECTION("inner windows, 1-D, 270001 points") {
    windows_1d<T>(270001, 3, 5, 1);
    affine_window_1d<T>(270001, 2);
  }
  SECTION("3x3 stencil, 600 x 513") { stencil_2d<T>(598, 511, 1, 3, 2); }
}

// C++'s std::abs(-0.0) is +0.0 (IEEE 754 abs clears the sign); ops.hpp once computed abs as
// `a < 0 ? -a : a`, which kept -0.0. The elementwise cases above accept either; this one
// says which is right.
TEMPLATE_TEST_CASE("local kernels: abs(-0.0) is +0.0 as std::abs gives", "[local]", float, double) {
  using T = TestType;
  auto [i] = wp::indices<1>();
  for (int64_t n : {1, 17}) {
    wp::array<T, 1> x("x", {n}), y("y", {n});
    for (int64_t p = 0; p < n; ++p) x.data()[p] = T(-0.0);
    wp::run(wp::map("abs_of_minus_zero", wp::space(n), y(i) = wp::abs(x(i))));
    for (int64_t p = 0; p < n; ++p) {
      INFO("n = " << n << ", at " << p);
      CHECK(!std::signbit(y.data()[p]));
      CHECK(!std::signbit(std::abs(x.data()[p])));
    }
  }
}

// Inner ranges whose bounds stay put along the statement's row run with the range outside the
// row (exec/cpu/inner_rows.hpp): each point still adds its terms in the loop's order, so the
// results are the plain loop's bit for bit. Bounds that vary between rows (not along them), a
// max of sums (two reductions: not flattened), a left side strided along the row.
TEMPLATE_TEST_CASE("local kernels: inner ranges run outside the row, same bits as the loop",
                   "[local][reduce][inner]", float, double) {
  using T = TestType;
  auto [i, j, r, s] = wp::indices<4>();
  for (const auto& [R, C] :
       {std::pair<int64_t, int64_t>{1, 1}, {5, 3}, {7, 17}, {4, 300}, {3, 600}}) {
    std::vector<T> x((R + 2) * (C + 2)), w(9);
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = T(std::sin(0.37 * double(k)) * 3);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = T(0.25) * T(k) - T(1);
    const int64_t XC = C + 2;
    wp::array<T, 2> X("x", {R + 2, XC}, x.data()), W("w", {3, 3}, w.data());
    wp::array<T, 2> prefix("prefix", {R, C}), maxsum("maxsum", {R, C}), tr("tr", {C, R});
    wp::run(wp::map(
        "ranges", wp::space(R, C), prefix(i, j) = wp::sum(wp::range(r, 0, i + 1), X(r, j)),
        maxsum(i, j) =
            wp::max_of(wp::range(r, 0, 3), wp::sum(wp::range(s, 0, 3), W(r, s) * X(i + r, j + s))),
        tr(j, i) = wp::sum(wp::range(s, 0, 3), X(i, j + s) * T(2))));
    int64_t wrong = 0;
    for (int64_t a = 0; a < R; ++a)
      for (int64_t b = 0; b < C; ++b) {
        T p = T(0);
        for (int64_t k = 0; k <= a; ++k) p = p + x[k * XC + b];
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t u = 0; u < 3; ++u) {
          T acc = T(0);
          for (int64_t v = 0; v < 3; ++v) acc = acc + w[u * 3 + v] * x[(a + u) * XC + b + v];
          m = (m > acc || m != m) ? m : acc;
        }
        T t = T(0);
        for (int64_t v = 0; v < 3; ++v) t = t + x[a * XC + b + v] * T(2);
        wrong += prefix.data()[a * C + b] != p;
        wrong += maxsum.data()[a * C + b] != m;
        wrong += tr.data()[b * R + a] != t;
      }
    INFO(R << " x " << C);
    CHECK(wrong == 0);
  }
}

TEST_CASE("local kernels: row sums over wp::all use threads from far fewer points",
          "[local][reduce][threads]") {
  // 4099 points of 301 terms each: below the 2^18 points of an elementwise statement, above
  // the 2^12 of one that reduces over an inner range (loop.hpp, parallel_threshold_of).
  constexpr int64_t R = 4099, C = 301;
  at_least_threads th(2);
  auto [i] = wp::indices<1>();
  std::vector<double> x(static_cast<std::size_t>(R * C));
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = double(k % 97) * 0.125 - 6.0;
  wp::array<double, 2> X("x", {R, C}, x.data());
  wp::array<double, 1> s("s", {R});
  auto& cnt = wp::detail::counters();
  const long threaded0 = cnt.threaded_outer.load() + cnt.threaded_rows.load();
  wp::run(wp::map("rowsum", wp::space(R), s(i) = wp::sum(X(i, wp::all))));
  if (wp::detail::worker_threads() > 1)
    CHECK(cnt.threaded_outer.load() + cnt.threaded_rows.load() - threaded0 == 1);
  for (int64_t a = 0; a < R; ++a) {
    double acc = 0, mag = 0;
    for (int64_t b = 0; b < C; ++b) {
      acc += x[std::size_t(a * C + b)];
      mag += std::abs(x[std::size_t(a * C + b)]);
    }
    REQUIRE(sum_close(s.data()[a], acc, mag));
  }
}
