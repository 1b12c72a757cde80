#pragma once
/// \file combine_pricing.hpp
/// What the pricer has priced already (transfer_memo), and the combines of partial results
/// priced ahead of the tables on several threads (price_combines): a combine is a program of
/// two maps solved on its own, the pricer's dearest part.

#include <exception>
#include <unordered_map>
#include <unordered_set>

#include "program_pricer.hpp"

namespace workpart::detail {

/// Edge prices by what they depend on: where the writer's grid leaves the array (its
/// holders' boxes) and what the reader's grid needs of it (its boxes). Grids of many
/// dimensions hold and need one array alike in many ways (a convolution's 8-D grids that
/// differ only along the channels it sums over, say), so each distinct pair is priced once:
/// the same figures, in far fewer box intersections. A combine of partial sums
/// (split_transfer) is priced once per (maps, arrays, boxes each rank writes and reads).
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
  table<int> held_ids, need_ids;
  std::unordered_map<const holders*, int> held_of;   // a writer grid's holders -> id
  std::map<std::pair<int, int>, double> seconds_of;  // (held id, need id) -> seconds
  /// Combines: per (writer, its array, reader, its array), the boxes each rank writes of it
  /// (ranks writing one box are one group of partial results) and the reader's boxes, each
  /// set of boxes by its id (box_ids: the keys stay short, so hashing and comparing them is
  /// cheap next to the boxes of 64 ranks).
  table<double> combine_seconds;
  table<int> box_ids;
  std::unordered_map<const array_solution*, int> write_boxes_of, read_boxes_of;

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
  int need_id(const reader_need& n) {
    key k;
    append(k, n.reads);
    append(k, n.old);
    return id_of(need_ids, std::move(k));
  }
  /// The id of a writer's write boxes of an array (reader: its read and write boxes).
  int boxes_id(const array_solution& s, bool reader) {
    auto& of = reader ? read_boxes_of : write_boxes_of;
    if (auto it = of.find(&s); it != of.end()) return it->second;
    key k{index_t(reader)};
    if (reader) append(k, s.rbox);
    append(k, s.wbox);
    return of[&s] = id_of(box_ids, std::move(k));
  }
  /// What array ua of writer u (config ku) costs to bring to reader v (config kv, array ub,
  /// needing `need`, whose need_id is `nid`), in seconds.
  inline double seconds(const program_pricer& pr, int u, std::size_t ku, std::size_t ua, int v,
                        std::size_t kv, std::size_t ub, const reader_need& need, int nid);
  /// The key of combine_seconds for that pair, when the writer's partial results are combined
  /// on the way to the reader (program_pricer::combines_for).
  inline key combine_key(const program_pricer& pr, int u, std::size_t ku, std::size_t ua, int v,
                         std::size_t kv, std::size_t ub);
};
inline void price_combines(const program_pricer& pr, transfer_memo& memo, bool carried,
                           int threads);

inline double transfer_memo::seconds(const program_pricer& pr, int u, std::size_t ku,
                                     std::size_t ua, int v, std::size_t kv, std::size_t ub,
                                     const reader_need& need, int nid) {
  const map_config& cw = pr.configs[std::size_t(u)][ku];
  if (!pr.combines_for(u, ku, ua, v)) {
    const auto k = std::make_pair(held_id(*cw.held[ua], pr.use_of(u, ua).elem_size), nid);
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
  const array_solution& w = *pr.configs[std::size_t(u)][ku].arrays[ua];
  const array_solution& r = *pr.configs[std::size_t(v)][kv].arrays[ub];
  // the maps by their class (alike maps price alike: priced_map::shape_key), the rest by boxes
  key k{pr.shape_class[std::size_t(u)],
        index_t(ua),
        pr.shape_class[std::size_t(v)],
        index_t(ub),
        index_t(w.w_init_old),
        index_t(w.w_combine_on_root),
        index_t(r.reads_own_writes),
        index_t(r.w_init_old),
        boxes_id(w, false),
        boxes_id(r, true)};
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
  for (int v = 0; v < M; ++v) {
    for (std::size_t ub = 0; ub < pr.uses_of[std::size_t(v)].size(); ++ub) {
      const auto& use = pr.use_of(v, ub);
      if (!needs_values(use)) continue;
      const int writer = pr.writer_before(v, use.id);
      const int from = writer >= 0 ? writer : carried ? pr.last_writer_of(use.id) : -1;
      if (from < 0 || (writer < 0 && from <= v)) continue;
      pair_up(from, std::size_t(pr.find(from, use.id)), v, ub);
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
}  // namespace workpart::detail
