#pragma once
/// \file pricer.hpp
/// A program's schedule problem as cost tables for the search (optimize/search.hpp), priced
/// with cost_model.hpp's pieces:
///  - a map on a grid costs its slowest rank's block (machine_model::block_seconds): its
///    arithmetic (points of its block times the operations per point, ops_per_point: an inner
///    reduction counts its trips) at the GEMM rate where it runs as GEMMs, else the loop rate,
///    or the bytes its boxes hold at the streaming bandwidth where that is longer, plus the
///    fixed cost of a map;
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

#include "combine_pricing.hpp"
#include "optimize.hpp"

namespace workpart {
namespace detail {

inline program_cost_tables program_pricer::build() {
  add_maps();
  const int M = int(names.size());
  program_cost_tables t;
  t.maps = names;
  t.unmet = unmet;
  for (const auto& cs : configs) {
    t.grids.emplace_back();
    for (const auto& c : cs) t.grids.back().push_back(c.grid);
  }
  // a configuration's tuple: the grid's extents, and where any of the map's candidates is
  // replicated, the replica count after them in every one (1 where not): one length per map
  auto tuple = [](const grid_shape& g, bool replica_entry) {
    std::vector<std::int64_t> v(g.dims.begin(), g.dims.begin() + g.space_rank());
    if (replica_entry) v.push_back(g.replicas());
    return v;
  };
  t.graph.add_vertex("root (inputs)", {0.0});
  for (int m = 0; m < M; ++m) {
    std::vector<double> cost;
    std::vector<std::vector<std::int64_t>> tuples;
    bool replica_entry = false;
    for (const auto& c : configs[std::size_t(m)]) replica_entry |= c.grid.replica_axis;
    for (const auto& c : configs[std::size_t(m)]) {
      const std::size_t mu = std::size_t(m);
      const double points = double(c.max_points);
      double s =
          mm.block_seconds({.points = points,
                            .ops_per_point = ops[mu],
                            .slow_per_point = maps[mu].slow_ops,
                            .rows = block_rows(points, maps[mu].extents, c.grid, maps[mu].row_dim),
                            .bytes = double(c.max_bytes),
                            .gemm = gemms[mu] != 0,
                            .elem_bytes = double(maps[mu].elem_bytes),
                            .packed_bytes = double(maps[mu].elem_bytes) *
                                            block_packed(maps[mu].packed, maps[mu].extents, c.grid),
                            .vector_rows = maps[mu].vector_rows});
      for (std::size_t u = 0; u < c.arrays.size(); ++u)  // split reductions not priced on an edge
        if (!combine_on_edge(m, c, u))
          for (const auto& st : c.arrays[u]->out_steps)
            if (st.op == step_op::reduce) s += steps_seconds(mm, {st});
      cost.push_back(s);
      tuples.push_back(tuple(c.grid, replica_entry));
    }
    t.graph.add_vertex(names[std::size_t(m)], std::move(cost), tuples);
  }
  const std::size_t sink = t.graph.add_vertex("root (outputs)", {0.0});
  if (copt.tie_backward || !copt.tie_blocks.empty()) t.tied = ties(t);
  // edges: summed per vertex pair; the arrays each carries
  std::map<std::pair<std::size_t, std::size_t>,
           std::pair<std::vector<double>, std::vector<std::string>>>
      edges;
  // the edge u -> v carrying array a: its table, [ku * K_v + kv]
  auto edge = [&](std::size_t u, std::size_t v, const std::string& a) -> std::vector<double>& {
    auto& e = edges[{u, v}];
    if (e.first.empty()) e.first.assign(t.graph.num_configs(u) * t.graph.num_configs(v), 0.0);
    if (std::find(e.second.begin(), e.second.end(), a) == e.second.end()) e.second.push_back(a);
    return e.first;
  };
  transfer_memo memo;
  // per execute(): the scatter and the gather are shared by E executions, and values a
  // later map writes for the next execute() come from it in all but the first
  const double E = executions(), once = 1 / E, again = (E - 1) / E;
  price_combines(*this, memo, again > 0, copt.threads);
  price_edges(*this, memo, again > 0, copt.threads);
  // every array of every map: where its values come from, and whether it ends on root
  for (int v = 0; v < M; ++v) {
    const auto& cvs = configs[std::size_t(v)];
    const std::size_t KV = cvs.size();
    for (std::size_t ub = 0; ub < uses_of[std::size_t(v)].size(); ++ub) {
      const auto& use = use_of(v, ub);
      const int writer = writer_before(v, use.id);
      if (needs_values(use) && writer < 0) {  // from root: the map's own scatter of it
        std::vector<double>& scatter = edge(0, std::size_t(v) + 1, use.name);
        const int later = last_writer_of(use.id);
        // the next execute()'s values: from `later`
        std::vector<double>* carried =
            again > 0 && later > v ? &edge(std::size_t(v) + 1, std::size_t(later) + 1, use.name)
                                   : nullptr;
        for (std::size_t kv = 0; kv < KV; ++kv) {
          const auto& ap = *cvs[kv].arrays[ub];
          const double s = steps_seconds(mm, ap.in_steps) + steps_seconds(mm, ap.init_steps);
          scatter[kv] += s * once;
          if (!carried) continue;
          const std::size_t KL = configs[std::size_t(later)].size();
          const std::size_t ua = std::size_t(find(later, use.id));
          const int nid = memo.need_of[std::size_t(v)][ub][kv];
          for (std::size_t kl = 0; kl < KL; ++kl)
            (*carried)[kv * KL + kl] += memo.seconds(*this, later, kl, ua, v, kv, ub, nid) * again;
        }
      } else if (needs_values(use)) {
        const std::size_t KU = configs[std::size_t(writer)].size();
        const std::size_t ua = std::size_t(find(writer, use.id));
        std::vector<double>& e = edge(std::size_t(writer) + 1, std::size_t(v) + 1, use.name);
        for (std::size_t kv = 0; kv < KV; ++kv) {
          const int nid = memo.need_of[std::size_t(v)][ub][kv];  // one per reader grid
          for (std::size_t ku = 0; ku < KU; ++ku)
            e[ku * KV + kv] += memo.seconds(*this, writer, ku, ua, v, kv, ub, nid);
        }
      }
      // the last writer of the array gathers it to root (combining its partial results
      // first where no map reads them)
      if (!use.written || !last_writer(v, use.id)) continue;
      // (whether a grid splits the reduction is a matter of the grid: asked per config below)
      const bool combine_here = M > 1 && first_reader_after(v, use.id) < 0;
      std::vector<double>& gather = edge(std::size_t(v) + 1, sink, use.name);
      for (std::size_t kv = 0; kv < KV; ++kv) {
        const auto& cv = cvs[kv];
        double s = 0;
        if (combine_here && cv.split(ub)) {
          const transfer_cost c = split_transfer(names[std::size_t(v)], cv, ub, std::string(),
                                                 nullptr, 0, nranks, &pool);
          s = step_seconds(mm, c.sent, c.received, c.messages);
        } else {
          std::vector<comm_step> gathers;
          for (const auto& st : cv.arrays[ub]->out_steps)
            if (st.op != step_op::reduce) gathers.push_back(st);
          s = steps_seconds(mm, gathers);
        }
        gather[kv] += s * once;
      }
    }
  }
  for (auto& [uv, e] : edges) {
    t.graph.add_edge(uv.first, uv.second, std::move(e.first));
    t.edge_arrays.push_back(std::move(e.second));
  }
  return t;
}

}  // namespace detail
}  // namespace workpart
