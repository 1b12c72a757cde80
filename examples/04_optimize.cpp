// Lesson 4: let the optimizer choose the grids.
//
//   mpirun -np 4 ./04_optimize [N D H]
//
// The 2-layer MLP of lesson 3, y = relu(x W1) W2, with no schedule written: wp::optimize
// prices every grid of every map under a machine model (arithmetic rate, alpha per message,
// beta per byte) and finds the cheapest schedule exactly; wp::distribute(prog, wp::automatic,
// ctx) does the same for the ranks it runs on. The example prints the optimizer's choice for
// 16 ranks (no MPI needed for that), runs the program on the ranks it has with the model
// calibrated here, and checks y against plain loops on root.
#include <workpart/workpart.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t N = argc > 3 ? std::atoll(argv[1]) : 512;  // batch
  const std::int64_t D = argc > 3 ? std::atoll(argv[2]) : 64;   // input and output width
  const std::int64_t H = argc > 3 ? std::atoll(argv[3]) : 256;  // hidden width

  wp::array<double, 2> x("x", {N, D}), W1("W1", {D, H}), h("h", {N, H}), a("a", {N, H});
  wp::array<double, 2> W2("W2", {H, D}), y("y", {N, D});
  if (ctx.is_root()) {
    for (std::int64_t e = 0; e < N * D; ++e) x.data()[e] = std::sin(double(e));
    for (std::int64_t e = 0; e < D * H; ++e) W1.data()[e] = std::cos(double(3 * e)) / 8;
    for (std::int64_t e = 0; e < H * D; ++e) W2.data()[e] = std::sin(double(5 * e + 1)) / 8;
  }
  auto [i, n, k] = wp::indices<3>();
  auto fc1 = wp::map("fc1", wp::space(N, H, D), h(i, n) += x(i, k) * W1(k, n));
  auto relu = wp::map("relu", wp::space(N, H), a(i, n) = wp::max(h(i, n), 0.0));
  auto fc2 = wp::map("fc2", wp::space(N, D, H), y(i, n) += a(i, k) * W2(k, n));
  auto prog = wp::program(wp::forward_only, fc1, relu, fc2);

  // a cluster of 16 ranks, priced on this one process (pricing grows with the ranks times the
  // grid pairs of neighbouring maps: 64 ranks take a few seconds here)
  const wp::machine_model cluster{.flops = 2e10, .alpha = 2e-6, .beta = 1e-10};
  const wp::optimized far = wp::optimize(prog, 16, cluster);
  if (ctx.is_root()) std::printf("for 16 ranks: %s\n", far.str().c_str());

  // the ranks of this run, with the model measured on them
  const wp::machine_model here = wp::machine_model::calibrate(ctx);
  auto plan = wp::distribute(prog, wp::automatic_t{.model = here}, ctx);
  if (ctx.is_root()) {
    std::printf("calibrated: %.3g flop/s, alpha %.3g s, beta %.3g s/B\n", here.flops, here.alpha,
                here.beta);
    std::printf("for %d ranks: %s\n", ctx.size(),
                wp::optimize(prog, ctx.size(), here).str().c_str());
  }
  plan.run();

  int status = 0;
  if (ctx.is_root()) {
    std::vector<double> hid(std::size_t(N * H));
    for (std::int64_t b = 0; b < N; ++b)
      for (std::int64_t u = 0; u < H; ++u) {
        double t = 0;
        for (std::int64_t d = 0; d < D; ++d) t += x.data()[b * D + d] * W1.data()[d * H + u];
        hid[std::size_t(b * H + u)] = std::max(t, 0.0);
      }
    double worst = 0;
    for (std::int64_t b = 0; b < N; ++b)
      for (std::int64_t d = 0; d < D; ++d) {
        double t = 0;
        for (std::int64_t u = 0; u < H; ++u)
          t += hid[std::size_t(b * H + u)] * W2.data()[u * D + d];
        worst = std::max(worst, std::abs(t - y.data()[b * D + d]) / std::max(1.0, std::abs(t)));
      }
    status = worst < 1e-9 ? 0 : 1;
    std::printf("y against plain loops: largest relative difference %.3g -> %s\n", worst,
                status ? "FAILED" : "ok");
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
