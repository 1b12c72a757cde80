#pragma once
/// \file schedule.hpp
/// wp::schedule: one process grid per map of a program, by the map's name.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../expr/map.hpp"
#include "grid.hpp"

namespace workpart {

/// \code
///   wp::schedule s;
///   s.set(m1, wp::grid<2, 2, 1>);     // compile-time grid: its rank is checked here
///   s.set(m2, wp::grid_shape{4, 1});  // run-time grid: checked by wp::distribute
/// \endcode
/// Maps are known by name (a program holds copies of its maps), so the maps of a program
/// have distinct names. Setting a map again replaces its grid.
class schedule {
 public:
  template <int N, class... S, index_t... G>
  schedule& set(const map_t<N, S...>& m, grid_t<G...>) {
    static_assert(sizeof...(G) == N,
                  "workpart::schedule::set: grid rank must equal the map's iteration-space rank; "
                  "pad with 1s, e.g. grid<2,2,1> for a 3-index space");
    return set(m.name(), grid_shape{G...});
  }
  template <int N, class... S>
  schedule& set(const map_t<N, S...>& m, const grid_shape& g) {
    return set(m.name(), g);
  }
  /// By name (the optimizer and tools build schedules this way).
  schedule& set(const std::string& map, const grid_shape& g) {
    for (auto& e : entries_)
      if (e.first == map) {
        e.second = g;
        return *this;
      }
    entries_.emplace_back(map, g);
    return *this;
  }
  /// The grid of a map, or nullptr.
  const grid_shape* find(const std::string& map) const {
    for (const auto& e : entries_)
      if (e.first == map) return &e.second;
    return nullptr;
  }
  const std::vector<std::pair<std::string, grid_shape>>& entries() const { return entries_; }
  std::string str() const {
    std::string s;
    for (const auto& e : entries_) s += (s.empty() ? "" : ", ") + e.first + ": " + e.second.str();
    return "{" + s + "}";
  }

 private:
  std::vector<std::pair<std::string, grid_shape>> entries_;
};

namespace detail {
/// Edits (insert, delete, replace one character) between a and b.
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
/// "; did you mean 'x'?" for the name nearest to `name` (a third of its letters or 2 edits
/// at most), then the names there are: a message for a misspelt name.
inline std::string name_hint(const std::string& name, const std::vector<std::string>& names,
                             const std::string& what) {
  std::string best;
  std::size_t dist = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& n : names)
    if (const std::size_t d = edit_distance(name, n); d < dist) {
      dist = d;
      best = n;
    }
  std::string s = best.empty() ? std::string() : "; did you mean '" + best + "'?";
  s += " (the " + what + ":";
  for (std::size_t x = 0; x < names.size(); ++x) s += (x ? ", '" : " '") + names[x] + "'";
  return s + ")";
}

/// The grid of each map of a program (`names`, in program order) from a schedule: every map
/// has a grid, every grid's map is in the program, and the maps' names differ (a schedule
/// knows maps by name). `who` starts the messages ("wp::distribute", "wp::plan_on_paper").
/// `origins[m]`: what made map m where the library did (map_t::origin), so that a name it
/// generated twice is explained by what the user did.
inline std::vector<grid_shape> schedule_grids(const std::vector<std::string>& names,
                                              const schedule& s, const std::string& who,
                                              const std::vector<std::string>& origins = {}) {
  auto origin = [&](std::size_t m) { return m < origins.size() ? origins[m] : std::string(); };
  for (std::size_t x = 0; x < names.size(); ++x)
    for (std::size_t y = x + 1; y < names.size(); ++y)
      if (names[x] == names[y]) {
        const std::string a = origin(x), b = origin(y);
        std::string why = "a schedule gives grids by map name, so name the maps apart";
        if (!a.empty() && !b.empty())
          why = "both were made by wp::backward (" + a + ", and " + b +
                "), which names its maps after the forward maps they differentiate: the program "
                "holds two backward programs of the same forward maps. Ask for every gradient "
                "in one wp::backward (several wp::wrt); for two losses, differentiate their sum, "
                "or differentiate a copy of the forward maps named apart";
        else if (!a.empty() || !b.empty())
          why = "one was made by " + (a.empty() ? b : a) +
                ", which names its maps after the forward maps they differentiate; name your map "
                "apart";
        throw plan_error(who + ": the program has two maps named '" + names[x] + "'; " + why);
      }
  for (const auto& e : s.entries())
    if (std::find(names.begin(), names.end(), e.first) == names.end())
      throw plan_error(who + ": the schedule gives grid " + e.second.str() + " to map '" + e.first +
                       "', which is not in the program" +
                       name_hint(e.first, names, "program's maps"));
  std::vector<grid_shape> grids;
  for (const auto& n : names) {
    const grid_shape* g = s.find(n);
    if (!g)
      throw grid_error(who + ": map '" + n +
                       "' has no grid in the schedule; give it one with schedule::set");
    grids.push_back(*g);
  }
  return grids;
}
}  // namespace detail

}  // namespace workpart
