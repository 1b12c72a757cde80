#pragma once
/// \file program_pricer.hpp
/// The pricer's state (no MPI): every map's candidate configurations on its grids (its
/// solved arrays, where its writes leave each array), which maps write and read each array,
/// and the price of one edge between two configurations. pricer.hpp builds the cost tables
/// from it; combine_pricing.hpp prices the combines of partial results ahead of the tables.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "block_names.hpp"
#include "../program/program.hpp"
#include "cost_model.hpp"
#include "priced_map.hpp"
#include "program_cost_tables.hpp"

namespace workpart {

namespace detail {

struct transfer_memo;

/// config_options::tie_backward's pairs, by name: map "dN" (wp::backward's name for the
/// derivative of map N) and map N where both have one space. [map]: the map whose grid it
/// takes, itself where none. (The pricer ties a pair where their candidate grids agree too.)
inline std::vector<std::size_t> backward_partners(
    const std::vector<std::string>& names, const std::vector<std::vector<index_t>>& extents) {
  std::map<std::string, std::size_t> by_name;
  for (std::size_t m = 0; m < names.size(); ++m) by_name.emplace(names[m], m);
  std::vector<std::size_t> to(names.size());
  for (std::size_t m = 0; m < names.size(); ++m) {
    to[m] = m;
    if (names[m].size() < 2 || names[m][0] != 'd') continue;
    const auto f = by_name.find(names[m].substr(1));
    if (f != by_name.end() && extents[f->second] == extents[m]) to[m] = f->second;
  }
  return to;
}

/// config_options' ties as groups of maps, [map] -> the group's first map (itself where
/// untied): tie_backward, map "dN" with map N where both have one space (a chain "ddN" ->
/// "dN" -> "N" ends at N); tie_blocks, the maps of a stem's blocks named alike but for the
/// block's number. Two maps are joined only where their candidate grids, `grids`, are the same.
inline std::vector<std::size_t> tied_maps(const std::vector<std::string>& names,
                                          const std::vector<std::vector<index_t>>& extents,
                                          const std::vector<std::vector<grid_shape>>& grids,
                                          const config_options& copt) {
  const std::size_t M = names.size();
  std::vector<std::size_t> up(M);  // union-find; a group's smallest map is its root
  for (std::size_t m = 0; m < M; ++m) up[m] = m;
  auto root = [&](std::size_t m) {
    while (up[m] != m) m = up[m] = up[up[m]];
    return m;
  };
  auto join = [&](std::size_t a, std::size_t b) {
    if (grids[a] != grids[b]) return;
    a = root(a), b = root(b);
    if (a != b) up[std::max(a, b)] = std::min(a, b);
  };
  if (copt.tie_backward) {
    const std::vector<std::size_t> to = backward_partners(names, extents);
    for (std::size_t m = 0; m < M; ++m) join(m, to[m]);
  }
  for (const std::string& stem : copt.tie_blocks) {
    std::map<std::string, std::size_t> first;  // a name without its block number -> map
    for (std::size_t m = 0; m < M; ++m) {
      if (stem.empty() || block_tokens(names[m], stem).empty()) continue;
      const auto [it, fresh] =
          first.emplace(renumber_blocks(names[m], stem, [](long) { return 0L; }), m);
      if (!fresh) join(m, it->second);
    }
  }
  std::vector<std::size_t> to(M);
  for (std::size_t m = 0; m < M; ++m) to[m] = root(m);
  return to;
}

/// The vertex whose configuration each vertex of `t`'s graph takes (tied_search.hpp; the roots
/// and untied maps their own): tied_maps over the tables' candidate grids, `extents` the maps'
/// spaces. The tables do not depend on the ties, so tables priced with some ties can be searched
/// with others (wp::automatic's fall-back to PaSE's space).
inline std::vector<std::size_t> tied_vertices(const program_cost_tables& t,
                                              const std::vector<std::vector<index_t>>& extents,
                                              const config_options& copt) {
  const std::vector<std::size_t> to = tied_maps(t.maps, extents, t.grids, copt);
  std::vector<std::size_t> tied(t.graph.num_vertices());
  for (std::size_t v = 0; v < tied.size(); ++v) tied[v] = v;
  for (std::size_t m = 0; m < to.size(); ++m) tied[m + 1] = to[m] + 1;
  return tied;
}

/// The threads for n tasks: `threads` (0: one per hardware thread), at most one per
/// `per_thread` tasks (small jobs stay on this thread).
inline std::size_t task_threads(std::size_t n, int threads, std::size_t per_thread) {
  const std::size_t t = threads > 0 ? std::size_t(threads) : std::thread::hardware_concurrency();
  return std::max<std::size_t>(1, std::min(t, n / std::max<std::size_t>(1, per_thread)));
}
/// Runs task(x, w) for x in [0, n) on `t` threads (w: which, from 0; this thread is 0).
/// Tasks whose errors must come out in a set order catch their own; any other (an allocation
/// that fails on a worker) stops the handing out of tasks and is raised here once every
/// thread has stopped, as on one thread. Threads the system refuses are done without.
template <class Task>
void run_tasks(std::size_t n, std::size_t t, const Task& task) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed;
  std::mutex failed_lock;
  auto work = [&](std::size_t w) {
    try {
      for (std::size_t x; (x = next.fetch_add(1)) < n;) task(x, w);
    } catch (...) {
      const std::lock_guard<std::mutex> hold(failed_lock);
      if (!failed) failed = std::current_exception();
      next = n;
    }
  };
  std::vector<std::thread> pool;
  try {
    for (std::size_t w = 1; w < t; ++w) pool.emplace_back(work, w);
  } catch (...) {  // fewer threads: the tasks are done by those there are
  }
  work(0);
  for (auto& th : pool) th.join();
  if (failed) std::rethrow_exception(failed);
}

struct program_pricer {
  static constexpr std::size_t npos = std::size_t(-1);
  const std::vector<priced_map>& maps;
  int nranks;
  machine_model mm;
  config_options copt;

  std::vector<std::string> names;
  std::vector<std::vector<map_config>> configs;  // [map][config]
  std::vector<double> ops;                       // [map]
  std::vector<char> gemms;                       // [map]: runs as GEMMs (priced_map::gemm)

  const schedule* fixed = nullptr;   // price only this schedule's grids
  std::vector<std::string> unmet;    // maps whose options no grid meets
  std::map<const void*, int> users;  // array -> how many of the maps use it
  mutable transfer_pool pool;        // the combines' program solutions' transfers, reused

  /// Whether the program uses the array in more than one map. Reads `users` only (the maps
  /// are configured on several threads).
  bool shared(const void* id) const {
    const auto it = users.find(id);
    return it != users.end() && it->second > 1;
  }
  /// A grid the program solver refuses (check_split_writes): partial results that overlap, in
  /// an array the program uses again, that cannot be cut into one part per rank
  /// (overlapping_refused).
  bool refused_in_program(const map_solution& ms) const {
    for (const auto& ap : ms.arrays)
      if (overlapping_refused(ap, shared(ap.use.id))) return true;
    return false;
  }

  std::vector<std::vector<array_use>> uses_of{};  // [map]: its arrays, as on one rank
  void count_users() {
    if (!uses_of.empty()) return;
    for (const auto& pm : maps) {
      uses_of.push_back(
          pm.constraints(grid_shape(std::vector<index_t>(pm.extents.size(), 1)), 1).arrays);
      for (const auto& u : uses_of.back()) ++users[u.id];
    }
  }

  std::map<std::string, index_t> shape_classes{};  // priced_map::shape_key -> class
  std::vector<index_t> shape_class{};              // [map]: alike maps share one
  /// (class, which of its arrays other maps use too) -> the first such map: alike maps
  /// whose arrays the program shares alike have the same configurations but for the arrays'
  /// identities (their candidates are solved once; a Transformer's blocks, 6 times fewer)
  std::map<std::string, std::size_t> configured_like{};

  /// The alike map configured before map m whose configurations m takes (see
  /// configured_like), or npos.
  std::size_t alike_before(std::size_t m) {
    if (fixed || maps[m].shape_key.empty()) return npos;
    std::string key = std::to_string(shape_class[m]) + ':';
    for (const auto& u : uses_of[m]) key += users[u.id] > 1 ? '1' : '0';
    const auto [it, first] = configured_like.emplace(key, m);
    return first ? npos : it->second;
  }
  /// Map `like`'s configurations with map m's arrays (their boxes moved to m's positions),
  /// or false where they do not fit m.
  bool configure_like(std::size_t m, std::size_t like, const std::vector<grid_shape>& grids) {
    const std::vector<array_use>& uses = uses_of[m];
    std::vector<map_config> cs = configs[like];
    if (cs.empty() || cs.size() > grids.size()) return false;
    const std::vector<std::vector<index_t>> by = moved_by(maps[like], maps[m], uses.size());
    for (auto& c : cs) {
      if (c.arrays.size() != uses.size()) return false;
      for (std::size_t a = 0; a < uses.size(); ++a) {
        if (by[a].empty()) continue;  // shared, as it is
        auto moved = std::make_shared<array_solution>(*c.arrays[a]);
        moved->use = uses[a];
        for (auto* boxes : {&moved->rbox, &moved->wbox, &moved->w_parts}) move_boxes(*boxes, by[a]);
        c.arrays[a] = std::move(moved);
        if (c.held[a]) {
          std::vector<box> held = c.held[a]->boxes;
          move_boxes(held, by[a]);
          c.held[a] = std::make_shared<const holders>(std::move(held));
        }
      }
    }
    configs[m] = std::move(cs);
    return true;
  }
  /// [array][axis]: how far map `to`'s boxes lie from alike map `from`'s (empty: not moved).
  static std::vector<std::vector<index_t>> moved_by(const priced_map& from, const priced_map& to,
                                                    std::size_t arrays) {
    std::vector<std::vector<index_t>> by(arrays);
    for (std::size_t a = 0; a < arrays && a < from.positions.size() && a < to.positions.size();
         ++a) {
      const auto &p = from.positions[a], &q = to.positions[a];
      bool moved = false;
      for (std::size_t x = 0; x < p.size() && x < q.size(); ++x) moved = moved || p[x] != q[x];
      if (!moved) continue;
      for (std::size_t x = 0; x < p.size() && x < q.size(); ++x) by[a].push_back(q[x] - p[x]);
    }
    return by;
  }
  static void move_boxes(std::vector<box>& boxes, const std::vector<index_t>& by) {
    for (box& b : boxes) {
      if (b.empty()) continue;
      for (int x = 0; x < b.rank && std::size_t(x) < by.size(); ++x) {
        b.lo[x] += by[std::size_t(x)];
        b.hi[x] += by[std::size_t(x)];
      }
    }
  }

  /// Map m's name, class and candidate grids (the schedule's alone where it is fixed).
  std::vector<grid_shape> grids_of(const priced_map& m) {
    if (m.shape_key.empty())
      shape_class.push_back(-1 - index_t(names.size()));  // its own
    else
      shape_class.push_back(
          shape_classes.emplace(m.shape_key, index_t(shape_classes.size())).first->second);
    const int N = int(m.extents.size());
    names.push_back(m.name);
    ops.push_back(m.ops);
    gemms.push_back(char(m.gemm));
    if (fixed) {
      const grid_shape* g = fixed->find(m.name);
      if (!g || g->space_rank() != N || g->product() > nranks)
        throw grid_error("wp::optimize: map '" + m.name + "' has no grid of rank " +
                         std::to_string(N) + " for " + std::to_string(nranks) +
                         " ranks in the schedule");
      return {*g};
    }
    std::string why;
    std::vector<grid_shape> grids = grid_configurations(m.extents, nranks, copt, &why);
    if (!why.empty()) unmet.push_back("map '" + m.name + "': " + why);
    return grids;
  }

  /// Map m solved on each of its grids that the plans accept (no state changes: the maps are
  /// configured on several threads).
  std::vector<map_config> solve_configs(const priced_map& m,
                                        const std::vector<grid_shape>& grids) const {
    const int N = int(m.extents.size());
    std::vector<map_config> cs;
    std::string first_refusal;  // why the first refused grid cannot be planned
    for (const auto& g : grids) {
      map_config c;
      c.grid = g;
      // a grid the plans would refuse (a statement reading what another rank wrote, '='
      // writes that overlap, a box too big for an MPI count) is no candidate
      map_solution ms;
      try {
        map_constraints cons =
            checked_constraints(m.name, N, g, nranks, [&] { return m.constraints(g, nranks); });
        const std::vector<char> generated = generated_flags(cons);  // priced as generated in place
        ms = solve_map(m.name, N, std::move(cons), g, nranks, generated);
      } catch (const plan_error& e) {
        if (fixed) throw;
        if (first_refusal.empty()) first_refusal = e.what();
        continue;
      }
      if (refused_in_program(ms)) {
        const std::string why = "map '" + m.name + "': under grid " + g.str() +
                                " partial results that overlap cannot be cut into one part "
                                "per rank, and the program uses the array again";
        if (fixed) throw plan_error("wp::optimize: " + why);
        if (first_refusal.empty()) first_refusal = why;
        continue;
      }
      c.max_points = ms.largest_block;
      c.max_bytes = largest_block_bytes(ms);
      for (auto& ap : ms.arrays) {
        // overlapping partial results combined on their parts: each rank holds its part
        const bool parts = overlapping_combined(ap, shared(ap.use.id));
        c.overlapping.push_back(char(parts));
        c.held.push_back(ap.use.written
                             ? std::make_shared<const holders>(
                                   parts ? ap.w_parts : leaders_write_boxes(ap, g, nranks))
                             : nullptr);
        c.arrays.push_back(std::make_shared<const array_solution>(std::move(ap)));
      }
      cs.push_back(std::move(c));
    }
    if (cs.empty())
      throw plan_error("wp::optimize: map '" + m.name + "' can be planned on none of its " +
                       std::to_string(grids.size()) + " candidate grids for " +
                       std::to_string(nranks) + " ranks; the first refused: " + first_refusal);
    return cs;
  }

  /// Every map's configurations: the maps no alike map before them configures are solved on
  /// copt.threads threads, then the others take theirs. Errors as configuring the maps one
  /// by one in program order would raise them (the first map's that fails).
  void add_maps() {
    count_users();  // before the threads, which read `users`
    const std::size_t M = maps.size();
    std::vector<std::vector<grid_shape>> grids(M);
    std::vector<std::size_t> like(M, npos), solved;
    std::vector<std::exception_ptr> failed(M);
    for (std::size_t m = 0; m < M; ++m) {
      try {
        grids[m] = grids_of(maps[m]);
      } catch (...) {
        failed[m] = std::current_exception();
        break;  // raised below, after any error of the maps before it
      }
      like[m] = alike_before(m);
      if (like[m] == npos) solved.push_back(m);
    }
    configs.assign(M, {});
    // the maps no alike map before them configures, then those others (copies of them)
    std::vector<std::size_t> copied;
    for (std::size_t m = 0; m < M && !failed[m]; ++m)
      if (like[m] != npos) copied.push_back(m);
    for (const auto* batch : {&solved, &copied})
      run_tasks(batch->size(), task_threads(batch->size(), copt.threads, 1),
                [&](std::size_t x, std::size_t) {
                  const std::size_t m = (*batch)[x];
                  try {
                    if (like[m] == npos || !configure_like(m, like[m], grids[m]))
                      configs[m] = solve_configs(maps[m], grids[m]);
                  } catch (...) {
                    failed[m] = std::current_exception();
                  }
                });
    for (std::size_t m = 0; m < M; ++m)
      if (failed[m]) std::rethrow_exception(failed[m]);
  }

  /// Map m's use of array u (its own: configurations may share another map's solution).
  const array_use& use_of(int m, std::size_t u) const { return uses_of[std::size_t(m)][u]; }
  /// Which of map m's arrays is the array (-1: none).
  int find(int m, const void* id) const {
    const auto& uses = uses_of[std::size_t(m)];
    for (std::size_t u = 0; u < uses.size(); ++u)
      if (uses[u].id == id) return int(u);
    return -1;
  }

  /// The last map before v that writes the array (-1: none).
  int writer_before(int v, const void* id) const {
    for (int u = v - 1; u >= 0; --u) {
      const int x = find(u, id);
      if (x >= 0 && use_of(u, std::size_t(x)).written) return u;
    }
    return -1;
  }
  /// The first map after writer u that needs the array's values from it (-1: none).
  int first_reader_after(int u, const void* id) const {
    for (int v = u + 1; v < int(names.size()); ++v) {
      const int x = find(v, id);
      if (x < 0) continue;
      const auto& use = use_of(v, std::size_t(x));
      if (needs_values(use)) return v;
      if (use.written) return -1;  // overwritten before anyone reads it
    }
    return -1;
  }
  /// The last map of the program that writes the array (-1: none).
  int last_writer_of(const void* id) const { return writer_before(int(names.size()), id); }
  /// The map whose values of map v's array ub the tables price on an edge into v: its last
  /// writer before v, or, `carried` (values a later map writes for the next execute()), the
  /// program's last writer after v; -1 where neither (root's, or nothing flows in).
  int source_of(int v, std::size_t ub, bool carried) const {
    const auto& use = use_of(v, ub);
    if (!needs_values(use)) return -1;
    const int writer = writer_before(v, use.id);
    if (writer >= 0) return writer;
    const int later = carried ? last_writer_of(use.id) : -1;
    return later > v ? later : -1;
  }
  /// The executions one scatter and gather serve (config_options::executions, 0 resolved).
  double executions() const {
    if (copt.executions >= 1) return copt.executions;
    for (int v = 0; v < int(names.size()); ++v)
      for (const auto& use : uses_of[std::size_t(v)])
        if (needs_values(use) && writer_before(v, use.id) < 0 && last_writer_of(use.id) > v)
          return 100;
    return 1;
  }
  /// Whether no map after v writes the array (v's values are the ones root gathers).
  bool last_writer(int v, const void* id) const {
    for (int u = v + 1; u < int(names.size()); ++u) {
      const int x = find(u, id);
      if (x >= 0 && use_of(u, std::size_t(x)).written) return false;
    }
    return true;
  }
  /// Whether writer m's combine of its partial results of array u is priced on an edge (to its
  /// first reader, or to the outputs) rather than on the map: in programs of several maps.
  bool combine_on_edge(int m, const map_config& c, std::size_t u) const {
    if (names.size() < 2 || !c.split(u)) return false;
    const void* id = use_of(m, u).id;
    return first_reader_after(m, id) >= 0 || last_writer(m, id);
  }
  /// Whether writer u's partial results of array ua (config ku) are combined on the way to
  /// reader v: v is the first map that needs them combined.
  bool combines_for(int u, std::size_t ku, std::size_t ua, int v) const {
    const map_config& cw = configs[std::size_t(u)][ku];
    return names.size() > 1 && cw.split(ua) && first_reader_after(u, use_of(u, ua).id) == v;
  }
  /// What array ua of writer u (config ku) costs to bring to reader v (config kv, array ub):
  /// the combine and the pieces, as the program plan moves them, when v is the first map that
  /// needs the writer's partial results combined; else the pieces from where the writer's
  /// leaders hold whole values.
  transfer_cost edge_cost(int u, std::size_t ku, std::size_t ua, int v, std::size_t kv,
                          std::size_t ub, const reader_need* need = nullptr) const {
    const map_config& cw = configs[std::size_t(u)][ku];
    const map_config& cr = configs[std::size_t(v)][kv];
    if (combines_for(u, ku, ua, v))
      return split_transfer(names[std::size_t(u)], cw, ua, names[std::size_t(v)], &cr, ub, nranks,
                            &pool);
    if (need) return edge_transfer(*cw.held[ua], use_of(u, ua).elem_size, *need, nranks);
    return edge_transfer(cw, ua, cr, ub, nranks);
  }

  /// The vertex whose configuration each vertex takes (tied_vertices).
  std::vector<std::size_t> ties(const program_cost_tables& t) const {
    std::vector<std::vector<index_t>> extents;
    for (const auto& m : maps) extents.push_back(m.extents);
    return tied_vertices(t, extents, copt);
  }

  /// The cost tables (pricer.hpp).
  inline program_cost_tables build();
};

}  // namespace detail
}  // namespace workpart
