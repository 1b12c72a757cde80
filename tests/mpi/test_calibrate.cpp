/// \file test_calibrate.cpp
/// wp::machine_model::calibrate(ctx) at every communicator size: one model on every rank, every
/// field measured (the loop executor's rate, its cost per row, its rate of slow functions, three
/// GEMM sizes in ascending operations, the rates again for float elements, the packing copy's rate,
/// the rate of rows with no vector form, a streaming bandwidth, a map's fixed cost, the ranks per
/// core as counted here from the node's ranks and hardware threads, alpha and beta where there are
/// two ranks), its JSON read back exactly; and plan.profile() under it pricing each map by its
/// kernel: a contraction's largest block (the balanced tiling, block_of) at the GEMM rate
/// interpolated here, an element-wise map's at the longer of its operations at the loop rate plus
/// its rows at the row cost, and its boxes' bytes at the bandwidth.

#include <algorithm>
#include <cmath>
#include <thread>

#include <workpart/io/machine_file.hpp>

#include "mpi_test_support.hpp"

namespace {

using namespace mpitest;
using Catch::Matchers::Contains;

/// The GEMM rate for `ops`, interpolated in log(ops) between the model's points.
double gemm_rate_here(const wp::machine_model& m, double ops) {
  const auto& g = m.gemm;
  if (ops <= g.front().ops) return g.front().rate;
  if (ops >= g.back().ops) return g.back().rate;
  for (std::size_t k = 1; k < g.size(); ++k)
    if (ops <= g[k].ops)
      return g[k - 1].rate + (g[k].rate - g[k - 1].rate) * std::log(ops / g[k - 1].ops) /
                                 std::log(g[k].ops / g[k - 1].ops);
  return g.back().rate;
}

}  // namespace

TEST_CASE("calibrate: one model everywhere, each kind of work measured", "[mpi][calibrate]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const wp::machine_model m = wp::machine_model::calibrate(ctx);
  CHECK(same_everywhere(ctx.comm(), wp::to_json(m)) == "");
  CHECK(m.flops > 0);
  CHECK(m.row_seconds > 0);  // a pooling window's rows of 2 and 3 points cost more than their sums
  CHECK(m.slow_flops > 0);
  REQUIRE(m.gemm.size() == 3);
  CHECK(m.gemm[0].ops == 2.0 * 16 * 16 * 16);
  CHECK(m.gemm[2].ops == 2.0 * 256 * 256 * 256);
  for (std::size_t k = 0; k < m.gemm.size(); ++k) {
    CHECK(m.gemm[k].rate > 0);
    if (k > 0) CHECK(m.gemm[k].ops > m.gemm[k - 1].ops);
  }
  // the same rates for 4-byte elements (float): measured, the same GEMM sizes
  CHECK(m.float_flops > 0);
  CHECK(m.float_slow_flops > 0);
  REQUIRE(m.float_gemm.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(m.float_gemm[k].ops == m.gemm[k].ops);
    CHECK(m.float_gemm[k].rate > 0);
  }
  CHECK(m.packing > 0);       // a convolution's im2col copy
  CHECK(m.scalar_flops > 0);  // rows with no vector form
  CHECK(m.stream > 0);
  CHECK(m.map_seconds > 0);
  // ranks per core, counted here
  MPI_Comm node;
  MPI_Comm_split_type(ctx.comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  const double share =
      std::max(1.0, double(on_node) / std::max(1u, std::thread::hardware_concurrency()));
  // (rank 0's node decides; on one machine every rank's is the same)
  CHECK(m.core_share == Approx(share));
  if (P == 1) {
    CHECK(m.alpha == wp::machine_model{}.alpha);
    CHECK(m.beta == wp::machine_model{}.beta);
  } else {
    CHECK(m.alpha > 0);
    CHECK(m.beta > 0);
  }
  const wp::machine_model back = wp::parse_machine_model(wp::to_json(m));
  CHECK(wp::to_json(back) == wp::to_json(m));
  CHECK(a_plan_still_works(ctx) == "");

  SECTION("the profile prices each map by its kernel") {
    constexpr index_t I = 29, J = 11, K = 13;
    auto [i, j, k] = wp::indices<3>();
    wp::array<double, 2> A("A", {I, K}), B("B", {K, J}), C("C", {I, J}), Y("Y", {I, J});
    fill2(A, [](index_t a, index_t b) { return double(a - b); });
    fill2(B, [](index_t a, index_t b) { return double(a + b) / 7; });
    fill2(C, [](index_t, index_t) { return 0.0; });
    auto mm = wp::map("mm", wp::space(I, J, K), C(i, j) += A(i, k) * B(k, j));
    auto act = wp::map("act", wp::space(I, J), Y(i, j) = C(i, j) * 0.5);
    // a map of floats: priced at float's loop rate
    wp::array<float, 2> X("X", {I, J}), Z("Z", {I, J});
    X.init([](const std::array<index_t, 2>& g) { return float(g[0] * 3 - g[1]); });
    auto half = wp::map("half", wp::space(I, J), Z(i, j) = X(i, j) * 0.5f);
    wp::schedule s;
    s.set(mm, wp::grid_shape{index_t(P), 1, 1}).set(act, wp::grid_shape{index_t(P), 1});
    s.set(half, wp::grid_shape{index_t(P), 1});
    auto plan = wp::distribute(wp::program(mm, act, half), s, ctx);
    plan.scatter();
    for (int e = 0; e < 3; ++e) plan.execute();
    const wp::plan_profile p = plan.profile(m);
    CHECK_THAT(p.model, Contains(".gemm = {"));
    const index_t rows = block_of(I, P, 0).size;  // the largest block's rows
    const double mm_ops = 2.0 * double(rows * J * K);
    const double mm_bytes = 8.0 * double(rows * K + K * J + 2 * rows * J);  // A, B; C read, written
    const double act_bytes = 8.0 * double(2 * rows * J);                    // C read, Y written
    int seen = 0;
    INFO(m.str() << ": rows " << rows << ", mm's operations " << mm_ops << ", bytes " << mm_bytes);
    for (const auto& r : p.rows) {
      if (r.map == 0) {
        ++seen;
        const double want =
            m.map_seconds +
            m.core_share * std::max(mm_ops / gemm_rate_here(m, mm_ops), mm_bytes / m.stream);
        CHECK(r.modelled == Approx(want).epsilon(1e-9));
      } else if (r.map == 1) {
        ++seen;
        // rows along j (C and Y contiguous along it): `rows` of them
        const double want =
            m.map_seconds +
            m.core_share * std::max(double(rows * J) / m.flops + double(rows) * m.row_seconds,
                                    act_bytes / m.stream);
        CHECK(r.modelled == Approx(want).epsilon(1e-9));
      } else if (r.map == 2) {
        ++seen;
        const double want =
            m.map_seconds +
            m.core_share * std::max(double(rows * J) / m.float_flops + double(rows) * m.row_seconds,
                                    4.0 * double(2 * rows * J) / m.stream);
        CHECK(r.modelled == Approx(want).epsilon(1e-9));
      }
    }
    CHECK(seen == 3);
    plan.gather(Y);
    plan.gather(Z);
    int wrong = 0;  // (counted, not REQUIREd: no rank leaves the test while others go on)
    if (ctx.rank() == 0)
      for (index_t a = 0; a < I; ++a)
        for (index_t b = 0; b < J; ++b) {
          double c = 0;
          for (index_t q = 0; q < K; ++q) c += double(a - q) * double(q + b) / 7;
          // three executes accumulate into C
          wrong += Y.data()[a * J + b] != Approx(c * 0.5 * 3).margin(1e-9);
        }
    if (ctx.rank() == 0)
      for (index_t a = 0; a < I; ++a)
        for (index_t b = 0; b < J; ++b) wrong += Z.data()[a * J + b] != float(a * 3 - b) * 0.5f;
    CHECK(wrong == 0);
  }
}
