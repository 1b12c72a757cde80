// Programs of several maps: the program plan (intermediates stay on the ranks) against the
// same maps distributed one by one through root (each map's run(): scatter from root,
// execute, gather to root), on the same grids, timed alternately in the same run.
//
//   mpirun -np P ./bench_program [--reps=5] [--softmax=B,H,S,L] [--mlp=N,D,H] [--splitk=I,K]
//                                [--csv FILE]
//
// Workloads (float32): softmax over the last axis of x(B,H,S,L) as three maps (row max,
// exp-sum, normalise), grid (P,1,1,1); a 3-layer MLP forward pass y = relu(relu(x W1) W2) W3
// as five maps, data-parallel (batch split over P, weights replicated); a split-reduction
// chain t(i) += x(i,k) * w(k) with k split over P, then y(i) = tanh(t(i)) with i split (the
// program reduce-scatters t: each rank receives only its block's partials). Prints per variant:
// plan-build seconds, seconds per phase (medians), bytes received over all ranks (through
// root and rank to rank), and the ratios program / through-root.
//
// --csv FILE (written by root) also writes the table's rows as CSV, one line per (workload,
// variant): benchmark, workload, sizes (its sizes, "x"-separated), variant, P, reps, build_s,
// scatter_s, execute_s, gather_s, total_s (medians), bytes_via_root, bytes_rank_to_rank.
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace wp = workpart;
using workpart_bench::csv_writer;
using workpart_bench::median;

namespace {

struct figures {
  std::vector<double> build, scatter, execute, gather, total;
  long long bytes_root = 0, bytes_ranks = 0;  // one run, all ranks, received
};

long long sum_over_ranks(const boost::mpi::communicator& c, long long v) {
  long long t = 0;
  boost::mpi::all_reduce(c, v, t, std::plus<long long>());
  return t;
}

/// A workload's sizes as one CSV cell: "8x16x512x512".
std::string sizes_text(const std::vector<std::int64_t>& sizes) {
  std::string t;
  for (const std::int64_t n : sizes) t += (t.empty() ? "" : "x") + std::to_string(n);
  return t;
}

void print_row(const wp::context& ctx, const char* work, const std::string& sizes,
               const char* variant, const figures& f, csv_writer& csv) {
  if (!ctx.is_root()) return;
  std::printf("%-8s %-13s %3d  %8.4f  %8.4f %8.4f %8.4f %8.4f  %12lld %12lld\n", work, variant,
              ctx.size(), median(f.build), median(f.scatter), median(f.execute), median(f.gather),
              median(f.total), f.bytes_root, f.bytes_ranks);
  csv.row({"bench_program", work, sizes, variant, csv_writer::cell(ctx.size()),
           csv_writer::cell(f.total.size()), csv_writer::cell(median(f.build)),
           csv_writer::cell(median(f.scatter)), csv_writer::cell(median(f.execute)),
           csv_writer::cell(median(f.gather)), csv_writer::cell(median(f.total)),
           csv_writer::cell(f.bytes_root), csv_writer::cell(f.bytes_ranks)});
}
void print_ratio(const wp::context& ctx, const char* work, const figures& p, const figures& r) {
  if (!ctx.is_root()) return;
  const double bp = double(p.bytes_root + p.bytes_ranks), br = double(r.bytes_root + r.bytes_ranks);
  std::printf("%-8s through-root / program: time %.2fx, bytes %.1fx, plan build %.2fx\n", work,
              median(r.total) / median(p.total), bp > 0 ? br / bp : 0.0,
              median(r.build) / std::max(1e-9, median(p.build)));
}

/// Times `reps` rounds of the program plan and of the map-by-map plans, alternating.
template <class MakeProgram, class MakeSteps>
void compare(const wp::context& ctx, const char* work, const std::string& sizes, int reps,
             csv_writer& csv, MakeProgram make_program, MakeSteps make_steps) {
  figures prog, steps;
  for (int r = 0; r < reps + 1; ++r) {  // round 0 warms up
    for (int v : {r % 2, 1 - r % 2}) {
      ctx.comm().barrier();
      double t0 = MPI_Wtime();
      if (v == 0) {
        auto plan = make_program();
        const double tb = MPI_Wtime();
        plan.scatter();
        const double ts = MPI_Wtime();
        plan.execute();
        const double te = MPI_Wtime();
        plan.gather_outputs();
        ctx.comm().barrier();
        const double tg = MPI_Wtime();
        if (r > 0) {
          prog.build.push_back(tb - t0);
          prog.scatter.push_back(ts - tb);
          prog.execute.push_back(te - ts);
          prog.gather.push_back(tg - te);
          prog.total.push_back(tg - tb);
        }
        const auto st = plan.stats();
        if (r == reps && ctx.is_root())  // the last round's redistributions, root's view
          for (const auto& rd : st.redistributions)
            if (rd.measured.seconds > 0)
              std::printf("%-8s   %s -> %s (%s): %.4f s on rank 0\n", work, rd.array.c_str(),
                          rd.to.c_str(), rd.kind.c_str(), rd.measured.seconds);
        prog.bytes_root =
            sum_over_ranks(ctx.comm(), st.scatter.bytes_received + st.gather.bytes_received);
        prog.bytes_ranks = sum_over_ranks(ctx.comm(), st.execute.bytes_received);
      } else {
        auto plans = make_steps();
        const double tb = MPI_Wtime();
        double sc = 0, ex = 0, ga = 0;
        long long root = 0;
        plans.for_each([&](auto& p) {
          const double a = MPI_Wtime();
          p.scatter();
          const double b = MPI_Wtime();
          p.execute();
          const double c = MPI_Wtime();
          p.gather();
          const double d = MPI_Wtime();
          sc += b - a;
          ex += c - b;
          ga += d - c;
          root += p.stats().scatter.bytes_received + p.stats().gather.bytes_received;
        });
        ctx.comm().barrier();
        const double tg = MPI_Wtime();
        if (r > 0) {
          steps.build.push_back(tb - t0);
          steps.scatter.push_back(sc);
          steps.execute.push_back(ex);
          steps.gather.push_back(ga);
          steps.total.push_back(tg - tb);
        }
        steps.bytes_root = sum_over_ranks(ctx.comm(), root);
        steps.bytes_ranks = 0;
      }
    }
  }
  print_row(ctx, work, sizes, "program", prog, csv);
  print_row(ctx, work, sizes, "through-root", steps, csv);
  print_ratio(ctx, work, prog, steps);
}

/// Plans of single maps, run one after the other.
template <class... P>
struct plan_list {
  std::tuple<P...> plans;
  template <class F>
  void for_each(F&& f) {
    std::apply([&](auto&... p) { (f(p), ...); }, plans);
  }
};
template <class... P>
plan_list<P...> list(P&&... p) {
  return plan_list<P...>{std::tuple<P...>(std::move(p)...)};
}

/// A program plan whose gather names the program's final output only.
template <class Plan, class Out>
struct with_output {
  Plan plan;
  Out* out;
  void scatter() { plan.scatter(); }
  void execute() { plan.execute(); }
  void gather_outputs() { plan.gather(*out); }
  auto stats() const { return plan.stats(); }
};

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  int reps = 5;
  std::vector<std::int64_t> sm{8, 16, 512, 512}, mlp{2048, 512, 512}, sk{2097152, 16};
  std::string csv_path;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (const char* f = workpart_bench::csv_option(argc, argv, a))
      csv_path = f;
    else if (const char* v = workpart_bench::option_value(s, "--reps="))
      reps = std::max(1, std::atoi(v));
    else if (const char* v2 = workpart_bench::option_value(s, "--softmax="))
      sm = workpart_bench::parse_sizes(v2);
    else if (const char* v3 = workpart_bench::option_value(s, "--mlp="))
      mlp = workpart_bench::parse_sizes(v3);
    else if (const char* v4 = workpart_bench::option_value(s, "--splitk="))
      sk = workpart_bench::parse_sizes(v4);
    else {
      if (ctx.is_root())
        std::fprintf(
            stderr,
            "usage: bench_program [--reps=5] [--softmax=B,H,S,L] [--mlp=N,D,H] [--splitk=I,K]\n"
            "                     [--csv FILE]\n");
      return 2;
    }
  }
  if (sm.size() != 4 || mlp.size() != 3 || sk.size() != 2) {
    if (ctx.is_root()) std::fprintf(stderr, "--softmax takes 4 sizes, --mlp 3, --splitk 2\n");
    return 2;
  }
  const std::int64_t P = ctx.size();
  csv_writer csv;
  if (ctx.is_root()) {
    try {
      csv = csv_writer(csv_path, {"benchmark", "workload", "sizes", "variant", "P", "reps",
                                  "build_s", "scatter_s", "execute_s", "gather_s", "total_s",
                                  "bytes_via_root", "bytes_rank_to_rank"});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_program: %s\n", e.what());
      MPI_Abort(ctx.comm(), 1);
    }
    std::printf("bench_program: %d rank(s), %d timed rounds (medians), float32\n", ctx.size(),
                reps);
    std::printf("%-8s %-13s %3s  %8s  %8s %8s %8s %8s  %12s %12s\n", "work", "variant", "np",
                "build s", "scatter", "execute", "gather", "total s", "B via root", "B rank-rank");
  }

  {  // softmax
    const std::int64_t B = sm[0], H = sm[1], S = sm[2], L = sm[3];
    wp::array<float, 4> x("x", {B, H, S, L}), y("y", {B, H, S, L});
    wp::array<float, 3> mx("mx", {B, H, S}), sum("sum", {B, H, S});
    if (float* p = x.data())
      for (std::int64_t e = 0; e < x.size(); ++e) p[e] = float((e * 7) % 23) / 8.0f;
    if (float* p = mx.data()) std::fill(p, p + mx.size(), -INFINITY);
    auto [b, h, s, l] = wp::indices<4>();
    auto m1 = wp::map("max", wp::space(B, H, S, L), wp::max_into(mx(b, h, s), x(b, h, s, l)));
    auto m2 = wp::map("expsum", wp::space(B, H, S, L),
                      sum(b, h, s) += wp::exp(x(b, h, s, l) - mx(b, h, s)));
    auto m3 = wp::map("norm", wp::space(B, H, S, L),
                      y(b, h, s, l) = wp::exp(x(b, h, s, l) - mx(b, h, s)) / sum(b, h, s));
    const wp::grid_shape g{P, 1, 1, 1};
    compare(
        ctx, "softmax", sizes_text(sm), reps, csv,
        [&] {
          wp::schedule sc;
          sc.set(m1, g).set(m2, g).set(m3, g);
          return with_output<decltype(wp::distribute(wp::program(m1, m2, m3), sc, ctx)),
                             decltype(y)>{wp::distribute(wp::program(m1, m2, m3), sc, ctx), &y};
        },
        [&] {
          return list(wp::distribute(m1, g, ctx), wp::distribute(m2, g, ctx),
                      wp::distribute(m3, g, ctx));
        });
  }
  {  // 3-layer MLP, data-parallel
    const std::int64_t N = mlp[0], D = mlp[1], H = mlp[2];
    wp::array<float, 2> x("x", {N, D}), W1("W1", {D, H}), W2("W2", {H, H}), W3("W3", {H, D});
    wp::array<float, 2> h1("h1", {N, H}), a1("a1", {N, H}), h2("h2", {N, H}), a2("a2", {N, H}),
        y("y", {N, D});
    for (auto* arr : {&x, &W1, &W2, &W3})
      if (float* p = arr->data())
        for (std::int64_t e = 0; e < arr->size(); ++e) p[e] = float((e * 13) % 17) / 64.0f - 0.1f;
    auto [i, n, k] = wp::indices<3>();
    auto f1 = wp::map("fc1", wp::space(N, H, D), h1(i, n) += x(i, k) * W1(k, n));
    auto r1 = wp::map("relu1", wp::space(N, H), a1(i, n) = wp::max(h1(i, n), 0.0f));
    auto f2 = wp::map("fc2", wp::space(N, H, H), h2(i, n) += a1(i, k) * W2(k, n));
    auto r2 = wp::map("relu2", wp::space(N, H), a2(i, n) = wp::max(h2(i, n), 0.0f));
    auto f3 = wp::map("fc3", wp::space(N, D, H), y(i, n) += a2(i, k) * W3(k, n));
    const wp::grid_shape g3{P, 1, 1}, g2{P, 1};
    compare(
        ctx, "mlp", sizes_text(mlp), reps, csv,
        [&] {
          wp::schedule sc;
          sc.set(f1, g3).set(r1, g2).set(f2, g3).set(r2, g2).set(f3, g3);
          return with_output<decltype(wp::distribute(wp::program(f1, r1, f2, r2, f3), sc, ctx)),
                             decltype(y)>{wp::distribute(wp::program(f1, r1, f2, r2, f3), sc, ctx),
                                          &y};
        },
        [&] {
          return list(wp::distribute(f1, g3, ctx), wp::distribute(r1, g2, ctx),
                      wp::distribute(f2, g3, ctx), wp::distribute(r2, g2, ctx),
                      wp::distribute(f3, g3, ctx));
        });
  }
  {  // split-reduction chain: partial sums of t on every rank, read by blocks next
    const std::int64_t I = sk[0], K = sk[1];
    wp::array<float, 2> x("x", {I, K});
    wp::array<float, 1> w("w", {K}), t("t", {I}), y("y", {I});
    for (auto* arr : {&x})
      if (float* p = arr->data())
        for (std::int64_t e = 0; e < arr->size(); ++e) p[e] = float((e * 13) % 17) / 64.0f - 0.1f;
    if (float* p = w.data())
      for (std::int64_t e = 0; e < K; ++e) p[e] = float(e % 5) / 4.0f;
    auto [i, k] = wp::indices<2>();
    auto mv = wp::map("matvec", wp::space(I, K), t(i) += x(i, k) * w(k));
    auto f = wp::map("tanh", wp::space(I), y(i) = wp::tanh(t(i)));
    const wp::grid_shape gk{1, P}, gi{P};
    compare(
        ctx, "splitk", sizes_text(sk), reps, csv,
        [&] {
          wp::schedule sc;
          sc.set(mv, gk).set(f, gi);
          return with_output<decltype(wp::distribute(wp::program(mv, f), sc, ctx)), decltype(y)>{
              wp::distribute(wp::program(mv, f), sc, ctx), &y};
        },
        [&] { return list(wp::distribute(mv, gk, ctx), wp::distribute(f, gi, ctx)); });
  }
  return 0;
}
