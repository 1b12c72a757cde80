/// \file picture.ipp
/// The pictures of picture.hpp.

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace workpart::detail {

namespace picture_impl {
inline std::string interval(index_t lo, index_t hi) {
  return std::to_string(lo) + ":" + std::to_string(hi);
}
inline std::string box_text(const box& b) {
  if (b.empty()) return "(none)";
  std::string s = "[";
  for (int x = 0; x < b.rank; ++x) s += (x ? ", " : "") + interval(b.lo[x], b.hi[x]);
  return s + "]";
}
inline std::string shape_text(const std::vector<index_t>& shape) {
  std::string s;
  for (std::size_t x = 0; x < shape.size(); ++x) s += (x ? " x " : "") + std::to_string(shape[x]);
  return shape.empty() ? std::string("a scalar") : s;
}
/// Whether rank r's box holds element (row, col) of the picture's axes.
inline bool holds(const box& b, int ra, index_t row, int ca, index_t col) {
  if (b.empty()) return false;
  if (ra >= 0 && (row < b.lo[ra] || row >= b.hi[ra])) return false;
  return ca < 0 || (col >= b.lo[ca] && col < b.hi[ca]);
}
/// The axes a picture shows (row axis -1: a 1-D array; both -1: a scalar) and their extents.
struct view {
  int ra = -1, ca = -1;
  index_t rows = 1, cols = 1;
};
inline view view_of(const picture_array& a) {
  const auto [ax0, ax1] = picture_axes(a);
  const int R = int(a.shape.size());
  view v;
  v.ra = R >= 2 ? ax0 : -1;
  v.ca = R >= 2 ? ax1 : R == 1 ? 0 : -1;
  if (v.ra >= 0) v.rows = a.shape[std::size_t(v.ra)];
  if (v.ca >= 0) v.cols = a.shape[std::size_t(v.ca)];
  return v;
}
inline char rank_symbol(int r) {
  if (r < 10) return char('0' + r);
  if (r < 36) return char('a' + r - 10);
  return '#';
}
inline std::string xml(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}
inline std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}
/// The colour of rank r of n: hues around the wheel.
inline std::string colour(int r, int n) {
  return "hsl(" + std::to_string((r * 360) / std::max(1, n) + 10) + ",70%,50%)";
}
}  // namespace picture_impl

WORKPART_DECL std::pair<int, int> picture_axes(const picture_array& a) {
  const int R = int(a.shape.size());
  if (R <= 1) return {0, -1};
  std::vector<std::size_t> pieces(std::size_t(R), 0);
  for (int x = 0; x < R; ++x) {
    std::set<std::pair<index_t, index_t>> cuts;
    for (const box& b : a.boxes)
      if (!b.empty()) cuts.insert({b.lo[x], b.hi[x]});
    pieces[std::size_t(x)] = cuts.size();
  }
  // the two axes with the most pieces, the later axis winning a tie
  int first = R - 2, second = R - 1;
  for (int x = R - 1; x >= 0; --x)
    for (int y = R - 1; y > x; --y) {
      const std::size_t best = pieces[std::size_t(first)] + pieces[std::size_t(second)];
      if (pieces[std::size_t(x)] + pieces[std::size_t(y)] > best) {
        first = x;
        second = y;
      }
    }
  return {first, second};
}

WORKPART_DECL std::string draw_text(const picture_array& a, const std::string& map,
                                    const std::string& grid, int width, int height) {
  using namespace picture_impl;
  const int R = int(a.shape.size());
  const view v = view_of(a);
  const int ra = v.ra, ca = v.ca;
  const index_t rows = v.rows, cols = v.cols;
  const index_t h = std::max<index_t>(1, std::min<index_t>(height, rows));
  const index_t w = std::max<index_t>(1, std::min<index_t>(width, cols));
  std::string s = "array " + a.name + " (" + a.role + ") in map '" + map + "' on grid " + grid +
                  ": " + shape_text(a.shape);
  if (R >= 2) {
    s += ", axis " + std::to_string(ra) + " down, axis " + std::to_string(ca) + " across";
    if (R > 2) s += " (the other axes projected)";
  }
  const index_t ch = (rows + h - 1) / h, cw = (cols + w - 1) / w;
  s += ", a cell ~ " + std::to_string(ch) + " x " + std::to_string(cw) + " element" +
       (ch * cw == 1 ? "" : "s") + "\n";
  std::vector<std::vector<int>> sets;  // rank sets shown as capital letters
  std::string frame = "  +" + std::string(std::size_t(w), '-') + "+\n";
  s += frame;
  for (index_t y = 0; y < h; ++y) {
    const index_t row = (2 * y + 1) * rows / (2 * h);  // the cell's middle element
    s += "  |";
    for (index_t x = 0; x < w; ++x) {
      const index_t col = (2 * x + 1) * cols / (2 * w);
      std::vector<int> who;
      for (std::size_t r = 0; r < a.boxes.size(); ++r)
        if (holds(a.boxes[r], ra, row, ca, col)) who.push_back(int(r));
      char c = '.';
      if (who.size() == 1) {
        c = rank_symbol(who[0]);
      } else if (who.size() > 1) {
        auto it = std::find(sets.begin(), sets.end(), who);
        if (it == sets.end()) {
          sets.push_back(who);
          it = sets.end() - 1;
        }
        const auto k = std::size_t(it - sets.begin());
        c = k < 26 ? char('A' + k) : '*';
      }
      s += c;
    }
    s += "|\n";
  }
  s += frame;
  for (std::size_t k = 0; k < sets.size(); ++k) {
    s += std::string("  ") + (k < 26 ? char('A' + k) : '*') + " = ranks";
    for (std::size_t x = 0; x < sets[k].size(); ++x)
      s += (x ? ", " : " ") + std::to_string(sets[k][x]);
    s += " (" + a.overlap + ")\n";
  }
  for (std::size_t r = 0; r < a.boxes.size(); ++r)
    s += std::string("  ") + rank_symbol(int(r)) + " = rank " + std::to_string(r) + ": " +
         box_text(a.boxes[r]) + "\n";
  if (!a.collective.empty()) s += "  moved by: " + a.collective + "\n";
  return s;
}

WORKPART_DECL std::string draw_svg(const std::string& title, const std::vector<picture_map>& maps,
                                   const std::vector<picture_edge>& edges_in, int nranks) {
  using namespace picture_impl;
  constexpr double cell = 200, gap = 30, pad = 14, line = 14, top = 36;
  constexpr std::size_t wrap = 34;  // characters of 11 px monospace in cell + gap
  // An array's drawing keeps its aspect ratio inside cell x cell where that leaves room for
  // the labels (each side at least 60 px; a 1-D array: a bar 24 px high).
  struct layout {
    int ra, ca;
    double dw, dh, sx, sy;
    std::vector<std::string> title, below;
  };
  auto wrapped = [](const std::string& t) {
    std::vector<std::string> out;
    std::string cur;
    std::size_t at = 0;
    while (at < t.size()) {
      std::size_t sp = t.find(' ', at);
      if (sp == std::string::npos) sp = t.size();
      const std::string word = t.substr(at, sp - at);
      if (!cur.empty() && cur.size() + 1 + word.size() > wrap) {
        out.push_back(cur);
        cur.clear();
      }
      cur += (cur.empty() ? "" : " ") + word;
      at = sp + 1;
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  };
  auto lay = [&](const picture_array& a) {
    layout l{};
    const view v = view_of(a);
    const int R = int(a.shape.size());
    l.ra = v.ra;
    l.ca = v.ca;
    const double rows = double(std::max<index_t>(1, v.rows));
    const double cols = double(std::max<index_t>(1, v.cols));
    const double scale = std::min(cell / cols, cell / rows);
    l.dw = std::max(60.0, cols * scale);
    l.dh = l.ra >= 0 ? std::max(60.0, rows * scale) : 24.0;
    l.sx = l.dw / cols;
    l.sy = l.dh / rows;
    l.title = wrapped(a.name + " (" + a.role + ") " + shape_text(a.shape));
    if (R > 2)
      l.title.push_back("axes " + std::to_string(l.ra) + " (down), " + std::to_string(l.ca) +
                        " (across)");
    l.below = wrapped(a.collective);
    return l;
  };
  // Edges name maps as 'name'; the panels by their names.
  auto bare = [](std::string n) {
    n.erase(std::remove(n.begin(), n.end(), '\''), n.end());
    return n;
  };
  std::vector<picture_edge> edges;  // what moves nothing is left out (explain() lists it)
  for (const auto& e : edges_in)
    if (e.bytes > 0) edges.push_back({e.array, bare(e.from), bare(e.to), e.kind, e.bytes});
  auto edge_text = [](const picture_edge& e) {
    return e.array + ": " + e.from + " -> " + e.to + ", " + e.kind + ", " +
           std::to_string(e.bytes) + " B";
  };
  std::vector<std::vector<layout>> lays;
  std::size_t most = 1;
  for (const auto& m : maps) {
    lays.emplace_back();
    for (const auto& a : m.arrays) lays.back().push_back(lay(a));
    most = std::max(most, m.arrays.size());
  }
  std::string body;
  double y = top;
  auto text = [&](double x, double yy, const std::string& t, const std::string& attrs) {
    body +=
        "<text x=\"" + num(x) + "\" y=\"" + num(yy) + "\" " + attrs + ">" + xml(t) + "</text>\n";
  };
  for (std::size_t m = 0; m < maps.size(); ++m) {
    const auto& mp = maps[m];
    for (const auto& e : edges)
      if (e.to == mp.name && e.from != mp.name) {
        y += line;
        text(pad, y, edge_text(e), "class=\"edge\" fill=\"#555\"");
      }
    y += line + 6;
    text(pad, y, "map '" + mp.name + "' on grid " + mp.grid, "class=\"map\" font-weight=\"bold\"");
    std::size_t titles = 1, belows = 0;
    double tallest = 0;
    for (const auto& l : lays[m]) {
      titles = std::max(titles, l.title.size());
      belows = std::max(belows, l.below.size());
      tallest = std::max(tallest, l.dh);
    }
    const double ay = y + line * double(titles) + 6;
    for (std::size_t k = 0; k < mp.arrays.size(); ++k) {
      const picture_array& a = mp.arrays[k];
      const layout& l = lays[m][k];
      const double ax = pad + double(k) * (cell + gap);
      for (std::size_t t = 0; t < l.title.size(); ++t)
        text(ax, y + line * double(t + 1), l.title[t], "class=\"array\"");
      body += "<g class=\"array-boxes\" data-array=\"" + xml(a.name) + "\" data-role=\"" +
              xml(a.role) + "\">\n";
      body += "<rect x=\"" + num(ax) + "\" y=\"" + num(ay) + "\" width=\"" + num(l.dw) +
              "\" height=\"" + num(l.dh) + "\" fill=\"#eee\" stroke=\"black\"/>\n";
      // one label per distinct box: ranks holding the same box (replicas, partial results)
      // share it ("r0,r1")
      std::vector<std::pair<std::string, std::string>> labels;  // box text, label
      std::vector<std::pair<double, double>> centres;
      for (std::size_t r = 0; r < a.boxes.size(); ++r) {
        const box& b = a.boxes[r];
        if (b.empty()) continue;
        const double bx = ax + (l.ca >= 0 ? double(b.lo[l.ca]) * l.sx : 0);
        const double by = ay + (l.ra >= 0 ? double(b.lo[l.ra]) * l.sy : 0);
        const double bw = l.ca >= 0 ? double(b.hi[l.ca] - b.lo[l.ca]) * l.sx : l.dw;
        const double bh = l.ra >= 0 ? double(b.hi[l.ra] - b.lo[l.ra]) * l.sy : l.dh;
        const std::string c = colour(int(r), nranks);
        body += "<rect class=\"box\" data-rank=\"" + std::to_string(r) + "\" data-box=\"" +
                box_text(b) + "\" x=\"" + num(bx) + "\" y=\"" + num(by) + "\" width=\"" + num(bw) +
                "\" height=\"" + num(bh) + "\" fill=\"" + c + "\" fill-opacity=\"0.35\" stroke=\"" +
                c + "\"><title>rank " + std::to_string(r) + ": " + box_text(b) +
                "</title></rect>\n";
        const std::string bt = box_text(b);
        auto it = std::find_if(labels.begin(), labels.end(),
                               [&](const auto& p) { return p.first == bt; });
        if (it == labels.end()) {
          labels.push_back({bt, "r" + std::to_string(r)});
          centres.push_back({bx + bw / 2, by + bh / 2 + 4});
        } else {
          it->second += ",r" + std::to_string(r);
        }
      }
      for (std::size_t q = 0; q < labels.size(); ++q)
        text(centres[q].first, centres[q].second, labels[q].second,
             "class=\"label\" text-anchor=\"middle\"");
      body += "</g>\n";
      for (std::size_t t = 0; t < l.below.size(); ++t)
        text(ax, ay + l.dh + line * double(t + 1), l.below[t], "fill=\"#555\"");
    }
    y = ay + tallest + line * double(belows) + 4;
    for (const auto& e : edges)  // its partial results, combined right after it
      if (e.to == mp.name && e.from == mp.name) {
        y += line;
        text(pad, y,
             e.array + ": partial results combined after '" + mp.name + "', " + e.kind + ", " +
                 std::to_string(e.bytes) + " B",
             "class=\"edge\" fill=\"#555\"");
      }
    y += pad;
  }
  for (const auto& e : edges)
    if (e.to == "root") {
      y += line;
      text(pad, y, edge_text(e), "class=\"edge\" fill=\"#555\"");
    }
  const double height = y + pad;
  const double width = std::max(560.0, pad + double(most) * (cell + gap));
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) +
                  "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " +
                  num(height) + "\" font-family=\"monospace\" font-size=\"11\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(pad) + "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + xml(title) +
       "</text>\n";
  return s + body + "</svg>\n";
}

WORKPART_DECL std::string boxes_json(const std::vector<box>& boxes) {
  std::string s = "[";
  for (std::size_t r = 0; r < boxes.size(); ++r) {
    s += r ? "," : "";
    const box& b = boxes[r];
    if (b.empty()) {
      s += "null";
      continue;
    }
    std::string lo, hi;
    for (int x = 0; x < b.rank; ++x) {
      lo += (x ? "," : "") + std::to_string(b.lo[x]);
      hi += (x ? "," : "") + std::to_string(b.hi[x]);
    }
    s += "[[" + lo + "],[" + hi + "]]";
  }
  return s + "]";
}

}  // namespace workpart::detail
