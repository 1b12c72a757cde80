// Lesson 5: one matmul, every way of splitting it — the schemes of the design's evaluation.
//
//   mpirun -np 4 ./05_matmul_schemes [M K N]        (default 4096 4096 4096, float64)
//
// C(i, j) += A(i, k) * B(k, j) over the space (i, k, j). The grid alone decides the scheme:
//   replicated (1,1,1)      one rank does everything, nothing moves;
//   data-parallel (P,1,1)   rows of A scattered, B broadcast to every rank, rows of C gathered;
//   reduction-parallel (1,P,1)  columns of A and rows of B scattered, every rank holds a
//                           full-size partial C, combined onto root with one Reduce;
//   hybrid (c,c,c) when P = c^3, and (2,2,1) / (1,2,2) when P >= 4: each input goes out in two
//                           stages (Scatterv to the group leaders, Bcast inside the groups)
//                           and partial results come back in two (Reduce inside the groups,
//                           Gatherv of the leaders' blocks).
// For each scheme root prints explain(), every rank prints its measured bytes beside the
// plan's prediction, and root checks C against plain loops (every entry up to 2^21 of them,
// else 4096 sampled entries).
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

namespace {

/// Every rank's measured bytes beside the prediction, in rank order; 1 on every rank when
/// any rank's differ.
int print_bytes(const wp::context& ctx, const wp::plan_stats& st) {
  int differs = 0;
  for (int r = 0; r < ctx.size(); ++r) {
    if (r == ctx.rank()) {
      const bool ok = st.scatter.bytes_sent == st.predicted_scatter_sent &&
                      st.scatter.bytes_received == st.predicted_scatter_received &&
                      st.gather.bytes_sent == st.predicted_gather_sent &&
                      st.gather.bytes_received == st.predicted_gather_received;
      std::printf(
          "  rank %d: scatter sent %lld / received %lld B, gather sent %lld / received %lld B "
          "(predicted %lld / %lld, %lld / %lld) %s\n",
          r, (long long)st.scatter.bytes_sent, (long long)st.scatter.bytes_received,
          (long long)st.gather.bytes_sent, (long long)st.gather.bytes_received,
          (long long)st.predicted_scatter_sent, (long long)st.predicted_scatter_received,
          (long long)st.predicted_gather_sent, (long long)st.predicted_gather_received,
          ok ? "as predicted" : "DIFFERS");
      std::fflush(stdout);
      differs = ok ? 0 : 1;
    }
    ctx.comm().barrier();
  }
  return boost::mpi::all_reduce(ctx.comm(), differs, boost::mpi::maximum<int>());
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t M = argc > 3 ? std::atoll(argv[1]) : 4096;
  const std::int64_t K = argc > 3 ? std::atoll(argv[2]) : 4096;
  const std::int64_t N = argc > 3 ? std::atoll(argv[3]) : 4096;
  const std::int64_t P = ctx.size();

  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  auto a_val = [](std::int64_t r, std::int64_t t) { return std::sin(double(r + 2 * t)); };
  auto b_val = [](std::int64_t t, std::int64_t s) { return std::cos(double(3 * t - s)); };
  if (ctx.is_root()) {
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t t = 0; t < K; ++t) A.data()[r * K + t] = a_val(r, t);
    for (std::int64_t t = 0; t < K; ++t)
      for (std::int64_t s = 0; s < N; ++s) B.data()[t * N + s] = b_val(t, s);
  }
  auto [i, k, j] = wp::indices<3>();
  auto mm = wp::map("matmul", wp::space(M, K, N), C(i, j) += A(i, k) * B(k, j));

  struct scheme {
    std::string name;
    wp::grid_shape grid;
  };
  std::vector<scheme> schemes = {{"replicated", wp::grid_shape{1, 1, 1}},
                                 {"data-parallel", wp::grid_shape{P, 1, 1}},
                                 {"reduction-parallel", wp::grid_shape{1, P, 1}}};
  std::int64_t c = 1;
  while ((c + 1) * (c + 1) * (c + 1) <= P) ++c;
  if (c > 1 && c * c * c == P) schemes.push_back({"hybrid cube", wp::grid_shape{c, c, c}});
  if (P >= 4) {
    schemes.push_back({"hybrid", wp::grid_shape{2, 2, 1}});
    schemes.push_back({"hybrid", wp::grid_shape{1, 2, 2}});
  }

  int status = 0;
  for (const auto& s : schemes) {
    if (ctx.is_root()) {
      std::fill(C.data(), C.data() + M * N, 0.0);
      std::printf("\n=== %s %s on %lld ranks ===\n", s.name.c_str(), s.grid.str().c_str(),
                  (long long)P);
    }
    auto plan = wp::distribute(mm, s.grid, ctx);
    if (ctx.is_root()) std::cout << plan.explain() << std::flush;
    plan.run();
    const auto& st = plan.stats();
    if (ctx.is_root())
      std::printf("  seconds: scatter %.3f, execute %.3f, gather %.3f\n", st.scatter.seconds,
                  st.execute.seconds, st.gather.seconds);
    status |= print_bytes(ctx, st);
    int bad = 0;
    if (ctx.is_root()) {
      const std::int64_t entries = M * N, step = entries <= (1 << 21) ? 1 : entries / 4096;
      double worst = 0;
      for (std::int64_t e = 0; e < entries; e += step) {
        const std::int64_t r = e / N, q = e % N;
        double ref = 0;
        for (std::int64_t t = 0; t < K; ++t) ref += A.data()[r * K + t] * B.data()[t * N + q];
        worst = std::max(worst, std::abs(ref - C.data()[e]) / std::max(1.0, std::abs(ref)));
      }
      bad = worst < 1e-10 ? 0 : 1;
      std::printf("  C against plain loops (%s): largest relative difference %.3g -> %s\n",
                  step == 1 ? "every entry" : "4096 sampled entries", worst, bad ? "FAILED" : "ok");
    }
    boost::mpi::broadcast(ctx.comm(), bad, 0);
    status |= bad;
  }
  return status;
}
