// One training step (forward, wp::backward, SGD; float32) as one workpart program, against the
// same step written by hand with Eigen (BLAS GEMMs) on one process, timed alternately in the
// same run. Two models: a two-layer ReLU MLP (the default) and a Megatron multi-head attention
// block (--model attention: the Q, K, V projections, softmax with a stable max, the values and
// the output projection, as examples/07_attention; loss sum(Y * G) / (B S)). Run under
// mpirun -np P (1, 2, 4):
//
//   mpirun -np P bench_train [--model mlp|attention] [--batch B] [--in I] [--hidden H]
//                            [--out O] [--seq S] [--heads NH] [--head-dim D] [--reps R]
//                            [--csv FILE]
//
// Variants: a data-parallel schedule (every map's first dimension split over P: the batch in
// the forward and backward maps, the weights' rows in the updates), a tensor-parallel one (the
// MLP's hidden units, the attention block's heads, split wherever a map has them, the rest
// whole: Megatron's split) and wp::automatic. Seconds are medians over R steps of the slowest
// rank; speed-up = hand-written s / workpart s (at P = 1 the target is >= 0.9). Bytes:
// received per step, summed over ranks, beside the analytic counts (a ring's, summed over
// ranks): an Allreduce of the weight gradients (2 (P-1) n elements; data-parallel) and, for
// the attention block, Megatron's one forward and one backward Allreduce of B*S*E
// (tensor-parallel). After the steps root compares each variant's weights with the
// hand-written ones.
#include <workpart/workpart.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_mpi.hpp"

namespace wp = workpart;
using namespace workpart_bench;
using wp::index_t;

namespace {

struct options {
  std::string model = "mlp";
  index_t batch = 0, in = 512, hidden = 2048, out = 512;  // batch 0: the model's default
  index_t seq = 128, heads = 8, head_dim = 32;            // attention: E = heads * head_dim
  int reps = 5;
  std::string csv;
};

options parse(int argc, char** argv, bool root) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto next = [&]() -> const char* { return a + 1 < argc ? argv[++a] : ""; };
    if (s == "--model")
      o.model = next();
    else if (s == "--batch")
      o.batch = std::atoll(next());
    else if (s == "--in")
      o.in = std::atoll(next());
    else if (s == "--hidden")
      o.hidden = std::atoll(next());
    else if (s == "--out")
      o.out = std::atoll(next());
    else if (s == "--seq")
      o.seq = std::atoll(next());
    else if (s == "--heads")
      o.heads = std::atoll(next());
    else if (s == "--head-dim")
      o.head_dim = std::atoll(next());
    else if (s == "--reps")
      o.reps = std::atoi(next());
    else if (s == "--csv")
      o.csv = next();
    else
      o.reps = -1;
  }
  if (o.batch == 0) o.batch = o.model == "attention" ? 4 : 512;
  if ((o.model != "mlp" && o.model != "attention") || o.batch < 1 || o.in < 1 || o.hidden < 1 ||
      o.out < 1 || o.seq < 1 || o.heads < 1 || o.head_dim < 1 || o.reps < 1) {
    if (root)
      std::fprintf(stderr,
                   "usage: bench_train [--model mlp|attention] [--batch B] [--in I] [--hidden H] "
                   "[--out O] [--seq S] [--heads NH] [--head-dim D] [--reps R] [--csv FILE] "
                   "(sizes and R positive)\n");
    std::exit(2);
  }
  return o;
}

using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using strided = Eigen::Map<matrix, 0, Eigen::OuterStride<>>;

float x_at(index_t b, index_t k) { return float(std::sin(0.37 * double(b) + 1.3 * double(k))); }
float t_at(index_t b, index_t o) { return float(std::cos(0.11 * double(b) - 0.7 * double(o))); }
float w_at(index_t u, index_t v, index_t salt, index_t fan_in) {
  return float(std::sin(1.7 * double(u) + 0.3 * double(v) + double(salt)) /
               std::sqrt(double(fan_in)));
}

/// The largest relative difference of a from b (root's arrays, n elements).
double max_rel_diff(const float* a, const float* b, index_t n) {
  double worst = 0;
  for (index_t e = 0; e < n; ++e)
    worst = std::max(worst, double(std::abs(a[e] - b[e])) / std::max(1.0, double(std::abs(b[e]))));
  return worst;
}

/// A grid for every map: `pick(map)` names the dimension split over P (or -1: none).
template <class Prog, class Pick>
wp::schedule split_schedule(const Prog& prog, int P, Pick pick) {
  wp::schedule s;
  prog.for_each_map([&](const auto& m) {
    std::vector<index_t> g(std::size_t(m.rank()), 1);
    const int d = pick(m);
    if (d >= 0) g[std::size_t(d)] = P;
    s.set(m.name(), wp::grid_shape(g));
  });
  return s;
}
/// The first dimension of map m whose extent is n (-1 when none).
template <class M>
int dim_of_extent(const M& m, index_t n) {
  for (int d = 0; d < m.rank(); ++d)
    if (m.extents()[std::size_t(d)] == n) return d;
  return -1;
}

/// What the harness reports per variant.
struct variant_row {
  const char* name;
  double seconds = 0;
  index_t bytes = 0;  ///< received per step, summed over ranks
  double diff = 0;    ///< weights vs the hand-written step's, after every step
};

/// Runs the hand-written step (root alone) and one step of each plan alternately, `reps`
/// rounds after a warm-up, in a balanced order; returns the hand-written median (root) and
/// fills each row's median seconds and bytes.
template <class Plan, class Hand>
double time_alternately(wp::context& ctx, int reps, Hand& hand, std::array<Plan*, 3> plans,
                        std::array<variant_row, 3>& rows) {
  const bool root = ctx.is_root();
  for (Plan* p : plans) p->scatter();
  for (Plan* p : plans) p->execute();  // warm-up
  if (root) hand();
  quiet_barrier(ctx.comm());
  std::vector<double> t_hand;
  std::array<std::vector<double>, 3> t;
  for (int r = 0; r < reps; ++r)
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
        continue;
      }
      Plan& plan = *plans[v - 1];
      const index_t before = plan.stats().execute.bytes_received;
      quiet_barrier(ctx.comm());
      const auto t0 = std::chrono::steady_clock::now();
      plan.execute();
      const double s = slowest(seconds_since(t0), ctx.comm());
      index_t got = plan.stats().execute.bytes_received - before, sum = 0;
      MPI_Reduce(&got, &sum, 1, MPI_INT64_T, MPI_SUM, 0, ctx.comm());
      if (root) t[v - 1].push_back(s), rows[v - 1].bytes = sum;
    }
  for (std::size_t v = 0; v < 3; ++v) rows[v].seconds = median(t[v]);
  return median(t_hand);
}

/// Prints the rows (root) and writes them to the CSV; false when a variant's weights differ.
bool report(int P, const options& o, double hand_s, const std::array<variant_row, 3>& rows,
            const char* analytic, index_t analytic_bytes) {
  csv_writer csv(o.csv, {"benchmark", "variant", "P", "batch", "in", "hidden", "out", "step_s",
                         "hand_s", "speedup", "bytes", "analytic_bytes", "max_rel_diff"});
  std::printf("  step by hand (root alone): %.4f s\n", hand_s);
  bool ok = true;
  for (const auto& row : rows) {
    std::printf(
        "  %-13s P=%d: %.4f s per step, speed-up %.2f; received %.3f MB per step (%s: %.3f "
        "MB); weights vs by hand: %.2g\n",
        row.name, P, row.seconds, hand_s / row.seconds, double(row.bytes) / 1e6, analytic,
        double(analytic_bytes) / 1e6, row.diff);
    const bool mlp = o.model == "mlp";
    csv.row({"train_" + o.model, row.name, csv_writer::cell(P), csv_writer::cell(o.batch),
             csv_writer::cell(mlp ? o.in : o.seq), csv_writer::cell(mlp ? o.hidden : o.heads),
             csv_writer::cell(mlp ? o.out : o.head_dim), csv_writer::cell(row.seconds),
             csv_writer::cell(hand_s), csv_writer::cell(hand_s / row.seconds),
             csv_writer::cell(row.bytes), csv_writer::cell(analytic_bytes),
             csv_writer::cell(row.diff)});
    if (!(row.diff <= 1e-3)) ok = false;
  }
  if (!ok) std::printf("FAILED: the weights differ from the hand-written step's\n");
  return ok;
}

// ---- the MLP ----

/// The step by hand: forward, backward and SGD with Eigen's GEMMs (no dX: nothing needs it).
struct mlp_by_hand {
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

bool run_mlp(wp::context& ctx, const options& o) {
  const bool root = ctx.is_root();
  const int P = ctx.size();
  const index_t B = o.batch, I = o.in, Hd = o.hidden, O = o.out;
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

  auto dp = split_schedule(step, P, [](const auto& m) { return m.rank() > 0 ? 0 : -1; });
  // tensor-parallel: the hidden units split wherever a map has them (the weights' columns of
  // W1, rows of W2), everything else whole
  auto tp = split_schedule(step, P, [&](const auto& m) { return dim_of_extent(m, Hd); });
  auto plan_dp = wp::distribute(step, dp, ctx);
  auto plan_tp = wp::distribute(step, tp, ctx);
  auto plan_auto = wp::distribute(step, wp::automatic, ctx);
  if (root) {
    const std::string ex = plan_auto.explain();
    std::printf("  wp::automatic chose: %s\n", ex.substr(0, ex.find('\n')).c_str());
  }

  mlp_by_hand hand;
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
  std::array<variant_row, 3> rows{{{"data-parallel"}, {"tensor-par."}, {"automatic"}}};
  // the weights after 1 + reps steps, each variant against the hand-written step's
  std::array<decltype(plan_dp)*, 3> plans{&plan_dp, &plan_tp, &plan_auto};
  const double hand_s = time_alternately(ctx, o.reps, hand, plans, rows);
  for (std::size_t v = 0; v < 3; ++v) {
    plans[v]->gather(W1, W2);
    if (root)
      rows[v].diff = std::max(max_rel_diff(W1.data(), hand.W1.data(), I * Hd),
                              max_rel_diff(W2.data(), hand.W2.data(), Hd * O));
  }
  if (!root) return true;
  std::printf("  the hand-written step's last loss: %.6g\n", double(hand.loss));
  const index_t allreduce = 2 * index_t(P - 1) * (I * Hd + Hd * O) * index_t(sizeof(float));
  return report(P, o, hand_s, rows, "an Allreduce of the gradients", allreduce);
}

// ---- the attention block ----

/// The block's step by hand, per batch item and head, with Eigen's GEMMs: the projections,
/// scores, softmax (stable max), values and output projection, then their derivatives (dX is
/// not needed) and SGD on the four weights. Weights are (E, NH, D) and (NH, D, E) row-major,
/// as the workpart arrays: a head's slice is a strided map.
struct attention_by_hand {
  index_t B = 0, S = 0, NH = 0, D = 0, E = 0;
  float scale = 1, c = 1, lr = 0;
  std::vector<float> X, G, WQ, WK, WV, WO, dWQ, dWK, dWV, dWO;
  matrix Q, K, V, A, Pr, O, Y, dO, dP, dA, dQ, dK, dV;
  void operator()() {
    for (auto* d : {&dWQ, &dWK, &dWV, &dWO}) std::fill(d->begin(), d->end(), 0.0f);
    for (index_t b = 0; b < B; ++b) {
      const Eigen::Map<const matrix> x(X.data() + b * S * E, S, E);
      const Eigen::Map<const matrix> dy(G.data() + b * S * E, S, E);  // dL/dY = G * c
      for (index_t h = 0; h < NH; ++h) {
        const strided wq(WQ.data() + h * D, E, D, Eigen::OuterStride<>(NH * D));
        const strided wk(WK.data() + h * D, E, D, Eigen::OuterStride<>(NH * D));
        const strided wv(WV.data() + h * D, E, D, Eigen::OuterStride<>(NH * D));
        const Eigen::Map<const matrix> wo(WO.data() + h * D * E, D, E);
        Q.noalias() = x * wq;
        K.noalias() = x * wk;
        V.noalias() = x * wv;
        A.noalias() = Q * K.transpose();
        Pr = ((A.colwise() - A.rowwise().maxCoeff()) * scale).array().exp();
        Pr.array().colwise() /= Pr.rowwise().sum().array();
        O.noalias() = Pr * V;
        // backward
        strided dwq(dWQ.data() + h * D, E, D, Eigen::OuterStride<>(NH * D));
        strided dwk(dWK.data() + h * D, E, D, Eigen::OuterStride<>(NH * D));
        strided dwv(dWV.data() + h * D, E, D, Eigen::OuterStride<>(NH * D));
        Eigen::Map<matrix> dwo(dWO.data() + h * D * E, D, E);
        dwo.noalias() += c * (O.transpose() * dy);
        dO.noalias() = c * (dy * wo.transpose());
        dP.noalias() = dO * V.transpose();
        dV.noalias() = Pr.transpose() * dO;
        dA = Pr.cwiseProduct(dP);
        dA = (dA - Pr.cwiseProduct(dA.rowwise().sum().replicate(1, S))) * scale;
        dQ.noalias() = dA * K;
        dK.noalias() = dA.transpose() * Q;
        dwq.noalias() += x.transpose() * dQ;
        dwk.noalias() += x.transpose() * dK;
        dwv.noalias() += x.transpose() * dV;
      }
    }
    for (std::size_t e = 0; e < WQ.size(); ++e) {
      WQ[e] -= lr * dWQ[e];
      WK[e] -= lr * dWK[e];
      WV[e] -= lr * dWV[e];
    }
    for (std::size_t e = 0; e < WO.size(); ++e) WO[e] -= lr * dWO[e];
  }
};

bool run_attention(wp::context& ctx, const options& o) {
  const bool root = ctx.is_root();
  const int P = ctx.size();
  const index_t B = o.batch, S = o.seq, NH = o.heads, D = o.head_dim, E = NH * D;
  const float scale = 1.0f / std::sqrt(float(D)), c = 1.0f / float(B * S), lr = 1e-3f;
  if (root) {
    std::printf(
        "bench_train: one training step of a multi-head attention block (batch %lld, seq %lld, "
        "%lld heads of %lld, embedding %lld, float32): forward + wp::backward + SGD as one "
        "program vs the step by hand with Eigen\n",
        (long long)B, (long long)S, (long long)NH, (long long)D, (long long)E);
    print_run_environment(P);
    std::fflush(stdout);
  }
  wp::array<float, 3> X("X", {B, S, E}), Y("Y", {B, S, E}), G("G", {B, S, E});
  wp::array<float, 3> WQ("WQ", {E, NH, D}), WK("WK", {E, NH, D}), WV("WV", {E, NH, D}),
      WO("WO", {NH, D, E});
  wp::array<float, 3> dWQ("dWQ", {E, NH, D}), dWK("dWK", {E, NH, D}), dWV("dWV", {E, NH, D}),
      dWO("dWO", {NH, D, E});
  wp::array<float, 4> Q("Q", {B, S, NH, D}), K("K", {B, S, NH, D}), V("V", {B, S, NH, D}),
      O("O", {B, S, NH, D});
  wp::array<float, 4> A("A", {B, NH, S, S}), Pr("Pr", {B, NH, S, S});
  wp::array<float, 3> mx("mx", {B, NH, S}), sm("sm", {B, NH, S});
  wp::array<float, 0> L("L", {});
  auto value = [](int salt, index_t fan_in) {
    return [salt, fan_in](const std::array<index_t, 3>& g) {
      return float(
          std::sin(0.7 * double(g[0]) + 1.3 * double(g[1]) + 0.29 * double(g[2]) + double(salt)) /
          std::sqrt(double(fan_in)));
    };
  };
  X.init(value(1, 1));
  G.init(value(2, 1));
  WQ.init(value(3, E));
  WK.init(value(4, E));
  WV.init(value(5, E));
  WO.init(value(6, E));

  const float inf = std::numeric_limits<float>::infinity();
  auto [b, s, h, d, e] = wp::indices<5>();
  auto [b4, h4, s4, t4, d4] = wp::indices<5>();
  auto [b3, h3, s3, t3] = wp::indices<4>();
  auto fwd = wp::program(
      wp::map("init", wp::space(B, S, NH, D), Q(b, s, h, d) = 0.0f, K(b, s, h, d) = 0.0f,
              V(b, s, h, d) = 0.0f, O(b, s, h, d) = 0.0f),
      wp::map("init2", wp::space(B, NH, S), mx(b3, h3, s3) = -inf, sm(b3, h3, s3) = 0.0f),
      wp::map("init3", wp::space(B, NH, S, S), A(b3, h3, s3, t3) = 0.0f),
      wp::map("y0", wp::space(B, S, E), Y(b, s, h) = 0.0f),
      wp::map("q", wp::space(B, S, NH, D, E), Q(b, s, h, d) += X(b, s, e) * WQ(e, h, d)),
      wp::map("k", wp::space(B, S, NH, D, E), K(b, s, h, d) += X(b, s, e) * WK(e, h, d)),
      wp::map("v", wp::space(B, S, NH, D, E), V(b, s, h, d) += X(b, s, e) * WV(e, h, d)),
      wp::map("scores", wp::space(B, NH, S, S, D),
              A(b4, h4, s4, t4) += Q(b4, s4, h4, d4) * K(b4, t4, h4, d4)),
      wp::map("max", wp::space(B, NH, S, S), wp::max_into(mx(b3, h3, s3), A(b3, h3, s3, t3))),
      wp::map("expsum", wp::space(B, NH, S, S),
              sm(b3, h3, s3) += wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale)),
      wp::map("norm", wp::space(B, NH, S, S),
              Pr(b3, h3, s3, t3) =
                  wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale) / sm(b3, h3, s3)),
      wp::map("values", wp::space(B, NH, S, D, S),
              O(b4, s4, h4, t4) += Pr(b4, h4, s4, d4) * V(b4, d4, h4, t4)),
      wp::map("out", wp::space(B, S, E, NH, D), Y(b, s, h) += O(b, s, d, e) * WO(d, e, h)),
      wp::map("l0", wp::space(), L() = 0.0f),
      wp::map("loss", wp::space(B, S, E), L() += Y(b, s, h) * G(b, s, h) * c));
  auto bwd =
      wp::backward(fwd, L, wp::wrt(WQ, dWQ), wp::wrt(WK, dWK), wp::wrt(WV, dWV), wp::wrt(WO, dWO));
  auto sgd = [&](const char* name, auto& W, auto& dW, const wp::space<3>& sp) {
    return wp::map(name, sp, W(b, s, h) = W(b, s, h) - lr * dW(b, s, h));
  };
  auto step = wp::program(fwd, bwd, sgd("sgdq", WQ, dWQ, wp::space(E, NH, D)),
                          sgd("sgdk", WK, dWK, wp::space(E, NH, D)),
                          sgd("sgdv", WV, dWV, wp::space(E, NH, D)),
                          sgd("sgdo", WO, dWO, wp::space(NH, D, E)));

  auto dp = split_schedule(step, P, [](const auto& m) { return m.rank() > 0 ? 0 : -1; });
  // Megatron: the heads split wherever a map has them, everything else whole
  auto tp = split_schedule(step, P, [&](const auto& m) { return dim_of_extent(m, NH); });
  auto plan_dp = wp::distribute(step, dp, ctx);
  auto plan_tp = wp::distribute(step, tp, ctx);
  auto plan_auto = wp::distribute(step, wp::automatic, ctx);
  if (root) {
    const std::string ex = plan_auto.explain();
    std::printf("  wp::automatic chose: %s\n", ex.substr(0, ex.find('\n')).c_str());
  }

  attention_by_hand hand;
  if (root) {
    hand.B = B;
    hand.S = S;
    hand.NH = NH;
    hand.D = D;
    hand.E = E;
    hand.scale = scale;
    hand.c = c;
    hand.lr = lr;
    auto copy = [](const wp::array<float, 3>& a) {
      return std::vector<float>(a.data(), a.data() + a.size());
    };
    hand.X = copy(X);
    hand.G = copy(G);
    hand.WQ = copy(WQ);
    hand.WK = copy(WK);
    hand.WV = copy(WV);
    hand.WO = copy(WO);
    hand.dWQ = hand.dWK = hand.dWV = hand.dWO = std::vector<float>(std::size_t(E * E), 0.0f);
  }
  std::array<variant_row, 3> rows{{{"data-parallel"}, {"heads split"}, {"automatic"}}};
  std::array<decltype(plan_dp)*, 3> plans{&plan_dp, &plan_tp, &plan_auto};
  const double hand_s = time_alternately(ctx, o.reps, hand, plans, rows);
  for (std::size_t v = 0; v < 3; ++v) {
    plans[v]->gather(WQ, WK, WV, WO);
    if (root)
      rows[v].diff = std::max({max_rel_diff(WQ.data(), hand.WQ.data(), E * E),
                               max_rel_diff(WK.data(), hand.WK.data(), E * E),
                               max_rel_diff(WV.data(), hand.WV.data(), E * E),
                               max_rel_diff(WO.data(), hand.WO.data(), E * E)});
  }
  if (!root) return true;
  // Megatron's count: one Allreduce of B*S*E forward (Y) and one backward (dX; here X needs
  // no gradient, so the backward one is absent), each 2 (P-1) n elements summed over ranks;
  // data-parallel: an Allreduce of the four weight gradients
  const index_t megatron = 2 * index_t(P - 1) * B * S * E * index_t(sizeof(float));
  const index_t allreduce = 2 * index_t(P - 1) * 4 * E * E * index_t(sizeof(float));
  std::printf("  analytic: Megatron's forward Allreduce of Y %.3f MB per step\n",
              double(megatron) / 1e6);
  return report(P, o, hand_s, rows, "an Allreduce of the gradients", allreduce);
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const options opt = parse(argc, argv, ctx.is_root());
  const bool ok = opt.model == "mlp" ? run_mlp(ctx, opt) : run_attention(ctx, opt);
  int status = ok ? 0 : 1;
  MPI_Bcast(&status, 1, MPI_INT, 0, ctx.comm());
  return status;
}
