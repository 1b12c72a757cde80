// wp::describe's slices of alike maps, trip counts, refusals, escaped names and JSON ranges,
// and networks described by parts: wp::repeat_blocks (blocks repeated N times are the network
// written with N) and wp::join_pieces / join_descriptions (pieces joined are the network
// written whole), and their errors. tests/unit/test_describe.cpp has the typed forms priced.

#include "describe_checks.hpp"

TEST_CASE("describe: maps alike but for the slices they use price once, as typed", "[describe]") {
  // maps that differ only in the constant positions of their accesses (a sequence's steps)
  // share one solution in the description's pricing, their boxes moved
  // (priced_map::positions); the tables stay the typed program's, where no map is shared
  auto [i, j, k] = wp::indices<3>();
  SECTION("writes, two-position reads, split sums combined at positions, overlapping reads") {
    const index_t T = 7, B = 5, H = 3, K = 4;
    wp::array<double, 2> x("x", {B, H}), u("u", {B, K}), v("v", {K, H});
    wp::array<double, 3> y("y", {T, B, H}), acc("acc", {T, B, H});
    wp::array<double, 2> z("z", {B, H});
    std::deque<wp::array<double, 2>> out;
    auto write = [&](index_t t) {
      return wp::map("w" + std::to_string(t), wp::space(B, H), y(t, i, j) = x(i, j) * x(i, j));
    };
    auto reduce = [&](index_t t) {  // split over k: partial sums at slice t
      return wp::map("r" + std::to_string(t), wp::space(B, H, K),
                     acc(t, i, j) += u(i, k) * v(k, j));
    };
    auto stencil = [&](index_t t) {  // two positions: the box spans [t, t + 3)
      auto& o = out.emplace_back("o" + std::to_string(t), std::array<index_t, 2>{B, H});
      return wp::map("s" + std::to_string(t), wp::space(B, H),
                     o(i, j) = y(t, i, j) + y(t + 2, i, j) + acc(t + 1, i, j));
    };
    const auto prog =
        wp::program(write(0), write(1), write(2), write(3), write(4), reduce(1), reduce(2),
                    reduce(3), stencil(0), stencil(1), stencil(2),
                    wp::map("tail", wp::space(B, H), z(i, j) = y(4, i, j) + acc(2, i, j)));
    const wp::program_description d = require_described(prog);
    const auto views = wp::detail::priced_views(d);
    auto view = [&](const std::string& n) -> const wp::detail::priced_map& {
      for (const auto& pm : views)
        if (pm.name == n) return pm;
      FAIL("no map " << n);
      throw 0;
    };
    CHECK(view("w1").shape_key == view("w3").shape_key);
    CHECK(view("r1").shape_key == view("r3").shape_key);
    CHECK(view("s0").shape_key == view("s2").shape_key);
    CHECK(view("s0").positions != view("s2").positions);
    CHECK(view("tail").shape_key != view("s0").shape_key);
  }
  SECTION("an LSTM's training step: every step's maps alike") {
    constexpr index_t S = 3;
    const index_t B = 3, I = 5, H = 2;
    wp::array<double, 3> x("x", {B, S, I});
    auto ls = wp::nn::lstm<S>("lstm", x, H);
    wp::array<double, 0> L("L", {});
    auto loss = wp::map("loss", wp::space(B, S, H), L() += ls.out()(i, j, k) * ls.out()(i, j, k));
    auto fwd = wp::program(ls.program, loss);
    auto bwd = wp::backward(fwd, L, std::get<0>(ls.params), std::get<1>(ls.params),
                            std::get<2>(ls.params));
    const wp::program_description d = require_described(wp::program(fwd, bwd));
    const auto views = wp::detail::priced_views(d);
    std::vector<std::string> keys;
    for (const auto& pm : views)
      for (int t : {2, 3})
        if (pm.name == "lstm.t" + std::to_string(t) + ".cell") keys.push_back(pm.shape_key);
    REQUIRE(keys.size() == 2);
    CHECK(keys[0] == keys[1]);
  }
}

TEST_CASE("describe: the cost model counts inner trips and prices init() arrays as generated",
          "[describe]") {
  const index_t n = 12;
  wp::array<double, 1> x("x", {n}), y("y", {n}), w("w", {n});
  wp::array<std::int64_t, 1> row("row", {n + 1}), col("col", {n});
  auto [i, j] = wp::indices<2>();
  // bounds read from data: one trip (the body and the add)
  CHECK(wp::detail::ops_per_point(
            wp::map("spmv", wp::space(n),
                    y(i) = wp::sum(wp::range(j, row(i), row(i + 1)), x(col(j)) * 2.0))) == 2);
  // a range empty over part of the space still counts at least one operation per point
  CHECK(wp::detail::ops_per_point(
            wp::map("empty", wp::space(n), y(i) = wp::sum(wp::range(j, 0, 0), x(j)))) == 1);
  // y = x * w with w generated in place costs what y = x * 2 costs to bring in: x's scatter
  w.init([](std::array<std::int64_t, 1> g) { return double(g[0]); });
  const auto with_w = wp::program(wp::map("m", wp::space(n), y(i) = x(i) * w(i)));
  const auto without = wp::program(wp::map("m", wp::space(n), y(i) = x(i) * 2.0));
  for (int P = 2; P <= 4; ++P) {
    const auto a = wp::program_costs(with_w, P), b = wp::program_costs(without, P);
    REQUIRE(a.graph.edge_source(0) == 0);  // root (inputs) -> m
    REQUIRE(b.graph.edge_source(0) == 0);
    for (std::size_t c = 0; c < a.graph.num_configs(1); ++c)
      CHECK(a.graph.edge_cost(0, 0, c) == b.graph.edge_cost(0, 0, c));
  }
}

TEST_CASE("describe: what cannot be described is an error", "[describe]") {
  wp::array<double, 1> a("x", {4}), b("x", {4}), c("c", {4});
  auto [i] = wp::indices<1>();
  const auto prog = wp::program(wp::map("copy", wp::space(4), b(i) = a(i)));
  REQUIRE_THROWS_AS(wp::describe(prog), wp::plan_error);
  CHECK_THAT(what_of([&] { wp::describe(prog); }),
             Catch::Contains("wp::describe: two arrays are called 'x'"));
  auto m = wp::map("m", wp::space(4), c(i) = a(i));
  CHECK_THAT(what_of([&] { wp::describe(wp::program(m, m)); }),
             Catch::Contains("wp::describe: two maps are called 'm' (one map used twice"));
  CHECK_THAT(what_of([&] { wp::describe(wp::map("bad", wp::space(4), c(i) = a(i + 1))); }),
             Catch::Contains("map 'bad': access x(i0 + 1) reads axis 0 of 'x' at 4"));
  // a description the reader would read differently is refused before it is written
  wp::program_description d = wp::describe(m);
  d.arrays[0].elem_size = 8;
  d.arrays[0].type = "float32";
  CHECK_THAT(what_of([&] { wp::to_json(d); }),
             Catch::Contains("array 'x' has type float32 but elements of 8 bytes"));
  d.arrays[0].type = "float16";
  CHECK_THAT(what_of([&] { wp::to_json(d); }), Catch::Contains("has type 'float16'"));
  d = wp::describe(m);
  d.maps[0].ops_per_point = std::numeric_limits<double>::infinity();
  CHECK_THAT(what_of([&] { wp::to_json(d); }),
             Catch::Contains("operations per point must be finite and >= 0"));
}

TEST_CASE("describe: names are escaped in JSON", "[describe]") {
  CHECK(wp::detail::json_escape(std::string("a\"b\\c\nd\te\x01")) == "a\\\"b\\\\c\\nd\\te\\u0001");
  wp::array<double, 1> a("x \"in\"\n", {4}), c("c", {4});
  auto [i] = wp::indices<1>();
  const auto d = wp::describe(wp::map("m\t1", wp::space(4), c(i) = a(i)));
  const auto back = wp::parse_program_description(wp::to_json(d));
  CHECK(back.arrays[0].name == "x \"in\"\n");
  CHECK(back.maps[0].name == "m\t1");
}

TEST_CASE("describe: inner ranges in JSON are checked, at their offsets", "[describe]") {
  auto bad = [](const std::string& access) {
    return R"({"arrays": [{"name": "x", "shape": [10]}, {"name": "y", "shape": [8]}],
 "maps": [{"name": "m", "indices": ["i"], "extents": [8], "accesses": [)" +
           access + R"(, {"array": "y", "index": ["i"], "mode": "="}]}]})";
  };
  auto message = [&](const std::string& access) {
    const std::string m = what_of([&] { wp::parse_program_description(bad(access), "p.json"); });
    return m.empty() ? std::string("no error") : m;
  };
  // good: x(i + r) over r in [0, 3) stays in [0, 10)
  CHECK(
      message(
          R"({"array": "x", "ranges": [{"index": "r", "from": 0, "to": "3"}], "index": ["i + r"]})") ==
      "no error");
  CHECK_THAT(
      message(
          R"({"array": "x", "ranges": [{"index": "r", "from": 0, "to": "4"}], "index": ["i + r"]})"),
      Catch::Contains("p.json: byte") &&
          Catch::Contains("access x(i + r) reads axis 0 of 'x' at 10, outside [0, 10)"));
  CHECK_THAT(message(R"({"array": "x", "ranges": [{"index": "r", "from": 0}], "index": ["r"]})"),
             Catch::Contains("give \"from\" and \"to\""));
  CHECK_THAT(
      message(
          R"({"array": "x", "ranges": [{"index": "r", "from": 0, "to": 2, "data_dependent": true}], "index": ["r"]})"),
      Catch::Contains("give \"from\" and \"to\""));
  CHECK_THAT(
      message(
          R"({"array": "x", "ranges": [{"index": "r", "from": "*", "to": 2}], "index": ["r"]})"),
      Catch::Contains("a bound is '*'"));
  CHECK_THAT(
      message(
          R"({"array": "x", "ranges": [{"index": "r", "from": "r", "to": 2}], "index": ["r"]})"),
      Catch::Contains("'r' is not an index of the map or of an inner range outside it"));
  CHECK_THAT(
      message(R"({"array": "x", "ranges": [{"index": "i", "from": 0, "to": 2}], "index": ["i"]})"),
      Catch::Contains("the inner range's index 'i' is an index of the map"));
  CHECK_THAT(
      message(R"({"array": "x", "ranges": [{"index": "r", "form": 0, "to": 2}], "index": ["r"]})"),
      Catch::Contains("unknown key \"form\""));
  CHECK_THAT(
      message(
          R"({"array": "x", "ranges": [{"index": "r", "data_dependent": "yes"}], "index": ["r"]})"),
      Catch::Contains("expected true or false"));
  CHECK_THAT(message(R"({"array": "x", "index": ["r"]})"),
             Catch::Contains("'r' is not an index of the map or of an inner range outside it"));
  // a range around a write
  const std::string write = R"({"arrays": [{"name": "y", "shape": [8]}],
 "maps": [{"name": "m", "indices": ["i"], "extents": [8], "accesses": [
   {"array": "y", "ranges": [{"index": "r", "from": 0, "to": 1}], "index": ["i + r"], "mode": "+="}]}]})";
  REQUIRE_THROWS_AS(wp::parse_program_description(write, "w.json"), wp::shape_error);
  CHECK_THAT(what_of([&] { wp::parse_program_description(write, "w.json"); }),
             Catch::Contains("a write has no inner ranges"));
  const std::string init = R"({"arrays": [{"name": "y", "shape": [8], "init": 1}], "maps": []})";
  CHECK_THAT(what_of([&] { wp::parse_program_description(init, "i.json"); }),
             Catch::Contains("expected true or false as \"init\" of array 0"));
}

namespace {

/// A residual chain of N blocks (block k: t = h W_k, an inner sum; h_k = tanh(t) + h), a
/// squared loss on the last block, wp::backward for every W_k, SGD: a network whose blocks
/// are named blk1 .. blkN, for wp::repeat_blocks. This object must outlive its steps.
template <std::size_t N>
struct residual_chain {
  index_t B, F;
  wp::array<double, 2> x;
  std::deque<wp::array<double, 2>> W, dW, t, h;  // in place: the programs point at them
  wp::array<double, 0> L;

  residual_chain(index_t b, index_t f) : B(b), F(f), x("x", {b, f}), L("L", {}) {
    using shape = wp::array<double, 2>::shape_type;
    for (std::size_t k = 1; k <= N; ++k) {
      const std::string blk = "blk" + std::to_string(k);
      W.emplace_back(blk + ".W", shape{F, F});
      dW.emplace_back("d" + blk + ".W", shape{F, F});
      t.emplace_back(blk + ".t", shape{B, F});
      h.emplace_back(blk + ".h", shape{B, F});
    }
  }
  template <std::size_t K>
  auto block() {
    auto [b, f, g] = wp::indices<3>();
    wp::array<double, 2>& in = K == 0 ? x : h[K - 1];
    const std::string blk = "blk" + std::to_string(K + 1);
    return wp::program(
        wp::map(blk + ".fc", wp::space(B, F),
                t[K](b, f) = wp::sum(wp::range(g, 0, F), in(b, g) * W[K](g, f))),
        wp::map(blk + ".res", wp::space(B, F), h[K](b, f) = wp::tanh(t[K](b, f)) + in(b, f)));
  }
  template <std::size_t... K>
  auto step(double lr, std::index_sequence<K...>) {
    auto [b, f] = wp::indices<2>();
    auto fwd =
        wp::program(block<K>()..., wp::map("l0", wp::space(), L() = 0.0),
                    wp::map("loss", wp::space(B, F), L() += 0.5 * h[N - 1](b, f) * h[N - 1](b, f)));
    return wp::program(fwd, wp::backward(fwd, L, wp::wrt(W[K], dW[K])...),
                       wp::map("sgd.blk" + std::to_string(K + 1) + ".W", wp::space(F, F),
                               W[K](b, f) = W[K](b, f) - lr * dW[K](b, f))...);
  }
  auto step(double lr) { return step(lr, std::make_index_sequence<N>{}); }
};

}  // namespace

/// The description with only the maps that access something, and apart the names of those
/// that do not (wp::backward's zeroing maps it pruned: wp::repeat_blocks keeps them with
/// their block, but not where the typed program has them among themselves).
std::pair<std::string, std::vector<std::string>> running_and_idle(wp::program_description d) {
  std::vector<std::string> idle;
  std::erase_if(d.maps, [&](const wp::map_description& m) {
    return m.accesses.empty() ? (idle.push_back(m.name), true) : false;
  });
  std::sort(idle.begin(), idle.end());
  return {wp::to_json(d), idle};
}

TEST_CASE("repeat_blocks: three blocks repeated are the network written with N", "[describe]") {
  residual_chain<2> c2(5, 3);
  residual_chain<3> c3(5, 3);
  residual_chain<4> c4(5, 3);
  const auto s2 = c2.step(0.1);
  const auto s3 = c3.step(0.1);
  const auto s4 = c4.step(0.1);
  const wp::program_description d3 = wp::describe(s3);
  // the middle block's forward, backward (with its zeroing) and update maps, copied in place
  std::size_t middle = 0;
  for (const auto& m : d3.maps) middle += m.name.find("blk2") != std::string::npos;
  REQUIRE(middle >= 5);  // blk2.fc, blk2.res, dblk2.fc, dblk2.res, sgd.blk2.W (and zeroing)
  CHECK(wp::to_json(wp::repeat_blocks(d3, "blk", 3)) == wp::to_json(d3));
  const wp::program_description d4 = wp::repeat_blocks(d3, "blk", 4);
  const wp::program_description d2 = wp::repeat_blocks(d3, "blk", 2);
  for (const auto& [n, typed] :
       {std::pair{d4, wp::describe(s4)}, std::pair{d2, wp::describe(s2)}}) {
    const auto a = running_and_idle(n), b = running_and_idle(typed);
    CHECK(a.first == b.first);
    CHECK(a.second == b.second);
  }
  // priced alike: the typed network of four blocks' optimum is the repeated one's, and each
  // one's schedule costs the same in the other's pricing
  const wp::machine_model mm{};
  for (int P = 2; P <= 4; ++P) {
    const wp::optimized a = wp::optimize(s4, P, mm), b = wp::optimize(d4, P, mm);
    CHECK(a.cost == Approx(b.cost).epsilon(1e-12));
    CHECK(wp::modelled_cost(d4, a.schedule, P, mm) == Approx(a.cost).epsilon(1e-12));
    CHECK(wp::modelled_cost(s4, b.schedule, P, mm) == Approx(b.cost).epsilon(1e-12));
  }
  // the description's alike maps (the four blocks': priced_map::shape_key) are solved once
  // and their combines priced once; the tables are still the typed step's, entry for entry
  const wp::program_description typed4 = wp::describe(s4);
  for (int P : {2, 3, 4, 6}) {
    INFO(P << " ranks");
    require_same_tables(wp::program_costs(s4, P, mm), wp::program_costs(typed4, P, mm));
  }
  // a deep one: every name where it belongs, and 37 more blocks' maps
  const wp::program_description d40 = wp::repeat_blocks(d3, "blk", 40);
  CHECK(d40.maps.size() == d3.maps.size() + 37 * middle);
  CHECK(d40.find_array("blk40.h"));
  CHECK(d40.find_array("dblk39.h"));
  CHECK_FALSE(d40.find_array("blk41.h"));
  bool reads_last = false;  // the loss reads the last block
  for (const auto& m : d40.maps)
    if (m.name == "loss")
      for (const auto& a : m.accesses) reads_last = reads_last || a.array == "blk40.h";
  CHECK(reads_last);
}

TEST_CASE("repeat_blocks: blocks that are not as described are errors", "[describe]") {
  residual_chain<3> c3(4, 2);
  residual_chain<4> c4(4, 2);
  const wp::program_description d3 = wp::describe(c3.step(0.1)), d4 = wp::describe(c4.step(0.1));
  auto message = [](const wp::program_description& d, const std::string& stem, long n) {
    const std::string m = what_of([&] { wp::repeat_blocks(d, stem, n); });
    return m.empty() ? std::string("no error") : m;
  };
  CHECK(message(d3, "blk", 7) == "no error");
  CHECK_THAT(message(d4, "blk", 6),
             Catch::Contains("wp::repeat_blocks('blk', 6): 'blk4.fc' names block blk4; describe "
                             "the network with three blocks, blk1, blk2 and blk3"));
  CHECK_THAT(message(d3, "enc", 6),
             Catch::Contains("no map's name carries 'enc1'; describe the network with three"));
  CHECK_THAT(message(d3, "blk", 1), Catch::Contains("give from 2 to 100000 blocks"));
  CHECK_THAT(message(d3, "blk2", 6), Catch::Contains("give a stem that does not end in a digit"));
  CHECK_THAT(message(d3, "", 6), Catch::Contains("give a stem that does not end in a digit"));
  wp::program_description two = d3;  // a map whose name carries two blocks
  for (auto& m : two.maps)
    if (m.name == "blk2.res") m.name = "blk2.res.blk1";
  CHECK_THAT(message(two, "blk", 6),
             Catch::Contains("'blk2.res.blk1' names two blocks; a map or array belongs to one"));
  wp::program_description outside = d3;  // the loss reads the middle block
  for (auto& m : outside.maps)
    if (m.name == "loss")
      for (auto& a : m.accesses)
        if (a.array == "blk3.h") a.array = "blk2.h";
  CHECK_THAT(message(outside, "blk", 6),
             Catch::Contains("'loss', outside the blocks, uses 'blk2.h' of the middle block; "
                             "only the first and last blocks' arrays can be used"));
  wp::program_description invalid = d3;  // the description's own check comes first
  invalid.maps[0].extents[0] = -1;
  CHECK_THAT(message(invalid, "blk", 6), Catch::Contains("has a negative extent -1"));
}

namespace {

/// residual_chain's step written piece by piece, for wp::join_pieces: block k (1 .. N) over
/// its input ("x" or "blk<k-1>.h"), seeded by the gradient of its output; the loss over the
/// last block's output. Each piece's programs are described and dropped.
wp::step_piece chain_block_piece(index_t B, index_t F, int k, double lr) {
  using shape = wp::array<double, 2>::shape_type;
  auto [b, f, g] = wp::indices<3>();
  const std::string blk = "blk" + std::to_string(k);
  const std::string in_name = k == 1 ? "x" : "blk" + std::to_string(k - 1) + ".h";
  wp::array<double, 2> in(in_name, shape{B, F}), din("d" + in_name, shape{B, F});
  wp::array<double, 2> W(blk + ".W", shape{F, F}), dW("d" + blk + ".W", shape{F, F});
  wp::array<double, 2> t(blk + ".t", shape{B, F}), h(blk + ".h", shape{B, F});
  wp::array<double, 2> dh("given.d" + blk + ".h", shape{B, F});
  auto fwd =
      wp::program(wp::map(blk + ".fc", wp::space(B, F),
                          t(b, f) = wp::sum(wp::range(g, 0, F), in(b, g) * W(g, f))),
                  wp::map(blk + ".res", wp::space(B, F), h(b, f) = wp::tanh(t(b, f)) + in(b, f)));
  auto upd = wp::map("sgd." + blk + ".W", wp::space(F, F), W(b, f) = W(b, f) - lr * dW(b, f));
  if (k == 1)  // the data: no gradient
    return {wp::describe(fwd), wp::describe(wp::backward(fwd, wp::seed(h, dh), wp::wrt(W, dW))),
            wp::describe(wp::program(upd))};
  return {wp::describe(fwd),
          wp::describe(wp::backward(fwd, wp::seed(h, dh), wp::wrt(in, din), wp::wrt(W, dW))),
          wp::describe(wp::program(upd))};
}

wp::step_piece chain_loss_piece(index_t B, index_t F, int N) {
  auto [b, f] = wp::indices<2>();
  const std::string in_name = "blk" + std::to_string(N) + ".h";
  wp::array<double, 2> in(in_name, {B, F}), din("d" + in_name, {B, F});
  wp::array<double, 0> L("L", {});
  auto fwd = wp::program(wp::map("l0", wp::space(), L() = 0.0),
                         wp::map("loss", wp::space(B, F), L() += 0.5 * in(b, f) * in(b, f)));
  return {wp::describe(fwd), wp::describe(wp::backward(fwd, L, wp::wrt(in, din)))};
}

/// The description's maps that access something as JSON texts, sorted: the same maps,
/// wherever they stand.
std::vector<std::string> sorted_running_maps(const wp::program_description& d) {
  std::vector<std::string> maps;
  for (const auto& m : d.maps) {
    if (m.accesses.empty()) continue;
    wp::program_description one;  // the map and its arrays
    one.maps.push_back(m);
    for (const auto& a : m.accesses)
      if (!one.find_array(a.array)) one.arrays.push_back(*d.find_array(a.array));
    maps.push_back(wp::to_json(one));
  }
  std::sort(maps.begin(), maps.end());
  return maps;
}

/// `s` on the maps of `d`: its grid where it names one, every dimension whole otherwise
/// (the maps that run nowhere, which one side has and the other not).
wp::schedule schedule_for(const wp::program_description& d, const wp::schedule& s) {
  wp::schedule out;
  for (const auto& m : d.maps)
    if (const wp::grid_shape* g = s.find(m.name))
      out.set(m.name, *g);
    else
      out.set(m.name, wp::grid_shape(std::vector<index_t>(m.extents.size(), 1)));
  return out;
}

}  // namespace

TEST_CASE("join_pieces: a network described piece by piece is the network written whole",
          "[describe]") {
  const index_t B = 5, F = 3;
  residual_chain<3> c3(B, F);
  const auto s3 = c3.step(0.1);
  const wp::program_description typed = wp::describe(s3);
  const wp::program_description joined =
      wp::join_pieces({chain_block_piece(B, F, 1, 0.1), chain_block_piece(B, F, 2, 0.1),
                       chain_block_piece(B, F, 3, 0.1), chain_loss_piece(B, F, 3)});
  // the same maps that run and the same arrays; the backward's zeroing maps stand at each
  // piece's start, those that run nowhere are left out
  CHECK(sorted_running_maps(joined) == sorted_running_maps(typed));
  for (const auto& m : joined.maps) CHECK_FALSE(m.accesses.empty());
  REQUIRE(joined.arrays.size() == typed.arrays.size());
  for (const auto& a : typed.arrays) {
    INFO(a.name);
    const wp::array_description* j = joined.find_array(a.name);
    REQUIRE(j);
    CHECK(j->shape == a.shape);
    CHECK(j->elem_size == a.elem_size);
  }
  CHECK_FALSE(joined.find_array("given.dblk1.h"));  // the seeds and their copies are gone
  for (const auto& m : joined.maps) CHECK(m.name.rfind("seed.dblk", 0) == std::string::npos);
  // priced alike: the same optimum, each one's schedule costing the same in the other's pricing
  const wp::machine_model mm{};
  for (int P = 1; P <= 4; ++P) {
    INFO(P << " ranks");
    const wp::optimized a = wp::optimize(s3, P, mm), b = wp::optimize(joined, P, mm);
    CHECK(a.cost == Approx(b.cost).epsilon(1e-12));
    CHECK(wp::modelled_cost(joined, schedule_for(joined, a.schedule), P, mm) ==
          Approx(a.cost).epsilon(1e-12));
    CHECK(wp::modelled_cost(s3, schedule_for(typed, b.schedule), P, mm) ==
          Approx(b.cost).epsilon(1e-12));
  }
}

TEST_CASE("join_pieces and join_descriptions: pieces that do not join are errors", "[describe]") {
  const index_t B = 4, F = 2;
  auto message = [](const auto& f) {
    const std::string m = what_of(f);
    return m.empty() ? std::string("no error") : m;
  };
  const wp::step_piece p1 = chain_block_piece(B, F, 1, 0.1), p2 = chain_block_piece(B, F, 2, 0.1);
  const wp::step_piece loss2 = chain_loss_piece(B, F, 2);
  CHECK(message([&] { wp::join_pieces({p1, p2, loss2}); }) == "no error");
  CHECK_THAT(message([&] { wp::join_pieces({}); }), Catch::Contains("give at least one piece"));
  // the loss piece after block 1 reads blk2.h: block 1's backward starts from dblk1.h, which the
  // loss piece does not write
  CHECK_THAT(message([&] {
               wp::join_pieces({p1, loss2});
             }),
             Catch::Contains("wp::join_pieces: piece 1's backward does not write 'dblk1.h', the "
                             "gradient piece 0's backward starts from; give it wp::wrt(x, dx)"));
  // a piece before another whose backward is a loss's, not a seed's
  CHECK_THAT(message([&] {
               wp::join_pieces({loss2, p1});
             }),
             Catch::Contains("piece 0's backward does not begin with wp::seed's copy"));
  // one array of two shapes
  const wp::step_piece wide = chain_block_piece(B + 1, F, 2, 0.1);
  CHECK_THAT(
      message([&] {
        wp::join_descriptions({p1.forward, wide.forward});
      }),
      Catch::Contains("wp::join_descriptions: array 'blk1.h' is (4, 2) of float64 in part "
                      "0 but (5, 2) of float64 in part 1; an array joins parts by its name"));
  CHECK_THAT(message([&] {
               wp::join_descriptions({p1.forward, p1.forward});
             }),
             Catch::Contains("two maps are called 'blk1.fc' (one in part 1)"));
  CHECK_THAT(message([&] { wp::join_descriptions({}); }), Catch::Contains("it has no maps"));
}
