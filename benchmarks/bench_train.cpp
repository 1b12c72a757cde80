// One training step of a two-layer ReLU MLP (forward, wp::backward, SGD; float32) as one
// workpart program, against the same step written by hand with Eigen (BLAS GEMMs) on one
// process, timed alternately in the same run. Run under mpirun -np P (1, 2, 4):
//
//   mpirun -np P bench_train [--batch B] [--in I] [--hidden H] [--out O] [--reps R] [--csv FILE]
//
// Variants: a data-parallel schedule (every map's first dimension split over P: the batch in
// the forward and backward maps, the weights' rows in the updates), a tensor-parallel one (the
// hidden units split wherever a map has them, the rest whole) and wp::automatic. Seconds
// are medians over R steps of the slowest rank; speed-up = hand-written s / workpart s (at
// P = 1 the target is >= 0.9). Bytes: received per step, summed over ranks, beside what an
// Allreduce of the two weight gradients moves (2 (P-1) n elements summed over ranks, a ring's
// count). After the steps root compares each variant's weights with the hand-written ones.
#include <workpart/workpart.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_mpi.hpp"

namespace wp = workpart;
using namespace workpart_bench;
using wp::index_t;

namespace {

struct options {
  index_t batch = 512, in = 512, hidden = 2048, out = 512;
  int reps = 5;
  std::string csv;
};

options parse(int argc, char** argv, bool root) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto next = [&]() -> const char* { return a + 1 < argc ? argv[++a] : ""; };
    if (s == "--batch")
      o.batch = std::atoll(next());
    else if (s == "--in")
      o.in = std::atoll(next());
    else if (s == "--hidden")
      o.hidden = std::atoll(next());
    else if (s == "--out")
      o.out = std::atoll(next());
    else if (s == "--reps")
      o.reps = std::atoi(next());
    else if (s == "--csv")
      o.csv = next();
    else {
      if (root)
        std::fprintf(stderr,
                     "usage: bench_train [--batch B] [--in I] [--hidden H] [--out O] [--reps R] "
                     "[--csv FILE]\n");
      std::exit(2);
    }
  }
  if (o.batch < 1 || o.in < 1 || o.hidden < 1 || o.out < 1 || o.reps < 1) {
    if (root) std::fprintf(stderr, "bench_train: sizes and --reps must be positive\n");
    std::exit(2);
  }
  return o;
}

using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

float x_at(index_t b, index_t k) { return float(std::sin(0.37 * double(b) + 1.3 * double(k))); }
float t_at(index_t b, index_t o) { return float(std::cos(0.11 * double(b) - 0.7 * double(o))); }
float w_at(index_t u, index_t v, index_t salt, index_t fan_in) {
  return float(std::sin(1.7 * double(u) + 0.3 * double(v) + double(salt)) /
               std::sqrt(double(fan_in)));
}

/// The step by hand: forward, backward and SGD with Eigen's GEMMs (no dX: nothing needs it).
struct hand_step {
  matrix X, T, W1, W2, H, A, Y, dY, dA, dW1, dW2;
  float lr, loss = 0;
  void operator()() {
    H.noalias() = X * W1;
    A = H.cwiseMax(0.0f);
    Y.noalias() = A * W2;
    dY = (Y - T) / float(X.rows());
    loss = (Y - T).squaredNorm() / float(2 * X.rows());
    dW2.noalias() = A.transpose() * dY;
    dA.noalias() = dY * W2.transpose();
    dA = (H.array() > 0.0f).select(dA, 0.0f);
    dW1.noalias() = X.transpose() * dA;
    W1 -= lr * dW1;
    W2 -= lr * dW2;
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const bool root = ctx.is_root();
  const options opt = parse(argc, argv, root);
  const int P = ctx.size();
  const index_t B = opt.batch, I = opt.in, Hd = opt.hidden, O = opt.out;
  const float lr = 1e-5f;  // stable at the default sizes (the loss falls)
  if (root) {
    std::printf(
        "bench_train: one training step of a 2-layer ReLU MLP (batch %lld, %lld-%lld-%lld, "
        "float32): forward + wp::backward + SGD as one program vs the step by hand with Eigen\n",
        (long long)B, (long long)I, (long long)Hd, (long long)O);
    print_run_environment(P);
    std::fflush(stdout);
  }

  wp::array<float, 2> x("x", {B, I}), t("t", {B, O}), W1("W1", {I, Hd}), W2("W2", {Hd, O});
  wp::array<float, 2> h("h", {B, Hd}), a("a", {B, Hd}), y("y", {B, O});
  wp::array<float, 2> dW1("dW1", {I, Hd}), dW2("dW2", {Hd, O});
  wp::array<float, 0> L("L", {});
  x.init([](const auto& g) { return x_at(g[0], g[1]); });
  t.init([](const auto& g) { return t_at(g[0], g[1]); });
  W1.init([&](const auto& g) { return w_at(g[0], g[1], 3, I); });
  W2.init([&](const auto& g) { return w_at(g[0], g[1], 4, Hd); });

  auto [b, n, k] = wp::indices<3>();
  const float inv2b = 1.0f / float(2 * B);
  auto fwd = wp::program(
      wp::map("h0", wp::space(B, Hd), h(b, n) = 0.0f),
      wp::map("fc1", wp::space(B, Hd, I), h(b, n) += x(b, k) * W1(k, n)),
      wp::map("relu", wp::space(B, Hd), a(b, n) = wp::max(h(b, n), 0.0f)),
      wp::map("y0", wp::space(B, O), y(b, n) = 0.0f),
      wp::map("fc2", wp::space(B, O, Hd), y(b, n) += a(b, k) * W2(k, n)),
      wp::map("l0", wp::space(), L() = 0.0f),
      wp::map("loss", wp::space(B, O), L() += (y(b, n) - t(b, n)) * (y(b, n) - t(b, n)) * inv2b));
  auto step = wp::program(fwd, wp::backward(fwd, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2)),
                          wp::map("sgd1", wp::space(I, Hd), W1(b, n) = W1(b, n) - lr * dW1(b, n)),
                          wp::map("sgd2", wp::space(Hd, O), W2(b, n) = W2(b, n) - lr * dW2(b, n)));

  wp::schedule dp;
  step.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank), 1);
    if (m.rank > 0) g[0] = P;
    dp.set(m.name(), wp::grid_shape(g));
  });
  // tensor-parallel: the hidden units split wherever a map has them (the weights' columns of
  // W1, rows of W2), everything else whole
  wp::schedule tp;
  step.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank), 1);
    for (int d = 0; d < m.rank; ++d)
      if (m.iteration_space().extent(d) == Hd) {
        g[std::size_t(d)] = P;
        break;
      }
    tp.set(m.name(), wp::grid_shape(g));
  });
  auto plan_dp = wp::distribute(step, dp, ctx);
  auto plan_tp = wp::distribute(step, tp, ctx);
  auto plan_auto = wp::distribute(step, wp::automatic, ctx);
  if (root) {
    const std::string ex = plan_auto.explain();
    std::printf("  wp::automatic chose: %s\n", ex.substr(0, ex.find('\n')).c_str());
  }

  hand_step hand;
  if (root) {
    hand.lr = lr;
    auto fill = [](matrix& m, index_t r, index_t c, auto f) {
      m.resize(r, c);
      for (index_t u = 0; u < r; ++u)
        for (index_t v = 0; v < c; ++v) m(u, v) = f(u, v);
    };
    fill(hand.X, B, I, x_at);
    fill(hand.T, B, O, t_at);
    fill(hand.W1, I, Hd, [&](index_t u, index_t v) { return w_at(u, v, 3, I); });
    fill(hand.W2, Hd, O, [&](index_t u, index_t v) { return w_at(u, v, 4, Hd); });
  }

  plan_dp.scatter();
  plan_tp.scatter();
  plan_auto.scatter();
  // one warm-up step each
  plan_dp.execute();
  plan_tp.execute();
  plan_auto.execute();
  if (root) hand();
  quiet_barrier(ctx.comm());

  std::vector<double> t_hand, t_dp, t_tp, t_auto;
  index_t bytes_dp = 0, bytes_tp = 0, bytes_auto = 0;
  auto timed = [&](auto& plan, std::vector<double>& times, index_t& bytes) {
    const index_t before = plan.stats().execute.bytes_received;
    quiet_barrier(ctx.comm());
    const auto t0 = std::chrono::steady_clock::now();
    plan.execute();
    const double s = slowest(seconds_since(t0), ctx.comm());
    index_t got = plan.stats().execute.bytes_received - before, sum = 0;
    MPI_Reduce(&got, &sum, 1, MPI_INT64_T, MPI_SUM, 0, ctx.comm());
    if (root) times.push_back(s), bytes = sum;
  };
  for (int r = 0; r < opt.reps; ++r) {
    for (std::size_t v : round_order(r, 4)) {
      if (v == 0) {
        double s = 0;
        if (root) {
          const auto t0 = std::chrono::steady_clock::now();
          hand();
          s = seconds_since(t0);
        }
        quiet_barrier(ctx.comm());
        if (root) t_hand.push_back(s);
      } else if (v == 1) {
        timed(plan_dp, t_dp, bytes_dp);
      } else if (v == 2) {
        timed(plan_tp, t_tp, bytes_tp);
      } else {
        timed(plan_auto, t_auto, bytes_auto);
      }
    }
  }

  // the weights after 1 + reps steps, each variant against the hand-written step's
  int status = 0;
  auto compare = [&](auto& plan) {
    plan.gather(W1, W2);
    double worst = 0;
    if (root) {
      for (index_t e = 0; e < I * Hd; ++e)
        worst = std::max(worst, double(std::abs(W1.data()[e] - hand.W1.data()[e])) /
                                    std::max(1.0, double(std::abs(hand.W1.data()[e]))));
      for (index_t e = 0; e < Hd * O; ++e)
        worst = std::max(worst, double(std::abs(W2.data()[e] - hand.W2.data()[e])) /
                                    std::max(1.0, double(std::abs(hand.W2.data()[e]))));
    }
    return worst;
  };
  const double diff_dp = compare(plan_dp), diff_tp = compare(plan_tp),
               diff_auto = compare(plan_auto);

  if (root) {
    const double hand_s = median(t_hand);
    const index_t allreduce = 2 * index_t(P - 1) * (I * Hd + Hd * O) * index_t(sizeof(float));
    csv_writer csv(opt.csv, {"benchmark", "variant", "P", "batch", "in", "hidden", "out", "step_s",
                             "hand_s", "speedup", "bytes", "allreduce_bytes", "max_rel_diff"});
    std::printf("  step by hand (root alone): %.4f s (its last loss %.6g)\n", hand_s,
                double(hand.loss));
    const struct {
      const char* name;
      const std::vector<double>& t;
      index_t bytes;
      double diff;
    } rows[] = {{"data-parallel", t_dp, bytes_dp, diff_dp},
                {"tensor-par.", t_tp, bytes_tp, diff_tp},
                {"automatic", t_auto, bytes_auto, diff_auto}};
    for (const auto& row : rows) {
      const double s = median(row.t);
      std::printf(
          "  %-13s P=%d: %.4f s per step, speed-up %.2f; received %.3f MB per step (an "
          "Allreduce of the gradients: %.3f MB); weights vs by hand: %.2g\n",
          row.name, P, s, hand_s / s, double(row.bytes) / 1e6, double(allreduce) / 1e6, row.diff);
      csv.row({"train_mlp", row.name, csv_writer::cell(P), csv_writer::cell(B), csv_writer::cell(I),
               csv_writer::cell(Hd), csv_writer::cell(O), csv_writer::cell(s),
               csv_writer::cell(hand_s), csv_writer::cell(hand_s / s), csv_writer::cell(row.bytes),
               csv_writer::cell(allreduce), csv_writer::cell(row.diff)});
      if (!(row.diff <= 1e-3)) status = 1;
    }
    if (status) std::printf("FAILED: the weights differ from the hand-written step's\n");
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, ctx.comm());
  return status;
}
