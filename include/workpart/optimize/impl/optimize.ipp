/// \file optimize.ipp
/// The bodies of optimize.hpp's functions: the pricer (pricer.hpp) and the search
/// (optimize_tables.hpp), compiled once in workpart::compiled (src/workpart.cpp) or, header-only,
/// included by optimize.hpp. Not a public header.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "../optimize.hpp"
#include "../optimize_tables.hpp"
#include "../pricer.hpp"

namespace workpart {

WORKPART_DECL std::string optimized::str() const {
  auto num = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", x);
    return std::string(b);
  };
  std::string s = "schedule for " + std::to_string(nprocs) + " ranks, modelled cost " + num(cost) +
                  " s" + (proven_optimal ? " (optimal under the model)" : " (not proven optimal)") +
                  ", " + std::to_string(candidates) + " candidate grids:\n";
  for (const auto& m : maps) {
    s += "  map '" + m.map + "': grid " + m.grid.str() + ", own cost " + num(m.cost) + " s";
    if (m.has_runner_up)
      s += "; runner-up " + m.runner_up.str() + " (+" + num(m.runner_up_delta) + " s)";
    s += "\n";
  }
  for (const auto& e : edges) {
    if (e.cost <= 0) continue;
    s += "  " + e.from + " -> " + e.to + " (";
    for (std::size_t x = 0; x < e.arrays.size(); ++x) s += (x ? ", " : "") + e.arrays[x];
    s += "): " + num(e.cost) + " s\n";
  }
  for (const auto& u : unmet_constraints) s += "  constraint not met: " + u + "\n";
  return s;
}

namespace detail {
WORKPART_DECL void check_nprocs(index_t nprocs) {
  if (nprocs < 1 || nprocs > index_t(1) << 20)
    throw grid_error("wp::optimize: " + std::to_string(nprocs) + " ranks; give 1 to 2^20");
}
}  // namespace detail

namespace detail {
WORKPART_DECL std::vector<priced_map> priced_views(const program& p) {
  std::vector<priced_map> v;
  p.for_each_map([&](const map_interface& m) {
    priced_map pm;
    pm.name = m.name();
    pm.extents = m.extents();
    set_work(pm, m.work_per_point());
    pm.constraints = [&m](const grid_shape& g, int nranks) { return m.constraints(g, nranks); };
    v.push_back(std::move(pm));
  });
  return v;
}

WORKPART_DECL optimized optimize_priced(const std::vector<priced_map>& maps, index_t nprocs,
                                        const machine_model& model, const optimize_options& opt) {
  check_nprocs(nprocs);
  return optimize_tables(program_costs(maps, int(nprocs), model, opt.configs), nprocs, opt.search);
}
}  // namespace detail

WORKPART_DECL optimized optimize(const program& p, index_t nprocs, const machine_model& model,
                                 const optimize_options& opt) {
  return detail::optimize_priced(detail::priced_views(p), nprocs, model, opt);
}

WORKPART_DECL std::vector<modelled_transfer> modelled_transfers(
    const std::vector<detail::priced_map>& maps, const schedule& s, int nranks,
    const machine_model& mm) {
  detail::program_pricer pr{maps, nranks, mm, {}, {}, {}, {}, {}, nullptr, {}, {}, {}};
  pr.fixed = &s;
  pr.add_maps();
  std::vector<modelled_transfer> out;
  const int M = int(pr.names.size());
  for (int v = 0; v < M; ++v) {
    for (std::size_t ub = 0; ub < pr.uses_of[std::size_t(v)].size(); ++ub) {
      const auto& use = pr.use_of(v, ub);
      if (!detail::needs_values(use)) continue;  // nothing flows into the map
      const int u = pr.writer_before(v, use.id);
      if (u < 0) continue;
      const int x = pr.find(u, use.id);
      const auto c = pr.edge_cost(u, 0, std::size_t(x), v, 0, ub);
      out.push_back({use.name, pr.names[std::size_t(u)], pr.names[std::size_t(v)], c.total(),
                     detail::step_seconds(mm, c.sent, c.received, c.messages)});
    }
  }
  return out;
}

WORKPART_DECL std::vector<modelled_transfer> modelled_transfers(const program& p, const schedule& s,
                                                                int nranks,
                                                                const machine_model& mm) {
  return modelled_transfers(detail::priced_views(p), s, nranks, mm);
}

WORKPART_DECL double modelled_cost(const std::vector<detail::priced_map>& maps, const schedule& s,
                                   int nranks, const machine_model& mm, const config_options& opt) {
  if (nranks < 1)
    throw grid_error("wp::modelled_cost: " + std::to_string(nranks) + " ranks; give at least 1");
  detail::program_pricer pr{maps, nranks, mm, opt, {}, {}, {}, {}, nullptr, {}, {}, {}};
  pr.fixed = &s;
  const program_cost_tables t = pr.build();  // one configuration per map: the schedule's
  double cost = 0;
  for (std::size_t v = 0; v < t.graph.num_vertices(); ++v) cost += t.graph.vertex_cost(v, 0);
  for (std::size_t e = 0; e < t.graph.num_edges(); ++e) cost += t.graph.edge_cost(e, 0, 0);
  return cost;
}
WORKPART_DECL double modelled_cost(const program& p, const schedule& s, int nranks,
                                   const machine_model& mm, const config_options& opt) {
  return modelled_cost(detail::priced_views(p), s, nranks, mm, opt);
}

WORKPART_DECL program_cost_tables program_costs(const std::vector<detail::priced_map>& maps,
                                                int nranks, const machine_model& mm,
                                                const config_options& opt) {
  if (nranks < 1)
    throw grid_error("wp::optimize: " + std::to_string(nranks) + " ranks; give at least 1");
  return detail::program_pricer{maps, nranks, mm, opt, {}, {}, {}, {}, nullptr, {}, {}, {}}.build();
}
WORKPART_DECL program_cost_tables program_costs(const program& p, int nranks,
                                                const machine_model& mm,
                                                const config_options& opt) {
  return program_costs(detail::priced_views(p), nranks, mm, opt);
}

}  // namespace workpart
