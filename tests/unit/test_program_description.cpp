/// \file test_program_description.cpp
/// Programs given as data (optimize/program_description.hpp, io/program_reader.hpp): the cost
/// tables of a description equal, entry for entry, those of the typed program it describes
/// (so workpart-optimize --program chooses what wp::optimize chooses), for matmul chains, a
/// 3-map softmax (max_into, a broadcast read), a stencil with offsets, a transpose and a
/// multi-statement map, at 1 to 6 ranks; the JSON reader builds the same description; bad
/// descriptions are errors that name the file, map, access and value.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>
#include <workpart/optimize/optimize.hpp>
#include <workpart/io/program_reader.hpp>

#include "../error_text.hpp"
#include "priced_alike.hpp"

#include <string>
#include <vector>

namespace wp = workpart;
using workpart::index_t;

namespace {

wp::subscript idx(std::vector<index_t> coef, index_t offset = 0) {
  return {false, std::move(coef), offset};
}
wp::subscript whole() { return {true, {}, 0}; }

constexpr index_t B = 7, D = 5, H = 9;  // uneven extents

/// The MLP of lesson 4 with a skip connection, as data.
wp::program_description mlp_description() {
  wp::program_description d;
  d.arrays = {{"x", {B, D}, 4},  {"W1", {D, H}, 4}, {"h", {B, H}, 4}, {"a", {B, H}, 4},
              {"W2", {H, D}, 4}, {"y", {B, D}, 4},  {"z", {B, D}, 4}};
  using M = wp::access_mode;
  d.maps.push_back({"fc1",
                    {"i", "j", "k"},
                    {B, H, D},
                    2,
                    {{"x", {idx({1, 0, 0}), idx({0, 0, 1})}, M::read, "x(i, k)"},
                     {"W1", {idx({0, 0, 1}), idx({0, 1, 0})}, M::read, "W1(k, j)"},
                     {"h", {idx({1, 0, 0}), idx({0, 1, 0})}, M::add, "h(i, j)"}}});
  d.maps.push_back({"relu",
                    {"i", "j"},
                    {B, H},
                    1,
                    {{"h", {idx({1, 0}), idx({0, 1})}, M::read, "h(i, j)"},
                     {"a", {idx({1, 0}), idx({0, 1})}, M::assign, "a(i, j)"}}});
  d.maps.push_back({"fc2",
                    {"i", "j", "k"},
                    {B, D, H},
                    2,
                    {{"a", {idx({1, 0, 0}), idx({0, 0, 1})}, M::read, "a(i, k)"},
                     {"W2", {idx({0, 0, 1}), idx({0, 1, 0})}, M::read, "W2(k, j)"},
                     {"y", {idx({1, 0, 0}), idx({0, 1, 0})}, M::add, "y(i, j)"}}});
  d.maps.push_back({"res",
                    {"i", "j"},
                    {B, D},
                    1,
                    {{"y", {idx({1, 0}), idx({0, 1})}, M::read, "y(i, j)"},
                     {"x", {idx({1, 0}), idx({0, 1})}, M::read, "x(i, j)"},
                     {"z", {idx({1, 0}), idx({0, 1})}, M::assign, "z(i, j)"}}});
  return d;
}

const char* mlp_json = R"({
  "arrays": [{"name": "x", "shape": [7, 5], "type": "float32"}, {"name": "W1", "shape": [5, 9], "type": "float32"},
             {"name": "h", "shape": [7, 9], "type": "float32"}, {"name": "a", "shape": [7, 9], "bytes": 4},
             {"name": "W2", "shape": [9, 5], "type": "float32"}, {"name": "y", "shape": [7, 5], "type": "float32"},
             {"name": "z", "shape": [7, 5], "type": "int32"}],
  "maps": [
    {"name": "fc1", "indices": ["i", "j", "k"], "extents": [7, 9, 5], "flops_per_point": 2,
     "accesses": [{"array": "x", "index": ["i", "k"]}, {"array": "W1", "index": ["k", "j"], "mode": "read"},
                  {"array": "h", "index": ["i", "j"], "mode": "+="}]},
    {"extents": [7, 9], "name": "relu", "indices": ["i", "j"], "unknown key": {"is": ["skipped"]},
     "accesses": [{"array": "h", "index": ["i", "j"]}, {"array": "a", "index": ["i", "j"], "mode": "="}]},
    {"name": "fc2", "indices": ["i", "j", "k"], "extents": [7, 5, 9], "flops_per_point": 2.0,
     "accesses": [{"array": "a", "index": ["i", "k"]}, {"array": "W2", "index": ["k", "j"]},
                  {"array": "y", "index": ["i", "j"], "mode": "+="}]},
    {"name": "res", "extents": [7, 5],
     "accesses": [{"array": "y", "index": ["i0", "i1"]}, {"array": "x", "index": ["1*i0 + 0", "i1"]},
                  {"array": "z", "index": ["i0", "i1"], "mode": "="}]}],
  "edges": [{"from": "fc1", "to": "relu", "arrays": ["h"]}, {"from": "relu", "to": "fc2", "arrays": ["a"]},
            {"from": "fc2", "to": "res", "arrays": ["y"]}]
})";

}  // namespace

TEST_CASE("program description: an MLP with a skip edge prices as the typed program",
          "[unit][optimize]") {
  auto [i, j, k] = wp::indices<3>();
  wp::array<float, 2> x("x", {B, D}), W1("W1", {D, H}), h("h", {B, H}), a("a", {B, H}),
      W2("W2", {H, D}), y("y", {B, D}), z("z", {B, D});
  auto fc1 = wp::map("fc1", wp::space(B, H, D), h(i, j) += x(i, k) * W1(k, j));
  auto relu = wp::map("relu", wp::space(B, H), a(i, j) = wp::max(h(i, j), 0.0f));
  auto fc2 = wp::map("fc2", wp::space(B, D, H), y(i, j) += a(i, k) * W2(k, j));
  auto res = wp::map("res", wp::space(B, D), z(i, j) = y(i, j) + x(i, j));
  require_same_as_typed(wp::program(fc1, relu, fc2, res), mlp_description());

  // the JSON form reads into the same description
  const wp::program_description r = wp::parse_program_description(mlp_json, "mlp.json");
  for (int P : {1, 3, 4})
    require_same_tables(wp::program_costs(mlp_description(), P), wp::program_costs(r, P));
  REQUIRE(r.maps[3].indices == std::vector<std::string>{"i0", "i1"});
  REQUIRE(r.maps[1].ops_per_point == 1);
  REQUIRE(r.maps[0].accesses[2].text == "h(i, j)");
}

TEST_CASE("program description: softmax, a stencil, a transpose and two statements price as typed",
          "[unit][optimize]") {
  using M = wp::access_mode;
  auto [i, j] = wp::indices<2>();
  constexpr index_t R = 5, L = 11;
  {  // softmax as 3 maps: max_into, a sum over a broadcast read, a divide
    wp::array<double, 2> x("x", {R, L}), y("y", {R, L});
    wp::array<double, 1> mx("mx", {R}), sm("sm", {R});
    auto m1 = wp::map("max", wp::space(R, L), wp::max_into(mx(i), x(i, j)));
    auto m2 = wp::map("expsum", wp::space(R, L), sm(i) += wp::exp(x(i, j) - mx(i)));
    auto m3 = wp::map("norm", wp::space(R, L), y(i, j) = wp::exp(x(i, j) - mx(i)) / sm(i));
    wp::program_description d;
    d.arrays = {{"x", {R, L}, 8}, {"y", {R, L}, 8}, {"mx", {R}, 8}, {"sm", {R}, 8}};
    d.maps.push_back({"max",
                      {"i", "j"},
                      {R, L},
                      1,
                      {{"x", {idx({1, 0}), idx({0, 1})}, M::read, "x(i, j)"},
                       {"mx", {idx({1, 0})}, M::max, "mx(i)"}}});
    d.maps.push_back({"expsum",
                      {"i", "j"},
                      {R, L},
                      3,
                      {{"x", {idx({1, 0}), idx({0, 1})}, M::read, "x(i, j)"},
                       {"mx", {idx({1, 0})}, M::read, "mx(i)"},
                       {"sm", {idx({1, 0})}, M::add, "sm(i)"}}});
    d.maps.push_back({"norm",
                      {"i", "j"},
                      {R, L},
                      3,
                      {{"x", {idx({1, 0}), idx({0, 1})}, M::read, "x(i, j)"},
                       {"mx", {idx({1, 0})}, M::read, "mx(i)"},
                       {"sm", {idx({1, 0})}, M::read, "sm(i)"},
                       {"y", {idx({1, 0}), idx({0, 1})}, M::assign, "y(i, j)"}}});
    require_same_as_typed(wp::program(m1, m2, m3), d);
  }
  {  // a 1-D stencil with offsets, then a transpose
    wp::array<double, 1> u("u", {L + 2}), v("v", {L});
    wp::array<double, 2> A("A", {R, L}), T("T", {L, R});
    auto st = wp::map("stencil", wp::space(L), v(i) = u(i) + u(i + 2) - u(i + 1) * 2.0);
    auto tr = wp::map("transpose", wp::space(R, L), T(j, i) = A(i, j) * v(j));
    wp::program_description d;
    d.arrays = {{"u", {L + 2}, 8}, {"v", {L}, 8}, {"A", {R, L}, 8}, {"T", {L, R}, 8}};
    d.maps.push_back({"stencil",
                      {"i"},
                      {L},
                      3,
                      {{"u", {idx({1})}, M::read, "u(i)"},
                       {"u", {idx({1}, 2)}, M::read, "u(i+2)"},
                       {"u", {idx({1}, 1)}, M::read, "u(i+1)"},
                       {"v", {idx({1})}, M::assign, "v(i)"}}});
    d.maps.push_back({"transpose",
                      {"i", "j"},
                      {R, L},
                      1,
                      {{"A", {idx({1, 0}), idx({0, 1})}, M::read, "A(i, j)"},
                       {"v", {idx({0, 1})}, M::read, "v(j)"},
                       {"T", {idx({0, 1}), idx({1, 0})}, M::assign, "T(j, i)"}}});
    require_same_as_typed(wp::program(st, tr), d);
  }
  {  // two statements: the second reads what the first wrote, mirrored along j (grids that
     // split j are refused: a rank would read columns another rank wrote)
    wp::array<double, 2> x("x", {R, L}), e("e", {R, L});
    wp::array<double, 1> s("s", {R});
    auto m = wp::map("rows", wp::space(R, L), e(i, j) = wp::exp(x(i, j)), s(i) += e(i, L - 1 - j));
    auto after = wp::map("scale", wp::space(R, L), x(i, j) = e(i, j) / s(i));
    wp::program_description d;
    d.arrays = {{"x", {R, L}, 8}, {"e", {R, L}, 8}, {"s", {R}, 8}};
    d.maps.push_back({"rows",
                      {"i", "j"},
                      {R, L},
                      2,
                      {{"x", {idx({1, 0}), idx({0, 1})}, M::read, "x(i, j)"},
                       {"e", {idx({1, 0}), idx({0, 1})}, M::assign, "e(i, j)"},
                       {"e", {idx({1, 0}), idx({0, -1}, L - 1)}, M::read, "e(i, L - 1 - j)"},
                       {"s", {idx({1, 0})}, M::add, "s(i)"}}});
    d.maps.push_back({"scale",
                      {"i", "j"},
                      {R, L},
                      1,
                      {{"e", {idx({1, 0}), idx({0, 1})}, M::read, "e(i, j)"},
                       {"s", {idx({1, 0})}, M::read, "s(i)"},
                       {"x", {idx({1, 0}), idx({0, 1})}, M::assign, "x(i, j)"}}});
    require_same_as_typed(wp::program(m, after), d);
    // at 4 ranks the optimizer never picks a grid the plans refuse
    const auto t = wp::program_costs(d, 4);
    for (const auto& g : t.grids[0]) REQUIRE(g.dims[1] == 1);
  }
  {  // a whole axis: each row reads all of w
    wp::array<double, 2> x("x", {R, L});
    wp::array<double, 1> w("w", {L}), y("y", {R});
    auto m = wp::map("rowdot", wp::space(R, L), y(i) += x(i, j) * w(j));
    wp::program_description d;
    d.arrays = {{"x", {R, L}, 8}, {"w", {L}, 8}, {"y", {R}, 8}};
    d.maps.push_back({"rowdot",
                      {"i", "j"},
                      {R, L},
                      2,
                      {{"x", {idx({1, 0}), idx({0, 1})}, M::read, "x(i, j)"},
                       {"w", {idx({0, 1})}, M::read, "w(j)"},
                       {"y", {idx({1, 0})}, M::add, "y(i)"}}});
    require_same_as_typed(wp::program(m), d);
    wp::program_description all = d;  // "*": every rank holds all of w whatever its block
    all.maps[0].accesses[1].index = {whole()};
    const auto t = wp::program_costs(all, 4);
    REQUIRE(t.graph.num_vertices() == 3);
  }
}

TEST_CASE("program description: a JSON subscript is any affine form of the indices",
          "[unit][optimize]") {
  const std::string head =
      R"({"arrays": [{"name": "u", "shape": [40]}, {"name": "v", "shape": [10]}],
     "maps": [{"name": "m", "indices": ["i", "j"], "extents": [10, 2], "accesses": [
       {"array": "v", "index": ["i"], "mode": "+="}, {"array": "u", "index": [)";
  auto parse = [&](const std::string& sub) {
    return wp::parse_program_description(head + sub + "]}]}]}", "s.json")
        .maps[0]
        .accesses[1]
        .index[0];
  };
  auto f = parse(R"("2*i - j + 3")");
  REQUIRE(!f.whole_axis);
  REQUIRE(f.coef == std::vector<index_t>{2, -1});
  REQUIRE(f.offset == 3);
  f = parse(R"(" -i*3+ 32 ")");
  REQUIRE(f.coef == std::vector<index_t>{-3, 0});
  REQUIRE(f.offset == 32);
  f = parse("7");
  REQUIRE(f.coef == std::vector<index_t>{0, 0});
  REQUIRE(f.offset == 7);
  REQUIRE(parse(R"("*")").whole_axis);
  REQUIRE(parse(R"("all")").whole_axis);
  REQUIRE(parse(R"(":")").whole_axis);
  for (const char* bad :
       {R"("k")", R"("i j")", R"("2*")", R"("")", R"("i**2")", R"("i/2")", R"("3*4")"}) {
    INFO(bad);
    REQUIRE_THROWS_WITH(parse(bad),
                        Catch::Contains("s.json: byte") && Catch::Contains("subscript"));
  }
}

TEST_CASE("program description: accesses are checked as wp::map checks them, at their offsets",
          "[unit][optimize][errors]") {
  auto parse = [](const std::string& accesses, const std::string& extents = "[4]") {
    return wp::parse_program_description(
        R"({"arrays": [{"name": "x", "shape": [4]}, {"name": "h", "shape": [4, 3]},)"
        R"( {"name": "e", "shape": [0]}], "maps": [{"name": "m", "indices": ["i", "n"],)"
        R"( "extents": )" +
            (extents == "[4]" ? std::string("[4, 3]") : extents) + R"(, "accesses": [)" + accesses +
            "]}]}",
        "c.json");
  };
  const std::string write = R"({"array": "h", "index": ["i", "n"], "mode": "="})";
  // a read past the end: the typed path's sentence, with the access's byte offset
  std::string t = R"({"array": "x", "index": ["i + 10"]}, )" + write;
  REQUIRE_THAT(what_of([&] { parse(t); }),
               Catch::Contains("[workpart.shape_error] c.json: byte ") &&
                   Catch::Contains("map 'm': access x(i + 10) reads axis 0 of 'x' at 13, "
                                   "outside [0, 4)"));
  // a write far past the end
  REQUIRE_THAT(
      what_of([&] { parse(R"({"array": "h", "index": ["i + 100000", "n"], "mode": "="})"); }),
      Catch::Contains("access h(i + 100000, n) writes axis 0 of 'h' at 100003"));
  // an array of extent 0 read from a space that is not empty
  REQUIRE_THAT(what_of([&] { parse(R"({"array": "e", "index": ["i"]}, )" + write); }),
               Catch::Contains("access e(i) reads axis 0 of 'e' at 3, outside [0, 0)"));
  // a plain '=' whose left side misses an index of the space: a race, named by two points
  REQUIRE_THAT(what_of([&] { parse(R"({"array": "x", "index": ["i"], "mode": "="})"); }),
               Catch::Contains("map 'm': the plain '=' into x(i) sends several points of the "
                               "space to one element") &&
                   Catch::Contains("use += to sum"));
  // the same accesses in a description built in code: the same sentences, no offset
  using M = wp::access_mode;
  wp::program_description d;
  d.arrays = {{"x", {4}, 8}};
  d.maps.push_back({"m", {"i", "n"}, {4, 3}, 1, {{"x", {idx({1, 0})}, M::assign, "x(i)"}}});
  REQUIRE_THROWS_WITH(d.check(), Catch::Contains("the plain '=' into x(i) sends several points"));
  // and they are fine where they fit
  REQUIRE_NOTHROW(parse(R"({"array": "x", "index": ["3 - i"]}, )" + write));
}

TEST_CASE("program description: grid options no grid meets are said, not dropped",
          "[unit][optimize]") {
  using M = wp::access_mode;
  wp::program_description d;
  d.arrays = {{"y", {4}, 8}, {"s", {1}, 8}};
  d.maps.push_back({"m", {"i"}, {4}, 1, {{"y", {idx({1})}, M::assign, "y(i)"}}});
  d.maps.push_back({"total",
                    {"i"},
                    {4},
                    1,
                    {{"s", {idx({0})}, M::add, "s(0)"}, {"y", {idx({1})}, M::read, "y(i)"}}});
  // 3 ranks, all of them, powers of two: no grid of either map qualifies
  const wp::program_cost_tables t =
      wp::program_costs(d, 3, {}, {.use_all_ranks = true, .powers_of_two = true});
  REQUIRE(t.unmet.size() == 2);
  REQUIRE_THAT(t.unmet[0], Catch::Contains("map 'm': no grid of its space [4] uses all 3 ranks "
                                           "with powers of two; it keeps (1)"));
  const wp::optimized o =
      wp::optimize(d, 3, {}, {.configs = {.use_all_ranks = true, .powers_of_two = true}});
  REQUIRE(o.unmet_constraints == t.unmet);
  REQUIRE_THAT(o.str(), Catch::Contains("constraint not met: map 'total'"));
  // options some grid meets: nothing to say
  REQUIRE(
      wp::program_costs(d, 4, {}, {.use_all_ranks = true, .powers_of_two = true}).unmet.empty());
  REQUIRE(wp::optimize(d, 3).unmet_constraints.empty());
}

TEST_CASE("program description: bad descriptions are errors that say where",
          "[unit][optimize][errors]") {
  const std::string arrays =
      R"("arrays": [{"name": "x", "shape": [6, 4]}, {"name": "y", "shape": [6]}])";
  auto parse = [&](const std::string& maps, const std::string& extra = "") {
    return wp::parse_program_description("{" + arrays + R"(, "maps": [)" + maps + "]" + extra + "}",
                                         "p.json");
  };
  const std::string good =
      R"({"name": "sum", "indices": ["i", "k"], "extents": [6, 4], "accesses": [{"array": "y", "index": ["i"], "mode": "+="}, {"array": "x", "index": ["i", "k"]}]})";
  REQUIRE(parse(good).maps.size() == 1);
  const std::string then =
      R"(, {"name": "twice", "indices": ["i"], "extents": [6], "accesses": [{"array": "y", "index": ["i"], "mode": "="}, {"array": "y", "index": ["i"]}]})";
  REQUIRE(parse(good + then).maps.size() == 2);

  struct bad_case {
    std::string maps, extra, says;
  };
  const std::vector<bad_case> cases = {
      {R"({"name": "m", "extents": [6], "accesses": [{"array": "q", "index": ["i0"], "mode": "="}]})",
       "", "no array is called 'q'"},
      {R"({"name": "m", "extents": [6], "accesses": [{"array": "x", "index": ["i0"], "mode": "="}]})",
       "", "1 subscripts for an array of 2 axes"},
      {R"({"name": "m", "extents": [6], "accesses": [{"array": "y", "index": ["i0"], "mode": "*="}]})",
       "", "mode \"*=\""},
      {R"({"name": "m", "extents": [6], "accesses": [{"array": "y", "index": ["i0"]}]})", "",
       "writes no array"},
      {R"({"name": "m", "indices": ["i", "j"], "extents": [6], "accesses": [{"array": "y", "index": ["i"], "mode": "="}]})",
       "", "names 2 indices for 1 extents"},
      {R"({"name": "m", "extents": [-6], "accesses": [{"array": "y", "index": ["i0"], "mode": "="}]})",
       "", "negative extent"},
      {R"({"extents": [6], "accesses": []})", "", "has no \"name\""},
      {R"({"name": "m", "accesses": []})", "", "has no \"extents\""},
      {R"({"name": "m", "extents": [6], "extents": [6]})", "", "appears twice"},
      {R"({"name": "m", "extents": [6], "accesses": [{"index": ["i0"]}]})", "", "has no \"array\""},
      {good + ", " + good.substr(0, good.size()), "", "two maps are called 'sum'"},
      {good + then, R"(, "edges": [{"from": "sum", "to": "twice", "arrays": ["y"]}])",
       "no array written by \"sum\""},
      {good +
           R"(, {"name": "use", "extents": [6], "accesses": [{"array": "x", "index": ["i0", "0"], "mode": "="}, {"array": "y", "index": ["i0"]}]})",
       R"(, "edges": [{"from": "sum", "to": "use", "arrays": ["x"]}])",
       "array \"x\" does not pass"},
      {good +
           R"(, {"name": "use", "extents": [6], "accesses": [{"array": "x", "index": ["i0", "0"], "mode": "="}, {"array": "y", "index": ["i0"]}]})",
       R"(, "edges": [{"from": "use", "to": "sum", "arrays": []}])", "no array written by \"use\""},
      {"", "", "it has no maps"},
      {R"({"name": "m", "indices": ["i", "i"], "extents": [6, 4], "accesses": [{"array": "y", "index": ["i"], "mode": "="}]})",
       "", "names two indices 'i'"},
      {R"({"name": "m", "indices": ["all"], "extents": [6], "accesses": [{"array": "y", "index": ["0"], "mode": "="}]})",
       "", "index name 'all'"},
      {R"({"name": "m", "indices": ["2i"], "extents": [6], "accesses": [{"array": "y", "index": ["0"], "mode": "="}]})",
       "", "index name '2i'"},
      {R"({"name": "m", "extents": [6], "accesses": [{"array": "y", "index": ["i0"], "mdoe": "="}]})",
       "", "unknown key \"mdoe\""},
      {R"({"name": "m", "extents": [4000000000, 4000000000, 4000000000], "accesses": [{"array": "y", "index": ["i0"], "mode": "="}]})",
       "", "more than 2^62 points"},
      {R"({"name": "m", "extents": [6], "accesses": [{"array": "y", "index": ["i0 + 1000000000000000 + 1000000000000000"], "mode": "="}]})",
       "", "too large"},
      {good, R"(, "edges": [{"from": "sum"}])", "needs \"from\" and \"to\""},
  };
  for (const auto& c : cases) {
    INFO(c.maps << c.extra);
    REQUIRE_THROWS_AS(parse(c.maps, c.extra), wp::error);
    REQUIRE_THROWS_WITH(parse(c.maps, c.extra),
                        Catch::Contains(c.says) && Catch::Contains("p.json"));
  }
  // an edge the accesses imply but "edges" leaves out: "again" combines into y (old values
  // from "sum") and reads x (from "use"); "twice" reads only what it wrote itself
  const std::string two =
      good +
      R"(, {"name": "use", "extents": [6], "accesses": [{"array": "x", "index": ["i0", "0"], "mode": "="}, {"array": "y", "index": ["i0"]}]})";
  const std::string again =
      R"(, {"name": "again", "extents": [6], "accesses": [{"array": "y", "index": ["i0"], "mode": "+="}, {"array": "x", "index": ["i0", "1"]}]})";
  REQUIRE_THROWS_WITH(
      parse(two + again, R"(, "edges": [{"from": "sum", "to": "use", "arrays": ["y"]}])"),
      Catch::Contains("pass array \"y\" from \"sum\" to \"again\"") &&
          Catch::Contains("\"edges\" does not list it"));
  REQUIRE(parse(two + again + then, R"(, "edges": [{"from": "sum", "to": "use", "arrays": ["y"]},
      {"from": "sum", "to": "again", "arrays": ["y"]}, {"from": "use", "to": "again", "arrays": ["x"]}])")
              .maps.size() == 4);
  // no map can be planned: the first refusal is the reason
  wp::program_description d;
  d.arrays = {{"x", {6, 4}, 8}, {"e", {6, 4}, 8}};
  using M = wp::access_mode;
  d.maps.push_back({"shift",
                    {"i", "k"},
                    {6, 4},
                    1,
                    {{"e", {idx({1, 0}), idx({0, 1})}, M::assign, "e(i, k)"},
                     {"e", {idx({-1, 0}, 5), idx({0, -1}, 3)}, M::read, "e(5 - i, 3 - k)"},
                     {"x", {idx({1, 0}), idx({0, 1})}, M::assign, "x(i, k)"}}});
  REQUIRE_NOTHROW(wp::program_costs(d, 1));
  REQUIRE_THROWS_WITH(wp::program_costs(d, 4, {}, {.use_all_ranks = true}),
                      Catch::Contains("map 'shift' can be planned on none of its") &&
                          Catch::Contains("write them as separate maps"));
  {  // an array too large to address
    wp::program_description big;
    big.arrays = {{"z", {index_t(1) << 40, index_t(1) << 30}, 8}};
    big.maps.push_back({"m", {"i"}, {4}, 1, {{"z", {idx({1}), idx({0})}, M::assign, "z(i, 0)"}}});
    REQUIRE_THROWS_WITH(wp::program_costs(big, 2),
                        Catch::Contains("array 'z' has more than 2^62 bytes"));
  }
  // the file reader names a missing file
  REQUIRE_THROWS_AS(wp::read_program_description("/nonexistent/program.json"), wp::error);
}
