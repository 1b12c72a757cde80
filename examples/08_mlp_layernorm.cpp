// Lesson 8: a 2-layer MLP forward and a layer norm, as one program of six maps.
//
//   mpirun -np 4 ./08_mlp_layernorm [N D H]        (default 1024 1024 4096, float32)
//
//   h(i,n) += x(i,k) W1(k,n);  a = relu(h);  y(i,n) += a(i,k) W2(k,n)       the MLP
//   mu(i) += y(i,j) / D;  var(i) += (y(i,j) - mu(i))^2 / D;
//   z(i,j) = (y(i,j) - mu(i)) / sqrt(var(i) + eps) * gamma(j) + beta(j)    the layer norm
// The MLP runs Megatron-style (hidden units split: (1,P,1), (1,P), (1,1,P)), so each rank ends
// it with partial sums of all of y; the layer norm splits the rows (P,1). workpart combines
// y's partial sums straight into the row blocks the layer norm reads (a reduce-scatter: each
// rank receives only its rows, summed), with no rule written for it. Root prints explain(),
// each rank its bytes per redistribution beside the prediction (asserted equal), and root
// checks z against plain loops.
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t N = argc > 3 ? std::atoll(argv[1]) : 1024;  // rows (batch x tokens)
  const std::int64_t D = argc > 3 ? std::atoll(argv[2]) : 1024;  // model width
  const std::int64_t H = argc > 3 ? std::atoll(argv[3]) : 4096;  // hidden width
  const std::int64_t P = ctx.size();
  const float eps = 1e-5f;

  wp::array<float, 2> x("x", {N, D}), W1("W1", {D, H}), h("h", {N, H}), a("a", {N, H}),
      W2("W2", {H, D}), y("y", {N, D}), z("z", {N, D});
  wp::array<float, 1> mu("mu", {N}), var("var", {N}), gamma("gamma", {D}), beta("beta", {D});
  if (ctx.is_root()) {
    for (std::int64_t e = 0; e < N * D; ++e) x.data()[e] = float(std::sin(double(e)));
    for (std::int64_t e = 0; e < D * H; ++e) W1.data()[e] = float(std::cos(double(3 * e))) / 16;
    for (std::int64_t e = 0; e < H * D; ++e) W2.data()[e] = float(std::sin(double(5 * e + 1))) / 16;
    for (std::int64_t e = 0; e < D; ++e)
      gamma.data()[e] = 1.0f + float(e % 7) / 8, beta.data()[e] = float(e % 5) / 4;
  }
  auto [i, n, k] = wp::indices<3>();
  auto fc1 = wp::map("fc1", wp::space(N, H, D), h(i, n) += x(i, k) * W1(k, n));
  auto relu = wp::map("relu", wp::space(N, H), a(i, n) = wp::max(h(i, n), 0.0f));
  auto fc2 = wp::map("fc2", wp::space(N, D, H), y(i, n) += a(i, k) * W2(k, n));
  const float inv_d = 1.0f / float(D);
  auto mean = wp::map("mean", wp::space(N, D), mu(i) += y(i, n) * inv_d);
  auto vari =
      wp::map("var", wp::space(N, D), var(i) += (y(i, n) - mu(i)) * (y(i, n) - mu(i)) * inv_d);
  auto norm = wp::map("norm", wp::space(N, D),
                      z(i, n) = (y(i, n) - mu(i)) / wp::sqrt(var(i) + eps) * gamma(n) + beta(n));

  wp::schedule s;
  s.set(fc1, wp::grid_shape{1, P, 1})
      .set(relu, wp::grid_shape{1, P})
      .set(fc2, wp::grid_shape{1, 1, P});
  s.set(mean, wp::grid_shape{P, 1}).set(vari, wp::grid_shape{P, 1}).set(norm, wp::grid_shape{P, 1});
  auto plan =
      wp::distribute(wp::program(wp::forward_only, fc1, relu, fc2, mean, vari, norm), s, ctx);
  if (ctx.is_root()) std::cout << plan.explain() << std::flush;
  plan.scatter();
  plan.execute();
  plan.gather(z);

  const auto st = plan.stats();
  int differs = 0;
  for (int r = 0; r < ctx.size(); ++r) {
    if (r == ctx.rank()) {
      std::printf(
          "rank %d: from root %lld B, to root %lld B, rank to rank sent %lld B received %lld B\n",
          r, (long long)st.scatter.bytes_received, (long long)st.gather.bytes_sent,
          (long long)st.execute.bytes_sent, (long long)st.execute.bytes_received);
      for (const auto& rd : st.redistributions) {
        if (rd.to == "root") continue;
        const bool ok = rd.measured.bytes_sent == rd.predicted_first_sent &&
                        rd.measured.bytes_received == rd.predicted_first_received;
        differs |= ok ? 0 : 1;
        if (rd.measured.bytes_sent + rd.measured.bytes_received + rd.predicted_first_received > 0 ||
            rd.kind != "none")
          std::printf(
              "  %-4s -> %-5s %-26s measured %lld/%lld B, predicted %lld/%lld B "
              "(sent/received)%s\n",
              rd.array.c_str(), rd.to.c_str(), rd.kind.c_str(), (long long)rd.measured.bytes_sent,
              (long long)rd.measured.bytes_received, (long long)rd.predicted_first_sent,
              (long long)rd.predicted_first_received, ok ? "" : "  DIFFERS");
      }
    }
    std::fflush(stdout);
    ctx.comm().barrier();
  }
  int status = boost::mpi::all_reduce(ctx.comm(), differs, boost::mpi::maximum<int>());

  if (ctx.is_root()) {  // plain loops, in double; every row at small sizes, else 8 rows
    const std::int64_t step =
        N * D * H <= (std::int64_t(1) << 24) ? 1 : std::max<std::int64_t>(1, N / 8);
    double worst = 0;
    std::vector<double> hid(static_cast<std::size_t>(H)), out(static_cast<std::size_t>(D));
    for (std::int64_t r = 0; r < N; r += step) {
      for (std::int64_t u = 0; u < H; ++u) {
        double t = 0;
        for (std::int64_t c = 0; c < D; ++c)
          t += double(x.data()[r * D + c]) * double(W1.data()[c * H + u]);
        hid[std::size_t(u)] = std::max(t, 0.0);
      }
      double m = 0, v = 0;
      for (std::int64_t c = 0; c < D; ++c) {
        double t = 0;
        for (std::int64_t u = 0; u < H; ++u)
          t += hid[std::size_t(u)] * double(W2.data()[u * D + c]);
        out[std::size_t(c)] = t;
        m += t / double(D);
      }
      for (std::int64_t c = 0; c < D; ++c)
        v += (out[std::size_t(c)] - m) * (out[std::size_t(c)] - m) / double(D);
      for (std::int64_t c = 0; c < D; ++c) {
        const double want =
            (out[std::size_t(c)] - m) / std::sqrt(v + double(eps)) * double(gamma.data()[c]) +
            double(beta.data()[c]);
        worst = std::max(
            worst, std::abs(want - double(z.data()[r * D + c])) / std::max(1.0, std::abs(want)));
      }
    }
    const bool ok = worst < 2e-3;
    std::printf(
        "z = layernorm(relu(x W1) W2) for N=%lld D=%lld H=%lld on %lld rank(s), %s: largest "
        "relative "
        "difference %.3g -> %s\n",
        (long long)N, (long long)D, (long long)H, (long long)P, step == 1 ? "every row" : "8 rows",
        worst, ok ? "ok" : "FAILED");
    status |= ok ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
