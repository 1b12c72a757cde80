#pragma once
/// \file schedule.hpp
/// wp::schedule: one process grid per map of a program, by the map's name.

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

}  // namespace workpart
