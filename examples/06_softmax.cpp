// Lesson 6: softmax over the last axis of x(B, H, S, L), float32, two ways.
//
//   mpirun -np 4 ./06_softmax [B H S L]        (default 8 16 512 512)
//
//  1. one map of four statements — row max (max_into), exponentials, row sums (+=), divide —
//     run in order on each rank's block. Its later statements read what the earlier ones
//     wrote, so only grids that keep every row on one rank may run it: (P,1,1,1) splits the
//     batch. (A grid splitting L is refused with a plan_error that says why.)
//  2. three maps — max, exp-sum, normalise — as a program. Rows split: nothing moves between
//     the maps. The last axis split (1,1,1,P): each rank holds partial row maxima and sums,
//     combined between the maps (Allreduce) — reduction parallelism with no rule written for
//     softmax.
// Root prints explain(); every rank prints its bytes beside the prediction; root checks y
// against plain loops (in double).
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t B = argc > 4 ? std::atoll(argv[1]) : 8,
                     H = argc > 4 ? std::atoll(argv[2]) : 16;
  const std::int64_t S = argc > 4 ? std::atoll(argv[3]) : 512,
                     L = argc > 4 ? std::atoll(argv[4]) : 512;
  const std::int64_t P = ctx.size(), R = B * H * S;

  wp::array<float, 4> x("x", {B, H, S, L}), e("e", {B, H, S, L}), y("y", {B, H, S, L});
  wp::array<float, 3> mx("mx", {B, H, S}), sum("sum", {B, H, S});
  auto xval = [](std::int64_t n) { return float((n * 7) % 23) / 4.0f - 2.0f; };
  if (ctx.is_root())
    for (std::int64_t n = 0; n < x.size(); ++n) x.data()[n] = xval(n);

  // the reference, in double, row by row
  std::vector<double> want;
  if (ctx.is_root()) {
    want.resize(std::size_t(R * L));
    for (std::int64_t r = 0; r < R; ++r) {
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (std::int64_t l = 0; l < L; ++l) m = std::max(m, double(xval(r * L + l)));
      for (std::int64_t l = 0; l < L; ++l) s += std::exp(double(xval(r * L + l)) - m);
      for (std::int64_t l = 0; l < L; ++l)
        want[std::size_t(r * L + l)] = std::exp(double(xval(r * L + l)) - m) / s;
    }
  }
  auto reset = [&] {  // max_into and += combine into the old values
    if (!ctx.is_root()) return;
    std::fill(mx.data(), mx.data() + mx.size(), -std::numeric_limits<float>::infinity());
    std::fill(sum.data(), sum.data() + sum.size(), 0.0f);
    std::fill(y.data(), y.data() + y.size(), 0.0f);
  };
  auto check = [&](const char* what) {
    int bad = 0;
    if (ctx.is_root()) {
      double worst = 0;
      for (std::int64_t n = 0; n < y.size(); ++n)
        worst = std::max(worst, std::abs(double(y.data()[n]) - want[std::size_t(n)]));
      bad = worst < 1e-5 ? 0 : 1;
      std::printf("  %s: y against plain loops, largest difference %.3g -> %s\n", what, worst,
                  bad ? "FAILED" : "ok");
    }
    boost::mpi::broadcast(ctx.comm(), bad, 0);
    return bad;
  };
  auto bytes_line = [&](const std::string& text) {  // one line per rank, in rank order
    for (int r = 0; r < ctx.size(); ++r) {
      if (r == ctx.rank()) std::printf("  rank %d: %s\n", r, text.c_str());
      std::fflush(stdout);
      ctx.comm().barrier();
    }
  };
  auto ll = [](wp::index_t v) { return std::to_string((long long)v); };

  auto [b, h, s, l] = wp::indices<4>();
  int status = 0;

  {  // 1. one map, rows split
    reset();
    auto sm = wp::map("softmax", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)),
                      e(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)),
                      sum(b, h, s) += e(b, h, s, l), y(b, h, s, l) = e(b, h, s, l) / sum(b, h, s));
    const wp::grid_shape g{P, 1, 1, 1};
    if (ctx.is_root())
      std::printf("=== one map of four statements, grid %s ===\n", g.str().c_str());
    auto plan = wp::distribute(sm, g, ctx);
    if (ctx.is_root()) std::cout << plan.explain() << std::flush;
    plan.run();
    const auto st = plan.stats();
    const bool ok = st.scatter.bytes_received == st.predicted_scatter_received &&
                    st.scatter.bytes_sent == st.predicted_scatter_sent &&
                    st.gather.bytes_sent == st.predicted_gather_sent &&
                    st.gather.bytes_received == st.predicted_gather_received;
    bytes_line("scatter sent/received " + ll(st.scatter.bytes_sent) + "/" +
               ll(st.scatter.bytes_received) + " B, gather " + ll(st.gather.bytes_sent) + "/" +
               ll(st.gather.bytes_received) + " B, predicted " + ll(st.predicted_scatter_sent) +
               "/" + ll(st.predicted_scatter_received) + ", " + ll(st.predicted_gather_sent) + "/" +
               ll(st.predicted_gather_received) + (ok ? " (as predicted)" : " DIFFERS"));
    status |= boost::mpi::all_reduce(ctx.comm(), ok ? 0 : 1, boost::mpi::maximum<int>());
    status |= check("one map");
    if (P > 1 && L > 1) {  // splitting the rows' axis is refused, on every rank alike
      try {
        auto refused = wp::distribute(sm, wp::grid_shape{1, 1, 1, P}, ctx);
        if (ctx.is_root()) std::printf("  grid (1,1,1,%lld) was not refused\n", (long long)P);
        status = 1;
      } catch (const wp::plan_error& err) {
        if (ctx.is_root())
          std::printf("  grid (1,1,1,%lld) refused: %.160s...\n", (long long)P, err.what());
      }
    }
  }

  auto m1 = wp::map("max", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)));
  auto m2 = wp::map("expsum", wp::space(B, H, S, L),
                    sum(b, h, s) += wp::exp(x(b, h, s, l) - mx(b, h, s)));
  auto m3 = wp::map("norm", wp::space(B, H, S, L),
                    y(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)) / sum(b, h, s));
  for (const wp::grid_shape& g :
       {wp::grid_shape{P, 1, 1, 1}, wp::grid_shape{1, 1, 1, P}}) {  // 2. three maps
    reset();
    wp::schedule sc;
    sc.set(m1, g).set(m2, g).set(m3, g);
    if (ctx.is_root()) std::printf("\n=== three maps, every one on grid %s ===\n", g.str().c_str());
    auto plan = wp::distribute(wp::program(wp::forward_only, m1, m2, m3), sc, ctx);
    if (ctx.is_root()) std::cout << plan.explain() << std::flush;
    plan.run();
    const auto st = plan.stats();
    std::string text = "from root " + ll(st.scatter.bytes_received) + " B, to root " +
                       ll(st.gather.bytes_sent) + " B, rank to rank sent/received " +
                       ll(st.execute.bytes_sent) + "/" + ll(st.execute.bytes_received) + " B";
    bool ok = true;
    for (const auto& rd : st.redistributions) {
      text += "\n    " + rd.array + " -> " + rd.to + " " + rd.kind + ": measured " +
              ll(rd.measured.bytes_sent) + "/" + ll(rd.measured.bytes_received) + " B, predicted " +
              ll(rd.predicted_first_sent) + "/" + ll(rd.predicted_first_received) + " B";
      if (rd.to != "root")
        ok = ok && rd.measured.bytes_sent == rd.predicted_first_sent &&
             rd.measured.bytes_received == rd.predicted_first_received;
    }
    bytes_line(text + (ok ? "" : "\n    DIFFERS from the prediction"));
    status |= boost::mpi::all_reduce(ctx.comm(), ok ? 0 : 1, boost::mpi::maximum<int>());
    status |= check(("three maps on " + g.str()).c_str());
  }
  return status;
}
