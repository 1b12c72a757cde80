#pragma once
/// \file profile.ipp
/// plan_profile's texts and picture, and the collective that makes one profile of every rank's
/// figures: included by the header (header-only, the default), or compiled once into
/// workpart::compiled (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include <boost/mpi/collectives/all_gather.hpp>
#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/operations.hpp>
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "../../core/json_text.hpp"
#include "../log.hpp"
#include "../profile.hpp"

namespace workpart {

namespace detail {

WORKPART_DECL double sample_window::median() const {
  if (v_.empty()) return 0;
  std::vector<double> v = v_;
  const std::size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(h), v.end());
  if (v.size() % 2) return v[h];
  const double upper = v[h];
  return (*std::max_element(v.begin(), v.begin() + std::ptrdiff_t(h)) + upper) / 2;
}

WORKPART_DECL plan_profile collect_profile(const boost::mpi::communicator& comm,
                                           std::vector<plan_profile::row> rows,
                                           const sample_window& steps,
                                           const std::vector<timeline_mark>& marks) {
  plan_profile p;
  p.ranks = comm.size();
  p.rank = comm.rank();
  p.executes = steps.added();
  // each row's median and the step's: the slowest rank's (one all_reduce)
  std::vector<double> mine, most(rows.size() + 1);
  for (const auto& r : rows) mine.push_back(r.measured);
  mine.push_back(steps.median());
  boost::mpi::all_reduce(comm, mine.data(), int(mine.size()), most.data(),
                         boost::mpi::maximum<double>());
  for (std::size_t k = 0; k < rows.size(); ++k) rows[k].measured = most[k];
  p.step_measured = most.back();
  p.rows = std::move(rows);
  // every rank's marks, padded to the longest (row -2: none)
  int n = int(marks.size()), longest = 0;
  boost::mpi::all_reduce(comm, n, longest, boost::mpi::maximum<int>());
  std::vector<double> flat(std::size_t(3 * longest), 0.0);
  for (int k = 0; k < longest; ++k) {
    const timeline_mark m = k < n ? marks[std::size_t(k)] : timeline_mark{-2, 0, 0};
    flat[std::size_t(3 * k)] = m.row;
    flat[std::size_t(3 * k + 1)] = m.start;
    flat[std::size_t(3 * k + 2)] = m.end;
  }
  std::vector<double> all;
  if (longest > 0) boost::mpi::all_gather(comm, flat.data(), 3 * longest, all);
  for (int r = 0; r < p.ranks && longest > 0; ++r)
    for (int k = 0; k < longest; ++k) {
      const double* e = all.data() + std::size_t(3 * (r * longest + k));
      if (e[0] < -1.5) continue;
      p.timeline.push_back({r, int(e[0]), e[1], e[2]});
    }
  return p;
}

inline std::string profile_seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3e", s);
  return b;
}

}  // namespace detail

WORKPART_DECL std::string plan_profile::str() const {
  int maps = 0;
  for (const auto& r : rows) maps += r.map >= 0;
  std::string s = "profile: " + std::to_string(maps) + " maps and " +
                  std::to_string(int(rows.size()) - maps) + " transfers over " +
                  std::to_string(ranks) + " ranks, " + std::to_string(executes) +
                  " executes (seconds: the median execute on each rank, the slowest rank)\n";
  if (!model.empty()) s += "modelled on " + model + "\n";
  // transfers of kind "none" move nothing between ranks (the reader's block is already where
  // it runs): one line for all of them, not one each
  auto moves_nothing = [](const row& r) { return r.map < 0 && r.kind == "none"; };
  // columns as wide as their longest entry, so long collective names keep the table aligned
  int kind_w = 4, name_w = 25, grid_w = 4;
  for (const auto& r : rows) {
    if (moves_nothing(r)) continue;
    kind_w = std::max(kind_w, int(r.kind.size()));
    name_w = std::max(name_w, int(r.name.size()));
    grid_w = std::max(grid_w, int(r.grid.size()));
  }
  std::string line;
  auto add_line = [&](const std::string& kind, const std::string& name, const std::string& grid,
                      const std::string& measured, const std::string& modelled,
                      const std::string& ratio) {
    line.assign(std::size_t(kind_w + name_w + grid_w) + kind.size() + name.size() + grid.size() +
                    measured.size() + modelled.size() + ratio.size() + 60,
                '\0');
    const int n = std::snprintf(line.data(), line.size(), "  %-*s  %-*s  %-*s %11s %11s %9s\n",
                                kind_w, kind.c_str(), name_w, name.c_str(), grid_w, grid.c_str(),
                                measured.c_str(), modelled.c_str(), ratio.c_str());
    s.append(line.data(), std::size_t(std::max(0, std::min(n, int(line.size()) - 1))));
  };
  add_line("kind", "name", "grid", "measured", "modelled", "ratio");
  // measured over modelled, three significant digits whatever its size
  // (a profile without a model, as the log prints it: no modelled column)
  const bool modelled = !model.empty();
  auto model_seconds = [&](double d) {
    return modelled ? detail::profile_seconds(d) : std::string("-");
  };
  auto ratio = [&](double m, double d) {
    if (d <= 0 || !modelled) return std::string("-");
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", m / d);
    return std::string(b);
  };
  int quiet = 0;
  double quiet_seconds = 0;
  for (const auto& r : rows) {
    if (moves_nothing(r)) {
      ++quiet;
      quiet_seconds += r.measured;
      continue;
    }
    add_line(r.kind, r.name, r.grid, detail::profile_seconds(r.measured), model_seconds(r.modelled),
             ratio(r.measured, r.modelled));
  }
  if (quiet > 0)
    add_line("none", std::to_string(quiet) + " transfers moving nothing", "",
             detail::profile_seconds(quiet_seconds), model_seconds(0), "-");
  add_line("step", "execute(), waits included", "", detail::profile_seconds(step_measured),
           model_seconds(step_modelled), ratio(step_measured, step_modelled));
  return s;
}

WORKPART_DECL std::string plan_profile::to_json() const {
  const auto num = detail::json_number;
  const auto esc = detail::json_escape;
  std::string s = "{\"ranks\":" + std::to_string(ranks) +
                  ",\"executes\":" + std::to_string(executes) + ",\"model\":\"" + esc(model) +
                  "\",\"step\":{\"measured\":" + num(step_measured) +
                  ",\"modelled\":" + num(step_modelled) + "},\"rows\":[";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    s += std::string(k ? "," : "") + "{\"kind\":\"" + esc(r.kind) + "\",\"name\":\"" + esc(r.name) +
         "\",\"grid\":\"" + esc(r.grid) + "\",\"map\":" + std::to_string(r.map) +
         ",\"transfer\":" + std::to_string(r.transfer) +
         ",\"executes\":" + std::to_string(r.executes) + ",\"measured\":" + num(r.measured) +
         ",\"modelled\":" + num(r.modelled) + ",\"bytes\":" + std::to_string(r.bytes) + "}";
  }
  s += "],\"timeline\":[";
  for (std::size_t k = 0; k < timeline.size(); ++k) {
    const auto& e = timeline[k];
    s += std::string(k ? "," : "") + "{\"rank\":" + std::to_string(e.rank) +
         ",\"row\":" + std::to_string(e.row) + ",\"start\":" + num(e.start) +
         ",\"end\":" + num(e.end) + "}";
  }
  return s + "]}";
}

WORKPART_DECL std::string plan_profile::to_svg() const {
  auto text = [](const std::string& t) {  // XML text
    std::string o;
    for (char c : t) {
      if (c == '<')
        o += "&lt;";
      else if (c == '>')
        o += "&gt;";
      else if (c == '&')
        o += "&amp;";
      else
        o += c;
    }
    return o;
  };
  double span = 0;
  for (const auto& e : timeline) span = std::max(span, e.end);
  if (span <= 0) span = 1;
  const int left = 70, width = 900, lane = 28, top = 50;
  const int height = top + lane * std::max(1, ranks) + 60;
  char b[512];
  std::snprintf(b, sizeof b,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                "font-family=\"sans-serif\" font-size=\"11\">\n",
                left + width + 20, height);
  std::string s = b;
  s += "<text x=\"" + std::to_string(left) + "\" y=\"18\" font-size=\"13\">" +
       text("the last execute() on each rank: " + detail::profile_seconds(span) + " s; " +
            std::to_string(executes) + " executes, median step " +
            detail::profile_seconds(step_measured) + " s (modelled " +
            detail::profile_seconds(step_modelled) + " s)") +
       "</text>\n";
  for (int r = 0; r < ranks; ++r) {
    const int y = top + r * lane;
    s += "<text x=\"4\" y=\"" + std::to_string(y + 17) + "\">rank " + std::to_string(r) +
         "</text>\n";
    s += "<rect x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(y + 2) + "\" width=\"" +
         std::to_string(width) + "\" height=\"" + std::to_string(lane - 4) +
         "\" fill=\"#f4f4f4\"/>\n";
  }
  for (const auto& e : timeline) {
    const double x0 = left + width * (e.start / span), x1 = left + width * (e.end / span);
    const int y = top + e.rank * lane;
    const bool wait = e.row < 0 || e.row >= int(rows.size());
    const bool map = !wait && rows[std::size_t(e.row)].map >= 0;
    const std::string name =
        wait ? std::string("wait for the other ranks")
             : rows[std::size_t(e.row)].kind + " " + rows[std::size_t(e.row)].name;
    std::snprintf(b, sizeof b,
                  "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
                  "stroke=\"white\" stroke-width=\"0.5\"><title>",
                  x0, y + 4, std::max(0.5, x1 - x0), lane - 8,
                  wait  ? "#b0b0b0"
                  : map ? "#4a7fc1"
                        : "#e08a2c");
    s += b;
    s += text(name + ": " + detail::profile_seconds(e.end - e.start) + " s") + "</title></rect>\n";
    if (x1 - x0 > 6.5 * double(name.size()) && !wait) {
      std::snprintf(b, sizeof b, "<text x=\"%.2f\" y=\"%d\" fill=\"white\">", x0 + 3, y + 18);
      s += b + text(rows[std::size_t(e.row)].name) + "</text>\n";
    }
  }
  const int ly = top + lane * std::max(1, ranks) + 25;
  const char* legend[3][2] = {{"#4a7fc1", "map (its block)"},
                              {"#e08a2c", "transfer (redistribution or combine)"},
                              {"#b0b0b0", "wait for the other ranks"}};
  for (int k = 0; k < 3; ++k) {
    std::snprintf(b, sizeof b,
                  "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" "
                  "y=\"%d\">%s</text>\n",
                  left + 260 * k, ly, legend[k][0], left + 260 * k + 16, ly + 10, legend[k][1]);
    s += b;
  }
  return s + "</svg>\n";
}

namespace detail {
WORKPART_DECL void log_profile(const plan_profile& p) {
  if (p.rank != 0) return;
  const std::string t = p.str();
  std::size_t from = 0;
  while (from < t.size()) {
    const std::size_t to = std::min(t.find('\n', from), t.size());
    log_line(0, t.substr(from, to - from));
    from = to + 1;
  }
}
}  // namespace detail

WORKPART_DECL std::ostream& operator<<(std::ostream& os, const plan_profile& p) {
  if (p.rank == 0) os << p.str();
  return os;
}

}  // namespace workpart
