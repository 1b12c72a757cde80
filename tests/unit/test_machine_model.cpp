/// \file test_machine_model.cpp
/// The machine model per kind of local work (optimize/machine_model.hpp): a block's seconds at
/// the GEMM rate (interpolated by its operations), the loop rate or the streaming bandwidth,
/// the fixed cost of a map and ranks sharing cores, against figures computed here by hand; the
/// optimizer's tables pricing a typed contraction at the GEMM rate and an element-wise map at
/// the streaming bandwidth (its boxes' bytes counted here), on 1 and 3 ranks, and a program
/// description (read back from wp::describe's JSON, "kernel": "gemm") priced alike; the JSON
/// form of a model (io/machine_file.hpp) read back exactly, and its errors. A loop block's rows
/// (the loop executor's row dimension) and slow functions (exp, tanh, ...) counted from the
/// map's type against counts made here, priced at row_seconds and slow_flops, through the
/// optimizer's tables and a description read back. Maps of 4-byte elements at the float
/// rates (float_flops, float_gemm, float_slow_flops) where the model has them, at the 8-byte
/// rates where not: the element size read from the map's type and from a description's arrays.
/// An affine contraction's packed operand (a convolution's im2col) found from its type, its
/// copy's bytes at the packing rate: a split of the filters does not shrink it, one of the
/// images does; the same through a description ("packed") read back. A loop whose rows have no
/// vector form (a padded read) at the scalar rate, one whose rows have at the loop rate, and
/// the same through a description ("scalar_rows").

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>
#include <workpart/io/machine_file.hpp>
#include <workpart/io/program_reader.hpp>
#include <workpart/io/program_writer.hpp>
#include <workpart/optimize/describe.hpp>
#include <workpart/optimize/program_description.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace wp = workpart;
using Catch::Matchers::Contains;
using workpart::index_t;

namespace {

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(b), 1e-300); }

/// The cost table entry of map vertex 1 (the only map) on the configuration whose grid is g.
double map_cost(const wp::program_cost_tables& t, const std::vector<std::int64_t>& g) {
  for (std::size_t k = 0; k < t.graph.num_configs(1); ++k) {
    const auto c = t.graph.config(1, k);
    if (std::vector<std::int64_t>(c.begin(), c.end()) == g) return t.graph.vertex_cost(1, k);
  }
  FAIL("no configuration " << g.size());
  return 0;
}

}  // namespace

TEST_CASE("machine_model: a block's seconds by the kind of its kernel", "[unit][optimize]") {
  SECTION("the defaults are one loop rate: operations over flops, bytes not priced") {
    const wp::machine_model m;
    CHECK(close(m.block_seconds(3e9, 1e12, false), 0.3));
    CHECK(close(m.block_seconds(3e9, 1e12, true), 0.3));
    CHECK(m.block_seconds(0, 0, false) == 0.0);
    CHECK(m.str() == "machine_model{.flops = 1e+10, .alpha = 2e-06, .beta = 1e-09}");
  }
  SECTION("GEMM rates interpolated in log(operations), held at the ends") {
    wp::machine_model m;
    m.gemm = {{1e3, 1e9}, {1e6, 4e9}, {1e9, 7e9}};
    CHECK(close(m.gemm_rate(10), 1e9));
    CHECK(close(m.gemm_rate(1e3), 1e9));
    CHECK(close(m.gemm_rate(std::sqrt(1e3 * 1e6)), 2.5e9));  // halfway in log
    CHECK(close(m.gemm_rate(1e6), 4e9));
    CHECK(close(m.gemm_rate(1e8), 4e9 + 3e9 * 2.0 / 3.0));
    CHECK(close(m.gemm_rate(1e12), 7e9));
    CHECK(close(m.block_seconds(1e6, 0, true), 1e6 / 4e9));
    CHECK(close(m.block_seconds(1e6, 0, false), 1e6 / 1e10));  // a loop: flops
  }
  SECTION("the longer of arithmetic and streaming, slowed by sharing, plus a map's cost") {
    wp::machine_model m{.flops = 1e9, .alpha = 1e-6, .beta = 1e-9};
    m.stream = 2e9;
    m.map_seconds = 1e-5;
    CHECK(close(m.block_seconds(1e6, 1e6, false), 1e-5 + 1e-3));  // arithmetic longer
    CHECK(close(m.block_seconds(1e6, 8e6, false), 1e-5 + 4e-3));  // streaming longer
    m.core_share = 2;
    CHECK(close(m.block_seconds(1e6, 8e6, false), 1e-5 + 8e-3));
    CHECK(m.block_seconds(0, 0, false) == 0.0);  // a map with no work (pruned) costs nothing
    CHECK_THAT(m.str(), Contains(".stream = 2e+09, .map_seconds = 1e-05, .core_share = 2"));
  }
  SECTION("a loop block's rows and slow functions") {
    wp::machine_model m{.flops = 1e9, .alpha = 1e-6, .beta = 1e-9};
    using W = wp::machine_model::block_work;
    // 1e6 points of 3 operations, one of them exp; 1e4 rows
    const W w{.points = 1e6, .ops_per_point = 3, .slow_per_point = 1, .rows = 1e4};
    CHECK(close(m.block_seconds(w), 3e-3));  // neither priced: every operation at flops
    m.row_seconds = 2e-8;
    m.slow_flops = 1e8;
    CHECK(close(m.block_seconds(w), 2e6 / 1e9 + 1e6 / 1e8 + 1e4 * 2e-8));
    W g = w;
    g.gemm = true;  // a GEMM block: neither rows nor slow functions
    CHECK(close(m.block_seconds(g), 3e6 / 1e9));
    CHECK(m.block_seconds(W{.points = 0, .ops_per_point = 3, .rows = 5}) == 0.0);
    CHECK_THAT(m.str(), Contains(".row_seconds = 2e-08, .slow_flops = 1e+08"));
  }
}

TEST_CASE("machine_model: 4-byte elements at float's rates", "[unit][optimize]") {
  using W = wp::machine_model::block_work;
  wp::machine_model m{.flops = 1e9, .alpha = 1e-6, .beta = 1e-9};
  m.gemm = {{1e3, 2e9}, {1e6, 8e9}};
  m.slow_flops = 1e8;
  m.row_seconds = 2e-8;
  const W loop{.points = 1e6, .ops_per_point = 3, .slow_per_point = 1, .rows = 1e4};
  W narrow = loop;
  narrow.elem_bytes = 4;
  W gemm{.points = 1, .ops_per_point = 1e6, .gemm = true};
  W narrow_gemm = gemm;
  narrow_gemm.elem_bytes = 4;
  const double wide_loop = 2e6 / 1e9 + 1e6 / 1e8 + 1e4 * 2e-8;
  // no float rates: every element size at the same rates
  CHECK(close(m.block_seconds(narrow), wide_loop));
  CHECK(close(m.block_seconds(narrow_gemm), 1e6 / 8e9));
  m.float_flops = 4e9;
  m.float_slow_flops = 5e8;
  m.float_gemm = {{1e3, 3e9}, {1e6, 1.6e10}};
  CHECK(close(m.block_seconds(loop), wide_loop));  // 8 bytes: as before
  CHECK(close(m.block_seconds(narrow), 2e6 / 4e9 + 1e6 / 5e8 + 1e4 * 2e-8));
  CHECK(close(m.block_seconds(gemm), 1e6 / 8e9));
  CHECK(close(m.block_seconds(narrow_gemm), 1e6 / 1.6e10));
  CHECK(close(m.gemm_rate(std::sqrt(1e9), 4), 3e9 + 13e9 / 2));  // halfway in log
  CHECK(close(m.loop_flops(4), 4e9));
  CHECK(close(m.loop_flops(8), 1e9));
  CHECK_THAT(m.str(), Contains(".float_flops = 4e+09, .float_gemm = {{1e+03, 3e+09}, {1e+06, "
                               "1.6e+10}}, .float_slow_flops = 5e+08"));

  // the element size from the map's type (its first statement's write) and from a
  // description's arrays: a float map priced at float's rates, a double map at double's
  const index_t n = 37, c = 23;
  auto [i, j, q] = wp::indices<3>();
  wp::array<float, 2> Xf("Xf", {n, c}), Yf("Yf", {n, c});
  wp::array<double, 2> Xd("Xd", {n, c}), Yd("Yd", {n, c});
  auto ef = wp::map("ef", wp::space(n, c), Yf(i, j) = wp::exp(Xf(i, j)) * 2.0f);
  auto ed = wp::map("ed", wp::space(n, c), Yd(i, j) = wp::exp(Xd(i, j)) * 2.0);
  CHECK(wp::detail::local_work_of(ef).elem_bytes == 4);
  CHECK(wp::detail::local_work_of(ed).elem_bytes == 8);
  const double ops = wp::detail::ops_per_point(ef);
  REQUIRE(wp::detail::ops_per_point(ed) == ops);
  const double pts = 13.0 * c;  // 3 ranks by rows: 13 of 37
  const auto tf = wp::program_costs(wp::program(ef), 3, m);
  const auto td = wp::program_costs(wp::program(ed), 3, m);
  CHECK(close(map_cost(tf, {3, 1}), pts * ((ops - 1) / 4e9 + 1 / 5e8) + 13 * 2e-8));
  CHECK(close(map_cost(td, {3, 1}), pts * ((ops - 1) / 1e9 + 1 / 1e8) + 13 * 2e-8));
  const auto back = wp::program_costs(
      wp::parse_program_description(wp::to_json(wp::describe(wp::program(ef)))), 3, m);
  CHECK(close(map_cost(back, {3, 1}), map_cost(tf, {3, 1})));
  // a float contraction at float's GEMM rate
  const index_t k = 19;
  wp::array<float, 2> A("A", {n, k}), B("B", {k, c}), C("C", {n, c});
  auto mm = wp::map("mm", wp::space(n, c, k), C(i, j) += A(i, q) * B(q, j));
  const double gops = 2.0 * n * c * k;
  const double rate = 3e9 + 13e9 * std::log(gops / 1e3) / std::log(1e3);
  CHECK(close(map_cost(wp::program_costs(wp::program(mm), 1, m), {1, 1, 1}), gops / rate));
}

TEST_CASE("optimize: loops whose rows have no vector form at the scalar rate", "[unit][optimize]") {
  using W = wp::machine_model::block_work;
  wp::machine_model m{.flops = 1e9, .alpha = 1e-6, .beta = 1e-9};
  m.float_flops = 4e9;
  W scalar{.points = 1e6, .ops_per_point = 2, .vector_rows = false};
  CHECK(close(m.block_seconds(scalar), 2e6 / 1e9));  // no scalar rate: the loop rate
  m.scalar_flops = 5e8;
  CHECK(close(m.block_seconds(scalar), 2e6 / 5e8));
  scalar.elem_bytes = 4;  // whatever the element type
  CHECK(close(m.block_seconds(scalar), 2e6 / 5e8));
  W vector = scalar;
  vector.vector_rows = true;
  CHECK(close(m.block_seconds(vector), 2e6 / 4e9));
  CHECK_THAT(m.str(), Contains(".scalar_flops = 5e+08"));

  // the executor's rows: a padded read has no vector form, a plain one has
  const index_t n = 37, c = 23;
  auto [i, j] = wp::indices<2>();
  wp::array<double, 2> X("X", {n, c}), Y("Y", {n, c}), Z("Z", {n, c});
  auto padded = wp::map("padded", wp::space(n, c), Y(i, j) = wp::padded(X, 0.0)(i, j + 1) * 0.5);
  auto plain = wp::map("plain", wp::space(n, c), Z(i, j) = X(i, j) * 0.5);
  REQUIRE_THAT(wp::explain_local(padded), Contains("scalar rows"));
  REQUIRE_THAT(wp::explain_local(plain), Contains("vector rows"));
  CHECK_FALSE(wp::detail::local_work_of(padded).vector_rows);
  CHECK(wp::detail::local_work_of(plain).vector_rows);
  const double ops = wp::detail::ops_per_point(padded);
  const auto t = wp::program_costs(wp::program(padded), 3, m);
  CHECK(close(map_cost(t, {3, 1}), 13.0 * c * ops / 5e8));  // 37 rows over 3: 13
  const auto tp = wp::program_costs(wp::program(plain), 3, m);
  CHECK(close(map_cost(tp, {3, 1}), 13.0 * c * wp::detail::ops_per_point(plain) / 1e9));
  // described and read back: "scalar_rows" in its JSON, priced alike
  const std::string json = wp::to_json(wp::describe(wp::program(padded)));
  CHECK_THAT(json, Contains("\"scalar_rows\": true"));
  CHECK_THAT(wp::to_json(wp::describe(wp::program(plain))), !Contains("scalar_rows"));
  const auto back = wp::program_costs(wp::parse_program_description(json), 3, m);
  CHECK(close(map_cost(back, {3, 1}), map_cost(t, {3, 1})));
}

TEST_CASE("optimize: an affine contraction's packed copies at the packing rate",
          "[unit][optimize]") {
  using W = wp::machine_model::block_work;
  wp::machine_model m{.flops = 1e9, .alpha = 1e-6, .beta = 1e-9};
  m.gemm = {{1e3, 2e9}, {1e9, 2e9}};
  const W w{.points = 1e6, .ops_per_point = 2, .gemm = true, .packed_bytes = 4e6};
  CHECK(close(m.block_seconds(w), 2e6 / 2e9));  // no packing rate: copies not priced
  m.packing = 1e9;
  CHECK(close(m.block_seconds(w), 2e6 / 2e9 + 4e6 / 1e9));
  W loop = w;
  loop.gemm = false;  // (a loop packs nothing: the field is a GEMM's)
  CHECK(close(m.block_seconds(loop), 2e6 / 1e9));
  CHECK_THAT(m.str(), Contains(".packing = 1e+09"));

  // a convolution: its padded input packed (im2col) over every dim but the filters'
  const index_t N = 7, K = 5, H = 9, C = 4, R = 3;
  auto [n, k, i, j, c, r, q] = wp::indices<7>();
  wp::array<double, 4> x("x", {N, C, H, H}), f("f", {K, C, R, R}), y("y", {N, K, H, H});
  auto conv =
      wp::map("conv", wp::space(N, K, H, H, C, R, R),
              y(n, k, i, j) += wp::padded(x, 0.0)(n, c, i + r - 1, j + q - 1) * f(k, c, r, q));
  REQUIRE_THAT(wp::explain_local(conv), Contains("A packed as a matrix (im2col)"));
  const auto w_conv = wp::detail::local_work_of(conv);
  REQUIRE(w_conv.npacked == 1);
  CHECK(w_conv.packed[0].dims == 0b1111101u);  // n, i, j, c, r, q: all but k
  CHECK(w_conv.packed[0].times == 1.0);
  // its input gradient: the left side overlaps itself, the GEMM goes to a buffer over n, i,
  // j (m) and c, r, q (n) -- again all but k
  wp::array<double, 4> dx("dx", {N, C, H + R - 1, H + R - 1});
  auto dconv = wp::map("dconv", wp::space(N, K, H, H, C, R, R),
                       dx(n, c, i + r, j + q) += y(n, k, i, j) * f(k, c, r, q));
  REQUIRE_THAT(wp::explain_local(dconv), Contains("(col2im)"));
  const auto w_dconv = wp::detail::local_work_of(dconv);
  REQUIRE(w_dconv.npacked == 1);
  CHECK(w_dconv.packed[0].dims == 0b1111101u);
  // a sum over a constant range of a padded operand: A packed over i and the range's K2
  const index_t I = 11, J = 6, K2 = 8;
  wp::array<double, 2> A("A", {I, K2}), B("B", {K2, J}), Cm("Cm", {I, J});
  auto [i2, j2, q2] = wp::indices<3>();
  auto summed =
      wp::map("summed", wp::space(I, J),
              Cm(i2, j2) = wp::sum(wp::range(q2, 0, K2), wp::padded(A, 0.0)(i2, q2) * B(q2, j2)));
  const auto w_sum = wp::detail::local_work_of(summed);
  REQUIRE(w_sum.gemm);
  REQUIRE(w_sum.npacked == 1);
  CHECK(w_sum.packed[0].dims == 0b1u);
  CHECK(w_sum.packed[0].times == double(K2));
  // a plain contraction copies nothing
  auto plain = wp::map("plain", wp::space(I, J, K2), Cm(i2, j2) += A(i2, q2) * B(q2, j2));
  CHECK(wp::detail::local_work_of(plain).npacked == 0);

  // priced: a split of the filters (k) leaves the packed input whole; one of the images
  // (n) divides it
  m.stream = 0;
  const double patch = double(C * R * R);
  const auto t = wp::program_costs(wp::program(conv), 3, m);
  const double ops_k = 2.0 * N * 2 * H * H * patch;  // 5 filters over 3: 2 in the largest
  CHECK(close(map_cost(t, {1, 3, 1, 1, 1, 1, 1}), ops_k / 2e9 + 8.0 * N * H * H * patch / 1e9));
  const double ops_n = 2.0 * 3 * K * H * H * patch;  // 7 images over 3: 3 in the largest
  CHECK(close(map_cost(t, {3, 1, 1, 1, 1, 1, 1}), ops_n / 2e9 + 8.0 * 3 * H * H * patch / 1e9));
  // described and read back: "packed" in its JSON, priced alike
  const std::string json = wp::to_json(wp::describe(wp::program(conv)));
  CHECK_THAT(json, Contains("\"packed\": [{\"index\": [\"i0\", \"i2\", \"i3\", \"i4\", "
                            "\"i5\", \"i6\"], \"times\": 1}]"));
  const auto back = wp::program_costs(wp::parse_program_description(json), 3, m);
  CHECK(close(map_cost(back, {1, 3, 1, 1, 1, 1, 1}), map_cost(t, {1, 3, 1, 1, 1, 1, 1})));
  CHECK(close(map_cost(back, {3, 1, 1, 1, 1, 1, 1}), map_cost(t, {3, 1, 1, 1, 1, 1, 1})));
}

TEST_CASE("optimize: a loop's rows along the executor's row dimension, its slow functions",
          "[unit][optimize]") {
  const index_t n = 37, m = 23, k = 5;
  auto [i, j, q] = wp::indices<3>();
  wp::array<double, 2> X("X", {n, m}), Y("Y", {n, m}), XT("XT", {m, n});
  wp::array<double, 3> Z("Z", {n, m, k});
  // rows along j (X, Y contiguous along it); two slow functions per point
  auto ew = wp::map("ew", wp::space(n, m), Y(i, j) = wp::exp(X(i, j)) * 2.0 + wp::tanh(X(i, j)));
  // rows along j: the write is contiguous along it (and counts double), the read X(j, i) not
  auto tr = wp::map("tr", wp::space(m, n), XT(i, j) = X(j, i) + 1.0);
  // an inner sum of k exps: k slow functions per point
  auto red =
      wp::map("red", wp::space(n, m), Y(i, j) = wp::sum(wp::range(q, 0, k), wp::exp(Z(i, j, q))));
  CHECK(wp::detail::slow_ops_per_point(ew) == 2.0);
  CHECK(wp::detail::slow_ops_per_point(tr) == 0.0);
  CHECK(wp::detail::slow_ops_per_point(red) == double(k));
  CHECK(wp::detail::loop_row_dim(ew) == 1);
  CHECK(wp::detail::loop_row_dim(tr) == 1);
  wp::array<double, 2> A("A", {n, k}), B("B", {k, m}), C("C", {n, m});
  auto gemm = wp::map("gemm", wp::space(n, m, k), C(i, j) += A(i, q) * B(q, j));
  CHECK(wp::detail::loop_row_dim(gemm) == -1);  // GEMMs: no rows

  wp::machine_model model{.flops = 1e9, .alpha = 1e-6, .beta = 1e-9};
  model.row_seconds = 1e-7;
  model.slow_flops = 1e7;
  const double ops = wp::detail::ops_per_point(ew);
  // on 3 ranks split by columns (j): 8 columns in the largest block, so 37 rows of 8
  const auto t3 = wp::program_costs(wp::program(ew), 3, model);
  const double pts = 37.0 * 8;
  CHECK(close(map_cost(t3, {1, 3}), pts * (ops - 2) / 1e9 + pts * 2 / 1e7 + 37 * 1e-7));
  // split by rows (i): 13 rows of 23
  CHECK(close(map_cost(t3, {3, 1}), 13.0 * 23 * ((ops - 2) / 1e9 + 2 / 1e7) + 13 * 1e-7));
  // described and read back: "slow_per_point" and "row_index" in its JSON, priced alike
  const std::string json = wp::to_json(wp::describe(wp::program(ew)));
  CHECK_THAT(json, Contains("\"slow_per_point\": 2, \"row_index\": \"i1\""));
  const auto back = wp::program_costs(wp::parse_program_description(json), 3, model);
  CHECK(close(map_cost(back, {1, 3}), map_cost(t3, {1, 3})));
  CHECK(close(map_cost(back, {3, 1}), map_cost(t3, {3, 1})));
}

TEST_CASE("optimize: a contraction at the GEMM rate, an element-wise map at the bandwidth",
          "[unit][optimize]") {
  constexpr index_t n = 37, m = 23, k = 19;  // uneven: 3 ranks split 37 rows 13, 12, 12
  auto [i, j, q] = wp::indices<3>();
  wp::array<double, 2> A("A", {n, k}), B("B", {k, m}), C("C", {n, m}), X("X", {n, m}),
      Z("Z", {n, m}), Y("Y", {n, m});
  auto mm = wp::map("mm", wp::space(n, m, k), C(i, j) += A(i, q) * B(q, j));
  auto ew = wp::map("ew", wp::space(n, m), Y(i, j) = X(i, j) * 2.0 + Z(i, j));
  REQUIRE_THAT(wp::explain_local(mm), Contains("gemm"));
  REQUIRE_THAT(wp::explain_local(ew), !Contains("gemm"));
  REQUIRE(wp::detail::ops_per_point(mm) == 2.0);

  wp::machine_model model{.flops = 1e9, .alpha = 1e-6, .beta = 1e-9};
  model.gemm = {{1e3, 2e9}, {1e6, 8e9}};
  model.map_seconds = 3e-6;
  const double ops = 2.0 * n * m * k;  // a matmul's multiply-adds
  const double rate = 2e9 + 6e9 * std::log(ops / 1e3) / std::log(1e3);
  SECTION("the contraction: its operations at the interpolated GEMM rate") {
    model.stream = 1e18;  // (its bytes negligible)
    const auto t = wp::program_costs(wp::program(mm), 1, model);
    CHECK(close(map_cost(t, {1, 1, 1}), 3e-6 + ops / rate));
    // described and read back, it is priced the same
    const std::string json = wp::to_json(wp::describe(wp::program(mm)));
    REQUIRE_THAT(json, Contains("\"kernel\": \"gemm\""));
    const auto back = wp::program_costs(wp::parse_program_description(json), 1, model);
    CHECK(close(map_cost(back, {1, 1, 1}), 3e-6 + ops / rate));
    // on 3 ranks split by rows: the busiest block is 13 rows
    const auto t3 = wp::program_costs(wp::program(mm), 3, model);
    const double ops3 = 2.0 * 13 * m * k;
    const double rate3 = 2e9 + 6e9 * std::log(ops3 / 1e3) / std::log(1e3);
    CHECK(close(map_cost(t3, {3, 1, 1}), 3e-6 + ops3 / rate3));
    // its bytes where they take longer: A and B read, C read and written (+=)
    wp::machine_model streaming = model;
    streaming.gemm = {{1, 1e18}};
    streaming.stream = 1e9;
    const auto ts = wp::program_costs(wp::program(mm), 1, streaming);
    CHECK(close(map_cost(ts, {1, 1, 1}), 3e-6 + 8.0 * (n * k + k * m + 2 * n * m) / 1e9));
    model.core_share = 1.5;
    const auto shared = wp::program_costs(wp::program(mm), 1, model);
    CHECK(close(map_cost(shared, {1, 1, 1}), 3e-6 + 1.5 * ops / rate));
  }
  SECTION("the element-wise map: its boxes' bytes at the streaming bandwidth") {
    model.flops = 1e18;  // (its arithmetic negligible)
    model.stream = 4e9;
    const double bytes1 = 3.0 * n * m * 8;  // X, Z read, Y written, each whole
    const auto t = wp::program_costs(wp::program(ew), 1, model);
    CHECK(close(map_cost(t, {1, 1}), 3e-6 + bytes1 / 4e9));
    const auto t3 = wp::program_costs(wp::program(ew), 3, model);
    CHECK(close(map_cost(t3, {3, 1}), 3e-6 + 3.0 * 13 * m * 8 / 4e9));
    CHECK(close(map_cost(t3, {1, 3}), 3e-6 + 3.0 * n * 8 * 8 / 4e9));  // 23 columns: 8, 8, 7
    const std::string json = wp::to_json(wp::describe(wp::program(ew)));
    CHECK_THAT(json, !Contains("kernel"));
  }
}

TEST_CASE("machine model files: read back exactly; errors name the byte", "[unit][optimize]") {
  wp::machine_model m{.flops = 2.5e9, .alpha = 3.25e-7, .beta = 1.0 / 3e9};
  m.gemm = {{8192, 1.9e9}, {524288, 8.7e9 / 3}};
  m.stream = 5.8e9;
  m.map_seconds = 4.2e-6;
  m.core_share = 2;
  m.row_seconds = 1.0 / 7e7;
  m.slow_flops = 4.5e8 / 7;
  m.float_flops = 7.5e9 / 7;
  m.float_gemm = {{8192, 3.1e9 / 3}, {524288, 1.7e10}, {33554432, 2.5e10}};
  m.float_slow_flops = 9.1e8 / 3;
  m.packing = 4.1e9 / 7;
  m.scalar_flops = 1.1e9 / 3;
  const wp::machine_model back = wp::parse_machine_model(wp::to_json(m));
  CHECK(back.flops == m.flops);
  CHECK(back.alpha == m.alpha);
  CHECK(back.beta == m.beta);
  REQUIRE(back.gemm.size() == 2);
  CHECK(back.gemm[1].ops == m.gemm[1].ops);
  CHECK(back.gemm[1].rate == m.gemm[1].rate);
  CHECK(back.stream == m.stream);
  CHECK(back.map_seconds == m.map_seconds);
  CHECK(back.core_share == m.core_share);
  CHECK(back.row_seconds == m.row_seconds);
  CHECK(back.slow_flops == m.slow_flops);
  CHECK(back.float_flops == m.float_flops);
  CHECK(back.float_slow_flops == m.float_slow_flops);
  CHECK(back.packing == m.packing);
  CHECK(back.scalar_flops == m.scalar_flops);
  REQUIRE(back.float_gemm.size() == 3);
  for (std::size_t p = 0; p < 3; ++p) {
    CHECK(back.float_gemm[p].ops == m.float_gemm[p].ops);
    CHECK(back.float_gemm[p].rate == m.float_gemm[p].rate);
  }
  // every key optional: the defaults
  const wp::machine_model d = wp::parse_machine_model("{\"flops\": 3e9}");
  CHECK(d.flops == 3e9);
  CHECK(d.alpha == wp::machine_model{}.alpha);
  CHECK(d.gemm.empty());
  CHECK(d.float_gemm.empty());
  CHECK(d.float_flops == 0);

  auto refused = [](const std::string& text) {
    try {
      (void)wp::parse_machine_model(text, "m.json");
    } catch (const wp::error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused("{\"flops\": 0}"), Contains("m.json: byte 10: \"flops\" is 0"));
  CHECK_THAT(refused("{\"beta\": -1}"), Contains("\"beta\" is -1; give a number >= 0"));
  CHECK_THAT(refused("{\"core_share\": 0.5}"), Contains("give the ranks per core, at least 1"));
  CHECK_THAT(refused("{\"gemm\": [[100, 1e9], [10, 2e9]]}"),
             Contains("byte 22: the points of \"gemm\" are not in ascending operations"));
  CHECK_THAT(refused("{\"gemm\": [[100]]}"), Contains("is [operations, operations per second]"));
  CHECK_THAT(refused("{\"gemm\": [[100, -1]]}"), Contains("needs positive operations and rate"));
  CHECK_THAT(refused("{\"flop\": 1}"), Contains("unknown key \"flop\""));
  CHECK_THAT(refused("{\"row_seconds\": -1e-9}"), Contains("\"row_seconds\" is -1e-09"));
  CHECK_THAT(refused("{\"slow_flops\": -5}"), Contains("\"slow_flops\" is -5"));
  CHECK_THAT(refused("{\"float_flops\": -5}"), Contains("\"float_flops\" is -5"));
  CHECK_THAT(refused("{\"packing\": -2}"), Contains("\"packing\" is -2"));
  CHECK_THAT(refused("{\"scalar_flops\": -3}"), Contains("\"scalar_flops\" is -3"));
  CHECK_THAT(refused("{\"float_slow_flops\": -1}"), Contains("\"float_slow_flops\" is -1"));
  CHECK_THAT(refused("{\"float_gemm\": [[100, 1e9], [10, 2e9]]}"),
             Contains("byte 28: the points of \"float_gemm\" are not in ascending operations"));
  CHECK_THAT(refused("{\"float_gemm\": [[100, 0]]}"),
             Contains("a point of \"float_gemm\" needs positive operations and rate"));
  CHECK_THAT(refused("{\"flops\": 1e9} x"), Contains("after the end of the top-level object"));
  CHECK_THAT(refused("{\"flops\": 1e9, \"flops\": 2e9}"), Contains("appears twice"));

  // a description's kernel: "gemm" or "loop"
  const std::string desc =
      "{\"arrays\": [{\"name\": \"x\", \"shape\": [4]}], \"maps\": [{\"name\": \"m\", "
      "\"indices\": [\"i\"], \"extents\": [4], \"kernel\": \"blas\", \"accesses\": "
      "[{\"array\": \"x\", \"index\": [\"i\"], \"mode\": \"=\"}]}]}";
  try {
    (void)wp::parse_program_description(desc, "d.json");
    FAIL("accepted");
  } catch (const wp::error& e) {
    CHECK_THAT(std::string(e.what()),
               Contains("d.json: byte 109: the kernel of map 0 is \"blas\""));
  }
  // its row index: one of its indices; its slow functions: >= 0
  auto refused_desc = [](const std::string& extra) {
    try {
      (void)wp::parse_program_description(
          "{\"arrays\": [{\"name\": \"x\", \"shape\": [4]}], \"maps\": [{\"name\": \"m\", "
          "\"indices\": [\"i\"], \"extents\": [4], " +
              extra +
              ", \"accesses\": [{\"array\": \"x\", \"index\": [\"i\"], \"mode\": \"=\"}]}]}",
          "d.json");
    } catch (const wp::error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused_desc("\"row_index\": \"j\""),
             Contains("the row index of map 0 is \"j\", not one of its indices"));
  CHECK_THAT(refused_desc("\"slow_per_point\": -1"), Contains("must be finite and >= 0"));
  CHECK(refused_desc("\"row_index\": \"i\", \"slow_per_point\": 1") == "accepted");
  // its packed copies: over its indices, times > 0
  CHECK_THAT(refused_desc("\"packed\": [{\"index\": [\"k\"], \"times\": 1}]"),
             Contains("a packed copy of map 0 names \"k\", not one of its indices"));
  CHECK_THAT(refused_desc("\"packed\": [{\"index\": [\"i\"], \"times\": 0}]"),
             Contains("the times of map 0, packed copy 0 must be finite and > 0"));
  CHECK(refused_desc("\"packed\": [{\"index\": [\"i\"], \"times\": 9}]") == "accepted");
  CHECK_THAT(refused_desc("\"scalar_rows\": 1"), Contains("d.json: byte"));
  CHECK(refused_desc("\"scalar_rows\": true") == "accepted");
}
