/// \file test_pictures.cpp
/// Pictures of plans (plan/picture.hpp) at every communicator size: plan.draw(array)'s block
/// map of a 2-D matmul (each rank's box where the tiling puts it, replicated reads shown as
/// rank sets), to_svg() of the matmul and of a 3-map softmax program (one labelled box per
/// rank and array, boxes and bytes as planned), per-rank boxes as numbers in to_json(), and
/// draw() of an array a plan does not use. The boxes expected are computed here from the
/// documented tiling (block_of), not by the library. Where rsvg-convert is installed
/// (WORKPART_RSVG), each SVG is also rendered to PNG.

#include "mpi_test_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {

using namespace mpitest;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string interval(index_t lo, index_t hi) {
  return std::to_string(lo) + ":" + std::to_string(hi);
}

/// The rows of draw()'s block map (between the two frames).
std::vector<std::string> map_rows(const std::string& picture) {
  std::vector<std::string> rows;
  std::istringstream in(picture);
  std::string line;
  int frames = 0;
  while (std::getline(in, line)) {
    if (line.rfind("  +", 0) == 0) {
      if (++frames == 2) break;
      continue;
    }
    if (frames == 1 && line.size() >= 4) rows.push_back(line.substr(3, line.size() - 4));
  }
  return rows;
}

/// Renders an SVG with rsvg-convert where WORKPART_RSVG names it: "" when it rendered (or
/// there is no renderer), else what went wrong.
std::string renders(const std::string& svg, const std::string& stem) {
  const char* rsvg = std::getenv("WORKPART_RSVG");
  if (rsvg == nullptr || *rsvg == '\0') return "";
  const std::string in = stem + ".svg", out = stem + ".png";
  std::ofstream(in) << svg;
  std::remove(out.c_str());
  const std::string cmd = std::string(rsvg) + " " + in + " -o " + out;
  if (std::system(cmd.c_str()) != 0) return "rsvg-convert failed on " + in;
  std::ifstream png(out, std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  return png && magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G' ? "" : out + " is no PNG";
}

}  // namespace

TEST_CASE("pictures: a matmul's block maps, SVG and boxes in JSON", "[mpi][pictures]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  constexpr index_t M = 37, N = 41, K = 29;
  wp::array<double, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N}), unused("unused", {3, 3});
  auto [i, j, k] = wp::indices<3>();
  auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
  // (2,2,1) where 4 ranks are there, else the rows split over every rank
  const std::vector<index_t> g =
      P == 4 ? std::vector<index_t>{2, 2, 1} : std::vector<index_t>{p, 1, 1};
  auto plan = wp::distribute(mm, wp::grid_shape{g[0], g[1], g[2]}, ctx);
  // each rank's block of C, from the documented tiling
  auto c_box = [&](int r) {
    const auto c = coords_of(g, r);
    const block rows = block_of(M, g[0], c[0]), cols = block_of(N, g[1], c[1]);
    return std::array<index_t, 4>{rows.start, rows.end(), cols.start, cols.end()};
  };

  SECTION("draw(C): every rank's box, where the tiling puts it") {
    const std::string pic = plan.draw(C);
    INFO(pic);
    REQUIRE(pic.find("array C (written: sum) in map 'matmul'") != std::string::npos);
    const auto rows = map_rows(pic);
    REQUIRE(rows.size() == 16);  // at most 16 rows of cells: 37 rows of C, ~3 per cell
    REQUIRE(rows.front().size() == std::size_t(N));  // 41 columns fit one per cell
    for (int r = 0; r < P; ++r) {
      const auto b = c_box(r);
      REQUIRE(pic.find(std::to_string(r) + " = rank " + std::to_string(r) + ": [" +
                       interval(b[0], b[1]) + ", " + interval(b[2], b[3]) + "]") !=
              std::string::npos);
      // the cell over the middle of rank r's box carries its symbol
      const index_t mid_row = (b[0] + b[1]) / 2, mid_col = (b[2] + b[3]) / 2;
      const std::size_t cell_row = std::size_t(mid_row * 16 / M);
      REQUIRE(rows[cell_row][std::size_t(mid_col)] == char('0' + r));
    }
    REQUIRE(all_problems(ctx.comm(), pic == plan.draw(C) ? "" : "draw() changed") == "");
  }
  SECTION("draw(A): a read replicated over a grid dimension shows the rank sets") {
    const std::string pic = plan.draw(A);
    INFO(pic);
    if (P == 4) {
      REQUIRE(pic.find("A = ranks 0, 1 (replicated)") != std::string::npos);
      REQUIRE(pic.find("B = ranks 2, 3 (replicated)") != std::string::npos);
      REQUIRE(map_rows(pic).front().find_first_not_of('A') == std::string::npos);
    } else {
      REQUIRE(pic.find("(replicated)") == std::string::npos);  // rows apart: no overlap
    }
  }
  SECTION("to_svg(): one labelled box per rank and array, the boxes as planned") {
    const std::string svg = plan.to_svg();
    INFO(svg.substr(0, 2000));
    REQUIRE(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    REQUIRE(svg.find("</svg>") != std::string::npos);
    REQUIRE(svg.find("map 'matmul' on grid " + wp::grid_shape{g[0], g[1], g[2]}.str()) !=
            std::string::npos);
    REQUIRE(count(svg, "class=\"array-boxes\"") == 3);  // A, B read; C written
    REQUIRE(count(svg, "<rect class=\"box\"") == std::size_t(3 * P));
    for (int r = 0; r < P; ++r) {
      const auto b = c_box(r);
      REQUIRE(svg.find("data-rank=\"" + std::to_string(r) + "\" data-box=\"[" +
                       interval(b[0], b[1]) + ", " + interval(b[2], b[3]) + "]\"") !=
              std::string::npos);
    }
    // labels: one per distinct box (replicas share one: "r0,r1")
    if (P == 4) REQUIRE(svg.find(">r0,r1</text>") != std::string::npos);
    REQUIRE(svg.find(">r" + std::to_string(P - 1)) != std::string::npos);
    REQUIRE(all_problems(ctx.comm(), ctx.is_root() ? renders(svg, "pictures_matmul") : "") == "");
  }
  SECTION("to_json(): every rank's boxes as numbers") {
    const std::string js = plan.to_json();
    std::string want = "\"write_boxes\":[";
    for (int r = 0; r < P; ++r) {
      const auto b = c_box(r);
      want += (r ? "," : "") + std::string("[[") + std::to_string(b[0]) + "," +
              std::to_string(b[2]) + "],[" + std::to_string(b[1]) + "," + std::to_string(b[3]) +
              "]]";
    }
    INFO(js.substr(0, 1500));
    REQUIRE(js.find(want + "]") != std::string::npos);
    REQUIRE(count(js, "\"read_boxes\":") == 2);
  }
  SECTION("draw() of an array the map does not use: a plan_error on every rank") {
    const std::string e = what_of([&] { (void)plan.draw(unused); });
    REQUIRE(e.find("[workpart.plan_error] plan for map 'matmul': draw(unused): the map does not "
                   "use 'unused'") != std::string::npos);
    REQUIRE(same_everywhere(ctx.comm(), e) == "");
  }
}

TEST_CASE("pictures: a 3-map softmax program as SVG, and one array in every map",
          "[mpi][pictures][programs]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  const index_t p = P;
  constexpr index_t Bn = 3, S = 13, L = 131;
  wp::array<double, 3> x("x", {Bn, S, L}), e("e", {Bn, S, L}), y("y", {Bn, S, L});
  wp::array<double, 2> mx("mx", {Bn, S}), sum("sum", {Bn, S});
  auto [b, s, l] = wp::indices<3>();
  auto m1 = wp::map("max", wp::space(Bn, S, L), wp::max_into(mx(b, s), x(b, s, l)));
  auto m2 = wp::map("expsum", wp::space(Bn, S, L), e(b, s, l) = wp::exp(x(b, s, l) - mx(b, s)),
                    sum(b, s) += e(b, s, l));
  auto m3 = wp::map("norm", wp::space(Bn, S, L), y(b, s, l) = e(b, s, l) / sum(b, s));
  wp::schedule sc;  // the last axis split in 'max' (partial maxima), rows in the others
  sc.set(m1, wp::grid_shape{1, 1, p})
      .set(m2, wp::grid_shape{1, p, 1})
      .set(m3, wp::grid_shape{1, p, 1});
  auto plan = wp::distribute(wp::program(m1, m2, m3), sc, ctx);
  const std::string svg = plan.to_svg();
  INFO(svg.substr(0, 1500) << "\n...\n" << svg.substr(svg.size() > 1200 ? svg.size() - 1200 : 0));
  for (const char* m : {"max", "expsum", "norm"})
    REQUIRE(svg.find(std::string("map '") + m + "' on grid") != std::string::npos);
  // max: x read, mx written; expsum: x, mx read, e, sum written; norm: e, sum read, y written
  REQUIRE(count(svg, "class=\"array-boxes\"") == 9);
  REQUIRE(count(svg, "<rect class=\"box\"") == std::size_t(9 * P));
  // rank r's rows of the last map, from the tiling
  for (int r = 0; r < P; ++r) {
    const block rows = block_of(S, p, r);
    if (rows.size == 0) continue;
    REQUIRE(svg.find("data-box=\"[0:3, " + interval(rows.start, rows.end()) + ", 0:131]\"") !=
            std::string::npos);
  }
  // root's gather of y, with its bytes: every element once, less root's own rows
  const index_t root_rows = block_of(S, p, 0).size;
  const index_t y_bytes = Bn * (S - root_rows) * L * index_t(sizeof(double));
  if (P > 1)  // (what moves nothing is left out of the picture)
    REQUIRE(svg.find("y: norm -&gt; root, Gatherv, " + std::to_string(y_bytes) + " B") !=
            std::string::npos);
  if (P > 1)  // partial maxima over the split last axis, combined right after 'max'
    REQUIRE(svg.find("mx: partial results combined after 'max'") != std::string::npos);
  REQUIRE(all_problems(ctx.comm(), ctx.is_root() ? renders(svg, "pictures_softmax") : "") == "");

  const std::string pic = plan.draw(sum);
  INFO(pic);
  REQUIRE(pic.find("array sum (written: sum) in map 'expsum'") != std::string::npos);
  REQUIRE(pic.find("array sum (read) in map 'norm'") != std::string::npos);
  REQUIRE(pic.find("in map 'max'") == std::string::npos);
}
