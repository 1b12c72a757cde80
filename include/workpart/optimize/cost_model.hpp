#pragma once
/// \file cost_model.hpp
/// What a map on a grid and an array passed between two maps cost on a machine_model,
/// computed from the same boxes, the same solvers (plan/solve_map.hpp, plan/program.hpp) and
/// the same redistribution planning (plan/redistribute.hpp) the plans use, for any number of
/// ranks and without MPI: the operations per point of a statement (ops_per_point), the
/// candidate grids of a map (grid_configurations), a map's solution on one grid
/// (map_config), the seconds of a redistribution (edge_transfer) and of a combine of partial
/// results with the pass into its reader (split_transfer). optimize/pricer.hpp puts them
/// together into a program's cost tables.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "../plan/program.hpp"
#include "../plan/redistribute.hpp"
#include "../plan/solve_array.hpp"
#include "../plan/solve_map.hpp"
#include "../plan/validate.hpp"
#include "../expr/map.hpp"
#include "../expr/operation_count.hpp"
#include "../expr/reduce.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "../schedule/schedule.hpp"
#include "cost_graph.hpp"
#include "machine_model.hpp"

namespace workpart {

/// Which grids the optimizer considers for a map: one entry per space dimension, each >= 1
/// and at most the dimension's extent, product at most nprocs.
struct config_options {
  bool use_all_ranks = false;  ///< only grids whose product equals nprocs
  bool powers_of_two = false;  ///< only entries that are powers of two
  /// How many execute() calls one scatter and one gather serve (the cost is then of one
  /// execute(), with the scatter and the gather shared among them). 0: 100 for a program that
  /// carries values from one execute() to the next (a map writes an array an earlier map
  /// read, as a training step's update writes the weights), else 1 (one run).
  double executions = 0;
  /// At most this many entries > 1 per grid (0: no limit), as PaSE limits how many dimensions
  /// of a layer it splits: a map of 8 dimensions on 64 ranks has 743 power-of-two grids that
  /// use them all, 61 that split at most 2 dimensions, and the tables grow with the square.
  /// Data parallelism (the first dimension over all ranks) splits one dimension, so it stays a
  /// candidate (where the options allow it at all), and the optimum found costs no more.
  int max_split_dims = 0;
  /// Threads that solve the maps on their candidate grids and price the combines of partial
  /// results, most of the pricing at many ranks (each pair of grids is a small program solved
  /// on its own). 0: one per hardware thread; the tables do not depend on it.
  int threads = 0;
  /// A backward map runs on its forward map's grid: map `dN` (wp::backward's name for the
  /// derivative of map `N`) takes `N`'s grid when the two have the same candidate grids (the
  /// same space), as PaSE gives a layer one configuration for its forward and backward pass.
  /// The search is then as wide as the forward program's, not the training step's: a
  /// Transformer's step is searched in 0.02 s where both free it stops at the table limit.
  /// The optimum is over that smaller space (found by wp::optimize; wp::modelled_cost prices any
  /// schedule, tied or not).
  bool tie_backward = false;
  /// The maps of a network's repeated blocks run on one grid per kind of map: for each stem
  /// ("lstm1.t", "enc"), maps whose names are the same but for the number after the stem
  /// ("lstm1.t2.recur", "lstm1.t3.recur", ..., "dlstm1.t3.recur" likewise) take one grid where
  /// they have the same candidate grids, as PaSE gives an LSTM layer one configuration for all
  /// its steps. A recurrence's weights, read by every step, and its input, one GEMM over the
  /// whole sequence that every step reads a slice of, tie every step to them: free, the
  /// search's dependent sets hold them all along the chain and it stops at its table limit;
  /// tied, a layer's steps are one vertex per kind. With tie_backward, dN's group is N's. The
  /// optimum is over that smaller space.
  std::vector<std::string> tie_blocks{};
  /// Also the replicated candidate of every map: its whole space on each of the nprocs ranks
  /// (`wp::grid_shape{1, ..., 1}.replicated(nprocs)`), as Megatron-LM runs the layer norms,
  /// residuals and losses between its split GEMMs: no compute saved, but what it reads or
  /// writes need not move where every rank holds it (one Allreduce feeds it all).
  bool replicas = false;
};

namespace detail {

/// Every grid for a space of these extents on at most nprocs ranks (see config_options), and
/// with config_options::replicas the all-ones grid replicated on all of them. When
/// none satisfies the options (use_all_ranks on a space too small for nprocs, or with powers
/// of two on a rank count that is not one), the all-ones grid, and `unmet` (if given) says why.
inline std::vector<grid_shape> grid_configurations(const std::vector<index_t>& extents,
                                                   index_t nprocs, const config_options& opt,
                                                   std::string* unmet = nullptr) {
  std::vector<grid_shape> out;
  std::vector<index_t> g(extents.size(), 1);
  const int max_split = opt.max_split_dims > 0 ? opt.max_split_dims : int(extents.size());
  auto rec = [&](auto& self, std::size_t d, index_t prod, int split) -> void {
    if (d == extents.size()) {
      if (!opt.use_all_ranks || prod == nprocs) out.push_back(grid_shape(g));
      return;
    }
    for (index_t x = 1; prod * x <= nprocs && x <= std::max<index_t>(1, extents[d]); ++x) {
      if (opt.powers_of_two && (x & (x - 1)) != 0) continue;
      if (x > 1 && split == max_split) break;
      g[d] = x;
      self(self, d + 1, prod * x, split + (x > 1 ? 1 : 0));
    }
    g[d] = 1;
  };
  rec(rec, 0, 1, 0);
  // (the replicated candidate after the fallback below: a map too small for the options
  // keeps the all-ones grid as before, and may be replicated besides)
  const bool replicate =
      opt.replicas && nprocs > 1 && !(opt.powers_of_two && (nprocs & (nprocs - 1)) != 0);
  if (out.empty()) {
    out.push_back(grid_shape(std::vector<index_t>(extents.size(), 1)));
    if (unmet) {
      std::string ext;
      for (index_t e : extents) ext += (ext.empty() ? "" : ", ") + std::to_string(e);
      *unmet = "no grid of its space [" + ext + "] uses all " + std::to_string(nprocs) + " ranks" +
               (opt.powers_of_two ? " with powers of two" : "") +
               (opt.max_split_dims > 0
                    ? " splitting at most " + std::to_string(opt.max_split_dims) + " dimensions"
                    : "") +
               "; it keeps " + out.front().str();
    }
  }
  if (replicate)
    out.push_back(grid_shape(std::vector<index_t>(extents.size(), 1)).replicated(nprocs));
  return out;
}

/// Seconds of one set of messages: the busiest rank's messages and bytes (sent or received).
inline double step_seconds(const machine_model& mm, const std::vector<index_t>& sent,
                           const std::vector<index_t>& received, const std::vector<int>& messages) {
  double bytes = 0, msgs = 0;
  for (std::size_t r = 0; r < sent.size(); ++r)
    bytes = std::max(bytes, double(std::max(sent[r], received[r])));
  for (int m : messages) msgs = std::max(msgs, double(m));
  return bytes == 0 ? 0.0 : mm.message_seconds(msgs, bytes);
}
inline double steps_seconds(const machine_model& mm, const std::vector<comm_step>& steps) {
  double t = 0;
  for (const auto& s : steps) {
    std::vector<int> msgs(s.sent.size(), 0);
    int senders = 0;
    for (std::size_t r = 0; r < s.sent.size(); ++r) {
      if (s.received[r] > 0) ++senders, msgs[r] += 1;
    }
    // the rank that sends to all the others (root, a leader) sends one message each
    for (std::size_t r = 0; r < s.sent.size(); ++r)
      if (s.sent[r] > 0) msgs[r] += senders;
    t += step_seconds(mm, s.sent, s.received, msgs);
  }
  return t;
}

/// Bytes of a redistribution per rank (sent, received) and its messages per rank.
struct transfer_cost {
  std::vector<index_t> sent, received;
  std::vector<int> messages;
  index_t total() const {
    index_t t = 0;
    for (index_t b : received) t += b;
    return t;
  }
};
inline transfer_cost price_transfer(const transfer& t, int nranks, std::size_t es) {
  transfer_cost c;
  c.sent.assign(std::size_t(nranks), 0);
  c.received.assign(std::size_t(nranks), 0);
  c.messages.assign(std::size_t(nranks), 0);
  std::vector<char> peer(std::size_t(nranks) * std::size_t(nranks), 0);
  for (const auto& p : t.pieces) {
    if (p.from == p.to) continue;
    const index_t b = p.b.size() * index_t(es);
    c.sent[std::size_t(p.from)] += b;
    c.received[std::size_t(p.to)] += b;
    char& seen = peer[std::size_t(p.from) * std::size_t(nranks) + std::size_t(p.to)];
    if (!seen) {  // one message per pair (the Alltoallw's struct type)
      seen = 1;
      ++c.messages[std::size_t(p.from)];
      ++c.messages[std::size_t(p.to)];
    }
  }
  return c;
}

/// Whether a map needs values of an array from before it: it reads it before writing it, it
/// combines into it (+=, max_into, min_into), or its '=' writes may leave holes in their box
/// (the plans then fill the box with the old values). Else nothing flows into the map.
inline bool needs_values(const array_use& u) {
  return (u.read && !reads_own_writes(u)) ||
         (u.written && (u.write_kind != combine::assign || !u.dense_writes));
}

/// Where a map's writes of one array hold whole values (its group leaders' write boxes),
/// indexed for the transfers out of it, and whether two leaders ever hold a common element.
struct holders {
  std::vector<box> boxes;
  holder_index index;
  bool disjoint = true;
  explicit holders(std::vector<box> b) : boxes(std::move(b)), index(boxes) {
    std::vector<int> cand;
    for (std::size_t s = 0; s < boxes.size() && disjoint; ++s) {
      if (boxes[s].empty()) continue;
      index.candidates(boxes[s], cand);
      for (int o : cand)
        if (std::size_t(o) != s && !box::intersect(boxes[s], boxes[std::size_t(o)]).empty())
          disjoint = false;
    }
  }
};

/// [rank]: the first rank whose box is the same as this rank's (itself where none before it;
/// -1 where empty). A reader's grid that does not split some of an array's axes gives many
/// ranks one need (a weight every rank of a data-parallel grid reads whole; a convolution's
/// input, the same for every split of its output channels), priced once in price_one_layer.
inline std::vector<int> first_alike(const std::vector<box>& boxes) {
  std::vector<int> order, first(boxes.size(), -1);
  for (std::size_t r = 0; r < boxes.size(); ++r)
    if (!boxes[r].empty()) order.push_back(int(r));
  auto less = [&](int x, int y) {
    const box &a = boxes[std::size_t(x)], &b = boxes[std::size_t(y)];
    for (int d = 0; d < a.rank; ++d) {
      if (a.lo[d] != b.lo[d]) return a.lo[d] < b.lo[d];
      if (a.hi[d] != b.hi[d]) return a.hi[d] < b.hi[d];
    }
    return x < y;  // a run of equal boxes starts with its smallest rank
  };
  std::sort(order.begin(), order.end(), less);
  for (std::size_t x = 0; x < order.size(); ++x) {
    const bool same = x > 0 && boxes[std::size_t(order[x])] == boxes[std::size_t(order[x - 1])];
    first[std::size_t(order[x])] = same ? first[std::size_t(order[x - 1])] : order[x];
  }
  return first;
}

/// price_transfer(plan_transfer(need, {held}), ...) without planning the pieces, when no two
/// ranks hold a common element: then each element a rank needs has one holder, so the pieces
/// from rank s to rank r are exactly need[r] meet held[s], whatever order the plan tries the
/// holders in. The cost model asks this for every pair of grids of neighbouring maps, so the
/// holders a need meets are found once per distinct need (`alike`: first_alike(need)) and
/// shared by the ranks that need the same box. Plans the pieces when holders overlap.
inline void price_one_layer(const std::vector<box>& need, const std::vector<int>& alike,
                            const holders& held, int nranks, std::size_t es, transfer_cost& c) {
  if (!held.disjoint) {
    const transfer_cost t = price_transfer(plan_transfer(need, {{0, held.boxes}}), nranks, es);
    for (int r = 0; r < nranks; ++r) {
      c.sent[std::size_t(r)] += t.sent[std::size_t(r)];
      c.received[std::size_t(r)] += t.received[std::size_t(r)];
      c.messages[std::size_t(r)] += t.messages[std::size_t(r)];
    }
    return;
  }
  std::vector<int> cand;
  struct meet {
    int holder;
    index_t elements;
  };
  std::vector<meet> meets;  // per distinct need, the holders it meets
  const std::size_t R = std::size_t(nranks), unmet = std::size_t(-1);
  std::vector<std::size_t> from(R, unmet), to(R);  // [first rank of a need]: its run of meets
  for (int r = 0; r < nranks; ++r) {
    const int f = alike[std::size_t(r)];
    if (f < 0) continue;  // needs nothing
    const box& b = need[std::size_t(r)];
    // all of it its own (the holders are disjoint: no other holds any of it)
    if (std::size_t(r) < held.boxes.size() && meet_size(b, held.boxes[std::size_t(r)]) == b.size())
      continue;
    if (from[std::size_t(f)] == unmet) {
      from[std::size_t(f)] = meets.size();
      held.index.candidates(b, cand);
      for (int s : cand)
        if (const index_t n = meet_size(b, held.boxes[std::size_t(s)]); n > 0)
          meets.push_back({s, n});
      to[std::size_t(f)] = meets.size();
    }
    for (std::size_t x = from[std::size_t(f)]; x < to[std::size_t(f)]; ++x) {
      const auto [s, n] = meets[x];
      if (s == r) continue;  // its own
      c.sent[std::size_t(s)] += n * index_t(es);
      c.received[std::size_t(r)] += n * index_t(es);
      ++c.messages[std::size_t(s)];  // one message per pair (the Alltoallw's struct type)
      ++c.messages[std::size_t(r)];
    }
  }
}

/// A map on one grid, as the plans see it for `nranks` ranks.
struct map_config {
  grid_shape grid;
  /// [array], as the map's constraints list them. Alike maps that hold an array at the same
  /// place share its solution (program_pricer::configure_like), whose `use` is then the
  /// first such map's: the pricer takes each map's own from program_pricer::uses_of.
  std::vector<std::shared_ptr<const array_solution>> arrays;
  std::vector<std::shared_ptr<const holders>> held;  // [array]: written arrays only
  index_t max_points = 0;                            // the largest block
  index_t max_bytes = 0;  // what the busiest block streams (largest_block_bytes)
  /// [array]: partial results whose boxes overlap between the ranks, combined rank to rank on
  /// their parts (the program uses the array again: overlapping_combined); empty: none.
  std::vector<char> overlapping;
  bool overlaps(std::size_t u) const { return u < overlapping.size() && overlapping[u]; }
  /// Whether array u's partial results are combined between the ranks after the map (a split
  /// reduction whose groups do not overlap: the program plan picks the combine; or partial
  /// results that overlap, combined on their parts).
  bool split(std::size_t u) const {
    return (!arrays[u]->wgroup.empty() && !arrays[u]->w_combine_on_root) || overlaps(u);
  }
};

/// The combine of a program's partial results and the pieces into its reader, as the program
/// plan of `writer` then `reader` (on their grids, this array alone) plans them for the first
/// execute(): what solve_program chooses, priced per rank (one message per peer). Without a
/// reader: the combine and root's gather of the values.
inline transfer_cost split_transfer(const std::string& wname, const map_config& w, std::size_t ua,
                                    const std::string& rname, const map_config* r, std::size_t ub,
                                    int nranks, transfer_pool* pool = nullptr) {
  program_maps in;
  in.nranks = nranks;
  in.pool = pool;
  in.words = false;  // bytes are all it reads
  in.names = {wname};
  in.grids = {w.grid};
  in.arrays = {{w.arrays[ua].get()}};
  // the program uses the array beyond these maps: its plan combines them on their parts
  if (w.overlaps(ua)) in.used_elsewhere.push_back(w.arrays[ua]->use.id);
  array_solution same;  // the reader's, named as the writer's array (a shared solution's
                        // `use` names another map's array)
  if (r) {
    in.gathers = false;  // the pieces into the reader are priced, not root's gather
    in.names.push_back(rname);
    in.grids.push_back(r->grid);
    const array_solution* rs = r->arrays[ub].get();
    if (rs->use.id != w.arrays[ua]->use.id) {
      same = *rs;
      same.use.id = w.arrays[ua]->use.id;
      same.use.name = w.arrays[ua]->use.name;
      rs = &same;
    }
    in.arrays.push_back({rs});
  }
  const program_solution sol = solve_program(std::move(in));
  transfer_cost c;
  c.sent.assign(std::size_t(nranks), 0);
  c.received.assign(std::size_t(nranks), 0);
  c.messages.assign(std::size_t(nranks), 0);
  for (const auto& pc : sol.combines()) {
    if (pc.map != 0) continue;  // the reader's own partial results: its edges' business
    const auto bytes = sol.combine_bytes(pc);
    const auto messages = sol.combine_messages(pc);
    for (std::size_t k = 0; k < std::size_t(nranks); ++k) {
      c.sent[k] += bytes[k].first;
      c.received[k] += bytes[k].second;
      c.messages[k] += messages[k];
    }
  }
  for (std::size_t x = 0; x < sol.redists().size(); ++x) {
    const auto& rd = sol.redists()[x];
    if (rd.combine || (r ? rd.to_map != 1 || rd.gather : !rd.gather)) continue;
    const transfer_cost t =
        price_transfer(r ? rd.first : rd.steady, nranks, sol.elem_size(rd.array));
    for (int k = 0; k < nranks; ++k) {
      c.sent[std::size_t(k)] += t.sent[std::size_t(k)];
      c.received[std::size_t(k)] += t.received[std::size_t(k)];
      c.messages[std::size_t(k)] += t.messages[std::size_t(k)];
    }
  }
  return c;
}

/// What a reader on one grid needs of an array before it runs: its read boxes and the old
/// values it combines into (need_before), each empty when no rank needs any.
struct reader_need {
  std::vector<box> reads, old;
  std::vector<int> reads_alike, old_alike;  // first_alike of each
  bool any_reads = false, any_old = false;
};
inline reader_need needs_of(const map_config& rd, std::size_t ub, int nranks) {
  reader_need n;
  n.reads = need_before(*rd.arrays[ub], rd.grid, nranks, false);
  // (overlapping partial results combine into the old values of each rank's part)
  n.old =
      rd.overlaps(ub) ? rd.arrays[ub]->w_parts : need_before(*rd.arrays[ub], rd.grid, nranks, true);
  for (const auto& b : n.reads) n.any_reads = n.any_reads || !b.empty();
  for (const auto& b : n.old) n.any_old = n.any_old || !b.empty();
  if (n.any_reads) n.reads_alike = first_alike(n.reads);
  if (n.any_old) n.old_alike = first_alike(n.old);
  return n;
}

/// The redistribution of an array from where a writer's grid holds it to a reader's need.
inline transfer_cost edge_transfer(const holders& held, std::size_t es, const reader_need& n,
                                   int nranks) {
  transfer_cost c;
  c.sent.assign(std::size_t(nranks), 0);
  c.received.assign(std::size_t(nranks), 0);
  c.messages.assign(std::size_t(nranks), 0);
  if (n.any_reads) price_one_layer(n.reads, n.reads_alike, held, nranks, es, c);
  if (n.any_old) price_one_layer(n.old, n.old_alike, held, nranks, es, c);
  return c;
}
/// The same for array `ua` (index in the writer's arrays) to array `ub` of a reader.
inline transfer_cost edge_transfer(const map_config& w, std::size_t ua, const map_config& rd,
                                   std::size_t ub, int nranks) {
  return edge_transfer(*w.held[ua], w.arrays[ua]->use.elem_size, needs_of(rd, ub, nranks), nranks);
}

}  // namespace detail

}  // namespace workpart
