#pragma once
/// \file pricer.hpp
/// A program's schedule problem as cost tables for the search (optimize/search.hpp), priced
/// with cost_model.hpp's pieces:
///  - a map on a grid costs its slowest rank's arithmetic (points of its block times the
///    operations per point, ops_per_point: an inner reduction counts its trips);
///  - an array passed from the map that last wrote it to a map that reads it (or combines
///    into its old values) costs the redistribution between the writer's and the reader's
///    boxes: alpha per message of the busiest rank plus beta per byte it sends or receives;
///  - partial results of a split reduction are combined as the program plan combines them:
///    solve_program on the writer and the first map after it that needs the values chooses
///    Allreduce, reduce-scatter or Reduce, and that edge costs the combine plus what the
///    reader then fetches (the modelled bytes are the plan's, for every combine kind); with no
///    such reader the combine is priced on the edge to the outputs (or, for an array nobody
///    reads or gathers, on the map). A program of one map combines onto the leaders and
///    gathers, as its plan does;
///  - the program's inputs come from a source vertex `root (inputs)` and its outputs go to a
///    sink vertex `root (outputs)`, each with one configuration: an edge from the source
///    costs the scatter the map's own plan would do (nothing for an array init() generates
///    in place), an edge to the sink its gather.
/// A program run E times per scatter and gather (config_options::executions) is priced per
/// execute(): the scatter and the gather weigh 1/E, and an array a map reads before any map
/// writes it, while a later map does (a training step's weights, read by the forward maps and
/// written by the update), comes from root in the first execute() and from that later map in
/// the other E - 1 (priced as an edge between the two, weighing (E - 1)/E).
/// Pairwise by construction: a reader's need is priced from its last writer alone (what an
/// older writer or root holds of an array written only in part is left out); what a map
/// moves back to itself between executions (an in-place update on one grid) is left out.

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cost_model.hpp"

namespace workpart {

/// A program's schedule problem under a machine model: every map's candidate grids and what
/// each costs, as a cost-table graph (vertex 0 is `root (inputs)`, the last `root
/// (outputs)`, map m is vertex m + 1).
struct program_cost_tables {
  cost_graph graph;
  std::vector<std::string> maps;
  std::vector<std::vector<grid_shape>> grids;  // [map][config]
  /// [edge]: the arrays it carries
  std::vector<std::vector<std::string>> edge_arrays;
  /// Maps no grid allowed by config_options fits ("map 'loss': no grid of ..."): they keep
  /// the all-ones grid, and the optimum is over the grids that remain.
  std::vector<std::string> unmet;
  /// [vertex]: the vertex whose configuration it takes (itself when free); empty when none is
  /// tied (config_options::tie_backward).
  std::vector<std::size_t> tied;
};

namespace detail {

/// A map as the pricer sees it: its name, the extents of its space, its operations per point
/// and its constraints on any grid. Typed maps (map_t) and run-time descriptions
/// (optimize/program_description.hpp) both become this, so both are priced by one code path.
struct priced_map {
  std::string name;
  std::vector<index_t> extents;
  double ops = 1;
  std::function<map_constraints(const grid_shape&, int)> constraints;
  /// Maps with the same non-empty key are alike but for names: the same constraints on every
  /// grid, their accesses to arrays of the same shapes and types. A combine of partial results
  /// between two such pairs of maps is priced once (a network's repeated blocks: a
  /// Transformer's six encoder blocks price their combines as one). Empty: alike to no other.
  std::string shape_key{};
};
template <int N, class... S>
priced_map priced_view(const map_t<N, S...>& m) {
  priced_map p;
  p.name = m.name();
  for (int d = 0; d < N; ++d) p.extents.push_back(m.iteration_space().extent(d));
  p.ops = ops_per_point(m);
  p.constraints = [&m](const grid_shape& g, int nranks) {
    return extract_constraints(m, g, nranks);
  };
  return p;
}
template <class... Maps>
std::vector<priced_map> priced_views(const program_t<Maps...>& p) {
  std::vector<priced_map> v;
  p.for_each_map([&](const auto& m) { v.push_back(priced_view(m)); });
  return v;
}

struct program_pricer;

/// Edge prices by what they depend on: where the writer's grid leaves the array (its
/// holders' boxes) and what the reader's grid needs of it (its boxes). Grids of many
/// dimensions hold and need one array alike in many ways (a convolution's 8-D grids that
/// differ only along the channels it sums over, say), so each distinct pair is priced once:
/// the same figures, in far fewer box intersections. A combine of partial sums
/// (split_transfer) is priced once per (maps, arrays, boxes each rank writes and reads).
struct transfer_memo {
  using key = std::vector<index_t>;
  std::map<key, int> held_ids, need_ids;
  std::map<const holders*, int> held_of;             // a writer grid's holders -> id
  std::map<std::pair<int, int>, double> seconds_of;  // (held id, need id) -> seconds
  /// Combines: per (writer, its array, reader, its array), the boxes each rank writes of it
  /// (ranks writing one box are one group of partial results) and the reader's boxes.
  std::map<key, double> combine_seconds;

  static void append(key& k, const std::vector<box>& boxes) {
    k.push_back(index_t(boxes.size()));
    for (const box& b : boxes) {
      k.push_back(b.empty() ? -1 : b.rank);
      if (b.empty()) continue;
      k.insert(k.end(), b.lo, b.lo + b.rank);
      k.insert(k.end(), b.hi, b.hi + b.rank);
    }
  }
  static int id_of(std::map<key, int>& ids, key k) {
    return ids.emplace(std::move(k), int(ids.size())).first->second;
  }
  int held_id(const holders& h, std::size_t elem_size) {
    if (auto it = held_of.find(&h); it != held_of.end()) return it->second;
    key k{index_t(elem_size)};
    append(k, h.boxes);
    return held_of[&h] = id_of(held_ids, std::move(k));
  }
  int need_id(const reader_need& n) {
    key k;
    append(k, n.reads);
    append(k, n.old);
    return id_of(need_ids, std::move(k));
  }
  /// What array ua of writer u (config ku) costs to bring to reader v (config kv, array ub,
  /// needing `need`, whose need_id is `nid`), in seconds.
  inline double seconds(const program_pricer& pr, int u, std::size_t ku, std::size_t ua, int v,
                        std::size_t kv, std::size_t ub, const reader_need& need, int nid);
  /// The key of combine_seconds for that pair, when the writer's partial results are combined
  /// on the way to the reader (program_pricer::combines_for).
  inline key combine_key(const program_pricer& pr, int u, std::size_t ku, std::size_t ua, int v,
                         std::size_t kv, std::size_t ub) const;
};
inline void price_combines(const program_pricer& pr, transfer_memo& memo, bool carried,
                           int threads);

struct program_pricer {
  const std::vector<priced_map>& maps;
  int nranks;
  machine_model mm;
  config_options copt;

  std::vector<std::string> names;
  std::vector<std::vector<map_config>> configs;  // [map][config]
  std::vector<double> ops;                       // [map]

  const schedule* fixed = nullptr;   // price only this schedule's grids
  std::vector<std::string> unmet;    // maps whose options no grid meets
  std::map<const void*, int> users;  // array -> how many of the maps use it
  mutable transfer_pool pool;        // the combines' program solutions' transfers, reused

  /// A grid the program solver refuses (check_split_writes): a split write combined on root in
  /// an array the program uses again (combine_on_root_used_again).
  bool refused_in_program(const map_solution& ms) {
    count_users();
    for (const auto& ap : ms.arrays)
      if (combine_on_root_used_again(ap, users[ap.use.id] > 1)) return true;
    return false;
  }

  void count_users() {
    if (users.empty())
      for (const auto& pm : maps)
        for (const auto& u :
             pm.constraints(grid_shape(std::vector<index_t>(pm.extents.size(), 1)), 1).arrays)
          ++users[u.id];
  }

  std::map<std::string, index_t> shape_classes{};  // priced_map::shape_key -> class
  std::vector<index_t> shape_class{};              // [map]: alike maps share one
  /// (class, which of its arrays other maps use too) -> the first such map: alike maps
  /// whose arrays the program shares alike have the same configurations but for the arrays'
  /// identities (their candidates are solved once; a Transformer's blocks, 6 times fewer)
  std::map<std::string, std::size_t> configured_like{};

  /// The configurations of an alike map configured before (see configured_like) with m's
  /// arrays, or false.
  bool configure_like(const priced_map& m, const std::vector<grid_shape>& grids) {
    if (fixed || m.shape_key.empty()) return false;
    std::vector<array_use> uses =
        m.constraints(grid_shape(std::vector<index_t>(m.extents.size(), 1)), 1).arrays;
    count_users();
    std::string key = std::to_string(shape_class.back()) + ':';
    for (const auto& u : uses) key += users[u.id] > 1 ? '1' : '0';
    const auto [it, first] = configured_like.emplace(key, configs.size());
    if (first) return false;
    std::vector<map_config> cs = configs[it->second];
    if (cs.empty() || cs.size() > grids.size()) return false;
    for (auto& c : cs) {
      if (c.arrays.size() != uses.size()) return false;
      for (std::size_t a = 0; a < uses.size(); ++a) c.arrays[a].use = uses[a];
    }
    configs.push_back(std::move(cs));
    return true;
  }

  void add_map(const priced_map& m) {
    if (m.shape_key.empty())
      shape_class.push_back(-1 - index_t(names.size()));  // its own
    else
      shape_class.push_back(
          shape_classes.emplace(m.shape_key, index_t(shape_classes.size())).first->second);
    const int N = int(m.extents.size());
    names.push_back(m.name);
    ops.push_back(m.ops);
    std::vector<map_config> cs;
    std::vector<grid_shape> grids;
    if (fixed) {
      const grid_shape* g = fixed->find(m.name);
      if (!g || g->rank() != N || g->product() > nranks)
        throw grid_error("wp::optimize: map '" + m.name + "' has no grid of rank " +
                         std::to_string(N) + " for " + std::to_string(nranks) +
                         " ranks in the schedule");
      grids.push_back(*g);
    } else {
      std::string why;
      grids = grid_configurations(m.extents, nranks, copt, &why);
      if (!why.empty()) unmet.push_back("map '" + m.name + "': " + why);
      if (configure_like(m, grids)) return;
    }
    std::string first_refusal;  // why the first refused grid cannot be planned
    for (const auto& g : grids) {
      map_config c;
      c.grid = g;
      // a grid the plans would refuse (a statement reading what another rank wrote, '='
      // writes that overlap, a box too big for an MPI count) is no candidate
      map_solution ms;
      try {
        map_constraints cons = m.constraints(g, nranks);
        const std::vector<char> generated = generated_flags(cons);  // priced as generated in place
        ms = solve_map(m.name, N, std::move(cons), g, nranks, generated);
      } catch (const plan_error& e) {
        if (fixed) throw;
        if (first_refusal.empty()) first_refusal = e.what();
        continue;
      }
      if (refused_in_program(ms)) {
        const std::string why = "map '" + m.name + "': under grid " + g.str() +
                                " partial results that overlap are combined on root, and the "
                                "program uses the array again";
        if (fixed) throw plan_error("wp::optimize: " + why);
        if (first_refusal.empty()) first_refusal = why;
        continue;
      }
      c.max_points = ms.largest_block;
      c.arrays = std::move(ms.arrays);
      for (const auto& ap : c.arrays)
        c.held.push_back(ap.use.written
                             ? std::make_shared<const holders>(leaders_write_boxes(ap, g, nranks))
                             : nullptr);
      cs.push_back(std::move(c));
    }
    if (cs.empty())
      throw plan_error("wp::optimize: map '" + m.name + "' can be planned on none of its " +
                       std::to_string(grids.size()) + " candidate grids for " +
                       std::to_string(nranks) + " ranks; the first refused: " + first_refusal);
    configs.push_back(std::move(cs));
  }

  static int find(const map_config& c, const void* id) {
    for (std::size_t u = 0; u < c.arrays.size(); ++u)
      if (c.arrays[u].use.id == id) return int(u);
    return -1;
  }

  /// The last map before v that writes the array (-1: none).
  int writer_before(int v, const void* id) const {
    for (int u = v - 1; u >= 0; --u) {
      const int x = find(configs[std::size_t(u)].front(), id);
      if (x >= 0 && configs[std::size_t(u)].front().arrays[std::size_t(x)].use.written) return u;
    }
    return -1;
  }
  /// The first map after writer u that needs the array's values from it (-1: none).
  int first_reader_after(int u, const void* id) const {
    for (int v = u + 1; v < int(names.size()); ++v) {
      const int x = find(configs[std::size_t(v)].front(), id);
      if (x < 0) continue;
      const auto& use = configs[std::size_t(v)].front().arrays[std::size_t(x)].use;
      if (needs_values(use)) return v;
      if (use.written) return -1;  // overwritten before anyone reads it
    }
    return -1;
  }
  /// The last map of the program that writes the array (-1: none).
  int last_writer_of(const void* id) const { return writer_before(int(names.size()), id); }
  /// The executions one scatter and gather serve (config_options::executions, 0 resolved).
  double executions() const {
    if (copt.executions >= 1) return copt.executions;
    for (int v = 0; v < int(names.size()); ++v)
      for (const auto& ap : configs[std::size_t(v)].front().arrays)
        if (needs_values(ap.use) && writer_before(v, ap.use.id) < 0 &&
            last_writer_of(ap.use.id) > v)
          return 100;
    return 1;
  }
  /// Whether no map after v writes the array (v's values are the ones root gathers).
  bool last_writer(int v, const void* id) const {
    for (int u = v + 1; u < int(names.size()); ++u) {
      const int x = find(configs[std::size_t(u)].front(), id);
      if (x >= 0 && configs[std::size_t(u)].front().arrays[std::size_t(x)].use.written)
        return false;
    }
    return true;
  }
  /// Whether writer m's combine of its partial results of array u is priced on an edge (to its
  /// first reader, or to the outputs) rather than on the map: in programs of several maps.
  bool combine_on_edge(int m, const map_config& c, std::size_t u) const {
    if (names.size() < 2 || !c.split(u)) return false;
    const void* id = c.arrays[u].use.id;
    return first_reader_after(m, id) >= 0 || last_writer(m, id);
  }
  /// Whether writer u's partial results of array ua (config ku) are combined on the way to
  /// reader v: v is the first map that needs them combined.
  bool combines_for(int u, std::size_t ku, std::size_t ua, int v) const {
    const map_config& cw = configs[std::size_t(u)][ku];
    return names.size() > 1 && cw.split(ua) && first_reader_after(u, cw.arrays[ua].use.id) == v;
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
    if (need) return edge_transfer(*cw.held[ua], cw.arrays[ua].use.elem_size, *need, nranks);
    return edge_transfer(cw, ua, cr, ub, nranks);
  }

  /// config_options::tie_backward: map "dN" takes map N's configuration where both have the
  /// same space and candidate grids (a chain "ddN" -> "dN" -> "N" ends at N).
  std::vector<std::size_t> backward_ties(const program_cost_tables& t) const {
    const std::size_t M = t.maps.size();
    std::map<std::string, std::size_t> by_name;
    for (std::size_t m = 0; m < M; ++m) by_name.emplace(t.maps[m], m);
    std::vector<std::size_t> to(M);
    for (std::size_t m = 0; m < M; ++m) {
      to[m] = m;
      const std::string& name = t.maps[m];
      if (name.size() < 2 || name[0] != 'd') continue;
      const auto f = by_name.find(name.substr(1));
      if (f != by_name.end() && maps[f->second].extents == maps[m].extents &&
          t.grids[f->second] == t.grids[m])
        to[m] = f->second;
    }
    std::vector<std::size_t> tied(t.graph.num_vertices());
    for (std::size_t v = 0; v < tied.size(); ++v) tied[v] = v;
    for (std::size_t m = 0; m < M; ++m) {
      std::size_t r = m;
      while (to[r] != r) r = to[r];  // names shorten along the chain: it ends
      tied[m + 1] = r + 1;
    }
    return tied;
  }

  program_cost_tables build() {
    for (const auto& m : maps) add_map(m);
    const int M = int(names.size());
    program_cost_tables t;
    t.maps = names;
    t.unmet = unmet;
    for (const auto& cs : configs) {
      t.grids.emplace_back();
      for (const auto& c : cs) t.grids.back().push_back(c.grid);
    }
    auto tuple = [](const grid_shape& g) {
      return std::vector<std::int64_t>(g.dims.begin(), g.dims.end());
    };
    t.graph.add_vertex("root (inputs)", {0.0});
    for (int m = 0; m < M; ++m) {
      std::vector<double> cost;
      std::vector<std::vector<std::int64_t>> tuples;
      for (const auto& c : configs[std::size_t(m)]) {
        double s = mm.compute_seconds(double(c.max_points) * ops[std::size_t(m)]);
        for (std::size_t u = 0; u < c.arrays.size(); ++u)  // split reductions not priced on an edge
          if (!combine_on_edge(m, c, u))
            for (const auto& st : c.arrays[u].out_steps)
              if (st.op == step_op::reduce) s += steps_seconds(mm, {st});
        cost.push_back(s);
        tuples.push_back(tuple(c.grid));
      }
      t.graph.add_vertex(names[std::size_t(m)], std::move(cost), tuples);
    }
    const std::size_t sink = t.graph.add_vertex("root (outputs)", {0.0});
    if (copt.tie_backward) t.tied = backward_ties(t);
    // edges: summed per vertex pair; the arrays each carries
    std::map<std::pair<std::size_t, std::size_t>,
             std::pair<std::vector<double>, std::vector<std::string>>>
        edges;
    auto add = [&](std::size_t u, std::size_t v, std::size_t ku, std::size_t kv, double s,
                   const std::string& a) {
      auto& e = edges[{u, v}];
      const std::size_t KU = t.graph.num_configs(u), KV = t.graph.num_configs(v);
      if (e.first.empty()) e.first.assign(KU * KV, 0.0);
      e.first[ku * KV + kv] += s;
      if (std::find(e.second.begin(), e.second.end(), a) == e.second.end()) e.second.push_back(a);
    };
    transfer_memo memo;
    // per execute(): the scatter and the gather are shared by E executions, and values a
    // later map writes for the next execute() come from it in all but the first
    const double E = executions(), once = 1 / E, again = (E - 1) / E;
    price_combines(*this, memo, again > 0, copt.threads);
    // every array of every map: where its values come from, and whether it ends on root
    for (int v = 0; v < M; ++v) {
      const auto& cv0 = configs[std::size_t(v)].front();
      for (std::size_t ub = 0; ub < cv0.arrays.size(); ++ub) {
        const auto& use = cv0.arrays[ub].use;
        const int writer = writer_before(v, use.id);
        for (std::size_t kv = 0; kv < configs[std::size_t(v)].size() && needs_values(use); ++kv) {
          const auto& cv = configs[std::size_t(v)][kv];
          if (writer < 0) {  // from root: the map's own scatter of it
            const auto& ap = cv.arrays[ub];
            const double s = steps_seconds(mm, ap.in_steps) + steps_seconds(mm, ap.init_steps);
            add(0, std::size_t(v) + 1, 0, kv, s * once, use.name);
            const int later = last_writer_of(use.id);
            if (again > 0 && later > v) {  // the next execute()'s values: from `later`
              const auto& cls = configs[std::size_t(later)];
              const std::size_t ua = std::size_t(find(cls.front(), use.id));
              const reader_need need = needs_of(cv, ub, nranks);
              const int nid = memo.need_id(need);
              for (std::size_t kl = 0; kl < cls.size(); ++kl)
                add(std::size_t(v) + 1, std::size_t(later) + 1, kv, kl,
                    memo.seconds(*this, later, kl, ua, v, kv, ub, need, nid) * again, use.name);
            }
            continue;
          }
          const auto& cws = configs[std::size_t(writer)];
          const std::size_t ua = std::size_t(find(cws.front(), use.id));
          const reader_need need = needs_of(cv, ub, nranks);  // one per reader grid
          const int nid = memo.need_id(need);
          for (std::size_t ku = 0; ku < cws.size(); ++ku)
            add(std::size_t(writer) + 1, std::size_t(v) + 1, ku, kv,
                memo.seconds(*this, writer, ku, ua, v, kv, ub, need, nid), use.name);
        }
        // the last writer of the array gathers it to root (combining its partial results
        // first where no map reads them)
        if (!cv0.arrays[ub].use.written || !last_writer(v, use.id)) continue;
        // (whether a grid splits the reduction is a matter of the grid: asked per config below)
        const bool combine_here = M > 1 && first_reader_after(v, use.id) < 0;
        for (std::size_t kv = 0; kv < configs[std::size_t(v)].size(); ++kv) {
          const auto& cv = configs[std::size_t(v)][kv];
          double s = 0;
          if (combine_here && cv.split(ub)) {
            const transfer_cost c = split_transfer(names[std::size_t(v)], cv, ub, std::string(),
                                                   nullptr, 0, nranks, &pool);
            s = step_seconds(mm, c.sent, c.received, c.messages);
          } else {
            std::vector<comm_step> gathers;
            for (const auto& st : cv.arrays[ub].out_steps)
              if (st.op != step_op::reduce) gathers.push_back(st);
            s = steps_seconds(mm, gathers);
          }
          add(std::size_t(v) + 1, sink, kv, 0, s * once, use.name);
        }
      }
    }
    for (auto& [uv, e] : edges) {
      t.graph.add_edge(uv.first, uv.second, std::move(e.first));
      t.edge_arrays.push_back(std::move(e.second));
    }
    return t;
  }
};

inline double transfer_memo::seconds(const program_pricer& pr, int u, std::size_t ku,
                                     std::size_t ua, int v, std::size_t kv, std::size_t ub,
                                     const reader_need& need, int nid) {
  const map_config& cw = pr.configs[std::size_t(u)][ku];
  if (!pr.combines_for(u, ku, ua, v)) {
    const auto k = std::make_pair(held_id(*cw.held[ua], cw.arrays[ua].use.elem_size), nid);
    if (auto it = seconds_of.find(k); it != seconds_of.end()) return it->second;
    const transfer_cost c = pr.edge_cost(u, ku, ua, v, kv, ub, &need);
    return seconds_of[k] = step_seconds(pr.mm, c.sent, c.received, c.messages);
  }
  key k = combine_key(pr, u, ku, ua, v, kv, ub);
  if (auto it = combine_seconds.find(k); it != combine_seconds.end()) return it->second;
  const transfer_cost c = pr.edge_cost(u, ku, ua, v, kv, ub, &need);
  return combine_seconds[std::move(k)] = step_seconds(pr.mm, c.sent, c.received, c.messages);
}

inline transfer_memo::key transfer_memo::combine_key(const program_pricer& pr, int u,
                                                     std::size_t ku, std::size_t ua, int v,
                                                     std::size_t kv, std::size_t ub) const {
  const array_solution& w = pr.configs[std::size_t(u)][ku].arrays[ua];
  const array_solution& r = pr.configs[std::size_t(v)][kv].arrays[ub];
  // the maps by their class (alike maps price alike: priced_map::shape_key), the rest by boxes
  key k{pr.shape_class[std::size_t(u)], index_t(ua),
        pr.shape_class[std::size_t(v)], index_t(ub),
        index_t(w.w_init_old),          index_t(w.w_combine_on_root),
        index_t(r.reads_own_writes),    index_t(r.w_init_old)};
  append(k, w.wbox);
  append(k, r.rbox);
  append(k, r.wbox);
  return k;
}

/// Prices, before the tables are built, every combine they will ask for (each distinct
/// combine_key once) on `threads` threads (0: one per hardware thread), into
/// memo.combine_seconds: each is a program of two maps solved on its own, with the storage of
/// its transfers reused within a thread. The same loops as program_pricer::build's, so the
/// tables then find every combine priced; the figures do not depend on the threads.
inline void price_combines(const program_pricer& pr, transfer_memo& memo, bool carried,
                           int threads) {
  struct task {
    int u, v;
    std::size_t ku, ua, kv, ub;
  };
  std::vector<task> tasks;
  std::vector<transfer_memo::key> keys;
  std::set<transfer_memo::key> queued;
  auto pair_up = [&](int u, std::size_t ua, int v, std::size_t ub) {
    for (std::size_t ku = 0; ku < pr.configs[std::size_t(u)].size(); ++ku) {
      if (!pr.combines_for(u, ku, ua, v)) continue;
      for (std::size_t kv = 0; kv < pr.configs[std::size_t(v)].size(); ++kv) {
        transfer_memo::key k = memo.combine_key(pr, u, ku, ua, v, kv, ub);
        if (memo.combine_seconds.count(k) || !queued.insert(k).second) continue;
        tasks.push_back({u, v, ku, ua, kv, ub});
        keys.push_back(std::move(k));
      }
    }
  };
  const int M = int(pr.names.size());
  for (int v = 0; v < M; ++v) {
    const auto& cv0 = pr.configs[std::size_t(v)].front();
    for (std::size_t ub = 0; ub < cv0.arrays.size(); ++ub) {
      const auto& use = cv0.arrays[ub].use;
      if (!needs_values(use)) continue;
      const int writer = pr.writer_before(v, use.id);
      const int from = writer >= 0 ? writer : carried ? pr.last_writer_of(use.id) : -1;
      if (from < 0 || (writer < 0 && from <= v)) continue;
      pair_up(from, std::size_t(pr.find(pr.configs[std::size_t(from)].front(), use.id)), v, ub);
    }
  }
  std::vector<double> out(tasks.size());
  std::vector<std::exception_ptr> failed(tasks.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    transfer_pool pool;
    for (std::size_t x; (x = next.fetch_add(1)) < tasks.size();) {
      const task& t = tasks[x];
      try {
        const transfer_cost c =
            split_transfer(pr.names[std::size_t(t.u)], pr.configs[std::size_t(t.u)][t.ku], t.ua,
                           pr.names[std::size_t(t.v)], &pr.configs[std::size_t(t.v)][t.kv], t.ub,
                           pr.nranks, &pool);
        out[x] = step_seconds(pr.mm, c.sent, c.received, c.messages);
      } catch (...) {
        failed[x] = std::current_exception();
      }
    }
  };
  std::size_t n = threads > 0 ? std::size_t(threads) : std::thread::hardware_concurrency();
  n = std::max<std::size_t>(1, std::min(n, tasks.size() / 16));  // small tables: no threads
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < n; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  for (std::size_t x = 0; x < tasks.size(); ++x) {
    if (failed[x]) std::rethrow_exception(failed[x]);  // the first in the serial order
    memo.combine_seconds.emplace(std::move(keys[x]), out[x]);
  }
}

}  // namespace detail

/// One array passed between two maps under a schedule, as the model prices it.
struct modelled_transfer {
  std::string array, from, to;  // map names
  index_t bytes = 0;            // received, over all ranks (reads and old values)
  double seconds = 0;
};

/// The arrays passed between the maps of `p` under schedule `s` on `nranks` ranks, with the
/// bytes the model prices (what the program plan of `s` predicts for its first execute():
/// the redistribution, and the combine of partial results where the reader is the first map
/// that needs them).
inline std::vector<modelled_transfer> modelled_transfers(
    const std::vector<detail::priced_map>& maps, const schedule& s, int nranks,
    const machine_model& mm = {}) {
  detail::program_pricer pr{maps, nranks, mm, {}, {}, {}, {}, nullptr, {}, {}, {}};
  pr.fixed = &s;
  for (const auto& m : maps) pr.add_map(m);
  std::vector<modelled_transfer> out;
  const int M = int(pr.names.size());
  for (int v = 0; v < M; ++v) {
    const auto& cv = pr.configs[std::size_t(v)].front();
    for (std::size_t ub = 0; ub < cv.arrays.size(); ++ub) {
      const auto& use = cv.arrays[ub].use;
      if (!detail::needs_values(use)) continue;  // nothing flows into the map
      const int u = pr.writer_before(v, use.id);
      if (u < 0) continue;
      const int x = pr.find(pr.configs[std::size_t(u)].front(), use.id);
      const auto c = pr.edge_cost(u, 0, std::size_t(x), v, 0, ub);
      out.push_back({use.name, pr.names[std::size_t(u)], pr.names[std::size_t(v)], c.total(),
                     detail::step_seconds(mm, c.sent, c.received, c.messages)});
    }
  }
  return out;
}

template <class... Maps>
std::vector<modelled_transfer> modelled_transfers(const program_t<Maps...>& p, const schedule& s,
                                                  int nranks, const machine_model& mm = {}) {
  return modelled_transfers(detail::priced_views(p), s, nranks, mm);
}

/// What schedule `s` costs under the model, as wp::optimize prices it (`optimized::cost`):
/// modelled seconds of one run, or of one execute() with the scatter and gather shared among
/// config_options::executions of them. For baselines beside an optimum: the optimum found by
/// wp::optimize with the same model and options costs no more than any schedule whose grids
/// those options allow. Raises grid_error where a map has no grid in `s`, plan_error where a
/// grid cannot be planned.
inline double modelled_cost(const std::vector<detail::priced_map>& maps, const schedule& s,
                            int nranks, const machine_model& mm = {},
                            const config_options& opt = {}) {
  if (nranks < 1)
    throw grid_error("wp::modelled_cost: " + std::to_string(nranks) + " ranks; give at least 1");
  detail::program_pricer pr{maps, nranks, mm, opt, {}, {}, {}, nullptr, {}, {}, {}};
  pr.fixed = &s;
  const program_cost_tables t = pr.build();  // one configuration per map: the schedule's
  double cost = 0;
  for (std::size_t v = 0; v < t.graph.num_vertices(); ++v) cost += t.graph.vertex_cost(v, 0);
  for (std::size_t e = 0; e < t.graph.num_edges(); ++e) cost += t.graph.edge_cost(e, 0, 0);
  return cost;
}
template <class... Maps>
double modelled_cost(const program_t<Maps...>& p, const schedule& s, int nranks,
                     const machine_model& mm = {}, const config_options& opt = {}) {
  return modelled_cost(detail::priced_views(p), s, nranks, mm, opt);
}

/// The cost tables of a program on `nranks` ranks (no MPI; any rank count).
inline program_cost_tables program_costs(const std::vector<detail::priced_map>& maps, int nranks,
                                         const machine_model& mm = {},
                                         const config_options& opt = {}) {
  if (nranks < 1)
    throw grid_error("wp::optimize: " + std::to_string(nranks) + " ranks; give at least 1");
  return detail::program_pricer{maps, nranks, mm, opt, {}, {}, {}, nullptr, {}, {}, {}}.build();
}
template <class... Maps>
program_cost_tables program_costs(const program_t<Maps...>& p, int nranks,
                                  const machine_model& mm = {}, const config_options& opt = {}) {
  return program_costs(detail::priced_views(p), nranks, mm, opt);
}

}  // namespace workpart
