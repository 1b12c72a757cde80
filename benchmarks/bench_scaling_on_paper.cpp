// bench_scaling_on_paper: the plans of an n x n x n matmul (float64) for P = 8 ... 4096 ranks,
// built on this one process with wp::plan_on_paper (no MPI, nothing run): per scheme the
// bytes of the busiest rank other than root, of root, and over all ranks, the time the
// alpha-beta model predicts, and the memory-independent lower bound on the words some rank
// must communicate (Al Daas, Ballard, Grigori, Kumar, Rouse, "Tight Memory-Independent
// Parallel Matrix Multiplication Communication Lower Bounds", SPAA 2022, arXiv:2205.13407):
// for square matrices and P >= 1, some rank sends or receives at least
//     W(P) = 3 (n^3 / P)^(2/3) - 3 n^2 / P   words,
// with inputs starting and the output ending evenly distributed over the ranks. workpart's
// plans start from root and end on root, so root's bytes (about 3 n^2 words whatever P) are
// printed apart; the ratio compares the busiest other rank with W(P).
//
//   bench_scaling_on_paper [--n N] [--max-p P] [--csv FILE]
//
// --csv FILE also writes the table's rows as CSV (benchmarks/plot.py reads its column names,
// kept as they are: no `benchmark` column): P, scheme, grid, plan_seconds, busiest_rank_bytes,
// root_bytes, total_bytes, model_seconds, lower_bound_bytes, ratio.
//
// Space order (i, k, j), C(i, j) += A(i, k) * B(k, j): data-parallel is (P,1,1),
// reduction-parallel (1,P,1), 2-D (a,1,b) with a*b = P as square as can be, 3-D (a,b,c) as
// cubic as can be. Planning seconds are measured here (P = 4096 must plan in under 1 s).
//
// A second table plans programs on paper (wp::plan_on_paper(program, schedule, P): the program
// solver, plan/program.hpp): Megatron's MLP (fc1 column-split, relu, fc2 row-split: its
// partial results combined before root gathers them) and a 2-D stencil applied twice on row
// blocks (halo exchanges): the seconds to plan, the busiest rank's bytes and the bytes that
// move rank to rank in the first execute().
#include <workpart/workpart.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "bench_common.hpp"

namespace wp = workpart;
using workpart_bench::csv_writer;
using wp::index_t;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Factors of P into `parts` numbers, as equal as can be (largest first).
std::vector<index_t> balanced_factors(index_t P, int parts) {
  std::vector<index_t> best;
  double best_spread = 1e300;
  std::vector<index_t> f(std::size_t(parts), 1);
  auto rec = [&](auto& self, int d, index_t left) -> void {
    if (d == parts - 1) {
      f[std::size_t(d)] = left;
      double lo = 1e300, hi = 0;
      for (index_t x : f) lo = std::min(lo, double(x)), hi = std::max(hi, double(x));
      if (hi / lo < best_spread) best_spread = hi / lo, best = f;
      return;
    }
    for (index_t x = 1; x <= left; ++x)
      if (left % x == 0) {
        f[std::size_t(d)] = x;
        self(self, d + 1, left / x);
      }
  };
  rec(rec, 0, P);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  index_t n = 8192, max_p = 4096;
  std::string csv;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--n") && a + 1 < argc)
      n = std::atoll(argv[++a]);
    else if (!std::strcmp(argv[a], "--max-p") && a + 1 < argc)
      max_p = std::atoll(argv[++a]);
    else if (const char* f = workpart_bench::csv_option(argc, argv, a))
      csv = f;
    else {
      std::fprintf(stderr, "usage: bench_scaling_on_paper [--n N] [--max-p P] [--csv FILE]\n");
      return 2;
    }
  }
  const wp::machine_model model{.flops = 5e10, .alpha = 2e-6, .beta = 1e-10};
  wp::array<double, 2> A("A", {n, n}), B("B", {n, n}), C("C", {n, n});  // never allocated
  auto [i, k, j] = wp::indices<3>();
  auto mm = wp::map("matmul", wp::space(n, n, n), C(i, j) += A(i, k) * B(k, j));

  csv_writer out;
  try {
    out =
        csv_writer(csv, {"P", "scheme", "grid", "plan_seconds", "busiest_rank_bytes", "root_bytes",
                         "total_bytes", "model_seconds", "lower_bound_bytes", "ratio"});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_scaling_on_paper: %s\n", e.what());
    return 1;
  }
  std::printf(
      "matmul %lld^3 float64, plans built on paper; model flops %.3g/s, alpha %.3g s, beta %.3g "
      "s/B\n",
      (long long)n, model.flops, model.alpha, model.beta);
  std::printf(
      "lower bound W(P) = 3 (n^3/P)^(2/3) - 3 n^2/P words (Al Daas et al., SPAA 2022), x 8 B\n");
  std::printf("%6s  %-14s %-14s %9s %14s %14s %16s %11s %14s %7s\n", "P", "scheme", "grid",
              "plan s", "busiest B", "root B", "total B", "model s", "bound B", "ratio");
  for (index_t P = 8; P <= max_p; P *= 2) {
    const double nn = double(n);
    const double bound =
        8.0 * (3.0 * std::pow(nn * nn * nn / double(P), 2.0 / 3.0) - 3.0 * nn * nn / double(P));
    const auto two = balanced_factors(P, 2), three = balanced_factors(P, 3);
    const struct {
      const char* name;
      wp::grid_shape g;
    } schemes[] = {{"data (P,1,1)", wp::grid_shape{P, 1, 1}},
                   {"reduce (1,P,1)", wp::grid_shape{1, P, 1}},
                   {"2-D (a,1,b)", wp::grid_shape{two[0], 1, two[1]}},
                   {"3-D (a,b,c)", wp::grid_shape{three[0], three[2], three[1]}}};
    for (const auto& s : schemes) {
      const double t0 = now();
      const wp::paper_plan p = wp::plan_on_paper(mm, s.g, int(P));
      const double plan_s = now() - t0;
      const index_t busiest = p.busiest_bytes(true), root = p.rank_bytes(0),
                    total = p.total_bytes();
      const double secs = p.seconds(model, 2.0);
      std::printf("%6lld  %-14s %-14s %9.3f %14lld %14lld %16lld %11.4g %14.4g %7.2f\n",
                  (long long)P, s.name, s.g.str().c_str(), plan_s, (long long)busiest,
                  (long long)root, (long long)total, secs, bound, double(busiest) / bound);
      out.row({csv_writer::cell(P), s.name, s.g.str(), csv_writer::cell(plan_s),
               csv_writer::cell(busiest), csv_writer::cell(root), csv_writer::cell(total),
               csv_writer::cell(secs), csv_writer::cell(bound),
               csv_writer::cell(double(busiest) / bound)});
    }
  }

  // Programs on paper.
  const index_t Bt = 8 * 512, D = 1024, H = 4096, G = 4096;  // tokens, model, hidden; grid side
  wp::array<float, 2> X("X", {Bt, D}), W1("W1", {D, H}), Hd("H", {Bt, H}), Ac("A", {Bt, H}),
      W2("W2", {H, D}), Y("Y", {Bt, D});
  auto fc1 = wp::map("fc1", wp::space(Bt, H, D), Hd(i, k) += X(i, j) * W1(j, k));
  auto relu = wp::map("relu", wp::space(Bt, H), Ac(i, k) = wp::max(Hd(i, k), 0.0f));
  auto fc2 = wp::map("fc2", wp::space(Bt, D, H), Y(i, k) += Ac(i, j) * W2(j, k));
  const auto mlp = wp::program(fc1, relu, fc2);
  wp::array<double, 2> U("U", {G, G}), V("V", {G, G}), Wd("W", {G, G});
  auto s1 = wp::map("smooth1", wp::space({1, G - 1}, {1, G - 1}),
                    V(i, k) = 0.25 * (U(i - 1, k) + U(i + 1, k) + U(i, k - 1) + U(i, k + 1)));
  auto s2 = wp::map("smooth2", wp::space({1, G - 1}, {1, G - 1}),
                    Wd(i, k) = 0.25 * (V(i - 1, k) + V(i + 1, k) + V(i, k - 1) + V(i, k + 1)));
  const auto stencil = wp::program(s1, s2);
  std::printf(
      "\nprograms on paper: Megatron MLP (tokens %lld, D %lld, H %lld, float32), 2-D stencil twice "
      "(%lld^2, float64)\n",
      (long long)Bt, (long long)D, (long long)H, (long long)G);
  std::printf("%6s  %-10s %9s %14s %16s\n", "P", "program", "plan s", "busiest B",
              "rank-to-rank B");
  for (index_t P = 8; P <= max_p; P *= 2) {
    wp::schedule megatron, rows;
    megatron.set(fc1, wp::grid_shape{1, P, 1})
        .set(relu, wp::grid_shape{1, P})
        .set(fc2, wp::grid_shape{1, 1, P});
    rows.set(s1, wp::grid_shape{P, 1}).set(s2, wp::grid_shape{P, 1});
    double t0 = now();
    const wp::paper_program a = wp::plan_on_paper(mlp, megatron, int(P));
    const double ta = now() - t0;
    t0 = now();
    const wp::paper_program b = wp::plan_on_paper(stencil, rows, int(P));
    const double tb = now() - t0;
    for (const auto& [name, pp, t] : {std::tuple{"mlp", &a, ta}, std::tuple{"stencil", &b, tb}}) {
      std::printf("%6lld  %-10s %9.3f %14lld %16lld\n", (long long)P, name, t,
                  (long long)pp->busiest_bytes(), (long long)pp->rank_to_rank_first);
      out.row({csv_writer::cell(P), std::string("program ") + name, "", csv_writer::cell(t),
               csv_writer::cell(pp->busiest_bytes()), "", csv_writer::cell(pp->rank_to_rank_first),
               "", "", ""});
    }
  }
  return 0;
}
