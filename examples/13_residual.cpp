// Lesson 13: programs built at run time. A residual MLP whose depth is read from the command
// line: each block's maps are added to a wp::program in a loop, its parameters' wp::wrt are
// collected in a std::vector, and wp::backward assembles the backward program from them. The
// compiler sees three map types, whatever the depth: a 4-block and a 100-block network compile
// to the same binary.
//
//   mpirun -np 4 ./13_residual [blocks N H steps]     (default 100 64 32 3)
//
//   per block t:  z_t(n,j) = sum_k W_t(j,k) h_t(n,k);  h_{t+1} = h_t + tanh(z_t)
//   L = sum h_blocks^2 / (2N);   W_t -= lr dW_t   (SGD)
// The schedule splits every map's first dimension (the batch) over the ranks and runs each
// update on every rank (data parallelism). Root prints how long building the backward program
// and the plan took, then checks the loss of every step and the last block's weights against
// the same training in plain loops.
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives/broadcast.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace {

double x_at(index_t n, index_t k) { return std::sin(0.37 * double(n) + 1.3 * double(k)); }
double w_at(int t, index_t j, index_t k, index_t H) {
  return std::cos(0.3 * double(t) + 1.7 * double(j) - 0.9 * double(k)) / double(2 * H);
}
constexpr double lr = 0.05;

/// The same training in plain loops: the loss of every step, and the last block's weights.
struct plain_training {
  std::vector<double> losses, last_W;
  plain_training(int blocks, index_t N, index_t H, int steps) {
    const auto at = [H](index_t r, index_t c) { return std::size_t(r * H + c); };
    std::vector<std::vector<double>> W(std::size_t(blocks),
                                       std::vector<double>(std::size_t(H * H)));
    for (int t = 0; t < blocks; ++t)
      for (index_t j = 0; j < H; ++j)
        for (index_t k = 0; k < H; ++k) W[std::size_t(t)][at(j, k)] = w_at(t, j, k, H);
    for (int s = 0; s < steps; ++s) {
      std::vector<std::vector<double>> h(std::size_t(blocks) + 1,
                                         std::vector<double>(std::size_t(N * H))),
          z(std::size_t(blocks), std::vector<double>(std::size_t(N * H)));
      for (index_t n = 0; n < N; ++n)
        for (index_t k = 0; k < H; ++k) h[0][at(n, k)] = x_at(n, k);
      for (std::size_t t = 0; t < std::size_t(blocks); ++t)
        for (index_t n = 0; n < N; ++n)
          for (index_t j = 0; j < H; ++j) {
            double a = 0;
            for (index_t k = 0; k < H; ++k) a += W[t][at(j, k)] * h[t][at(n, k)];
            z[t][at(n, j)] = a;
            h[t + 1][at(n, j)] = h[t][at(n, j)] + std::tanh(a);
          }
      double loss = 0;
      std::vector<double> g(h.back());  // dL/dh_blocks = h_blocks / N
      for (double& v : g) {
        loss += v * v / double(2 * N);
        v /= double(N);
      }
      losses.push_back(loss);
      for (std::size_t t = std::size_t(blocks); t-- > 0;) {
        std::vector<double> gin(g), dW(std::size_t(H * H), 0.0);
        for (index_t n = 0; n < N; ++n)
          for (index_t j = 0; j < H; ++j) {
            const double th = std::tanh(z[t][at(n, j)]);
            const double gz = g[at(n, j)] * (1 - th * th);
            for (index_t k = 0; k < H; ++k) {
              dW[at(j, k)] += gz * h[t][at(n, k)];
              gin[at(n, k)] += gz * W[t][at(j, k)];
            }
          }
        for (std::size_t e = 0; e < dW.size(); ++e) W[t][e] -= lr * dW[e];
        g = std::move(gin);
      }
    }
    last_W = W.back();
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const bool given = argc > 4;
  const int blocks = given ? std::atoi(argv[1]) : 100;
  const index_t N = given ? std::atoll(argv[2]) : 64, H = given ? std::atoll(argv[3]) : 32;
  const int steps = given ? std::atoi(argv[4]) : 3;
  if (blocks < 1 || N < 1 || H < 1 || steps < 1) {
    if (ctx.is_root()) std::fprintf(stderr, "usage: 13_residual [blocks N H steps], all >= 1\n");
    return 2;
  }

  // The arrays of every block, made at run time, as many as the depth asks for: in deques, so
  // that their addresses (their identity in the maps) stay as the network grows.
  std::deque<wp::array<double, 2>> h, z, W, dW;
  h.emplace_back("h0", std::array<index_t, 2>{N, H});
  h.back().init([](const auto& g) { return x_at(g[0], g[1]); });
  wp::array<double, 0> L("L", {});

  const auto t_build = std::chrono::steady_clock::now();
  auto [n, j, k] = wp::indices<3>();
  wp::program forward;
  std::vector<decltype(wp::wrt(W.front(), dW.front()))> params;  // one type for every block
  for (int t = 0; t < blocks; ++t) {
    const std::string s = std::to_string(t);
    z.emplace_back("z" + s, std::array<index_t, 2>{N, H});
    W.emplace_back("W" + s, std::array<index_t, 2>{H, H});
    dW.emplace_back("dW" + s, std::array<index_t, 2>{H, H});
    W.back().init([t, H](const auto& g) { return w_at(t, g[0], g[1], H); });
    h.emplace_back("h" + std::to_string(t + 1), std::array<index_t, 2>{N, H});
    auto &zt = z.back(), &Wt = W.back(), &in = h[std::size_t(t)], &out = h.back();
    forward.add(wp::map("zero" + s, wp::space(N, H), zt(n, j) = 0.0))
        .add(wp::map("lin" + s, wp::space(N, H, H), zt(n, j) += Wt(j, k) * in(n, k)))
        .add(wp::map("act" + s, wp::space(N, H), out(n, j) = in(n, j) + wp::tanh(zt(n, j))));
    params.push_back(wp::wrt(Wt, dW.back()));
  }
  const double inv2n = 1.0 / double(2 * N);
  forward.add(wp::map("l0", wp::space(), L() = 0.0))
      .add(wp::map("loss", wp::space(N, H), L() += h.back()(n, j) * h.back()(n, j) * inv2n));
  const wp::program backward = wp::backward(forward, L, params);
  wp::program step(forward, backward);
  for (int t = 0; t < blocks; ++t)
    step.add(
        wp::map("sgd" + std::to_string(t), wp::space(H, H),
                W[std::size_t(t)](n, j) = W[std::size_t(t)](n, j) - lr * dW[std::size_t(t)](n, j)));
  const double build_s = seconds_since(t_build);

  // Data parallelism, by name: the batch over the ranks, each update (and the zeroing of the
  // weight gradients it reads) replicated on every rank.
  const int P = ctx.size();
  wp::schedule s;
  step.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    if (m.name().rfind("sgd", 0) == 0 || m.name().rfind("zero.dW", 0) == 0) {
      s.set(m.name(), wp::grid_shape(g).replicated(P));
      return;
    }
    if (!g.empty()) g[0] = std::min<index_t>(P, m.extents()[0]);
    s.set(m.name(), wp::grid_shape(g));
  });
  const auto t_plan = std::chrono::steady_clock::now();
  auto plan = wp::distribute(step, s, ctx);
  const double plan_s = seconds_since(t_plan);
  if (ctx.is_root())
    std::printf(
        "%d blocks: %zu maps in the step (%zu backward); program and backward built "
        "in %.3f s, the plan on %d rank(s) in %.3f s\n",
        blocks, step.size(), backward.size(), build_s, P, plan_s);

  std::vector<double> losses;
  plan.scatter();
  for (int i = 0; i < steps; ++i) {
    plan.execute();
    plan.gather(L);
    if (ctx.is_root()) {
      losses.push_back(L.at({}));
      std::printf("step %d  loss %.6e\n", i + 1, losses.back());
    }
  }
  plan.gather(W.back());

  int status = 0;
  if (ctx.is_root()) {
    const plain_training want(blocks, N, H, steps);
    double worst = 0;
    for (int i = 0; i < steps; ++i)
      worst = std::max(worst, std::abs(losses[std::size_t(i)] - want.losses[std::size_t(i)]) /
                                  std::max(1e-300, std::abs(want.losses[std::size_t(i)])));
    double scale = 1e-300;  // the weights' differences relative to their largest
    for (double w : want.last_W) scale = std::max(scale, std::abs(w));
    for (index_t r = 0; r < H; ++r)
      for (index_t c = 0; c < H; ++c)
        worst = std::max(
            worst, std::abs(W.back().at({r, c}) - want.last_W[std::size_t(r * H + c)]) / scale);
    const bool same = worst <= 1e-9;
    std::printf(
        "largest relative difference from plain loops (losses, last block's weights) "
        "%.2g -> %s\n",
        worst, same ? "ok" : "FAILED");
    status = same ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
