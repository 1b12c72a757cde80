#pragma once
/// \file combine_pricing.hpp
/// What the pricer has priced already (transfer_memo), and the prices the tables ask for,
/// computed ahead of them on several threads: the combines of partial results
/// (price_combines; a combine is a program of two maps solved on its own, the pricer's dearest
/// part) and the redistributions between a writer's and a reader's grids (price_edges).

#include <exception>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "program_pricer.hpp"

namespace workpart::detail {

/// Edge prices by what they depend on: where the writer's grid leaves the array (its
/// holders' boxes) and what the reader's grid needs of it (its boxes). Grids of many
/// dimensions hold and need one array alike in many ways (a convolution's 8-D grids that
/// differ only along the channels it sums over, say), so each distinct pair is priced once:
/// the same figures, in far fewer box intersections. A combine of partial sums
/// (split_transfer) is priced once per two-map program as the program solver sees it: the
/// writer's and the reader's solution of the array (boxes, groups, flags, the array's layout),
/// not the maps' names or grids, so that grids and layers alike in those share it.
struct transfer_memo {
  using key = std::vector<index_t>;
  struct key_hash {
    std::size_t operator()(const key& k) const noexcept {
      std::uint64_t h = 0x9E3779B97F4A7C15ull;
      for (index_t x : k) h = (h ^ std::uint64_t(x)) * 0x100000001B3ull + (h >> 31);
      return std::size_t(h);
    }
  };
  template <class V>
  using table = std::unordered_map<key, V, key_hash>;
  table<int> held_ids;
  /// A key with its hash, both found on the pricing threads (a need or a solution at 64 ranks
  /// is over a hundred boxes: hashed on this thread, they kept the other threads waiting)
  struct hashed_key {
    key k;
    std::size_t hash = 0;
    bool operator==(const hashed_key& o) const { return hash == o.hash && k == o.k; }
  };
  struct hashed_key_hash {
    std::size_t operator()(const hashed_key& k) const noexcept { return k.hash; }
  };
  std::unordered_map<hashed_key, int, hashed_key_hash> need_ids;
  std::unordered_map<const holders*, int> held_of;  // a writer grid's holders -> id
  std::vector<reader_need> needs;                   // [need id]
  /// [map][its array][config]: the need id of the reader's grid (-1: not asked for)
  std::vector<std::vector<std::vector<int>>> need_of;
  /// (held id, need id) -> seconds
  std::unordered_map<std::uint64_t, double> seconds_of;
  static std::uint64_t pair_key(int held, int need) {
    return std::uint64_t(std::uint32_t(held)) << 32 | std::uint32_t(need);
  }
  /// Combines: per (writer's solution of the array on its grid, the reader's), each by its id
  /// (solution_ids: the keys stay short, so hashing and comparing them is cheap next to the
  /// boxes of 64 ranks).
  table<double> combine_seconds;
  std::unordered_map<hashed_key, int, hashed_key_hash> solution_ids;
  struct pointer_pair_hash {
    std::size_t operator()(const std::pair<const void*, const void*>& p) const noexcept {
      return std::hash<const void*>{}(p.first) * 31 + std::hash<const void*>{}(p.second);
    }
  };
  /// (solution, grid) -> id
  std::unordered_map<std::pair<const void*, const void*>, int, pointer_pair_hash> solution_of;

  static void append(key& k, const std::vector<box>& boxes) {
    k.push_back(index_t(boxes.size()));
    for (const box& b : boxes) {
      k.push_back(b.empty() ? -1 : b.rank);
      if (b.empty()) continue;
      k.insert(k.end(), b.lo, b.lo + b.rank);
      k.insert(k.end(), b.hi, b.hi + b.rank);
    }
  }
  static int id_of(table<int>& ids, key k) {
    return ids.emplace(std::move(k), int(ids.size())).first->second;
  }
  int held_id(const holders& h, std::size_t elem_size) {
    if (auto it = held_of.find(&h); it != held_of.end()) return it->second;
    key k{index_t(elem_size)};
    append(k, h.boxes);
    return held_of[&h] = id_of(held_ids, std::move(k));
  }
  static hashed_key need_key(const reader_need& n) {
    hashed_key h;
    append(h.k, n.reads);
    append(h.k, n.old);
    h.hash = key_hash{}(h.k);
    return h;
  }
  /// The id of need n, whose need_key is k.
  int need_id(reader_need n, hashed_key k) {
    const int id = need_ids.emplace(std::move(k), int(need_ids.size())).first->second;
    if (std::size_t(id) == needs.size()) needs.push_back(std::move(n));
    return id;
  }
  /// The id of what the program solver reads of one map's solution of the array on its grid:
  /// the array's layout, the map's flags and boxes, and its groups of partial results (per
  /// rank, its group's leader and its place in the group), not the grid itself: grids that
  /// split a convolution's channels or its kernel's rows alike leave the same boxes and groups.
  static hashed_key solution_key(const array_solution& s, const grid_shape& g) {
    const array_use& u = s.use;
    hashed_key h;
    key& k = h.k;
    k = {index_t(u.rank),
         index_t(u.elem_size),
         index_t(u.elem),
         index_t(u.read),
         index_t(u.written),
         index_t(u.write_kind),
         index_t(u.mixed_writes),
         index_t(u.dense_writes),
         index_t(u.read_after_write),
         index_t(u.read_before_write),
         index_t(s.reads_own_writes),
         index_t(s.w_init_old),
         index_t(s.w_combine_on_root),
         g.product()};
    k.insert(k.end(), u.shape, u.shape + u.rank);
    k.push_back(index_t(!s.wgroup.empty()));
    if (!s.wgroup.empty())
      for (int r = 0; r < int(g.product()); ++r) {
        k.push_back(group_leader(g, r, s.wgroup));
        k.push_back(group_key(g, r, s.wgroup).second);
      }
    append(k, s.rbox);
    append(k, s.wbox);
    h.hash = key_hash{}(k);
    return h;
  }
  /// The id of solution s on grid g, whose solution_key is `k` (found here where not given).
  int solution_id(const array_solution& s, const grid_shape& g, hashed_key* k = nullptr) {
    const auto at = std::make_pair(static_cast<const void*>(&s), static_cast<const void*>(&g));
    if (auto it = solution_of.find(at); it != solution_of.end()) return it->second;
    hashed_key own;
    if (!k) k = &(own = solution_key(s, g));
    const int id = solution_ids.emplace(std::move(*k), int(solution_ids.size())).first->second;
    return solution_of[at] = id;
  }
  /// What array ua of writer u (config ku) costs to bring to reader v (config kv, array ub,
  /// whose need is needs[nid]), in seconds.
  inline double seconds(const program_pricer& pr, int u, std::size_t ku, std::size_t ua, int v,
                        std::size_t kv, std::size_t ub, int nid);
  /// The key of combine_seconds for that pair, when the writer's partial results are combined
  /// on the way to the reader (program_pricer::combines_for).
  inline key combine_key(const program_pricer& pr, int u, std::size_t ku, std::size_t ua, int v,
                         std::size_t kv, std::size_t ub);
};
inline void price_combines(const program_pricer& pr, transfer_memo& memo, bool carried,
                           int threads);
inline void price_edges(const program_pricer& pr, transfer_memo& memo, bool carried, int threads);

inline double transfer_memo::seconds(const program_pricer& pr, int u, std::size_t ku,
                                     std::size_t ua, int v, std::size_t kv, std::size_t ub,
                                     int nid) {
  const map_config& cw = pr.configs[std::size_t(u)][ku];
  const reader_need& need = needs[std::size_t(nid)];
  if (!pr.combines_for(u, ku, ua, v)) {
    const auto k = pair_key(held_id(*cw.held[ua], pr.use_of(u, ua).elem_size), nid);
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
                                                     std::size_t kv, std::size_t ub) {
  const map_config& cw = pr.configs[std::size_t(u)][ku];
  const map_config& cr = pr.configs[std::size_t(v)][kv];
  key k{solution_id(*cw.arrays[ua], cw.grid), solution_id(*cr.arrays[ub], cr.grid)};
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
  std::unordered_set<transfer_memo::key, transfer_memo::key_hash> queued;
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
  // the writers' and readers' solutions the combines are keyed by, their keys found on the
  // threads (64 ranks' groups and boxes each), then numbered here in the serial order
  std::vector<std::pair<const array_solution*, const grid_shape*>> sols;
  std::unordered_set<std::pair<const void*, const void*>, transfer_memo::pointer_pair_hash> seen;
  auto note = [&](const map_config& c, std::size_t a) {
    if (seen.insert({c.arrays[a].get(), &c.grid}).second)
      sols.emplace_back(c.arrays[a].get(), &c.grid);
  };
  for (int v = 0; v < M; ++v)
    for (std::size_t ub = 0; ub < pr.uses_of[std::size_t(v)].size(); ++ub) {
      const int u = pr.source_of(v, ub, carried);
      if (u < 0) continue;
      const std::size_t ua = std::size_t(pr.find(u, pr.use_of(v, ub).id));
      bool any = false;
      for (std::size_t ku = 0; ku < pr.configs[std::size_t(u)].size(); ++ku)
        if (pr.combines_for(u, ku, ua, v)) note(pr.configs[std::size_t(u)][ku], ua), any = true;
      if (any)
        for (const auto& cv : pr.configs[std::size_t(v)]) note(cv, ub);
    }
  std::vector<transfer_memo::hashed_key> sol_keys(sols.size());
  run_tasks(sols.size(), task_threads(sols.size(), threads, 64), [&](std::size_t x, std::size_t) {
    sol_keys[x] = transfer_memo::solution_key(*sols[x].first, *sols[x].second);
  });
  for (std::size_t x = 0; x < sols.size(); ++x)
    memo.solution_id(*sols[x].first, *sols[x].second, &sol_keys[x]);
  for (int v = 0; v < M; ++v) {
    for (std::size_t ub = 0; ub < pr.uses_of[std::size_t(v)].size(); ++ub) {
      const int from = pr.source_of(v, ub, carried);
      if (from >= 0) pair_up(from, std::size_t(pr.find(from, pr.use_of(v, ub).id)), v, ub);
    }
  }
  std::vector<double> out(tasks.size());
  std::vector<std::exception_ptr> failed(tasks.size());
  const std::size_t t = task_threads(tasks.size(), threads, 16);
  std::vector<transfer_pool> pools(t);  // a thread's transfers' storage, reused by its tasks
  run_tasks(tasks.size(), t, [&](std::size_t x, std::size_t w) {
    const task& k = tasks[x];
    try {
      const transfer_cost c =
          split_transfer(pr.names[std::size_t(k.u)], pr.configs[std::size_t(k.u)][k.ku], k.ua,
                         pr.names[std::size_t(k.v)], &pr.configs[std::size_t(k.v)][k.kv], k.ub,
                         pr.nranks, &pools[w]);
      out[x] = step_seconds(pr.mm, c.sent, c.received, c.messages);
    } catch (...) {
      failed[x] = std::current_exception();
    }
  });
  for (std::size_t x = 0; x < tasks.size(); ++x) {
    if (failed[x]) std::rethrow_exception(failed[x]);  // the first in the serial order
    memo.combine_seconds.emplace(std::move(keys[x]), out[x]);
  }
}

/// Prices, before the tables are built, every redistribution they will ask for that is not a
/// combine (each distinct pair of writer's holders and reader's need once) on `threads`
/// threads, into memo.seconds_of, and notes each reader grid's need id in memo.need_of. The
/// same loops as program_pricer::build's; the figures do not depend on the threads.
inline void price_edges(const program_pricer& pr, transfer_memo& memo, bool carried, int threads) {
  struct task {
    const holders* held;
    std::size_t elem_size;
    int nid;
  };
  std::vector<task> tasks;
  std::vector<std::uint64_t> keys;
  std::unordered_set<std::uint64_t> queued;
  const int M = int(pr.names.size());
  // the reader grids' needs, computed on the threads: [map][its array][config]
  struct reader_array {
    int v, from;
    std::size_t ub;
  };
  std::vector<reader_array> readers;
  memo.need_of.assign(std::size_t(M), {});
  for (int v = 0; v < M; ++v) {
    memo.need_of[std::size_t(v)].resize(pr.uses_of[std::size_t(v)].size());
    for (std::size_t ub = 0; ub < pr.uses_of[std::size_t(v)].size(); ++ub)
      if (const int from = pr.source_of(v, ub, carried); from >= 0)
        readers.push_back({v, from, ub});
  }
  // in batches: a batch's needs (64 ranks' boxes each) are kept only until they have ids
  constexpr std::size_t batch = 64;
  std::vector<std::vector<reader_need>> needs(batch);
  std::vector<std::vector<transfer_memo::hashed_key>> need_keys(batch);
  std::vector<std::vector<int>> known(batch);  // [x][config]: its need's id where known, or -1
  // a reader's solution of the array -> its need's id: alike maps share their solutions
  // (program_pricer::configure_like), so most readers' needs are known before they are found
  std::unordered_map<const array_solution*, int> need_of_solution;
  std::vector<std::size_t> held_paired, need_paired;  // [id]: the last reader (+1) pairing it
  for (std::size_t x0 = 0; x0 < readers.size(); x0 += batch) {
    const std::size_t n = std::min(batch, readers.size() - x0);
    run_tasks(n, task_threads(n, threads, 4), [&](std::size_t x, std::size_t) {
      needs[x].clear();
      need_keys[x].clear();
      known[x].clear();
      for (const auto& cv : pr.configs[std::size_t(readers[x0 + x].v)]) {
        const auto it = need_of_solution.find(cv.arrays[readers[x0 + x].ub].get());
        known[x].push_back(it == need_of_solution.end() ? -1 : it->second);
        needs[x].push_back(known[x].back() >= 0 ? reader_need{}
                                                : needs_of(cv, readers[x0 + x].ub, pr.nranks));
        need_keys[x].push_back(known[x].back() >= 0 ? transfer_memo::hashed_key{}
                                                    : transfer_memo::need_key(needs[x].back()));
      }
    });
    for (std::size_t x = 0; x < n; ++x) {
      const auto [v, from, ub] = readers[x0 + x];
      const std::size_t ua = std::size_t(pr.find(from, pr.use_of(v, ub).id));
      const std::size_t es = pr.use_of(from, ua).elem_size;
      // the writer's grids whose partial results are combined for v: price_combines' business
      const auto& cws = pr.configs[std::size_t(from)];
      std::vector<int> held(cws.size(), -1);
      for (std::size_t ku = 0; ku < cws.size(); ++ku)
        if (!pr.combines_for(from, ku, ua, v)) held[ku] = memo.held_id(*cws[ku].held[ua], es);
      // the distinct holders and needs of this pair of maps (of ~140 x 34 grids, a few dozen
      // each), paired once
      const std::size_t stamp = x0 + x + 1;
      std::vector<std::pair<int, const holders*>> helds;
      for (std::size_t ku = 0; ku < cws.size(); ++ku) {
        const int id = held[ku];
        if (id < 0) continue;
        if (std::size_t(id) >= held_paired.size()) held_paired.resize(std::size_t(id) + 1, 0);
        if (std::exchange(held_paired[std::size_t(id)], stamp) != stamp)
          helds.emplace_back(id, cws[ku].held[ua].get());
      }
      auto& nids = memo.need_of[std::size_t(v)][ub];
      nids.assign(needs[x].size(), -1);
      for (std::size_t kv = 0; kv < needs[x].size(); ++kv) {
        const int nid = nids[kv] =
            known[x][kv] >= 0 ? known[x][kv]
                              : memo.need_id(std::move(needs[x][kv]), std::move(need_keys[x][kv]));
        need_of_solution.emplace(pr.configs[std::size_t(v)][kv].arrays[ub].get(), nid);
        if (std::size_t(nid) >= need_paired.size()) need_paired.resize(std::size_t(nid) + 1, 0);
        if (std::exchange(need_paired[std::size_t(nid)], stamp) == stamp) continue;
        for (const auto& [id, h] : helds) {
          const std::uint64_t k = transfer_memo::pair_key(id, nid);
          if (memo.seconds_of.count(k) || !queued.insert(k).second) continue;
          tasks.push_back({h, es, nid});
          keys.push_back(k);
        }
      }
    }
  }
  std::vector<double> out(tasks.size());
  run_tasks(tasks.size(), task_threads(tasks.size(), threads, 256),
            [&](std::size_t x, std::size_t) {
              const task& t = tasks[x];
              const transfer_cost c =
                  edge_transfer(*t.held, t.elem_size, memo.needs[std::size_t(t.nid)], pr.nranks);
              out[x] = step_seconds(pr.mm, c.sent, c.received, c.messages);
            });
  for (std::size_t x = 0; x < tasks.size(); ++x) memo.seconds_of.emplace(keys[x], out[x]);
}

}  // namespace workpart::detail
