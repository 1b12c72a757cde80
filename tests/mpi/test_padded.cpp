/// \file test_padded.cpp
/// Padded reads (`wp::padded(x, fill)(...)`, expr/padded.hpp) distributed at 1 to 4 ranks
/// against plain loops: a zero-padded 2-D convolution (stride 1 and 2, uneven extents) on
/// grids that split the image across the padding, a max pooling with a -infinity border, and
/// a 1-D padded stencil whose scattered bytes are exactly the in-array halos (no rank
/// receives padding). A padded read never raises out of bounds; a plain one still does.

#include "mpi_test_support.hpp"

#include <workpart/optimize.hpp>

#include <limits>

using namespace mpitest;

namespace {

std::vector<std::vector<index_t>> grids_for(int P, int rank) {
  std::vector<std::vector<index_t>> g;
  for (int d = 0; d < rank; ++d) {
    std::vector<index_t> x(std::size_t(rank), 1);
    x[std::size_t(d)] = P;
    g.push_back(x);
  }
  if (P == 4) {  // two dimensions split
    std::vector<index_t> x(std::size_t(rank), 1);
    x[2] = 2;
    x[3] = 2;
    g.push_back(x);
  }
  return g;
}

}  // namespace

TEST_CASE("padded: a 2-D convolution, zero-padded, stride 1 and 2, on every grid", "[padded]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t N = 2, C = 3, K = 2, H = 9, W = 7, R = 3;
  for (const index_t stride : {index_t(1), index_t(2)}) {
    const index_t Ho = (H + 2 - R) / stride + 1, Wo = (W + 2 - R) / stride + 1;
    wp::array<double, 4> x("x", {N, C, H, W}), w("w", {K, C, R, R}), z("z", {N, K, Ho, Wo});
    auto xv = [&](index_t n, index_t c, index_t i, index_t j) {
      return std::sin(double(((n * C + c) * H + i) * W + j));
    };
    auto wv = [&](index_t k, index_t c, index_t r, index_t s) {
      return std::cos(double(((k * C + c) * R + r) * R + s)) / 4;
    };
    if (ctx.is_root()) {
      double* px = x.data();
      for (index_t e = 0; e < N * C * H * W; ++e)
        px[e] = xv(e / (C * H * W), e / (H * W) % C, e / W % H, e % W);
      double* pw = w.data();
      for (index_t e = 0; e < K * C * R * R; ++e)
        pw[e] = wv(e / (C * R * R), e / (R * R) % C, e / R % R, e % R);
    }
    std::vector<double> want(std::size_t(N * K * Ho * Wo), 0.0);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t i = 0; i < Ho; ++i)
          for (index_t j = 0; j < Wo; ++j) {
            double s = 0;
            for (index_t c = 0; c < C; ++c)
              for (index_t r = 0; r < R; ++r)
                for (index_t q = 0; q < R; ++q) {
                  const index_t a = stride * i + r - 1, b = stride * j + q - 1;
                  if (a >= 0 && a < H && b >= 0 && b < W) s += xv(n, c, a, b) * wv(k, c, r, q);
                }
            want[std::size_t(((n * K + k) * Ho + i) * Wo + j)] = s;
          }
    auto [n, k, i, j, c, r, q] = wp::indices<7>();
    auto xp = wp::padded(x, 0.0);
    auto m = wp::map(
        "conv", wp::space(N, K, Ho, Wo),
        z(n, k, i, j) = wp::sum(
            wp::range(c, 0, C),
            wp::sum(wp::range(r, 0, R),
                    wp::sum(wp::range(q, 0, R),
                            xp(n, c, stride * i + r - 1, stride * j + q - 1) * w(k, c, r, q)))));
    for (const auto& g : grids_for(P, 4)) {
      INFO("stride " << stride << ", grid " << wp::grid_shape(g).str());
      auto plan = wp::distribute(m, wp::grid_shape(g), ctx);
      plan.run();
      CHECK(compare_on_root(ctx.comm(), z, want, 1e-12) == "");
      CHECK(all_problems(ctx.comm(), measured_problems(plan)) == "");
    }
  }
}

TEST_CASE("padded: max pooling 3x3, stride 2, a -infinity border", "[padded]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t N = 1, C = 2, H = 11, W = 8, Ho = (H + 2 - 3) / 2 + 1, Wo = (W + 2 - 3) / 2 + 1;
  wp::array<float, 4> x("x", {N, C, H, W}), p("p", {N, C, Ho, Wo});
  auto xv = [&](index_t e) { return float(std::sin(double(7 * e + 1)) - 2.0); };  // all < 0
  if (ctx.is_root())
    for (index_t e = 0; e < N * C * H * W; ++e) x.data()[e] = xv(e);
  std::vector<double> want;
  for (index_t nc = 0; nc < N * C; ++nc)
    for (index_t i = 0; i < Ho; ++i)
      for (index_t j = 0; j < Wo; ++j) {
        float best = -std::numeric_limits<float>::infinity();
        for (index_t a = 2 * i - 1; a <= 2 * i + 1; ++a)
          for (index_t b = 2 * j - 1; b <= 2 * j + 1; ++b)
            if (a >= 0 && a < H && b >= 0 && b < W) best = std::max(best, xv((nc * H + a) * W + b));
        want.push_back(best);
      }
  auto [n, c, i, j, r, q] = wp::indices<6>();
  auto xp = wp::padded(x, -std::numeric_limits<float>::infinity());
  auto m = wp::map("pool", wp::space(N, C, Ho, Wo),
                   p(n, c, i, j) = wp::max_of(
                       wp::range(r, 0, 3),
                       wp::max_of(wp::range(q, 0, 3), xp(n, c, 2 * i + r - 1, 2 * j + q - 1))));
  for (const auto& g : grids_for(P, 4)) {
    INFO("grid " << wp::grid_shape(g).str());
    auto plan = wp::distribute(m, wp::grid_shape(g), ctx);
    plan.run();
    CHECK(compare_on_root(ctx.comm(), p, want) == "");
  }
}

TEST_CASE("padded: a 1-D stencil scatters the in-array halos only", "[padded]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t n = 23;
  wp::array<double, 1> x("x", {n}), y("y", {n}), w("w", {3});
  w.init([](std::array<std::int64_t, 1> g) { return double(g[0] + 1); });  // generated in place
  fill1(x, [](index_t e) { return double(e * e % 7); });
  auto [i, r] = wp::indices<2>();
  auto m = wp::map("stencil", wp::space(n),
                   y(i) = wp::sum(wp::range(r, 0, 3), wp::padded(x, 0.5)(i + r - 1) * w(r)));
  std::vector<double> want;
  for (index_t e = 0; e < n; ++e) {
    double s = 0;
    for (index_t t = 0; t < 3; ++t) {
      const index_t a = e + t - 1;
      s += (a >= 0 && a < n ? double(a * a % 7) : 0.5) * double(t + 1);
    }
    want.push_back(s);
  }
  auto plan = wp::distribute(m, wp::grid_shape{P}, ctx);
  plan.run();
  CHECK(compare_on_root(ctx.comm(), y, want, 1e-14) == "");
  bytes_by_rank b(P);
  for (int q = 0; q < P; ++q) {
    const block blk = block_of(n, P, q);
    const index_t lo = std::max<index_t>(0, blk.start - 1), hi = std::min(n, blk.end() + 1);
    b.scatter(0, q, (hi - lo) * index_t(sizeof(double)));  // x's halo, clipped to the array
    b.gather(q, 0, blk.size * index_t(sizeof(double)));    // y's block
  }
  CHECK(all_problems(ctx.comm(), bytes_problems(plan, b, ctx.rank())) == "");
  CHECK(all_problems(ctx.comm(), measured_problems(plan)) == "");
}

TEST_CASE("padded: only a padded read may leave its array", "[padded]") {
  wp::context ctx(g_argc, g_argv);
  wp::array<double, 1> x("x", {5}), y("y", {5});
  auto [i] = wp::indices<1>();
  CHECK_NOTHROW(wp::map("ok", wp::space(5), y(i) = wp::padded(x, 0.0)(i + 3)).require_valid());
  CHECK_THAT(what_of([&] { wp::map("bad", wp::space(5), y(i) = x(i + 3)).require_valid(); }),
             Catch::Contains("access x(i0 + 3) reads axis 0 of 'x' at 7, outside [0, 5)"));
  // described for the optimizer: the padded read is marked, and prices as typed
  auto prog = wp::program(wp::map("ok", wp::space(5), y(i) = wp::padded(x, 0.0)(i + 3)));
  const auto d = wp::describe(prog);
  CHECK(d.maps[0].accesses[0].padded);
  CHECK(wp::to_json(d).find("\"padded\": true") != std::string::npos);
  const auto back = wp::parse_program_description(wp::to_json(d));
  for (int P = 1; P <= 4; ++P) CHECK(wp::optimize(back, P).cost == wp::optimize(prog, P).cost);
}
