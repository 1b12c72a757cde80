/// \file test_distribute_matmul.cpp
/// The thesis's matmul schedules under wp::distribute, at every communicator size:
/// (1,1,1), (p,1,1), (1,p,1), (1,1,p) with p the communicator size, the hybrids (2,2,1) and
/// (1,2,2) from 4 ranks, (3,1,1) and (1,3,1) from 3 ranks (leaving a rank idle at 4).
/// Uneven extents 37 x 41 x 29, a transposed operand, a pre-filled C whose old values must
/// count exactly once, float and double. Results are compared on root with a plain triple
/// loop written here. Operand values are multiples of 1/4 and small, so every partial sum is
/// exact in float and the comparison is exact whatever order the sums run in.
///
/// For (1,1,1), (p,1,1) (plain and transposed), (1,p,1), (1,1,p), (2,2,1) and (1,2,2) the
/// bytes each rank sends and receives are derived by hand from the tiling (see
/// expected_bytes) and compared with the plan's prediction for every rank and with what
/// stats() measured on each rank. Every rank with a non-empty block runs it as one GEMM.

#include "mpi_test_support.hpp"

namespace {

using namespace mpitest;

constexpr index_t M0 = 37, N0 = 41, K0 = 29;

double a_val(index_t i, index_t k) { return double((i * 7 + k * 13 + 3) % 17 - 8) / 4.0; }
double b_val(index_t k, index_t j) { return double((k * 11 + j * 5 + 1) % 15 - 7) / 4.0; }
double c_old(index_t i, index_t j) { return double((i * 3 + j * 19) % 9 - 4) / 2.0; }

/// C_ref = old + reps * A * B by a plain triple loop (root only uses it).
std::vector<double> reference(index_t M, index_t N, index_t K, bool prefill, int reps = 1) {
  std::vector<double> c(static_cast<std::size_t>(M * N), 0.0);
  for (index_t i = 0; i < M; ++i)
    for (index_t j = 0; j < N; ++j) {
      double s = 0.0;
      for (index_t k = 0; k < K; ++k) s += a_val(i, k) * b_val(k, j);
      c[static_cast<std::size_t>(i * N + j)] = (prefill ? c_old(i, j) : 0.0) + reps * s;
    }
  return c;
}

/// The operands of one test: A (M x K, or K x M when transposed), B (K x N), C (M x N).
template <class T>
struct operands {
  wp::array<T, 2> A, B, C;
  operands(index_t M, index_t N, index_t K, bool transposed, bool prefill)
      : A("A", transposed ? std::array<index_t, 2>{K, M} : std::array<index_t, 2>{M, K}),
        B("B", {K, N}),
        C("C", {M, N}) {
    if (transposed)
      fill2(A, [](index_t k, index_t i) { return a_val(i, k); });
    else
      fill2(A, [](index_t i, index_t k) { return a_val(i, k); });
    fill2(B, [](index_t k, index_t j) { return b_val(k, j); });
    if (prefill) fill2(C, [](index_t i, index_t j) { return c_old(i, j); });
  }
};

std::string grid_text(const wp::grid_shape& g) { return g.str(); }

/// Runs one schedule; returns the problems found (the same text on every rank).
template <class T>
std::string run_schedule(const wp::context& ctx, const wp::grid_shape& g, bool transposed,
                         bool prefill, index_t M = M0, index_t N = N0, index_t K = K0) {
  auto [i, j, k] = wp::indices<3>();
  operands<T> ops(M, N, K, transposed, prefill);
  std::string problems;
  auto check = [&](const auto& mm) {
    auto plan = wp::distribute(mm, g, ctx);
    // A rank whose block is not empty runs it as one GEMM (the contraction recognised on its
    // local buffers, as on one process); an idle rank or an empty block runs nothing.
    const auto c = coords_of(g.dims, ctx.rank());
    bool busy = !c.empty();
    for (std::size_t d = 0; d < c.size() && busy; ++d)
      busy = block_of(std::array<index_t, 3>{M, N, K}[d], g.dims[d], c[d]).size > 0;
    const long gemms0 = wp::detail::counters().gemm_calls.load();
    plan.run();
    const long gemms = wp::detail::counters().gemm_calls.load() - gemms0;
    problems += all_problems(ctx.comm(), gemms == (busy ? 1 : 0)
                                             ? ""
                                             : "rank " + std::to_string(ctx.rank()) + " ran " +
                                                   std::to_string(gemms) + " GEMMs on its block");
    problems +=
        all_problems(ctx.comm(), plan.explain().find("-> gemm: C[i0 x i1]") != std::string::npos
                                     ? ""
                                     : "explain() does not say the block runs as a GEMM");
    // where C's old values travel to other ranks, explain() says why (+= adds to them)
    const std::string text = plan.explain();
    const bool old_values = text.find("Scatterv (old values") != std::string::npos;
    problems +=
        all_problems(ctx.comm(), !old_values || text.find("; += adds to them") != std::string::npos
                                     ? ""
                                     : "explain() scatters C's old values without why");
    problems += compare_on_root(ctx.comm(), ops.C, reference(M, N, K, prefill));
    // every rank measured what the plan predicted for it, and explain() agrees everywhere
    problems += all_problems(ctx.comm(), measured_problems(plan));
    problems += explain_differs(ctx.comm(), plan);
    problems += all_problems(ctx.comm(), plan.stats().runs == 1 ? "" : "stats().runs != 1");
  };
  if (transposed)
    check(wp::map("matmul_t", wp::space(M, N, K), ops.C(i, j) += ops.A(k, i) * ops.B(k, j)));
  else
    check(wp::map("matmul", wp::space(M, N, K), ops.C(i, j) += ops.A(i, k) * ops.B(k, j)));
  return problems;
}

/// The schedules to run at this communicator size (skips are reported on root).
std::vector<wp::grid_shape> schedules(const wp::context& ctx) {
  const index_t p = ctx.size();
  std::vector<wp::grid_shape> s = {{1, 1, 1}, {p, 1, 1}, {1, p, 1}, {1, 1, p}};
  if (p >= 4) {
    s.push_back({2, 2, 1});
    s.push_back({1, 2, 2});
  } else if (ctx.is_root()) {
    WARN("hybrid schedules (2,2,1) and (1,2,2) skipped: they need 4 ranks, this run has " << p);
  }
  if (p >= 3) {
    s.push_back({3, 1, 1});
    s.push_back({1, 3, 1});
  } else if (ctx.is_root()) {
    WARN("schedules (3,1,1) and (1,3,1) skipped: they need 3 ranks, this run has " << p);
  }
  return s;
}

// ---------------------------------------------------------------- expected bytes
/// The bytes of C(i,j) += A(i,k) * B(k,j) on M x N x K with a pre-filled C, derived by hand.
///
/// (p,1,1): rank r holds rows_r = block(M, p, r). A: root sends each rank r >= 1 its rows
///   (Scatterv): rows_r*K. B: every rank needs all of it (Bcast from root): K*N to each r >= 1.
///   C: the old values of r's rows go out (rows_r*N) and the results come back (rows_r*N).
/// (1,p,1): the same with columns: A broadcast whole (M*K to each r >= 1), B's column block
///   K*cols_r scattered, C's column block M*cols_r out and back.
/// (1,1,p): rank r holds ks_r = block(K, p, r) of the contracted index. A: M*ks_r, B: ks_r*N
///   scattered. C: every rank makes a partial M x N sum; the old values go to root's copy only
///   (root keeps them: nothing crosses), the partials are summed onto root (Reduce): M*N from
///   each r >= 1; nothing is gathered afterwards (root already holds the sum).
/// (2,2,1): rank r = 2a + b holds rows block a and columns block b. A's row block a is needed
///   by ranks (a,0) and (a,1): root sends it to the group leader (a,0) (Scatterv: rank 2 gets
///   rows_1*K) and the leader broadcasts it to (a,1) (rank 0 -> rank 1: rows_0*K, rank 2 ->
///   rank 3: rows_1*K). B likewise over the other grid dimension: leaders (0,b) are ranks 0
///   and 1 (Scatterv: rank 1 gets K*cols_1), then rank 0 -> rank 2 (K*cols_0), rank 1 ->
///   rank 3 (K*cols_1). C: each rank's rows_a*cols_b block out and back.
bytes_by_rank expected_bytes(const std::string& kind, int P, index_t M, index_t N, index_t K,
                             index_t es) {
  bytes_by_rank b(P);
  const index_t p = P;
  if (kind == "p11") {
    for (int r = 1; r < P; ++r) {
      const index_t rows = block_of(M, p, r).size;
      b.scatter(0, r, rows * K * es);  // A
      b.scatter(0, r, K * N * es);     // B (Bcast)
      b.scatter(0, r, rows * N * es);  // C old values
      b.gather(r, 0, rows * N * es);   // C results
    }
  } else if (kind == "1p1") {
    for (int r = 1; r < P; ++r) {
      const index_t cols = block_of(N, p, r).size;
      b.scatter(0, r, M * K * es);     // A (Bcast)
      b.scatter(0, r, K * cols * es);  // B
      b.scatter(0, r, M * cols * es);  // C old values
      b.gather(r, 0, M * cols * es);   // C results
    }
  } else if (kind == "11p") {
    for (int r = 1; r < P; ++r) {
      const index_t ks = block_of(K, p, r).size;
      b.scatter(0, r, M * ks * es);  // A
      b.scatter(0, r, ks * N * es);  // B
      b.gather(r, 0, M * N * es);    // C partial sums (Reduce onto root)
    }
  } else if (kind == "111" || kind == "111t") {
    // one rank works, on root's own arrays: nothing crosses between ranks
  } else if (kind == "p11t") {
    // C(i,j) += A(k,i) * B(k,j), A stored K x M: rank r needs A's columns rows_r, K*rows_r
    // elements (sent with a strided datatype), otherwise as (p,1,1)
    return expected_bytes("p11", P, M, N, K, es);
  } else if (kind == "122") {
    // rank r = 2b + c holds column block b of N (grid dimension 1) and k block c of K (grid
    // dimension 2). A(i,k) is the same for ranks (0,c) and (1,c): root sends A[:, ks_1] to
    // the leader of k block 1, rank 1 (Scatterv), and the leaders broadcast to ranks 2 and 3.
    // B(k,j): every rank its own ks_c x cols_b block (Scatterv). C(i,j) misses index k: ranks
    // (b,0) and (b,1) make partial sums of the M x cols_b block. The old values go to the
    // leaders (b,0), ranks 0 and 2 (rank 2 receives M*cols_1); the partials are reduced onto
    // them (rank 1 -> 0, rank 3 -> 2); the leaders' blocks go to root (rank 2 -> 0).
    const index_t ks0 = block_of(K, 2, 0).size, ks1 = block_of(K, 2, 1).size;
    const index_t cols0 = block_of(N, 2, 0).size, cols1 = block_of(N, 2, 1).size;
    b.scatter(0, 1, M * ks1 * es);  // A
    b.scatter(0, 2, M * ks0 * es);
    b.scatter(1, 3, M * ks1 * es);
    b.scatter(0, 1, ks1 * cols0 * es);  // B
    b.scatter(0, 2, ks0 * cols1 * es);
    b.scatter(0, 3, ks1 * cols1 * es);
    b.scatter(0, 2, M * cols1 * es);  // C old values
    b.gather(1, 0, M * cols0 * es);   // C partial sums (Reduce)
    b.gather(3, 2, M * cols1 * es);
    b.gather(2, 0, M * cols1 * es);  // C leaders' blocks (Gatherv)
  } else if (kind == "221") {
    const index_t rows0 = block_of(M, 2, 0).size, rows1 = block_of(M, 2, 1).size;
    const index_t cols0 = block_of(N, 2, 0).size, cols1 = block_of(N, 2, 1).size;
    // A: Scatterv to the leader of row block 1, Bcast within each row block
    b.scatter(0, 2, rows1 * K * es);
    b.scatter(0, 1, rows0 * K * es);
    b.scatter(2, 3, rows1 * K * es);
    // B: Scatterv to the leader of column block 1, Bcast within each column block
    b.scatter(0, 1, K * cols1 * es);
    b.scatter(0, 2, K * cols0 * es);
    b.scatter(1, 3, K * cols1 * es);
    // C: each rank's block out and back
    const index_t cblk[4] = {rows0 * cols0, rows0 * cols1, rows1 * cols0, rows1 * cols1};
    for (int r = 1; r < 4; ++r) {
      b.scatter(0, r, cblk[r] * es);
      b.gather(r, 0, cblk[r] * es);
    }
  }
  return b;
}

/// Checks one plan of C(i,j) += A(i,k) * B(k,j) (or A(k,i)) against expected_bytes(kind):
/// the prediction for every rank, each rank's measurement, the result, and the collectives.
template <class T, class Plan>
void check_plan_bytes(const wp::context& ctx, const std::string& kind, const wp::grid_shape& g,
                      Plan&& plan, operands<T>& ops) {
  const int P = ctx.size();
  const index_t es = sizeof(T);
  plan.run();
  const bytes_by_rank want = expected_bytes(kind, P, M0, N0, K0, es);
  // the prediction for every rank, and this rank's measurement
  REQUIRE(all_problems(ctx.comm(), bytes_problems(plan, want, ctx.rank())) == "");
  REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  const auto& st = plan.stats();
  REQUIRE(
      all_problems(ctx.comm(), st.scatter.bytes_sent == want.scatter_sent[ctx.rank()] &&
                                       st.scatter.bytes_received == want.scatter_recv[ctx.rank()] &&
                                       st.gather.bytes_sent == want.gather_sent[ctx.rank()] &&
                                       st.gather.bytes_received == want.gather_recv[ctx.rank()]
                                   ? ""
                                   : "measured bytes differ from the hand-derived ones") == "");
  REQUIRE(compare_on_root(ctx.comm(), ops.C, reference(M0, N0, K0, true)) == "");

  // the collectives named for each array, and in explain()
  const auto cA = plan.collectives(ops.A), cB = plan.collectives(ops.B),
             cC = plan.collectives(ops.C);
  const std::string e = plan.explain();
  INFO("A: " << join(cA) << "; B: " << join(cB) << "; C: " << join(cC) << "\n" << e);
  REQUIRE(explain_differs(ctx.comm(), plan) == "");
  REQUIRE(e.find("'matmul'") != std::string::npos);
  REQUIRE(e.find(g.str()) != std::string::npos);
  REQUIRE(has(cA, "Scatterv"));
  REQUIRE(has(cC, "Gatherv"));
  if (P == 1 || kind == "111" || kind == "111t") {
    // one rank: nothing is broadcast or reduced
    REQUIRE_FALSE(has(cA, "Bcast"));
    REQUIRE_FALSE(has(cB, "Bcast"));
    REQUIRE_FALSE(has(cC, "Reduce(sum)"));
    REQUIRE(plan.predicted_total(true) == 0);
    REQUIRE(plan.predicted_total(false) == 0);
  } else if (kind == "p11" || kind == "p11t") {
    REQUIRE(has(cB, "Bcast"));
    REQUIRE(e.find("Bcast") != std::string::npos);
    REQUIRE_FALSE(has(cA, "Bcast"));
    REQUIRE_FALSE(has(cC, "Reduce(sum)"));
  } else if (kind == "1p1") {
    REQUIRE(has(cA, "Bcast"));
    REQUIRE(e.find("Bcast") != std::string::npos);
    REQUIRE_FALSE(has(cB, "Bcast"));
    REQUIRE_FALSE(has(cC, "Reduce(sum)"));
  } else if (kind == "11p") {
    REQUIRE(has(cC, "Reduce(sum)"));
    REQUIRE(e.find("Reduce(sum)") != std::string::npos);
    REQUIRE_FALSE(has(cA, "Bcast"));
    REQUIRE_FALSE(has(cB, "Bcast"));
  } else if (kind == "221") {
    REQUIRE(has(cA, "Bcast"));
    REQUIRE(has(cB, "Bcast"));
    REQUIRE_FALSE(has(cC, "Reduce(sum)"));
  } else if (kind == "122") {
    REQUIRE(has(cA, "Bcast"));
    REQUIRE_FALSE(has(cB, "Bcast"));
    REQUIRE(has(cC, "Reduce(sum)"));
    REQUIRE(e.find("Reduce(sum)") != std::string::npos);
  }
  // The mapping of each access: a grid dimension of extent > 1 partitions an array axis or
  // broadcasts; an axis no such dimension splits is held whole (REPLICATE).
  std::vector<std::string> mappings;
  if (P == 1 || kind == "111" || kind == "111t")
    mappings = {"A[REPLICATE:0, REPLICATE:1]\n", "B[REPLICATE:0, REPLICATE:1]\n",
                "C[REPLICATE:0, REPLICATE:1]\n"};
  else if (kind == "p11")
    mappings = {"A[PARTITION:0 on g0, REPLICATE:1]\n", "B[REPLICATE:0, REPLICATE:1] g0:BROADCAST\n",
                "C[PARTITION:0 on g0, REPLICATE:1]\n"};
  else if (kind == "p11t")
    mappings = {"A[REPLICATE:0, PARTITION:1 on g0]\n", "C[PARTITION:0 on g0, REPLICATE:1]\n"};
  else if (kind == "1p1")
    mappings = {"A[REPLICATE:0, REPLICATE:1] g1:BROADCAST\n", "B[REPLICATE:0, PARTITION:1 on g1]\n",
                "C[REPLICATE:0, PARTITION:1 on g1]\n"};
  else if (kind == "11p")
    mappings = {"A[REPLICATE:0, PARTITION:1 on g2]\n", "B[PARTITION:0 on g2, REPLICATE:1]\n",
                "C[REPLICATE:0, REPLICATE:1] g2:BROADCAST\n"};
  else if (kind == "221")
    mappings = {"A[PARTITION:0 on g0, REPLICATE:1] g1:BROADCAST\n",
                "B[REPLICATE:0, PARTITION:1 on g1] g0:BROADCAST\n",
                "C[PARTITION:0 on g0, PARTITION:1 on g1]\n"};
  else if (kind == "122")
    mappings = {"A[REPLICATE:0, PARTITION:1 on g2] g1:BROADCAST\n",
                "B[PARTITION:0 on g2, PARTITION:1 on g1]\n",
                "C[REPLICATE:0, PARTITION:1 on g1] g2:BROADCAST\n"};
  for (const auto& m : mappings) {
    INFO("mapping " << m);
    REQUIRE(e.find(m) != std::string::npos);
  }
  if (kind == "111" || kind == "111t")  // only root works: run() used root's arrays in place
    REQUIRE(e.find("run(): in place on root's arrays") != std::string::npos);
  // explain() and to_json() agree on the totals
  REQUIRE(e.find("scatter " + std::to_string(want.total_scatter()) + " B") != std::string::npos);
  REQUIRE(e.find("gather " + std::to_string(want.total_gather()) + " B") != std::string::npos);
  const std::string js = plan.to_json();
  REQUIRE(js.find("\"map\":\"matmul\"") != std::string::npos);
  REQUIRE(js.find("\"ranks\":" + std::to_string(P)) != std::string::npos);
}

}  // namespace

TEMPLATE_TEST_CASE("distribute matmul: every thesis schedule gives the triple-loop result",
                   "[mpi][distribute][matmul]", float, double) {
  wp::context ctx(g_argc, g_argv);
  for (const auto& g : schedules(ctx))
    for (bool transposed : {false, true})
      for (bool prefill : {false, true}) {
        INFO("grid " << grid_text(g)
                     << (transposed ? ", C(i,j) += A(k,i)*B(k,j)" : ", C(i,j) += A(i,k)*B(k,j)")
                     << (prefill ? ", pre-filled C" : ", zero C") << ", " << ctx.size()
                     << " ranks");
        const std::string problems = run_schedule<TestType>(ctx, g, transposed, prefill);
        REQUIRE(problems == "");
      }
}

TEMPLATE_TEST_CASE("distribute matmul: small and degenerate extents", "[mpi][distribute][matmul]",
                   float, double) {
  // Extents below the grid extent leave empty blocks; a K of 1 is an outer product.
  wp::context ctx(g_argc, g_argv);
  const index_t p = ctx.size();
  struct ext {
    index_t M, N, K;
  };
  for (const ext e : {ext{2, 3, 1}, ext{1, 5, 3}, ext{3, 1, 2}, ext{5, 4, 7}})
    for (const wp::grid_shape& g :
         {wp::grid_shape{p, 1, 1}, wp::grid_shape{1, p, 1}, wp::grid_shape{1, 1, p}}) {
      INFO("M N K = " << e.M << " " << e.N << " " << e.K << ", grid " << g.str());
      REQUIRE(run_schedule<TestType>(ctx, g, false, true, e.M, e.N, e.K) == "");
    }
}

TEST_CASE("distribute matmul: compile-time grids, with and without a context",
          "[mpi][distribute][matmul]") {
  wp::context ctx(g_argc, g_argv);
  auto [i, j, k] = wp::indices<3>();
  operands<double> ops(M0, N0, K0, false, true);
  auto mm = wp::map("matmul", wp::space(M0, N0, K0), ops.C(i, j) += ops.A(i, k) * ops.B(k, j));
  const auto want = reference(M0, N0, K0, true);
  SECTION("grid<1,1,1> on the current context") {
    auto plan = wp::distribute(mm, wp::grid<1, 1, 1>);
    plan.run();
    REQUIRE(plan.grid() == wp::grid_shape{1, 1, 1});
    REQUIRE(compare_on_root(ctx.comm(), ops.C, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  }
  SECTION("grid<2,2,1> with the context") {
    if (ctx.size() < 4) {
      if (ctx.is_root()) WARN("grid<2,2,1> skipped: it needs 4 ranks, this run has " << ctx.size());
      return;
    }
    auto plan = wp::distribute(mm, wp::grid<2, 2, 1>, ctx);
    plan.run();
    REQUIRE(plan.grid() == wp::grid_shape{2, 2, 1});
    REQUIRE(compare_on_root(ctx.comm(), ops.C, want) == "");
    REQUIRE(all_problems(ctx.comm(), measured_problems(plan)) == "");
  }
}

TEMPLATE_TEST_CASE("distribute matmul: bytes equal the hand-derived counts on every rank",
                   "[mpi][distribute][matmul][bytes]", float, double) {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  auto [i, j, k] = wp::indices<3>();

  struct sched {
    std::string kind;
    wp::grid_shape g;
  };
  std::vector<sched> list = {{"p11", {p, 1, 1}},  {"1p1", {1, p, 1}}, {"11p", {1, 1, p}},
                             {"p11t", {p, 1, 1}}, {"111", {1, 1, 1}}, {"111t", {1, 1, 1}}};
  if (P >= 4) {
    list.push_back({"221", {2, 2, 1}});
    list.push_back({"122", {1, 2, 2}});
  } else if (ctx.is_root()) {
    WARN("(2,2,1) and (1,2,2) byte counts skipped: they need 4 ranks, this run has " << P);
  }

  for (const auto& s : list) {
    INFO("grid " << s.g.str() << " on " << P << " ranks");
    const bool transposed = s.kind.back() == 't';
    operands<TestType> ops(M0, N0, K0, transposed, true);
    const auto sp = wp::space(M0, N0, K0);
    if (transposed)
      check_plan_bytes(
          ctx, s.kind, s.g,
          wp::distribute(wp::map("matmul", sp, ops.C(i, j) += ops.A(k, i) * ops.B(k, j)), s.g, ctx),
          ops);
    else
      check_plan_bytes(
          ctx, s.kind, s.g,
          wp::distribute(wp::map("matmul", sp, ops.C(i, j) += ops.A(i, k) * ops.B(k, j)), s.g, ctx),
          ops);
  }
}
