// Redistribution planning (plan/redistribute.hpp), no MPI: every element a rank needs is
// covered by exactly one piece from a holder of it (the newest layer that holds it), or left
// to root when no layer holds it; pieces the rank holds itself come first. Checked element
// by element against random boxes, by brute force written here.

#include <catch2/catch.hpp>

#include <workpart/plan/redistribute.hpp>

#include <map>
#include <random>
#include <vector>

namespace wd = workpart::detail;
using workpart::index_t;

namespace {

wd::box make_box(std::initializer_list<std::pair<index_t, index_t>> r) {
  wd::box b;
  b.rank = int(r.size());
  b.valid = true;
  int a = 0;
  for (auto [lo, hi] : r) {
    b.lo[a] = lo;
    b.hi[a] = hi;
    ++a;
  }
  return b;
}
bool inside(const wd::box& b, index_t x, index_t y) {
  return !b.empty() && b.lo[0] <= x && x < b.hi[0] && b.lo[1] <= y && y < b.hi[1];
}
wd::box random_box(std::mt19937& g, index_t n) {
  std::uniform_int_distribution<index_t> d(0, n);
  index_t a = d(g), b = d(g), c = d(g), e = d(g);
  return make_box({{std::min(a, b), std::max(a, b)}, {std::min(c, e), std::max(c, e)}});
}

}  // namespace

TEST_CASE("redistribute: a box minus a box is the elements of one and not the other, disjoint",
          "[unit][redistribute]") {
  std::mt19937 g(7);
  for (int t = 0; t < 500; ++t) {
    const wd::box a = random_box(g, 9), b = random_box(g, 9);
    std::vector<wd::box> out;
    wd::subtract_into(a, b, out);
    for (index_t x = 0; x < 9; ++x)
      for (index_t y = 0; y < 9; ++y) {
        int covered = 0;
        for (const auto& p : out) covered += inside(p, x, y) ? 1 : 0;
        REQUIRE(covered == (inside(a, x, y) && !inside(b, x, y) ? 1 : 0));
      }
  }
}

TEST_CASE("redistribute: each needed element comes once, from its newest holder, own first",
          "[unit][redistribute]") {
  std::mt19937 g(11);
  constexpr int P = 5;
  constexpr index_t n = 12;
  for (int t = 0; t < 200; ++t) {
    std::vector<wd::box> need(P);
    for (auto& b : need) b = random_box(g, n);
    std::vector<wd::layer> layers(2);
    for (int l = 0; l < 2; ++l) {
      layers[std::size_t(l)].map = l;
      layers[std::size_t(l)].boxes.resize(P);
      for (auto& b : layers[std::size_t(l)].boxes)
        if (g() % 3)
          b = random_box(g, n);
        else
          b = wd::box{};
    }
    const wd::transfer tr = wd::plan_transfer(need, layers);
    for (int r = 0; r < P; ++r) {
      bool any_left = false;
      for (index_t x = 0; x < n; ++x)
        for (index_t y = 0; y < n; ++y) {
          int count = 0, from = -1, layer = -1;
          for (const auto& p : tr.pieces)
            if (p.to == r && inside(p.b, x, y)) {
              ++count;
              from = p.from;
              layer = p.layer;
            }
          if (!inside(need[std::size_t(r)], x, y)) {
            REQUIRE(count == 0);
            continue;
          }
          // the newest layer holding the element
          int newest = -1;
          for (int l = 1; l >= 0; --l)
            for (int s = 0; s < P; ++s)
              if (inside(layers[std::size_t(l)].boxes[std::size_t(s)], x, y)) newest = l;
          // what no layer holds comes from root, once
          int from_root = 0;
          for (const auto& p : tr.rest) {
            REQUIRE(p.from == 0);
            if (p.to == r && inside(p.b, x, y)) ++from_root;
          }
          if (newest < 0) {
            REQUIRE(count == 0);
            REQUIRE(from_root == 1);
            any_left = true;
            continue;
          }
          REQUIRE(from_root == 0);
          REQUIRE(count == 1);
          REQUIRE(layer == newest);
          REQUIRE(inside(layers[std::size_t(layer)].boxes[std::size_t(from)], x, y));
          // a rank that holds the element in that layer takes it from itself
          if (inside(layers[std::size_t(layer)].boxes[std::size_t(r)], x, y)) REQUIRE(from == r);
        }
      REQUIRE(bool(tr.remainder[std::size_t(r)]) == any_left);
    }
  }
}

TEST_CASE("redistribute: kinds and bytes of simple layouts", "[unit][redistribute]") {
  // rows (2,1) -> columns (1,2) of a 4x6 array: an Alltoallw of the off-diagonal quarters
  std::vector<wd::box> rows = {make_box({{0, 2}, {0, 6}}), make_box({{2, 4}, {0, 6}})};
  std::vector<wd::box> cols = {make_box({{0, 4}, {0, 3}}), make_box({{0, 4}, {3, 6}})};
  const std::vector<wd::layer> held = {{0, rows}};
  const auto t = wd::plan_transfer(cols, held);
  REQUIRE(wd::transfer_kind(t, held) == "Alltoallw");
  REQUIRE(t.bytes_received(0, 8) == 6 * 8);
  REQUIRE(t.bytes_sent(0, 8) == 6 * 8);
  // the same layout: nothing moves
  const auto same = wd::plan_transfer(rows, held);
  REQUIRE(wd::transfer_kind(same, held) == "none");
  // rows widened by one on each side: a halo exchange
  std::vector<wd::box> halo = {make_box({{0, 3}, {0, 6}}), make_box({{1, 4}, {0, 6}})};
  const auto h = wd::plan_transfer(halo, held);
  REQUIRE(wd::transfer_kind(h, held) == "halo exchange");
  REQUIRE(h.bytes_received(0, 4) == 6 * 4);
  REQUIRE(h.bytes_received(1, 4) == 6 * 4);
}

namespace {
/// plan_transfer as it was first written: every rank tried, in order r, r+1, ... (the
/// holder index must change which ranks are tried, never the pieces).
wd::transfer plan_transfer_every_rank(const std::vector<wd::box>& need,
                                      const std::vector<wd::layer>& layers) {
  const int P = int(need.size());
  wd::transfer t;
  t.remainder.assign(std::size_t(P), 0);
  std::vector<wd::box> left, next;
  for (int r = 0; r < P; ++r) {
    if (need[std::size_t(r)].empty()) continue;
    left.assign(1, need[std::size_t(r)]);
    for (std::size_t l = 0; l < layers.size() && !left.empty(); ++l)
      for (int k = 0; k < P && !left.empty(); ++k) {
        const int s = (r + k) % P;
        const wd::box& h = layers[l].boxes[std::size_t(s)];
        if (h.empty()) continue;
        next.clear();
        for (const wd::box& x : left) {
          const wd::box c = wd::box::intersect(x, h);
          if (c.empty()) {
            next.push_back(x);
            continue;
          }
          t.pieces.push_back({s, r, int(l), c});
          wd::subtract_into(x, c, next);
        }
        left.swap(next);
      }
    t.remainder[std::size_t(r)] = !left.empty();
    for (const wd::box& x : left) t.rest.push_back({0, r, -1, x});
  }
  return t;
}
bool same_pieces(const std::vector<wd::piece>& a, const std::vector<wd::piece>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].from != b[i].from || a[i].to != b[i].to || a[i].layer != b[i].layer ||
        !(a[i].b == b[i].b))
      return false;
  return true;
}
/// The blocks of a g0 x g1 grid over n0 x n1 (balanced), rank-major; `replicas` copies each.
std::vector<wd::box> grid_boxes(index_t n0, index_t n1, int g0, int g1, int replicas, int P) {
  std::vector<wd::box> out(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    out[std::size_t(r)].rank = 2;
    const int b = r / replicas;
    if (b >= g0 * g1) continue;
    const auto x = wd::balanced_block(0, n0, g0, b / g1), y = wd::balanced_block(0, n1, g1, b % g1);
    out[std::size_t(r)] = make_box({{x.start, x.end}, {y.start, y.end}});
  }
  return out;
}
}  // namespace

TEST_CASE("redistribute: the holder index gives the pieces of trying every rank",
          "[unit][redistribute]") {
  std::mt19937 g(7);
  for (int rep = 0; rep < 300; ++rep) {
    const int P = 1 + int(g() % 13);
    std::vector<wd::box> need(static_cast<std::size_t>(P));
    std::vector<wd::layer> layers(1 + g() % 3);
    for (auto& b : need) b = g() % 5 ? random_box(g, 17) : wd::box{};
    for (auto& l : layers) {
      l.boxes.resize(std::size_t(P));
      if (g() % 2) {  // grid blocks, replicated or not
        const int g0 = 1 + int(g() % 4), g1 = 1 + int(g() % 4), rep_n = 1 + int(g() % 2);
        l.boxes = grid_boxes(17, 13, g0, g1, rep_n, P);
      } else {  // anything: overlapping, empty, nested
        for (auto& b : l.boxes) b = g() % 4 ? random_box(g, 17) : wd::box{};
      }
    }
    for (auto& b : need) b.rank = 2;
    const auto a = wd::plan_transfer(need, layers), b = plan_transfer_every_rank(need, layers);
    INFO("rep " << rep << ", " << P << " ranks");
    REQUIRE(same_pieces(a.pieces, b.pieces));
    REQUIRE(same_pieces(a.rest, b.rest));
    REQUIRE(a.remainder == b.remainder);
  }
}
