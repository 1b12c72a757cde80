// Lesson 3: a program of several maps. Intermediates move rank to rank, never through root.
//
//   mpirun -np 4 ./03_program [B D H]
//
// A 2-layer MLP forward pass, y = relu(x W1) W2, as three maps on their own grids (the
// Megatron layout): the first layer splits the hidden units (grid (1,P,1): each rank holds
// all of x, a column block of W1, and computes its columns of h); relu keeps that layout; the
// second layer splits its reduction over the same hidden units (grid (1,1,P)), so the ranks'
// partial sums of y are combined at the end. h and a never leave the ranks and never move
// between them: explain() says "none" for both, and the only rank-to-rank traffic is the
// Reduce of y's partial sums. Root checks y against plain loops.
#include <workpart/workpart.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t B = argc > 3 ? std::atoll(argv[1]) : 6;   // batch
  const std::int64_t D = argc > 3 ? std::atoll(argv[2]) : 5;   // input and output width
  const std::int64_t H = argc > 3 ? std::atoll(argv[3]) : 11;  // hidden width
  const std::int64_t P = ctx.size();

  wp::array<double, 2> x("x", {B, D}), W1("W1", {D, H}), h("h", {B, H}), a("a", {B, H});
  wp::array<double, 2> W2("W2", {H, D}), y("y", {B, D});
  if (ctx.is_root()) {
    for (std::int64_t e = 0; e < B * D; ++e) x.data()[e] = std::sin(double(e));
    for (std::int64_t e = 0; e < D * H; ++e) W1.data()[e] = std::cos(double(3 * e)) / 2;
    for (std::int64_t e = 0; e < H * D; ++e) W2.data()[e] = std::sin(double(5 * e + 1)) / 2;
  }

  auto [i, n, k] = wp::indices<3>();
  auto fc1 = wp::map("fc1", wp::space(B, H, D), h(i, n) += x(i, k) * W1(k, n));
  auto relu = wp::map("relu", wp::space(B, H), a(i, n) = wp::max(h(i, n), 0.0));
  auto fc2 = wp::map("fc2", wp::space(B, D, H), y(i, n) += a(i, k) * W2(k, n));

  wp::schedule s;
  s.set(fc1, wp::grid_shape{1, P, 1})
      .set(relu, wp::grid_shape{1, P})
      .set(fc2, wp::grid_shape{1, 1, P});
  auto plan = wp::distribute(wp::program(wp::forward_only, fc1, relu, fc2), s, ctx);
  if (ctx.is_root()) std::cout << plan.explain();
  plan.scatter();
  plan.execute();
  plan.gather(y);  // only the output: h and a stay on the ranks

  const auto st = plan.stats();
  for (int r = 0; r < ctx.size(); ++r) {  // one line per rank, in rank order
    if (r == ctx.rank()) {
      std::printf(
          "rank %d: from root %lld B, to root %lld B, rank to rank: sent %lld B received %lld B\n",
          r, (long long)st.scatter.bytes_received, (long long)st.gather.bytes_sent,
          (long long)st.execute.bytes_sent, (long long)st.execute.bytes_received);
      for (const auto& rd : st.redistributions)
        std::printf(
            "  %-2s -> %-6s %-22s measured %lld/%lld B, predicted %lld/%lld B (sent/received)\n",
            rd.array.c_str(), rd.to.c_str(), rd.kind.c_str(), (long long)rd.measured.bytes_sent,
            (long long)rd.measured.bytes_received, (long long)rd.predicted_first_sent,
            (long long)rd.predicted_first_received);
    }
    std::fflush(stdout);
    ctx.comm().barrier();
  }

  int status = 0;
  if (ctx.is_root()) {
    std::vector<double> hid(std::size_t(B * H));
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t u = 0; u < H; ++u) {
        double t = 0;
        for (std::int64_t d = 0; d < D; ++d) t += x.data()[b * D + d] * W1.data()[d * H + u];
        hid[std::size_t(b * H + u)] = std::max(t, 0.0);
      }
    double worst = 0;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t d = 0; d < D; ++d) {
        double t = 0;
        for (std::int64_t u = 0; u < H; ++u)
          t += hid[std::size_t(b * H + u)] * W2.data()[u * D + d];
        worst = std::max(worst, std::abs(t - y.data()[b * D + d]));
      }
    const bool ok = worst < 1e-12 * double(H + D);
    std::printf(
        "y = relu(x W1) W2 for B=%lld D=%lld H=%lld on %d rank(s): max |error| = %.3g -> %s\n",
        (long long)B, (long long)D, (long long)H, ctx.size(), worst, ok ? "ok" : "WRONG");
    status = ok ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
