// Lesson 7: Megatron multi-head self-attention, head-parallel, with no rule written for it.
//
//   mpirun -np 4 ./07_attention [B S H D]        (default 8 512 16 64: E = H * D = 1024)
//
// float32, the head axis explicit in the weights (W_Q(e, h, d)):
//   Q, K, V (b,s,h,d) += X(b,s,e) * W_Q/W_K/W_V(e,h,d)         three projections
//   A(b,h,s,t)        += Q(b,s,h,d) * K(b,t,h,d)                 scores
//   softmax over t of A / sqrt(D): row max, exp-sum, normalise  three maps
//   O(b,s,h,d)        += P(b,h,s,t) * V(b,t,h,d)                 values
//   Y(b,s,f)          += O(b,s,h,d) * W_O(h,d,f)                 output projection
//   Z(b,s,h,d)        += Y(b,s,e) * W_N(e,h,d)                   the next block's projection
// Every map splits the heads over the ranks. Then nothing moves between the maps inside the
// block: each rank computes its heads' Q, K, V, scores, softmax and values from X and its
// heads' weights; the output projection sums over the heads, so each rank holds a partial Y,
// and the next block reads all of Y on every rank: one Allreduce of the B*S*E elements of Y
// (each rank gives its partial sums and gets the total; from 64 KiB on 3 or more ranks in
// parts, each rank combining one run of Y's elements) — the only rank-to-rank traffic,
// which the example asserts from plan.stats(). (Give at least as many heads as ranks: a
// rank with no head holds zero partials of Y, and the combine the program then picks by
// bytes is not the one Allreduce asserted here; the results are still checked and right.)
// Root checks Y and Z against plain loops (all rows at small sizes; at large sizes rows of
// batch 0 only, which need all of K and V of that batch).
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
                     S = argc > 4 ? std::atoll(argv[2]) : 512;
  const std::int64_t H = argc > 4 ? std::atoll(argv[3]) : 16,
                     D = argc > 4 ? std::atoll(argv[4]) : 64;
  const std::int64_t E = H * D, P = ctx.size();
  const float scale = 1.0f / std::sqrt(float(D));

  wp::array<float, 3> X("X", {B, S, E}), WQ("W_Q", {E, H, D}), WK("W_K", {E, H, D}),
      WV("W_V", {E, H, D}), WO("W_O", {H, D, E}), WN("W_N", {E, H, D}), Y("Y", {B, S, E});
  wp::array<float, 4> Q("Q", {B, S, H, D}), K("K", {B, S, H, D}), V("V", {B, S, H, D}),
      A("A", {B, H, S, S}), Pr("P", {B, H, S, S}), O("O", {B, S, H, D}), Z("Z", {B, S, H, D});
  wp::array<float, 3> mx("mx", {B, H, S}), sm("sum", {B, H, S});
  auto val = [](std::int64_t n, int salt) {
    return float(((n * (7 + 2 * salt) + salt) % 29) - 14) / 64.0f;
  };
  if (ctx.is_root()) {
    int salt = 0;
    for (auto* w : {&X, &WQ, &WK, &WV, &WO, &WN}) {
      for (std::int64_t n = 0; n < w->size(); ++n) w->data()[n] = val(n, salt);
      ++salt;
    }
    std::fill(mx.data(), mx.data() + mx.size(), -std::numeric_limits<float>::infinity());
  }

  auto [b, s, h, d, e] = wp::indices<5>();
  auto q = wp::map("q", wp::space(B, S, H, D, E), Q(b, s, h, d) += X(b, s, e) * WQ(e, h, d));
  auto k = wp::map("k", wp::space(B, S, H, D, E), K(b, s, h, d) += X(b, s, e) * WK(e, h, d));
  auto v = wp::map("v", wp::space(B, S, H, D, E), V(b, s, h, d) += X(b, s, e) * WV(e, h, d));
  // spaces below are (b, h, s, t, d) and the like; the index names are positions
  auto [b4, h4, s4, t4, d4] = wp::indices<5>();
  auto scores = wp::map("scores", wp::space(B, H, S, S, D),
                        A(b4, h4, s4, t4) += Q(b4, s4, h4, d4) * K(b4, t4, h4, d4));
  auto [b3, h3, s3, t3] = wp::indices<4>();
  auto rmax =
      wp::map("max", wp::space(B, H, S, S), wp::max_into(mx(b3, h3, s3), A(b3, h3, s3, t3)));
  auto rsum = wp::map("expsum", wp::space(B, H, S, S),
                      sm(b3, h3, s3) += wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale));
  auto norm = wp::map(
      "norm", wp::space(B, H, S, S),
      Pr(b3, h3, s3, t3) = wp::exp((A(b3, h3, s3, t3) - mx(b3, h3, s3)) * scale) / sm(b3, h3, s3));
  auto pv = wp::map("values", wp::space(B, H, S, D, S),
                    O(b4, s4, h4, t4) += Pr(b4, h4, s4, d4) * V(b4, d4, h4, t4));
  auto out = wp::map("out", wp::space(B, S, E, H, D), Y(b, s, h) += O(b, s, d, e) * WO(d, e, h));
  auto next = wp::map("next", wp::space(B, S, H, D, E), Z(b, s, h, d) += Y(b, s, e) * WN(e, h, d));

  wp::schedule sc;  // heads over the ranks, everywhere
  sc.set(q, wp::grid_shape{1, 1, P, 1, 1})
      .set(k, wp::grid_shape{1, 1, P, 1, 1})
      .set(v, wp::grid_shape{1, 1, P, 1, 1});
  sc.set(scores, wp::grid_shape{1, P, 1, 1, 1});
  sc.set(rmax, wp::grid_shape{1, P, 1, 1})
      .set(rsum, wp::grid_shape{1, P, 1, 1})
      .set(norm, wp::grid_shape{1, P, 1, 1});
  sc.set(pv, wp::grid_shape{1, P, 1, 1, 1});
  sc.set(out, wp::grid_shape{1, 1, 1, P, 1});
  sc.set(next, wp::grid_shape{1, 1, P, 1, 1});
  auto plan = wp::distribute(
      wp::program(wp::forward_only, q, k, v, scores, rmax, rsum, norm, pv, out, next), sc, ctx);
  if (ctx.is_root()) std::cout << plan.explain() << std::flush;
  plan.scatter();
  plan.execute();
  plan.gather(Y, Z);

  // Inside the block: every redistribution between maps moves nothing, but one Allreduce of Y.
  const auto st = plan.stats();
  int problems = 0, allreduces = 0;
  std::string text;
  for (const auto& rd : st.redistributions) {
    if (rd.from == "root" || rd.to == "root") continue;  // the program's inputs and outputs
    const bool moves = rd.measured.bytes_sent + rd.measured.bytes_received > 0;
    if (rd.kind.rfind("Allreduce", 0) == 0) {
      ++allreduces;
      // each rank gives its partial Y and gets the sum. A small Y (or 2 ranks): B*S*E elements
      // each way, the combine's root (rank 0, the leader of the head group) counted once per
      // other rank. From 64 KiB on 3 ranks, in parts: rank r combines run r of Y's elements
      // (n / P of them, the first n % P ranks one more), receiving it from and sending it to
      // every other rank, and sends them and gets from them every other run
      const wp::index_t n = B * S * E, y_bytes = n * wp::index_t(sizeof(float));
      const wp::index_t own = n / P + (ctx.rank() < n % P ? 1 : 0);
      const wp::index_t want = wp::detail::all_reduce_uses_parts(n, sizeof(float), int(P))
                                   ? (n - own + (P - 1) * own) * wp::index_t(sizeof(float))
                               : ctx.rank() == 0 ? (P - 1) * y_bytes
                                                 : y_bytes;
      text += "  " + rd.array + ": " + rd.kind + " of the partial sums of " + rd.from +
              ", measured " + std::to_string(rd.measured.bytes_sent) + " B sent, " +
              std::to_string(rd.measured.bytes_received) + " B received (predicted " +
              std::to_string(rd.predicted_first_sent) + ", " +
              std::to_string(rd.predicted_first_received) + "); Y is " + std::to_string(y_bytes) +
              " B\n";
      if (rd.array != "Y" || rd.measured.bytes_sent != want || rd.measured.bytes_received != want ||
          rd.predicted_first_sent != want || rd.predicted_first_received != want)
        ++problems;
    } else if (moves || rd.kind != "none") {
      text += "  unexpected: " + rd.array + " " + rd.kind + " from '" + rd.from + "' to '" + rd.to +
              "'\n";
      ++problems;
    }
  }
  if (P > 1 && allreduces != 1) ++problems;
  for (int r = 0; r < ctx.size(); ++r) {
    if (r == ctx.rank())
      std::printf(
          "rank %d: rank to rank sent %lld B received %lld B (redistributions %zu, Allreduce "
          "%d)\n%s",
          r, (long long)st.execute.bytes_sent, (long long)st.execute.bytes_received,
          st.redistributions.size(), allreduces, text.c_str());
    std::fflush(stdout);
    ctx.comm().barrier();
  }
  int status = boost::mpi::all_reduce(ctx.comm(), problems, std::plus<int>()) ? 1 : 0;
  if (ctx.is_root())
    std::printf("inside the block: %s\n",
                status ? "NOT only one Allreduce of Y" : "only one Allreduce of Y, as designed");

  if (ctx.is_root()) {  // plain loops, in double; rows of batch 0 only at large sizes
    const std::int64_t rows_b = B * S * E <= (1 << 16) ? B : 1;
    const std::vector<std::int64_t> rows_s = [&] {
      std::vector<std::int64_t> r;
      if (rows_b == B) {
        for (std::int64_t x = 0; x < S; ++x) r.push_back(x);
      } else {
        for (std::int64_t x : {std::int64_t(0), S / 3, S / 2, S - 1}) r.push_back(x);
      }
      return r;
    }();
    auto at3 = [](const wp::array<float, 3>& a, std::int64_t i0, std::int64_t i1, std::int64_t i2) {
      return double(a.data()[(i0 * a.extent(1) + i1) * a.extent(2) + i2]);
    };
    double worst = 0;
    const auto SE = static_cast<std::size_t>(S * E), E1 = static_cast<std::size_t>(E),
               S1 = static_cast<std::size_t>(S);
    std::vector<double> kk(SE), vv(SE), qq(E1), oo(E1), yy(E1), p(S1);
    for (std::int64_t bb = 0; bb < rows_b; ++bb) {
      for (std::int64_t tt = 0; tt < S; ++tt)  // K and V of this batch, (t, h*D + d)
        for (std::int64_t c = 0; c < E; ++c) {
          double sk = 0, sv = 0;
          for (std::int64_t ee = 0; ee < E; ++ee) {
            sk += at3(X, bb, tt, ee) * at3(WK, ee, c / D, c % D);
            sv += at3(X, bb, tt, ee) * at3(WV, ee, c / D, c % D);
          }
          kk[std::size_t(tt * E + c)] = sk;
          vv[std::size_t(tt * E + c)] = sv;
        }
      for (std::int64_t ss : rows_s) {
        for (std::int64_t c = 0; c < E; ++c) {
          double sq = 0;
          for (std::int64_t ee = 0; ee < E; ++ee)
            sq += at3(X, bb, ss, ee) * at3(WQ, ee, c / D, c % D);
          qq[std::size_t(c)] = sq;
        }
        for (std::int64_t hh = 0; hh < H; ++hh) {
          double m = -std::numeric_limits<double>::infinity(), z = 0;
          for (std::int64_t tt = 0; tt < S; ++tt) {
            double a = 0;
            for (std::int64_t dd = 0; dd < D; ++dd)
              a += qq[std::size_t(hh * D + dd)] * kk[std::size_t(tt * E + hh * D + dd)];
            p[std::size_t(tt)] = a;
            m = std::max(m, a);
          }
          for (std::int64_t tt = 0; tt < S; ++tt)
            z += (p[std::size_t(tt)] = std::exp((p[std::size_t(tt)] - m) * scale));
          for (std::int64_t dd = 0; dd < D; ++dd) {
            double o = 0;
            for (std::int64_t tt = 0; tt < S; ++tt)
              o += p[std::size_t(tt)] / z * vv[std::size_t(tt * E + hh * D + dd)];
            oo[std::size_t(hh * D + dd)] = o;
          }
        }
        for (std::int64_t f = 0; f < E; ++f) {
          double y = 0;
          for (std::int64_t c = 0; c < E; ++c) y += oo[std::size_t(c)] * at3(WO, c / D, c % D, f);
          yy[std::size_t(f)] = y;
          worst = std::max(worst, std::abs(y - at3(Y, bb, ss, f)) / std::max(1.0, std::abs(y)));
        }
        for (std::int64_t c = 0; c < E; ++c) {
          double z2 = 0;
          for (std::int64_t ee = 0; ee < E; ++ee)
            z2 += yy[std::size_t(ee)] * at3(WN, ee, c / D, c % D);
          const double got = double(Z.data()[((bb * S + ss) * H + c / D) * D + c % D]);
          worst = std::max(worst, std::abs(z2 - got) / std::max(1.0, std::abs(z2)));
        }
      }
    }
    const bool ok = worst < 1e-4;
    std::printf("Y and Z against plain loops (%s): largest relative difference %.3g -> %s\n",
                rows_b == B ? "every row" : "4 rows of batch 0", worst, ok ? "ok" : "FAILED");
    status |= ok ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
