// Lesson 9: a 2-D Jacobi stencil iterated with execute(): after the first scatter only the
// halos move.
//
//   mpirun -np 4 ./09_jacobi [n m iterations]        (default 1024 1024 100, float64)
//
//   xn(i,j) = (x(i-1,j) + x(i+1,j) + x(i,j-1) + x(i,j+1)) / 4    over the interior
//   x(i,j)  = xn(i,j)
// as a program of two maps on one grid: (P,1) (row blocks), or (2,P/2) when P is even and
// at least 4 (tiles: halos on four sides). The program runs `iterations` times on the ranks
// (plan.execute() in a loop) with one scatter before and one gather after; each execute()
// moves exactly the rows (and columns) just outside each rank's block — a halo exchange that
// explain() names, found from the accesses with no stencil rule. Every rank prints its bytes
// per execute() beside the prediction (asserted equal); root checks x against plain loops.
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t n = argc > 3 ? std::atoll(argv[1]) : 1024,
                     m = argc > 3 ? std::atoll(argv[2]) : 1024;
  const int iters = argc > 3 ? std::atoi(argv[3]) : 100;
  const std::int64_t P = ctx.size();

  wp::array<double, 2> x("x", {n, m}), xn("xn", {n, m});
  auto f0 = [](std::int64_t a, std::int64_t b) { return double((a * 13 + b * 5) % 11); };
  if (ctx.is_root())
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < m; ++c) x.data()[r * m + c] = xn.data()[r * m + c] = f0(r, c);

  auto [i, j] = wp::indices<2>();
  auto step = wp::map("step", wp::space({1, n - 1}, {1, m - 1}),
                      xn(i, j) = (x(i - 1, j) + x(i + 1, j) + x(i, j - 1) + x(i, j + 1)) * 0.25);
  auto copy = wp::map("copy", wp::space({1, n - 1}, {1, m - 1}), x(i, j) = xn(i, j));
  const wp::grid_shape g = (P >= 4 && P % 2 == 0) ? wp::grid_shape{2, P / 2} : wp::grid_shape{P, 1};
  wp::schedule s;
  s.set(step, g).set(copy, g);
  auto plan = wp::distribute(wp::program(wp::forward_only, step, copy), s, ctx);
  if (ctx.is_root()) std::cout << plan.explain() << std::flush;
  plan.scatter();
  for (int t = 0; t < iters; ++t) plan.execute();
  plan.gather(x);

  const auto st = plan.stats();
  int differs = 0;
  for (int r = 0; r < ctx.size(); ++r) {
    if (r == ctx.rank()) {
      std::printf("rank %d: rank to rank over %d execute(): sent %lld B, received %lld B\n", r,
                  iters, (long long)st.execute.bytes_sent, (long long)st.execute.bytes_received);
      for (const auto& rd : st.redistributions) {
        if (rd.to == "root") continue;
        // the first execute() after the scatter, then each later one
        const wp::index_t want_sent = rd.predicted_first_sent + (iters - 1) * rd.predicted_sent;
        const wp::index_t want_received =
            rd.predicted_first_received + (iters - 1) * rd.predicted_received;
        const bool ok =
            rd.measured.bytes_sent == want_sent && rd.measured.bytes_received == want_received;
        differs |= ok ? 0 : 1;
        std::printf(
            "  %-2s -> %-4s %-14s per execute() %lld/%lld B (sent/received), in all %lld/%lld B, "
            "predicted %lld/%lld B%s\n",
            rd.array.c_str(), rd.to.c_str(), rd.kind.c_str(), (long long)rd.predicted_sent,
            (long long)rd.predicted_received, (long long)rd.measured.bytes_sent,
            (long long)rd.measured.bytes_received, (long long)want_sent, (long long)want_received,
            ok ? "" : "  DIFFERS");
      }
    }
    std::fflush(stdout);
    ctx.comm().barrier();
  }
  int status = boost::mpi::all_reduce(ctx.comm(), differs, boost::mpi::maximum<int>());

  if (ctx.is_root()) {
    std::vector<double> a(static_cast<std::size_t>(n * m)), b;
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < m; ++c) a[std::size_t(r * m + c)] = f0(r, c);
    b = a;
    for (int t = 0; t < iters; ++t) {
      for (std::int64_t r = 1; r < n - 1; ++r)
        for (std::int64_t c = 1; c < m - 1; ++c)
          b[std::size_t(r * m + c)] =
              (a[std::size_t((r - 1) * m + c)] + a[std::size_t((r + 1) * m + c)] +
               a[std::size_t(r * m + c - 1)] + a[std::size_t(r * m + c + 1)]) *
              0.25;
      std::swap(a, b);  // x = xn
    }
    double worst = 0;
    for (std::int64_t e = 0; e < n * m; ++e)
      worst = std::max(worst, std::abs(a[std::size_t(e)] - x.data()[e]));
    const bool ok = worst < 1e-12;
    std::printf(
        "x after %d iterations on grid %s against plain loops: largest difference %.3g -> %s\n",
        iters, g.str().c_str(), worst, ok ? "ok" : "FAILED");
    status |= ok ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
