// Lesson 2: the same matmul, distributed over the ranks.
//
//   mpirun -np 4 ./02_distribute [M N K]
//
// Every rank builds the same map and the same plan. With 4 or more ranks the grid is
// (2,2,1): rows and columns of C split in two, each rank one quarter; with fewer it is (P,1,1),
// row blocks. explain() says what each rank executes and which collectives move which boxes,
// with their bytes; draw() pictures each rank's box; stats() says what this run measured. Root
// checks C against a plain loop.
#include <workpart/workpart.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t M = argc > 3 ? std::atoll(argv[1]) : 37;
  const std::int64_t N = argc > 3 ? std::atoll(argv[2]) : 41;
  const std::int64_t K = argc > 3 ? std::atoll(argv[3]) : 29;

  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  if (ctx.is_root()) {  // root's data, scattered by the plan (init() would generate in place)
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t t = 0; t < K; ++t) A.data()[r * K + t] = std::sin(double(r + 2 * t));
    for (std::int64_t t = 0; t < K; ++t)
      for (std::int64_t s = 0; s < N; ++s) B.data()[t * N + s] = std::cos(double(3 * t - s));
  }

  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
  const wp::grid_shape g =
      ctx.size() >= 4 ? wp::grid_shape{2, 2, 1} : wp::grid_shape{ctx.size(), 1, 1};
  auto plan = wp::distribute(mm, g, ctx);
  if (ctx.is_root()) std::cout << plan.explain();
  // The same plan as pictures: each rank's box of C (and A, where rows of ranks share it);
  // plan.to_svg() is the whole plan as an SVG page.
  const std::string picture_c = plan.draw(C), picture_a = plan.draw(A);
  if (ctx.is_root()) std::cout << "\n" << picture_c << "\n" << picture_a << "\n";
  plan.run();

  const auto& st = plan.stats();
  for (int r = 0; r < ctx.size(); ++r) {  // one line per rank, in rank order
    if (r == ctx.rank())
      std::printf(
          "rank %d: scatter sent %lld B received %lld B, gather sent %lld B received %lld "
          "B (predicted: %lld %lld %lld %lld)\n",
          r, (long long)st.scatter.bytes_sent, (long long)st.scatter.bytes_received,
          (long long)st.gather.bytes_sent, (long long)st.gather.bytes_received,
          (long long)st.predicted_scatter_sent, (long long)st.predicted_scatter_received,
          (long long)st.predicted_gather_sent, (long long)st.predicted_gather_received);
    std::fflush(stdout);
    ctx.comm().barrier();
  }

  int status = 0;
  if (ctx.is_root()) {
    double worst = 0;
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t s = 0; s < N; ++s) {
        double ref = 0;
        for (std::int64_t t = 0; t < K; ++t) ref += A.data()[r * K + t] * B.data()[t * N + s];
        worst = std::max(worst, std::abs(ref - C.data()[r * N + s]));
      }
    const bool ok = worst < 1e-9 * double(K);
    std::printf(
        "C = A * B for %lld x %lld x %lld on grid %s, %d rank(s): max |error| = %.3g -> %s\n",
        (long long)M, (long long)N, (long long)K, g.str().c_str(), ctx.size(), worst,
        ok ? "ok" : "WRONG");
    status = ok ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
