// The arrays wp::backward is given to write gradients into, at 1-4 ranks. A gradient array the
// program already uses (an intermediate, an input, the loss, another parameter, wp::seed's
// dy), one array named as the gradient of two parameters, and wp::accumulate of a gradient
// the backward pass reads itself (the loss's, an intermediate's) all used to be accepted and
// gave wrong values silently (or a message at wp::distribute about something else): each is
// now refused by wp::backward with a sentence naming both roles, on every rank alike, and a
// plan built afterwards still runs (no rank left in a collective). Two backward programs of
// one forward program in one step are refused at wp::distribute with a message that says so
// (their generated map names repeat). The cases that are accepted -- accumulated parameters,
// the gradient of an intermediate and of the loss -- are checked against plain loops under a
// batch split, over three executions.

#include "mpi_test_support.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace mpitest;
using Catch::Matchers::Contains;

namespace {

constexpr index_t B = 5, J = 4;  // B = 5 splits unevenly over 2, 3 and 4 ranks

double xv(index_t b, index_t j) { return std::sin(0.7 * double(b * J + j) + 0.2); }
double cv(index_t j) { return 0.5 + 0.1 * double(j); }
double wv(index_t j) { return 0.3 * std::cos(double(j) + 0.4); }
double vv(index_t j) { return 0.2 * std::sin(1.3 * double(j) + 0.1); }
constexpr double sv = 0.8;

/// h(b, j) = w(j) x(b, j) + v(j) c(j);  L = sum_{b, j} s (h^2 / 2 + h)
struct net {
  wp::array<double, 2> x{"x", {B, J}}, h{"h", {B, J}}, dh{"dh", {B, J}};
  wp::array<double, 1> c{"c", {J}}, w{"w", {J}}, v{"v", {J}}, dw{"dw", {J}}, dv{"dv", {J}},
      g{"g", {J}}, dy{"dy", {J}};
  wp::array<double, 0> s{"s", {}}, L{"L", {}}, dL{"dL", {}}, ds{"ds", {}};

  auto forward() {
    auto [b, j] = wp::indices<2>();
    return wp::program(
        wp::map("hm", wp::space(B, J), h(b, j) = w(j) * x(b, j) + v(j) * c(j)),
        wp::map("l0", wp::space(), L() = 0.0),
        wp::map("loss", wp::space(B, J), L() += s() * (0.5 * h(b, j) * h(b, j) + h(b, j))));
  }
  void fill() {
    fill2(x, xv);
    fill1(c, cv);
    fill1(w, wv);
    fill1(v, vv);
    if (double* p = s.data()) p[0] = sv;
  }
};

/// The reference in plain loops: dL/dh, dL/dw, dL/dv at the filled values.
struct reference {
  std::vector<double> dh, dw, dv;
  reference() : dh(std::size_t(B * J)), dw(std::size_t(J), 0.0), dv(std::size_t(J), 0.0) {
    for (index_t b = 0; b < B; ++b)
      for (index_t j = 0; j < J; ++j) {
        const double h = wv(j) * xv(b, j) + vv(j) * cv(j), d = sv * (h + 1.0);
        dh[std::size_t(b * J + j)] = d;
        dw[std::size_t(j)] += d * xv(b, j);
        dv[std::size_t(j)] += d * cv(j);
      }
  }
};

/// Every map's first dimension split over p (a batch split), rank-0 maps on one rank.
template <class Prog>
wp::schedule batch_split(const Prog& prog, int p) {
  wp::schedule sc;
  prog.for_each_map([&](const auto& m) {
    std::vector<index_t> gr(std::size_t(m.rank()), 1);
    if (m.rank() > 0) gr[0] = p;
    sc.set(m.name(), wp::grid_shape(gr));
  });
  return sc;
}

/// wp::backward(...) throws a plan_error containing every part, the same on every rank.
template <class F>
std::string refusal(const wp::context& ctx, F&& f) {
  std::string msg;
  try {
    f();
    msg = "(accepted)";
  } catch (const wp::plan_error& e) {
    msg = e.what();
  }
  REQUIRE(same_everywhere(ctx.comm(), msg) == "");
  return msg;
}

}  // namespace

TEST_CASE("a gradient array the program already uses is refused, naming both roles",
          "[train][errors]") {
  wp::context ctx(g_argc, g_argv);
  net n;
  auto fwd = n.forward();
  SECTION("an intermediate the forward program writes and reads") {
    // before: accepted, and the backward overwrote h before the derivative read it
    CHECK_THAT(refusal(ctx, [&] { wp::backward(fwd, n.L, wp::wrt(n.x, n.h)); }),
               Contains("wp::wrt('x', 'h') names 'h', an array of the forward program (map 'hm' "
                        "writes 'h'), as the gradient of 'x'") &&
                   Contains("give 'x' a gradient array of its own"));
  }
  SECTION("an input the forward program reads") {
    CHECK_THAT(refusal(ctx, [&] { wp::backward(fwd, n.L, wp::wrt(n.w, n.c)); }),
               Contains("names 'c', an array of the forward program (map 'hm' reads 'c')"));
  }
  SECTION("the loss") {
    CHECK_THAT(refusal(ctx, [&] { wp::backward(fwd, n.L, wp::wrt(n.s, n.L)); }),
               Contains("wp::wrt('s', 'L') names the loss 'L' as the gradient of 's'") &&
                   Contains("starts from its gradient"));
  }
  SECTION("another parameter") {
    // before: refused only by wp::distribute, with a read-after-write message naming no alias
    CHECK_THAT(refusal(ctx, [&] { wp::backward(fwd, n.L, wp::wrt(n.w, n.v), wp::wrt(n.v, n.dv)); }),
               Contains("wp::wrt('w', 'v') names 'v', the parameter of wp::wrt('v', 'dv'), as the "
                        "gradient of 'w'"));
  }
  SECTION("wp::seed's given gradient") {
    // before: "two maps named ..." at wp::distribute, naming no aliasing
    auto [b, j] = wp::indices<2>();
    wp::array<double, 1> y("y", {J});
    auto f2 = wp::program(wp::map("y0", wp::space(J), y(b) = 0.0),
                          wp::map("ym", wp::space(B, J), y(j) += n.w(j) * n.x(b, j)));
    CHECK_THAT(refusal(ctx, [&] { wp::backward(f2, wp::seed(y, n.dy), wp::wrt(n.w, n.dy)); }),
               Contains("wp::wrt('w', 'dy') names 'dy', the dL/dy that wp::seed('y', 'dy') "
                        "gives, as the gradient of 'w'"));
  }
  SECTION("the parameter itself") {
    CHECK_THAT(refusal(ctx, [&] { wp::backward(fwd, n.L, wp::wrt(n.w, n.w)); }),
               Contains("names the parameter itself as its gradient"));
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("two wp::wrt sharing one gradient array are refused", "[train][errors]") {
  wp::context ctx(g_argc, g_argv);
  net n;
  auto fwd = n.forward();
  // before: accepted, and g held dL/dw + dL/dv
  CHECK_THAT(refusal(ctx, [&] { wp::backward(fwd, n.L, wp::wrt(n.w, n.g), wp::wrt(n.v, n.g)); }),
             Contains("wp::wrt('w', 'g') and wp::wrt('v', 'g') name one array 'g' as the "
                      "gradient of two parameters"));
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("wp::accumulate of a gradient the backward pass reads is refused; of parameters, adds",
          "[train][errors]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  net n;
  auto fwd = n.forward();
  SECTION("the loss's own gradient") {
    // before: written with '=' every execution (1 after three, not 3)
    CHECK_THAT(refusal(ctx, [&] { wp::backward(fwd, n.L, wp::accumulate(wp::wrt(n.L, n.dL))); }),
               Contains("wp::accumulate(wp::wrt('L', 'dL')): the loss 'L' is what the backward "
                        "program differentiates from"));
  }
  SECTION("an intermediate's gradient") {
    // before: the accumulated dh was also the seed of dw: dw wrong from the second execution
    CHECK_THAT(refusal(ctx,
                       [&] {
                         wp::backward(fwd, n.L, wp::accumulate(wp::wrt(n.h, n.dh)),
                                      wp::wrt(n.w, n.dw));
                       }),
               Contains("wp::accumulate(wp::wrt('h', 'dh')): map 'hm' writes 'h', so the "
                        "backward pass reads 'dh'") &&
                   Contains("add 'dh' into another array in a map after the backward program"));
  }
  SECTION("accepted: parameters accumulated, an intermediate's and the loss's gradients") {
    auto step =
        wp::program(fwd, wp::backward(fwd, n.L, wp::accumulate(wp::wrt(n.w, n.dw)),
                                      wp::wrt(n.v, n.dv), wp::wrt(n.h, n.dh), wp::wrt(n.L, n.dL),
                                      wp::accumulate(wp::wrt(n.s, n.ds))));
    const reference want;
    auto plan = wp::distribute(step, batch_split(step, p), ctx);
    n.fill();
    fill1(n.dw, [](index_t) { return 0.25; });  // accumulated onto what dw holds
    if (double* d = n.ds.data()) d[0] = 0.0;
    plan.scatter();
    for (int e = 0; e < 3; ++e) plan.execute();
    plan.gather(n.dw, n.dv, n.dh, n.dL, n.ds);
    std::vector<double> dw3, dh;
    for (double d : want.dw) dw3.push_back(0.25 + 3.0 * d);
    double ds = 0;
    for (index_t b = 0; b < B; ++b)
      for (index_t j = 0; j < J; ++j) {
        const double h = wv(j) * xv(b, j) + vv(j) * cv(j);
        ds += 0.5 * h * h + h;
      }
    REQUIRE(compare_on_root(ctx.comm(), n.dw, dw3, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), n.dv, want.dv, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), n.dh, want.dh, 1e-12) == "");
    REQUIRE(compare_on_root(ctx.comm(), n.dL, {1.0}, 0.0) == "");
    REQUIRE(compare_on_root(ctx.comm(), n.ds, {3.0 * ds}, 1e-12) == "");
  }
  REQUIRE(a_plan_still_works(ctx) == "");
}

TEST_CASE("two backward programs of one forward program: the message says so", "[train][errors]") {
  wp::context ctx(g_argc, g_argv);
  const int p = ctx.size();
  net n;
  auto fwd = n.forward();
  auto step = wp::program(fwd, wp::backward(fwd, n.L, wp::wrt(n.w, n.dw)),
                          wp::backward(fwd, n.L, wp::wrt(n.v, n.dv)));
  // before: "the program has two maps named 'zero.dw'"-like, maps the user never named
  const std::string msg = refusal(ctx, [&] { wp::distribute(step, batch_split(step, p), ctx); });
  CHECK_THAT(msg, Contains("both were made by wp::backward (wp::backward of the loss 'L', and "
                           "wp::backward of the loss 'L')") &&
                      Contains("two backward programs of the same forward maps") &&
                      Contains("Ask for every gradient in one wp::backward"));
  CHECK(refusal(ctx, [&] { wp::distribute(step, wp::automatic, ctx); }) == msg);
  // a map of the user's named like a generated one
  auto [j] = wp::indices<1>();
  auto mine = wp::program(fwd, wp::backward(fwd, n.L, wp::wrt(n.w, n.dw)),
                          wp::map("dhm", wp::space(J), n.g(j) = n.dw(j)));
  CHECK_THAT(refusal(ctx, [&] { wp::distribute(mine, batch_split(mine, p), ctx); }),
             Contains("two maps named 'dhm'; one was made by wp::backward of the loss 'L'") &&
                 Contains("name your map apart"));
  REQUIRE(a_plan_still_works(ctx) == "");
}
