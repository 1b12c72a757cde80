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

// A training step through padded reads: a zero-padded 2-D convolution (stride 2) into tanh,
// then a 3x3 max pooling (stride 2) with a -infinity border, a squared-error loss, and
// wp::backward for the filters w and the input x. Each padded read's gradient is written
// into a padded array (dx.padded, da.padded: no write leaves its array) whose part over the
// array is added into the gradient by the map unpad.<name>. After three SGD steps on w, w,
// the loss and the last step's dx equal plain loops, under a batch split, a split of the
// image rows (across the padding: the halo rows of dx.padded are combined rank to rank),
// wp::automatic, and the rows split in dconv too (its writes of dx.padded overlap between
// ranks: combined rank to rank on the ranks' parts before unpad.dx.padded reads them).
TEST_CASE("padded: a padded convolution and pooling train distributed as in plain loops",
          "[padded][train]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  constexpr index_t N = 3, C = 2, K = 3, H = 7, W = 6, R = 3;
  constexpr index_t Ho = (H + 2 - R) / 2 + 1, Wo = (W + 2 - R) / 2 + 1;    // 4 x 3
  constexpr index_t Po = (Ho + 2 - 3) / 2 + 1, Qo = (Wo + 2 - 3) / 2 + 1;  // 2 x 2
  constexpr double lr = 0.1;
  constexpr int steps = 3;
  auto xv = [](index_t n, index_t c, index_t h, index_t w) {
    return std::sin(0.7 * double(((n * C + c) * H + h) * W + w) + 0.2);
  };
  auto wv = [](index_t k, index_t c, index_t r, index_t s) {
    return 0.3 * std::cos(1.3 * double(((k * C + c) * R + r) * R + s) + 0.4);
  };
  auto tv = [](index_t n, index_t k, index_t u, index_t v) {
    return 0.4 * std::sin(double(((n * K + k) * Po + u) * Qo + v));
  };
  auto at4 = [](index_t a, index_t b, index_t c, index_t d, index_t B, index_t Cc, index_t D) {
    return std::size_t(((a * B + b) * Cc + c) * D + d);
  };

  // the plain loops
  std::vector<double> want_w, want_dx(std::size_t(N * C * H * W));
  for (index_t k = 0; k < K; ++k)
    for (index_t c = 0; c < C; ++c)
      for (index_t r = 0; r < R; ++r)
        for (index_t s = 0; s < R; ++s) want_w.push_back(wv(k, c, r, s));
  double want_loss = 0;
  for (int step = 0; step < steps; ++step) {
    std::vector<double> a(std::size_t(N * K * Ho * Wo)), da(a.size(), 0.0), dz(a.size());
    std::vector<double> dw(want_w.size(), 0.0);
    std::fill(want_dx.begin(), want_dx.end(), 0.0);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t i = 0; i < Ho; ++i)
          for (index_t j = 0; j < Wo; ++j) {
            double z = 0;
            for (index_t c = 0; c < C; ++c)
              for (index_t r = 0; r < R; ++r)
                for (index_t s = 0; s < R; ++s) {
                  const index_t h = 2 * i + r - 1, w = 2 * j + s - 1;
                  if (h >= 0 && h < H && w >= 0 && w < W)
                    z += xv(n, c, h, w) * want_w[at4(k, c, r, s, C, R, R)];
                }
            a[at4(n, k, i, j, K, Ho, Wo)] = std::tanh(z);
          }
    want_loss = 0;
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t u = 0; u < Po; ++u)
          for (index_t v = 0; v < Qo; ++v) {
            double best = -std::numeric_limits<double>::infinity();
            std::size_t arg = 0;
            for (index_t e = 0; e < 3; ++e)
              for (index_t f = 0; f < 3; ++f) {
                const index_t i = 2 * u + e - 1, j = 2 * v + f - 1;
                if (i >= 0 && i < Ho && j >= 0 && j < Wo && a[at4(n, k, i, j, K, Ho, Wo)] > best) {
                  best = a[at4(n, k, i, j, K, Ho, Wo)];
                  arg = at4(n, k, i, j, K, Ho, Wo);
                }
              }
            const double e = best - tv(n, k, u, v);
            want_loss += 0.5 * e * e;
            da[arg] += e;  // the values are distinct: no ties
          }
    for (std::size_t e = 0; e < a.size(); ++e) dz[e] = da[e] * (1 - a[e] * a[e]);
    for (index_t n = 0; n < N; ++n)
      for (index_t k = 0; k < K; ++k)
        for (index_t i = 0; i < Ho; ++i)
          for (index_t j = 0; j < Wo; ++j)
            for (index_t c = 0; c < C; ++c)
              for (index_t r = 0; r < R; ++r)
                for (index_t s = 0; s < R; ++s) {
                  const index_t h = 2 * i + r - 1, w = 2 * j + s - 1;
                  if (h < 0 || h >= H || w < 0 || w >= W) continue;
                  const double g = dz[at4(n, k, i, j, K, Ho, Wo)];
                  dw[at4(k, c, r, s, C, R, R)] += g * xv(n, c, h, w);
                  want_dx[at4(n, c, h, w, C, H, W)] += g * want_w[at4(k, c, r, s, C, R, R)];
                }
    for (std::size_t e = 0; e < dw.size(); ++e) want_w[e] -= lr * dw[e];
  }

  // the program
  wp::array<double, 4> x("x", {N, C, H, W}), dx("dx", {N, C, H, W}), w("w", {K, C, R, R});
  wp::array<double, 4> dw("dw", {K, C, R, R}), z("z", {N, K, Ho, Wo}), a("a", {N, K, Ho, Wo});
  wp::array<double, 4> p("p", {N, K, Po, Qo}), t("t", {N, K, Po, Qo});
  wp::array<double, 0> L("L", {});
  auto [n, k, i, j, c, r, s] = wp::indices<7>();
  const double inf = std::numeric_limits<double>::infinity();
  auto fwd = wp::program(
      wp::map("z0", wp::space(N, K, Ho, Wo), z(n, k, i, j) = 0.0),
      wp::map(
          "conv", wp::space(N, K, Ho, Wo, C, R, R),
          z(n, k, i, j) += wp::padded(x, 0.0)(n, c, 2 * i + r - 1, 2 * j + s - 1) * w(k, c, r, s)),
      wp::map("act", wp::space(N, K, Ho, Wo), a(n, k, i, j) = wp::tanh(z(n, k, i, j))),
      wp::map("p0", wp::space(N, K, Po, Qo), p(n, k, i, j) = -inf),
      wp::map("pool", wp::space(N, K, Po, Qo, 3, 3),
              wp::max_into(p(n, k, i, j), wp::padded(a, -inf)(n, k, 2 * i + c - 1, 2 * j + r - 1))),
      wp::map("l0", wp::space(), L() = 0.0),
      wp::map("loss", wp::space(N, K, Po, Qo),
              L() += 0.5 * (p(n, k, i, j) - t(n, k, i, j)) * (p(n, k, i, j) - t(n, k, i, j))));
  auto bwd = wp::backward(fwd, L, wp::wrt(w, dw), wp::wrt(x, dx));
  std::vector<std::string> names;
  bwd.for_each_map([&](const auto& m) { names.push_back(m.name()); });
  CHECK(has(names, "unpad.dx.padded"));
  CHECK(has(names, "unpad.da.padded"));
  auto step = wp::program(
      fwd, bwd,
      wp::map("sgd", wp::space(K, C, R, R), w(n, k, i, j) = w(n, k, i, j) - lr * dw(n, k, i, j)));
  auto train = [&](auto&& plan) {
    x.init([&](const std::array<index_t, 4>& g) { return xv(g[0], g[1], g[2], g[3]); });
    w.init([&](const std::array<index_t, 4>& g) { return wv(g[0], g[1], g[2], g[3]); });
    t.init([&](const std::array<index_t, 4>& g) { return tv(g[0], g[1], g[2], g[3]); });
    plan.scatter();
    for (int e = 0; e < steps; ++e) plan.execute();
    plan.gather(w, L, dx);
    REQUIRE(compare_on_root(ctx.comm(), w, want_w, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), L, {want_loss}, 1e-10) == "");
    REQUIRE(compare_on_root(ctx.comm(), dx, want_dx, 1e-10) == "");
  };
  // every map's dimension d split over the P ranks where it has one, but dconv's and dpool's
  // batch: their writes (dx.padded(n, c, 2i + r - 1 + 1, ...), da.padded likewise) overlap
  // across a split of i (combined rank to rank on the ranks' parts: the last section)
  auto split = [&](int d) {
    wp::schedule sch;
    step.for_each_map([&](const auto& m) {
      std::vector<index_t> g(std::size_t(m.rank()), 1);
      const int e = m.name() == "dconv" || m.name() == "dpool" ? 0 : d;
      if (m.rank() > e) g[std::size_t(e)] = P;
      sch.set(m.name(), wp::grid_shape(g));
    });
    return sch;
  };
  SECTION("batch split") { train(wp::distribute(step, split(0), ctx)); }
  SECTION("image rows split, across the padding (unpad.dx.padded reads the halo rows)") {
    train(wp::distribute(step, split(2), ctx));
  }
  SECTION("wp::automatic") { train(wp::distribute(step, wp::automatic, ctx)); }
  SECTION("dconv's image rows split: its overlapping writes of dx.padded combined rank to rank") {
    wp::schedule sch = split(2);
    bwd.for_each_map([&](const auto& m) {
      if (m.name() == "dconv") sch.set("dconv", wp::grid_shape({1, 1, index_t(P), 1, 1, 1, 1}));
    });
    train(wp::distribute(step, sch, ctx));
  }
}
