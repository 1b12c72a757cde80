/// \file test_describe.cpp
/// wp::describe (optimize/describe.hpp) and wp::to_json (io/program_writer.hpp): a typed
/// program as data. For each program — inner sums with affine bounds (a matmul, a strided
/// convolution, a triangular nest whose inner bounds use the outer range), a convolution's
/// training step from wp::backward (rank-0 loss, maps over wp::space()), a 3-map softmax, CSR
/// SpMV (bounds read from data, an indirect subscript), a histogram (a scatter's left side), a
/// stencil whose space starts above 0, arrays filled by init() — the description prices as the
/// typed program entry for entry at 1 to 6 ranks under two machine models, and its JSON reads
/// back to the same text. Also: what the JSON says (types, init, counted operations, ranges),
/// the cost model's counted trips and its free init() arrays, escaped names, and the errors
/// (two maps or arrays of one name, a map's own error first, a type that does not match its
/// bytes, malformed ranges in JSON). wp::repeat_blocks: a residual chain written with three
/// blocks, repeated to 2, 3 and 4, is the description of the chain written with 2, 3 and 4
/// (JSON text equal but for where the maps that run nowhere stand; the 4 optimised as typed),
/// and its errors.

#include "describe_checks.hpp"

TEST_CASE("describe: inner sums price as typed, their ranges in the JSON", "[describe]") {
  const index_t M = 13, N = 10, K = 7, T = 11, R = 3, F = 5;
  wp::array<float, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  wp::array<double, 1> x("x", {2 * T + R}), y("y", {T}), tri("tri", {T});
  wp::array<double, 2> w("w", {F, R}), z("z", {F, T}), U("U", {T, T + 2});
  w.init([](std::array<std::int64_t, 2> g) { return double(g[0] - g[1]); });
  auto [i, j, k, l] = wp::indices<4>();
  auto mm =
      wp::map("mm", wp::space(M, N), C(i, j) = wp::sum(wp::range(k, 0, K), A(i, k) * B(k, j)));
  auto conv = wp::map("conv", wp::space(F, T),
                      z(i, j) = wp::sum(wp::range(k, 0, R), w(i, k) * x(2 * j + k)));
  // a triangle: the inner range's bounds use the outer range's index
  auto nest = wp::map(
      "nest", wp::space(T),
      tri(i) = wp::sum(wp::range(j, 0, i + 1), wp::sum(wp::range(k, j, j + 2), U(i, k) * x(j))));
  auto use = wp::map("use", wp::space(T), y(i) = tri(i) + z(1, i));
  const auto prog = wp::program(mm, conv, nest, use);
  const wp::program_description d = require_described(prog);

  REQUIRE(d.arrays.size() == 9);
  for (const auto& a : d.arrays) {
    INFO(a.name);
    CHECK(a.init == (a.name == "w"));
    CHECK(a.type == (a.name == "A" || a.name == "B" || a.name == "C" ? "float32" : "float64"));
  }
  const auto& ak = access_of(d, "mm", 0);  // A(i, k) inside sum over k in [0, K)
  REQUIRE(ak.ranges.size() == 1);
  CHECK(ak.text == "A(i0, i2)");
  CHECK(wp::detail::subscript_text(ak.ranges[0].to, {"i0", "i1"}) == "7");
  CHECK(access_of(d, "conv", 1).text == "x(2*i1 + i2)");
  const auto& uk = access_of(d, "nest", 0);  // U(i, k): two ranges, the inner from j to j + 2
  REQUIRE(uk.ranges.size() == 2);
  CHECK(wp::detail::subscript_text(uk.ranges[0].to, {"i0"}) == "i0 + 1");
  CHECK(wp::detail::subscript_text(uk.ranges[1].from, {"i0", "i1"}) == "i1");
  CHECK(wp::detail::subscript_text(uk.ranges[1].to, {"i0", "i1"}) == "i1 + 2");
  CHECK(uk.text == "U(i0, i2)");
  // counted operations: per trip the body and one add, times the trips at the space's centre
  CHECK(d.maps[0].ops_per_point == 2 * K);  // A * B and the add, K trips
  CHECK(d.maps[1].ops_per_point == 2 * R);  // w * x and the add, R trips
  CHECK(d.maps[2].ops_per_point == 6 * 5);  // i = 5: 6 trips of (add + 2 trips of 2)
  CHECK(d.maps[3].ops_per_point == 1);      // tri + z
  const std::string json = wp::to_json(d);
  CHECK(json.find(R"({"name": "w", "shape": [5, 3], "type": "float64", "init": true})") !=
        std::string::npos);
  CHECK(json.find(R"("ranges": [{"index": "i1", "from": "0", "to": "i0 + 1"}, )"
                  R"({"index": "i2", "from": "i1", "to": "i1 + 2"}], "index": ["i0", "i2"])") !=
        std::string::npos);
}

TEST_CASE("describe: a training step from wp::backward prices as typed", "[describe]") {
  testprog::conv_train_step prog(/*C=*/3, /*Tn=*/14, /*F=*/4, /*R=*/3);
  auto step = prog.step(0.1);
  const wp::program_description d = require_described(step);
  const wp::array_description* loss = d.find_array("L");
  REQUIRE(loss);
  CHECK(loss->shape.empty());
  bool zero_dim = false;
  for (const auto& m : d.maps) zero_dim = zero_dim || (m.name == "l0" && m.extents.empty());
  CHECK(zero_dim);
}

TEST_CASE("describe: softmax, SpMV, a histogram and a shifted stencil price as typed",
          "[describe]") {
  auto [i, j, k] = wp::indices<3>();
  SECTION("a 3-map softmax (max_into, a combine, a broadcast read)") {
    const index_t R = 7, L = 11;
    wp::array<double, 2> s("s", {R, L}), p("p", {R, L});
    wp::array<double, 1> mx("mx", {R}), den("den", {R});
    const auto prog =
        wp::program(wp::map("max", wp::space(R, L), wp::max_into(mx(i), s(i, j))),
                    wp::map("sum", wp::space(R, L), den(i) += wp::exp(s(i, j) - mx(i))),
                    wp::map("norm", wp::space(R, L), p(i, j) = wp::exp(s(i, j) - mx(i)) / den(i)));
    const auto d = require_described(prog);
    CHECK(access_of(d, "max", 1).mode == wp::access_mode::max);
    CHECK(access_of(d, "sum", 2).mode == wp::access_mode::add);
  }
  SECTION("CSR SpMV: bounds read from data, an indirect subscript") {
    const index_t rows = 9, cols = 8, nnz = 20;
    wp::array<std::int64_t, 1> row("row", {rows + 1}), col("col", {nnz});
    wp::array<double, 1> val("val", {nnz}), x("x", {cols}), y("y", {rows});
    const auto prog =
        wp::program(wp::map("spmv", wp::space(rows),
                            y(i) = wp::sum(wp::range(j, row(i), row(i + 1)), val(j) * x(col(j)))));
    const auto d = require_described(prog);
    CHECK(d.find_array("row")->type == "int64");
    bool data = false, whole = false;
    for (const auto& ac : d.maps[0].accesses) {
      if (ac.array == "x") {
        REQUIRE(ac.ranges.size() == 1);
        data = ac.ranges[0].data_dependent;
        whole = ac.index[0].whole_axis;  // x(col(jj)): the plans hold the whole axis
      }
    }
    CHECK(data);
    CHECK(whole);
    CHECK(wp::to_json(d).find(R"("ranges": [{"index": "i1", "data_dependent": true}])") !=
          std::string::npos);
  }
  SECTION("a histogram: the reads of a scatter's left side, then its write") {
    const index_t n = 10, bins = 4;
    wp::array<std::int32_t, 1> idx("idx", {n});
    wp::array<float, 1> x("x", {n}), hist("hist", {bins});
    const auto prog = wp::program(wp::map("hist", wp::space(n), hist(idx(i)) += x(i) * 2.0f));
    const auto d = require_described(prog);
    REQUIRE(d.maps[0].accesses.size() == 3);
    CHECK(d.maps[0].accesses[0].array == "x");
    CHECK(d.maps[0].accesses[1].array == "idx");
    CHECK(d.maps[0].accesses[2].text == "hist(*)");
    CHECK(d.find_array("idx")->type == "int32");
  }
  SECTION("a stencil whose space starts at 1: shifted to 0, its subscripts alike") {
    const index_t n = 9, m = 7;
    wp::array<double, 2> u("u", {n, m}), v("v", {n, m});
    const auto prog = wp::program(
        wp::map("step", wp::space({1, n - 1}, {1, m - 1}),
                v(i, j) = 0.25 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))),
        wp::map("copy", wp::space({1, n - 1}, {1, m - 1}), u(i, j) = v(i, j)));
    const auto d = require_described(prog);
    CHECK(d.maps[0].extents == std::vector<index_t>{n - 2, m - 2});
    CHECK(access_of(d, "step", 0).text ==
          "u(i0, i1 + 1)");  // u(i - 1, j) at i = i0 + 1, j = i1 + 1
    CHECK(access_of(d, "step", 4).text == "v(i0 + 1, i1 + 1)");
  }
}
