#pragma once
/// \file inspect.ipp
/// The bodies of inspect.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../inspect.hpp"

namespace workpart::detail {

WORKPART_DECL std::vector<index_t> flatten(const range_inspection& in) {
  std::vector<index_t> v;
  for (const auto& per_rank : in)
    for (const auto& r : per_rank) {
      v.push_back(r.known);
      v.push_back(r.lo);
      v.push_back(r.hi);
    }
  return v;
}

WORKPART_DECL range_inspection unflatten(const std::vector<index_t>& v, int ranges, int nranks) {
  range_inspection in(static_cast<std::size_t>(ranges),
                      std::vector<inspected_range>(static_cast<std::size_t>(nranks)));
  std::size_t at = 0;
  for (auto& per_rank : in)
    for (auto& r : per_rank) {
      r.known = v.at(at) != 0;
      r.lo = v.at(at + 1);
      r.hi = v.at(at + 2);
      at += 3;
    }
  return in;
}

WORKPART_DECL bool any_known(const range_inspection& in) {
  for (const auto& per_rank : in)
    for (const auto& r : per_rank)
      if (r.known) return true;
  return false;
}

WORKPART_DECL void check_inspection_current(const std::string& map, const range_inspection& planned,
                                            const range_inspection& now) {
  for (std::size_t k = 0; k < planned.size(); ++k)
    for (std::size_t r = 0; r < planned[k].size(); ++r) {
      const inspected_range& p = planned[k][r];
      const inspected_range& n = now[k][r];
      if (!p.known) continue;
      const bool fits = n.known && (n.hi <= n.lo || (p.lo <= n.lo && n.hi <= p.hi && p.lo < p.hi));
      if (!fits)
        throw plan_error(
            "map '" + map + "': data-dependent inner range " + std::to_string(k) +
            " now runs over [" +
            (n.known ? std::to_string(n.lo) + ", " + std::to_string(n.hi) : std::string("?")) +
            ") on rank " + std::to_string(r) + ", outside the [" + std::to_string(p.lo) + ", " +
            std::to_string(p.hi) +
            ") found when the plan was made: the arrays its bounds read changed since "
            "wp::distribute; distribute the map again");
    }
}
}  // namespace workpart::detail
