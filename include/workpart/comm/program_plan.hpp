#pragma once
/// \file program_plan.hpp
/// The plan of a program of several maps: each map runs as its one-map plan (map_plan.hpp)
/// on its own grid, and the arrays passed between maps move rank to rank, never through root.
///
/// Root sends only what no earlier map wrote (the program's inputs) at scatter() and receives
/// the final values at gather(). Before each map runs, what it reads (and the old values it
/// combines into) comes from the maps that wrote them last, by box intersection
/// (comm/redistribute.hpp): nothing when the layouts agree, otherwise one Alltoallw carrying
/// only what each reader does not already hold. Partial results of a split reduction are
/// combined in their groups right after the map, in whichever of three ways moves the fewest
/// bytes together with what the readers then fetch: Allreduce (every member then holds the
/// whole box), a reduce-scatter (each member then holds the combined values of one part, cut
/// to what the next reader needs or in blocks along one axis), or Reduce onto the group
/// leaders. Root sends only the inputs' parts that no earlier map provides.

#include <mpi.h>

#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../schedule/schedule.hpp"
#include "collectives/exchange.hpp"
#include "collectives/reduce_scatter.hpp"
#include "map_plan.hpp"
#include "redistribute.hpp"

namespace workpart {

/// One redistribution of a program plan, with this rank's figures.
struct redistribution_stats {
  std::string array;
  std::string from;   // the maps whose values it carries ("root" for inputs), or the map whose partials it combines
  std::string to;     // the map that reads them ("root" for a gather)
  std::string kind;   // none, Alltoallw, halo exchange, Allreduce(sum), reduce-scatter(sum), Reduce(max), Gatherv
  index_t predicted_sent = 0, predicted_received = 0;  // each later execute() (or each gather)
  index_t predicted_first_sent = 0, predicted_first_received = 0;  // the first execute() after a scatter
  phase_stats measured;  // over every execute() (or gather) so far
};

/// Per-rank figures of a program plan: the phases (execute includes the redistributions),
/// each map's own plan_stats, and each redistribution.
struct program_stats {
  phase_stats scatter, execute, gather;
  std::vector<plan_stats> maps;
  std::vector<redistribution_stats> redistributions;
  index_t predicted_scatter_sent = 0, predicted_scatter_received = 0;
  index_t predicted_gather_sent = 0, predicted_gather_received = 0;
  int runs = 0;
};

namespace detail {
/// The grid of each map of a program from a schedule, checked on every rank alike before
/// anything is planned: every map has a grid, every grid's map is in the program, and the
/// maps' names differ (a schedule knows maps by name).
template <class... Maps>
std::vector<grid_shape> schedule_grids(const program_t<Maps...>& p, const schedule& s,
                                     const boost::mpi::communicator& comm) {
  if (!comm)
    throw plan_error("wp::distribute: this rank is not in the context's communicator; build "
                     "the plan only on the ranks of the communicator given to wp::context");
  std::vector<grid_shape> grids;
  std::uint64_t print = 0;
  const detail::failure f = detail::capture([&] {
    std::vector<std::string> names;
    p.for_each_map([&](const auto& m) { names.push_back(m.name()); });
    for (std::size_t x = 0; x < names.size(); ++x)
      for (std::size_t y = x + 1; y < names.size(); ++y)
        if (names[x] == names[y])
          throw plan_error("wp::distribute: the program has two maps named '" + names[x] +
                           "'; a schedule gives grids by map name, so name the maps apart");
    for (const auto& e : s.entries())
      if (std::find(names.begin(), names.end(), e.first) == names.end())
        throw plan_error("wp::distribute: the schedule gives grid " + e.second.str() +
                         " to map '" + e.first + "', which is not in the program");
    detail::fingerprint h;
    for (const auto& n : names) {
      const grid_shape* g = s.find(n);
      if (!g)
        throw grid_error("wp::distribute: map '" + n + "' has no grid in the schedule; "
                         "give it one with schedule::set");
      grids.push_back(*g);
      h.add(n).add(g->rank());
      for (index_t d : g->dims) h.add(d);
    }
    print = h.h;
  });
  detail::with_comm_errors([&] {
    detail::agree(comm, f, print, detail::name_rank::when_partial,
                  "wp::distribute: the ranks did not give the same schedule " + s.str() +
                      " (rank 0's); build the program and its schedule alike on every rank");
  });
  return grids;
}

}  // namespace detail

template <class... Maps>
class program_plan {
  static constexpr int M = int(sizeof...(Maps));
  using plans_type = std::tuple<map_plan<Maps>...>;

 public:
  program_plan(const program_t<Maps...>& p, const schedule& s,
               const boost::mpi::communicator& comm, options opt)
      : program_plan(p, detail::schedule_grids(p, s, comm), comm, opt, std::index_sequence_for<Maps...>{}) {}

  /// Scatter the inputs from root, execute, leave every written array on root.
  void run() {
    scatter();
    execute();
    gather();
  }

  /// Moves the program's inputs to the ranks: root's values, or generated in place by init().
  /// What an earlier map of the program writes is not sent.
  void scatter() {
    require_live("scatter");
    const double t0 = MPI_Wtime();
    detail::with_comm_errors([&] {
      bool changed = false;
      for_each_plan([&](int, auto& mp) {
        const auto before = mp.generated_;
        mp.refresh_generated();
        changed = changed || before != mp.generated_;
      });
      if (changed) apply_program_steps();
    });
    scattered_ = false;
    failed_ = "scatter() failed";
    local_then_agree([&] {
      detail::blocks_to_host(device_.get(), stats_.scatter);
      for_each_plan([&](int, auto& mp) {
        mp.check_alive();
        if (!mp.allocated_) mp.allocate();
      });
      link_shared_reads();
      for_each_plan([&](int, auto& mp) {
        mp.materialize_on_root(true);
        mp.generate_local();
      });
    });
    detail::with_comm_errors([&] {
      for_each_plan([&](int, auto& mp) {
        const double t = MPI_Wtime();
        for (auto& ap : mp.arrays_) {
          if (ap.use.read) mp.scatter_reads(ap);
          if (ap.use.written) mp.init_writes(ap);
        }
        mp.stats_.scatter.seconds += MPI_Wtime() - t;
      });
      for (auto& r : redists_)
        if (r.root_part) scatter_part(r);
    });
    failed_.clear();
    scattered_ = true;
    first_ = true;
    executed_ = false;
    stats_.scatter.seconds += MPI_Wtime() - t0;
  }

  /// Runs the program's maps in order on the current distributed values (scattering first if
  /// nothing was scattered); call it again to run the program again (iterative methods).
  void execute() {
    require_live("execute");
    if (!scattered_) scatter();
    const double t0 = MPI_Wtime();
    const detail::device_marks dm = detail::device_now(device_.get());
    failed_ = "execute() failed";
    scattered_ = false;  // a failure below leaves partial results: start again from root's
    for_each_plan([&](int m, auto& mp) {
      detail::with_comm_errors([&] {
        for (std::size_t x : into_[std::size_t(m)]) move_into(x);
        refill_identity(m, mp);
      });
      const double t = MPI_Wtime();
      const detail::failure f = detail::capture([&] { mp.run_block(); });
      mp.stats_.execute.seconds += MPI_Wtime() - t;
      ++mp.stats_.runs;
      detail::with_comm_errors([&] {
        detail::agree(comm_, f, 0, detail::name_rank::always);
        for (std::size_t c : combines_of_[std::size_t(m)]) combine_partials(c);
      });
    });
    failed_.clear();
    scattered_ = true;
    first_ = false;
    executed_ = true;
    ++stats_.runs;
    stats_.execute.seconds += MPI_Wtime() - t0;
    detail::count_device(stats_.execute, device_.get(), dm);
  }

  /// Leaves the final values of every array the program writes on root.
  void gather() {
    require_live("gather");
    std::vector<std::size_t> all;
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      if (!arrays_[a].writers.empty()) all.push_back(a);
    gather_arrays(all);
  }
  /// Gathers only the named arrays.
  template <class... A>
  void gather(const A&... arrs) {
    require_live("gather");
    std::vector<std::size_t> which{find_array(arrs, "gather")...};
    std::vector<std::size_t> written;
    for (std::size_t a : which)
      if (!arrays_[a].writers.empty()) written.push_back(a);
    gather_arrays(written);
  }

  /// This rank's block of an array, in the last map that writes it (or the first that reads it).
  template <class T, int R>
  local_block<T, R> local(const array<T, R>& a) {
    require_live("local");
    const auto& pa = arrays_[find_array(a, "local")];
    const int m = pa.writers.empty() ? pa.first_user : pa.writers.back();
    return visit_plan(m, [&](auto& mp) { return mp.local(a); });
  }

  /// The plan in words; identical on every rank.
  const std::string& explain() const { return explain_; }
  /// This rank's figures (measured beside predicted).
  program_stats stats() const {
    program_stats s = stats_;
    for_each_plan([&](int, const auto& mp) { s.maps.push_back(mp.stats()); });
    for (const auto& ms : s.maps) {  // root's sends of the inputs, counted by each map
      s.scatter.bytes_sent += ms.scatter.bytes_sent;
      s.scatter.bytes_received += ms.scatter.bytes_received;
    }
    s.redistributions.clear();
    for (const auto& r : redists_)
      if (shown(r)) s.redistributions.push_back(r.stats);
    s.predicted_scatter_sent = s.predicted_scatter_received = 0;
    for (const auto& ms : s.maps) {
      s.predicted_scatter_sent += ms.predicted_scatter_sent;
      s.predicted_scatter_received += ms.predicted_scatter_received;
    }
    s.predicted_gather_sent = s.predicted_gather_received = 0;
    for (const auto& ms : s.maps) {  // arrays a map gathers itself (overlapping partial results)
      s.predicted_gather_sent += ms.predicted_gather_sent;
      s.predicted_gather_received += ms.predicted_gather_received;
    }
    for (const auto& r : redists_)
      if (r.gather) {
        s.predicted_gather_sent += r.stats.predicted_sent;
        s.predicted_gather_received += r.stats.predicted_received;
      }
    return s;
  }
  std::string to_json() const;
  /// A program plan never runs in place on root's arrays (its intermediates live on the ranks).
  bool runs_in_place() const { return false; }

  /// Bytes over all ranks (received) that pass through root (scatter + gather()) and that
  /// move rank to rank in the first and in each later execute().
  index_t predicted_root_bytes() const { return root_scatter_total() + root_gather_total(); }
  index_t predicted_rank_bytes(bool first) const { return first ? rank_first_total_ : rank_steady_total_; }

 private:
  // ---------- construction ----------
  template <std::size_t... I>
  program_plan(const program_t<Maps...>& p, const std::vector<grid_shape>& grids,
               const boost::mpi::communicator& comm, options opt, std::index_sequence<I...>)
      // braces: the plans (each a collective) are built in program order on every rank
      : plans_{map_plan<Maps>(std::get<I>(p.maps()), grids[I], comm, opt, false)...}, comm_(comm) {
    rank_ = comm_.rank();
    size_ = comm_.size();
    (names_.push_back(std::get<I>(p.maps()).name()), ...);
    grids_ = grids;
    // The device backend: one context for all maps, so that a block one map leaves on the
    // device is the block the next one reads there (shared buffers have one mirror).
    device_ = std::get<0>(plans_).device_;
    for_each_plan([&](int, auto& mp) { mp.device_ = device_; });
    const detail::failure f = detail::capture([&] {
      plan_program();
      mark_shared_reads();
    });
    detail::with_comm_errors([&] { detail::agree(comm_, f, 0, detail::name_rank::when_partial); });
    apply_program_steps();
  }

  /// An array of the program and where each map holds it.
  struct program_array {
    std::string name;
    const void* id = nullptr;
    std::vector<int> slot;     // [map]: index in the map plan's arrays, -1 where unused
    std::vector<int> writers;  // maps that write it, in program order
    int first_user = 0;
    std::vector<int> partial;  // [map]: a combine mode (none, or how its partials are combined)
    std::vector<std::vector<detail::box>> owned;  // [map][rank]: the parts a reduce-scatter leaves
  };
  /// How the partial results of a split reduction are combined after their map.
  enum combine_mode : int { no_combine = 0, reduce_to_leaders = 1, all_reduce = 2, reduce_scatter = 3 };
  /// A redistribution: what `to_map` needs of array `array` (read boxes, or old values under
  /// its write boxes), or root's gather of the final values (to_map == -1).
  struct redist {
    std::size_t array = 0;
    int to_map = -1;
    bool old_values = false, gather = false, combine = false;  // combine: a partial_combine's stats
    // An input no map writes: the first execute() takes it from the read buffers of earlier
    // maps that read it (root sends it once), and later ones need nothing (it stays).
    bool first_reads = false;
    std::vector<int> first_layers, steady_layers;  // maps, newest first
    detail::transfer first, steady;
    bool first_remote = false, steady_remote = false;
    // root sends scatter() what of the need no layer holds (first.rest), into the reader's
    // buffer; the first execute() brings the rest
    bool root_part = false, rest_remote = false;
    redistribution_stats stats;
  };
  /// Partial results of `array` written by `map`, combined in their groups after it runs.
  struct partial_combine {
    std::size_t array = 0;
    int map = 0;
    int mode = reduce_to_leaders;
    std::size_t stat = 0;  // index of its entry in redists_ (stats only)
    std::vector<detail::box> parts;  // reduce-scatter: the part of each member of this rank's group, by group rank
  };

  detail::array_plan& slot(int m, std::size_t a) {
    return *slot_ptr_[std::size_t(m)][std::size_t(arrays_[a].slot[std::size_t(m)])];
  }
  const detail::array_plan& slot(int m, std::size_t a) const {
    return *slot_ptr_[std::size_t(m)][std::size_t(arrays_[a].slot[std::size_t(m)])];
  }

  /// Boxes each rank holds of array a after map m ran (for the maps after it).
  std::vector<detail::box> held_after(int m, std::size_t a, bool gather_side) const {
    const auto& ap = slot(m, a);
    const int mode = arrays_[a].partial[std::size_t(m)];
    if (mode == reduce_scatter) return arrays_[a].owned[std::size_t(m)];
    // after a Reduce only the leaders hold whole values; after an Allreduce every member
    if (mode != all_reduce || gather_side) return detail::leaders_write_boxes(ap, grids_[std::size_t(m)], size_);
    std::vector<detail::box> held(static_cast<std::size_t>(size_));
    for (int r = 0; r < int(grids_[std::size_t(m)].product()); ++r) held[std::size_t(r)] = ap.wbox[std::size_t(r)];
    return held;
  }
  std::vector<detail::layer> layers(const std::vector<int>& maps, std::size_t a, bool gather_side) const {
    std::vector<detail::layer> v;
    for (int m : maps) v.push_back({m, held_after(m, a, gather_side)});
    return v;
  }
  /// The layers a redistribution takes its pieces from (write buffers, or for an input no map
  /// writes, the earlier readers' read buffers).
  std::vector<detail::layer> source_layers(const redist& r, bool first) const {
    if (first && r.first_reads) {
      std::vector<detail::layer> v;
      for (int m : r.first_layers) v.push_back({m, slot(m, r.array).rbox});
      return v;
    }
    return layers(first ? r.first_layers : r.steady_layers, r.array, r.gather);
  }
  /// Maps before m that read array a into a read buffer, newest first.
  std::vector<int> readers_before(std::size_t a, int m) const {
    std::vector<int> v;
    for (int k = m - 1; k >= 0; --k) {
      const int u = arrays_[a].slot[std::size_t(k)];
      if (u < 0) continue;
      const auto& ap = *slot_ptr_[std::size_t(k)][std::size_t(u)];
      if (ap.use.read && !ap.reads_own_writes) v.push_back(k);
    }
    return v;
  }
  /// Writers of array a that run before map m, newest first; `cyclic`: then those from the
  /// previous execute() (m itself last).
  std::vector<int> writers_before(std::size_t a, int m, bool cyclic) const {
    std::vector<int> v;
    const auto& w = arrays_[a].writers;
    for (auto it = w.rbegin(); it != w.rend(); ++it)
      if (*it < m) v.push_back(*it);
    if (cyclic)
      for (auto it = w.rbegin(); it != w.rend(); ++it)
        if (*it >= m) v.push_back(*it);
    return v;
  }

  void collect_arrays() {
    slot_ptr_.assign(std::size_t(M), {});
    for_each_plan([&](int m, auto& mp) {
      for (std::size_t u = 0; u < mp.arrays_.size(); ++u) {
        auto& ap = mp.arrays_[u];
        slot_ptr_[std::size_t(m)].push_back(&ap);
        std::size_t a = 0;
        while (a < arrays_.size() && arrays_[a].id != ap.use.id) ++a;
        if (a == arrays_.size()) {
          program_array pa;
          pa.name = ap.use.name;
          pa.id = ap.use.id;
          pa.slot.assign(std::size_t(M), -1);
          pa.partial.assign(std::size_t(M), no_combine);
          pa.owned.assign(std::size_t(M), {});
          pa.first_user = m;
          arrays_.push_back(pa);
        }
        arrays_[a].slot[std::size_t(m)] = int(u);
        if (ap.use.written) arrays_[a].writers.push_back(m);
      }
    });
  }

  /// Which rank needs what of array a before map m runs: its read boxes, or (old_values) the
  /// old values under the write boxes of the ranks that combine into them.
  std::vector<detail::box> need_of(int m, std::size_t a, bool old_values) const {
    return detail::need_before(slot(m, a), grids_[std::size_t(m)], size_, old_values);
  }

  /// Two arrays of the program that are views of overlapping root memory, one of them written
  /// by some map: a later map would read the other from root's values before the write (each
  /// map plan checks this within the map). Only root knows the buffers; agree() tells all.
  void check_views_disjoint() const {
    for (std::size_t x = 0; x < arrays_.size(); ++x)
      for (std::size_t y = x + 1; y < arrays_.size(); ++y) {
        const auto& ux = slot(arrays_[x].first_user, x).use;
        const auto& uy = slot(arrays_[y].first_user, y).use;
        if (!ux.view_begin || !uy.view_begin) continue;
        if (arrays_[x].writers.empty() && arrays_[y].writers.empty()) continue;
        const char* bx = static_cast<const char*>(ux.view_begin);
        const char* by = static_cast<const char*>(uy.view_begin);
        if (bx < by + uy.view_bytes && by < bx + ux.view_bytes)
          throw plan_error("program: arrays '" + ux.name + "' and '" + uy.name + "' are views of "
                           "overlapping memory on root, and the program writes " +
                           (arrays_[x].writers.empty() ? "'" + uy.name + "'" : "'" + ux.name + "'") +
                           "; the maps pass values rank to rank by array, so the other would not "
                           "see the writes. Use one array for both, or copy one of them first");
      }
  }

  /// Every redistribution of the program (no communication; the same on every rank).
  void plan_program() {
    collect_arrays();
    check_views_disjoint();
    // Partial results that another map reads: overlapping boxes would need root's old values
    // (they are combined on root), which a rank-to-rank program does not have.
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      for (int m : arrays_[a].writers) {
        const auto& ap = slot(m, a);
        if (!ap.w_combine_on_root) continue;
        // another map uses it, or this map reads it again on the next execute()
        bool used_elsewhere = arrays_[a].writers.size() > 1 || (ap.use.read && !ap.reads_own_writes);
        for (int k = 0; k < M; ++k)
          if (k != m && arrays_[a].slot[std::size_t(k)] >= 0) used_elsewhere = true;
        if (used_elsewhere)
          throw plan_error("map '" + names_[std::size_t(m)] + "': under grid " +
                           grids_[std::size_t(m)].str() + " the ranks' partial results of '" +
                           arrays_[a].name + "' overlap (they are combined on root, with "
                           "root's old values), and the program reads '" +
                           arrays_[a].name + "' again (another map, or this map's next run); "
                           "choose a grid that does not split that reduction, or end the "
                           "program at this map");
        else
          delegated_gather_.push_back(a);
      }
    // Split reductions: per writer, the combine that moves the fewest bytes together with
    // what the readers then fetch from where it leaves the values (combine_cost); ties go to
    // the Allreduce (one step), then to a reduce-scatter (no rank receives every partial).
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      for (int m : arrays_[a].writers)
        if (!slot(m, a).wgroup.empty() && !slot(m, a).w_combine_on_root)
          arrays_[a].partial[std::size_t(m)] = all_reduce;
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      for (int m : arrays_[a].writers) {
        if (arrays_[a].partial[std::size_t(m)] == no_combine) continue;
        auto& pa = arrays_[a];
        int best_mode = all_reduce;
        std::vector<detail::box> best_owned;
        build_redists();
        index_t best = combine_cost(a, m);
        auto consider = [&](int mode, std::vector<detail::box> owned) {
          pa.partial[std::size_t(m)] = mode;
          pa.owned[std::size_t(m)] = owned;
          build_redists();
          const index_t c = combine_cost(a, m);
          if (c < best) {
            best = c;
            best_mode = mode;
            best_owned = std::move(owned);
          }
        };
        for (auto& owned : ownership_candidates(a, m)) consider(reduce_scatter, std::move(owned));
        consider(reduce_to_leaders, {});
        pa.partial[std::size_t(m)] = best_mode;
        pa.owned[std::size_t(m)] = std::move(best_owned);
      }
    build_redists();
    // the combines, in the order the maps run
    combines_of_.assign(std::size_t(M), {});
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      for (int m : arrays_[a].writers)
        if (arrays_[a].partial[std::size_t(m)] != no_combine) {
          partial_combine c{a, m, arrays_[a].partial[std::size_t(m)], 0, {}};
          if (c.mode == reduce_scatter) c.parts = group_parts(a, m, rank_);
          combines_of_[std::size_t(m)].push_back(combines_.size());
          combines_.push_back(std::move(c));
        }
    add_combine_stats();
    totals();
    explain_ = make_explain();
  }

  /// Bytes (received, over all ranks, first and later executes) of combining map m's partial
  /// results of array a as planned now, and of fetching them from where they then are.
  index_t combine_cost(std::size_t a, int m) const {
    index_t t = 0;
    const std::size_t es = slot(m, a).use.elem_size;
    for (const auto& b : combine_bytes({a, m, arrays_[a].partial[std::size_t(m)], 0, {}})) t += 2 * b.second;
    for (const auto& r : redists_) {
      if (r.gather || r.array != a) continue;
      for (const auto* tr : {&r.first, &r.steady}) {
        const auto& lay = tr == &r.first ? r.first_layers : r.steady_layers;
        for (const auto& p : tr->pieces)
          if (lay[std::size_t(p.layer)] == m && p.from != p.to) t += p.b.size() * index_t(es);
      }
    }
    return t;
  }

  /// The members of each group of map m's partial results of array a: [group][group rank].
  std::vector<std::vector<int>> write_groups(std::size_t a, int m) const {
    const auto& ap = slot(m, a);
    const auto& g = grids_[std::size_t(m)];
    std::vector<std::vector<int>> groups;
    std::vector<int> color_of;
    for (int r = 0; r < int(g.product()); ++r) {
      if (ap.wbox[std::size_t(r)].empty()) continue;
      const auto ck = detail::group_key(g, r, ap.wgroup);
      std::size_t x = 0;
      while (x < color_of.size() && color_of[x] != ck.first) ++x;
      if (x == color_of.size()) {
        color_of.push_back(ck.first);
        groups.emplace_back();
      }
      auto& members = groups[x];
      if (members.size() <= std::size_t(ck.second)) members.resize(std::size_t(ck.second) + 1, -1);
      members[std::size_t(ck.second)] = r;
    }
    return groups;
  }

  /// Ways to cut each group's box into the parts a reduce-scatter leaves on its members: as a
  /// later map reads it (where the readers' boxes are members' and cut it exactly), or in
  /// near-equal blocks along one axis.
  std::vector<std::vector<detail::box>> ownership_candidates(std::size_t a, int m) const {
    const auto& ap = slot(m, a);
    const int R = ap.use.rank;
    std::vector<std::vector<detail::box>> out;
    if (R == 0) return out;  // one element: Reduce onto the leader is the same thing
    const auto groups = write_groups(a, m);
    auto add = [&](std::vector<detail::box> owned) {
      bool leaders_own_all = true;  // that is a Reduce onto the leaders (reduce_to_leaders)
      for (const auto& members : groups)
        for (std::size_t x = 1; x < members.size(); ++x)
          leaders_own_all = leaders_own_all && owned[std::size_t(members[x])].empty();
      if (!leaders_own_all && std::find(out.begin(), out.end(), owned) == out.end())
        out.push_back(std::move(owned));
    };
    // as a later map (or this one, next time) reads it
    for (int k = 0; k < M; ++k) {
      if (arrays_[a].slot[std::size_t(k)] < 0) continue;
      const auto need = need_of(k, a, false);
      std::vector<detail::box> owned(static_cast<std::size_t>(size_));
      bool ok = true;
      for (const auto& members : groups) {
        const detail::box& W = ap.wbox[std::size_t(members.front())];
        index_t covered = 0;
        for (std::size_t x = 0; x < members.size() && ok; ++x) {
          const detail::box o = detail::box::intersect(need[std::size_t(members[x])], W);
          for (std::size_t y = 0; y < x && ok; ++y)
            ok = detail::box::intersect(o, owned[std::size_t(members[y])]).empty();
          owned[std::size_t(members[x])] = o;
          covered += o.size();
        }
        ok = ok && covered == W.size();
        if (!ok) break;
      }
      if (ok) add(std::move(owned));
    }
    // in blocks along each axis
    for (int axis = 0; axis < R; ++axis) {
      std::vector<detail::box> owned(static_cast<std::size_t>(size_));
      for (const auto& members : groups) {
        const detail::box& W = ap.wbox[std::size_t(members.front())];
        const index_t G = index_t(members.size());
        for (index_t x = 0; x < G; ++x) {  // the balanced blocks a grid dimension makes
          const detail::block_range k = detail::balanced_block(W.lo[axis], W.hi[axis], G, x);
          detail::box o = W;
          o.lo[axis] = k.start;
          o.hi[axis] = k.end;
          owned[std::size_t(members[std::size_t(x)])] = o.empty() ? detail::box{} : o;
        }
      }
      add(std::move(owned));
    }
    return out;
  }
  /// The parts the members of rank r's group own after a reduce-scatter, by group rank.
  std::vector<detail::box> group_parts(std::size_t a, int m, int r) const {
    for (const auto& members : write_groups(a, m))
      if (std::find(members.begin(), members.end(), r) != members.end()) {
        std::vector<detail::box> parts;
        for (int x : members) parts.push_back(arrays_[a].owned[std::size_t(m)][std::size_t(x)]);
        return parts;
      }
    return {};
  }

  void build_redists() {
    redists_.clear();
    into_.assign(std::size_t(M), {});
    for (int m = 0; m < M; ++m)
      for (std::size_t a = 0; a < arrays_.size(); ++a) {
        if (arrays_[a].slot[std::size_t(m)] < 0) continue;
        for (bool old_values : {false, true}) {
          const auto need = need_of(m, a, old_values);
          bool any = false;
          for (const auto& b : need) any = any || !b.empty();
          if (!any) continue;
          redist r;
          r.array = a;
          r.to_map = m;
          r.old_values = old_values;
          if (arrays_[a].writers.empty()) {
            r.first_reads = true;
            r.first_layers = readers_before(a, m);
          } else {
            r.first_layers = writers_before(a, m, false);
            r.steady_layers = writers_before(a, m, true);
          }
          r.first = detail::plan_transfer(need, source_layers(r, true));
          r.steady = detail::plan_transfer(need, source_layers(r, false));
          finish(r);
          into_[std::size_t(m)].push_back(redists_.size());
          redists_.push_back(std::move(r));
        }
      }
    // root's gather of the final values: the last writer of each element
    for (std::size_t a = 0; a < arrays_.size(); ++a) {
      if (arrays_[a].writers.empty()) continue;
      if (std::find(delegated_gather_.begin(), delegated_gather_.end(), a) != delegated_gather_.end())
        continue;
      const auto& u = slot(arrays_[a].writers.front(), a).use;
      std::vector<detail::box> need(static_cast<std::size_t>(size_));
      need[0] = detail::whole_box(u);
      redist r;
      r.array = a;
      r.gather = true;
      r.steady_layers = writers_before(a, M, false);
      r.first_layers = r.steady_layers;
      r.steady = detail::plan_transfer(need, source_layers(r, false));
      r.first = r.steady;
      finish(r);
      redists_.push_back(std::move(r));
    }
  }

  void finish(redist& r) {
    const auto& pa = arrays_[r.array];
    const std::size_t es = slot(pa.first_user, r.array).use.elem_size;
    r.first_remote = r.first.any_remote();
    r.steady_remote = r.steady.any_remote();
    auto& s = r.stats;
    s.array = pa.name;
    std::string from;
    for (const auto* lay : {&r.steady_layers, &r.first_layers})
      for (int m : *lay)
        if (from.find("'" + names_[std::size_t(m)] + "'") == std::string::npos)
          from += (from.empty() ? "'" : ", '") + names_[std::size_t(m)] + "'";
    if (r.steady.any_remainder() || r.first.any_remainder()) from += from.empty() ? "root" : ", root";
    s.from = from;
    s.to = r.gather ? "root" : "'" + names_[std::size_t(r.to_map)] + "'";
    const bool by_first = r.steady.pieces.empty() && !r.first.pieces.empty();
    s.kind = r.gather ? "Gatherv" : detail::transfer_kind(by_first ? r.first : r.steady, source_layers(r, by_first));
    s.predicted_sent = r.steady.bytes_sent(rank_, es);
    s.predicted_received = r.steady.bytes_received(rank_, es);
    s.predicted_first_sent = r.first.bytes_sent(rank_, es);
    s.predicted_first_received = r.first.bytes_received(rank_, es);
  }

  /// The partial combines, as stats entries after the redistributions (bytes as the
  /// collectives count them: each member but the leader sends its box once; an Allreduce
  /// then sends the whole back to each of them).
  void add_combine_stats() {
    for (auto& c : combines_) {
      const auto& ap = slot(c.map, c.array);
      redist r;
      r.array = c.array;
      r.to_map = c.map;
      r.combine = true;
      auto& s = r.stats;
      s.array = arrays_[c.array].name;
      s.from = "'" + names_[std::size_t(c.map)] + "'";
      s.to = s.from;
      s.kind = std::string(c.mode == all_reduce       ? "Allreduce("
                           : c.mode == reduce_scatter ? "reduce-scatter("
                                                      : "Reduce(") +
               detail::combine_name(ap.use.write_kind) + ") over " + detail::dims_text(ap.wgroup);
      const auto per = combine_bytes(c);
      s.predicted_sent = s.predicted_first_sent = per[std::size_t(rank_)].first;
      s.predicted_received = s.predicted_first_received = per[std::size_t(rank_)].second;
      r.first_remote = r.steady_remote = true;
      c.stat = redists_.size();
      redists_.push_back(std::move(r));
    }
  }
  /// Bytes (sent, received) per rank of a partial combine.
  std::vector<std::pair<index_t, index_t>> combine_bytes(const partial_combine& c) const {
    const auto& ap = slot(c.map, c.array);
    const auto& g = grids_[std::size_t(c.map)];
    std::vector<std::pair<index_t, index_t>> v(static_cast<std::size_t>(size_));
    const index_t es = index_t(ap.use.elem_size);
    if (c.mode == reduce_scatter) {  // each member sends every other one that one's part
      const auto& owned = arrays_[c.array].owned[std::size_t(c.map)];
      for (const auto& members : write_groups(c.array, c.map))
        for (int r : members)
          for (int o : members)
            if (o != r) {
              const index_t n = owned[std::size_t(o)].size() * es;
              v[std::size_t(r)].first += n;
              v[std::size_t(o)].second += n;
            }
      return v;
    }
    for (int r = 0; r < int(g.product()); ++r) {
      const index_t n = ap.wbox[std::size_t(r)].size() * es;
      if (n == 0 || detail::group_key(g, r, ap.wgroup).second == 0) continue;
      auto co = detail::grid_coords(g, r);
      for (int d : ap.wgroup) co[std::size_t(d)] = 0;
      const int l = detail::grid_rank(g, co);
      v[std::size_t(r)].first += n;
      v[std::size_t(l)].second += n;
      if (c.mode == all_reduce) {
        v[std::size_t(l)].first += n;
        v[std::size_t(r)].second += n;
      }
    }
    return v;
  }

  void totals() {
    root_total_ = rank_first_total_ = rank_steady_total_ = 0;
    std::vector<std::size_t> es(arrays_.size());
    for (std::size_t a = 0; a < arrays_.size(); ++a) es[a] = slot(arrays_[a].first_user, a).use.elem_size;
    for (const auto& r : redists_) {
      if (r.combine) continue;
      for (int k = 0; k < size_; ++k) {
        if (r.gather) root_total_ += r.steady.bytes_received(k, es[r.array]);
        else {
          rank_first_total_ += r.first.bytes_received(k, es[r.array]);
          rank_steady_total_ += r.steady.bytes_received(k, es[r.array]);
        }
      }
    }
    for (const auto& c : combines_)
      for (const auto& b : combine_bytes(c)) {
        rank_first_total_ += b.second;
        rank_steady_total_ += b.second;
      }
  }

  /// Each map's own steps: root sends only what no earlier map provides; the gather and the
  /// partial combines are the program's (listed after the maps).
  void apply_program_steps() {
    for_each_plan([&](int m, auto& mp) {
      for (std::size_t u = 0; u < mp.arrays_.size(); ++u) {
        auto& ap = mp.arrays_[u];
        const detail::array_plan fresh = mp.plan_array(u);
        ap.in_steps = fresh.in_steps;
        ap.init_steps = fresh.init_steps;
        std::size_t a = 0;
        while (arrays_[a].id != ap.use.id) ++a;
        // the program gathers, except arrays whose partial results only their map combines
        if (std::find(delegated_gather_.begin(), delegated_gather_.end(), a) != delegated_gather_.end())
          ap.out_steps = fresh.out_steps;
        else
          ap.out_steps.clear();
        for (auto& r : redists_) {
          if (r.gather || r.combine || r.to_map != m || r.array != a) continue;
          auto& steps = r.old_values ? ap.init_steps : ap.in_steps;
          r.root_part = false;
          if (r.first.any_remainder()) {
            // root sends only the parts no earlier map provides (init() generates in place);
            // where no map provides any, the map's own scatter (with its broadcasts) stays
            if (r.first.pieces.empty() || steps.empty() || steps.front().op != detail::step_op::scatterv)
              continue;
            detail::comm_step part{detail::step_op::scatterv_part, "Alltoallw",
                                   "root -> ranks, only the parts no earlier map writes",
                                   std::vector<index_t>(static_cast<std::size_t>(size_), 0),
                                   std::vector<index_t>(static_cast<std::size_t>(size_), 0)};
            const index_t es = index_t(ap.use.elem_size);
            r.rest_remote = false;
            for (const auto& p : r.first.rest)
              if (p.to != 0) {
                part.sent[0] += p.b.size() * es;
                part.received[std::size_t(p.to)] += p.b.size() * es;
                r.rest_remote = true;
              }
            r.root_part = true;
            steps.assign(1, part);
            continue;
          }
          detail::comm_step none{detail::step_op::none, "none",
                                 "from map(s) " + r.stats.from + " (see the redistributions)",
                                 std::vector<index_t>(static_cast<std::size_t>(size_), 0),
                                 std::vector<index_t>(static_cast<std::size_t>(size_), 0)};
          steps.assign(1, none);
        }
      }
      mp.update_predictions();
      mp.explain_ = mp.make_explain();
    });
    explain_ = make_explain();
  }

  /// Whether a redistribution is worth a line: not when all of it comes from root (that is
  /// the map's scatter) or only from the reader's own buffers of its last run (nothing moves).
  bool shown(const redist& r) const {
    if (r.gather || r.combine) return true;
    for (const auto* lay : {&r.steady_layers, &r.first_layers})
      for (int m : *lay)
        if (m != r.to_map) return true;
    return r.first.any_remote() || r.steady.any_remote();
  }

  index_t root_scatter_total() const {
    index_t t = 0;
    for_each_plan([&](int, const auto& mp) { t += mp.predicted_total(true); });
    return t;
  }
  /// gather() of every written array: the program's pieces, and what maps gather themselves.
  index_t root_gather_total() const {
    index_t t = root_total_;
    for_each_plan([&](int, const auto& mp) { t += mp.predicted_total(false); });
    return t;
  }

  std::string make_explain() const {
    std::string s = "program of " + std::to_string(M) + " maps on " + std::to_string(size_) +
                    " ranks:";
    for (int m = 0; m < M; ++m)
      s += std::string(m ? "," : "") + " '" + names_[std::size_t(m)] + "' " + grids_[std::size_t(m)].str();
    s += "\n";
    for_each_plan([&](int, const auto& mp) { s += mp.explain_; });
    std::vector<std::size_t> es(arrays_.size());
    for (std::size_t a = 0; a < arrays_.size(); ++a) es[a] = slot(arrays_[a].first_user, a).use.elem_size;
    auto per_rank = [&](const detail::transfer& t, std::size_t e) {
      index_t tot = 0;
      std::string v;
      for (int k = 0; k < size_; ++k) {
        const index_t b = t.bytes_received(k, e);
        tot += b;
        v += " " + std::to_string(b);
      }
      return "total " + detail::bytes_text(tot) + "; received per rank:" + v;
    };
    auto mapping = [&](int m, std::size_t a, bool writes) {
      std::string out;
      const std::string& mt = slot(m, a).mapping_text;
      std::size_t pos = 0;
      while (pos < mt.size()) {
        const std::size_t end = mt.find('\n', pos);
        const std::string line = mt.substr(pos, end - pos);
        if (line.find(writes ? "write " : "read  ") != std::string::npos)
          out += "      " + names_[std::size_t(m)] + ": " + line.substr(line.find_first_not_of(' ')) + "\n";
        pos = end == std::string::npos ? mt.size() : end + 1;
      }
      return out;
    };
    s += "  between maps (before each map runs; from the maps that wrote last, inputs from the maps that read them before):\n";
    bool any = false;
    for (const auto& r : redists_) {
      if (r.gather || r.to_map < 0) continue;
      const bool is_combine = r.combine;
      if (!shown(r)) continue;
      any = true;
      const std::size_t a = r.array;
      if (is_combine) {
        s += "    array " + r.stats.array + ": partial results of " + r.stats.from + " combined: " +
             r.stats.kind + "; received per rank:";
        std::size_t ci = 0;
        while (combines_[ci].stat != std::size_t(&r - redists_.data())) ++ci;
        index_t tot = 0;
        for (const auto& b : combine_bytes(combines_[ci])) {
          s += " " + std::to_string(b.second);
          tot += b.second;
        }
        s += ", total " + detail::bytes_text(tot) + "\n";
        continue;
      }
      s += "    array " + r.stats.array + (r.old_values ? " (old values)" : "") + " -> " +
           r.stats.to + " from " + r.stats.from + ":\n";
      for (int m : r.first_reads ? r.first_layers : r.steady_layers) s += mapping(m, a, !r.first_reads);
      s += mapping(r.to_map, a, false);
      if (r.first_layers != r.steady_layers && r.first.pieces.size() + r.steady.pieces.size() > 0 &&
          (r.first.any_remote() != r.steady.any_remote() ||
           per_rank(r.first, es[a]) != per_rank(r.steady, es[a]))) {
        s += "      first execute(): " + detail::transfer_kind(r.first, source_layers(r, true)) +
             ", " + per_rank(r.first, es[a]) + "\n";
        s += "      later execute(): " +
             (r.steady.pieces.empty() ? std::string("nothing (it stays)") : r.stats.kind) + ", " +
             per_rank(r.steady, es[a]) + "\n";
      } else {
        s += "      " + r.stats.kind + ", " + per_rank(r.steady, es[a]) + "\n";
      }
    }
    if (!any) s += "    nothing\n";
    s += "  gather (root receives the final values of what the program writes):\n";
    for (const auto& r : redists_)
      if (r.gather)
        s += "    array " + r.stats.array + " from " + r.stats.from + ": " + r.stats.kind + ", " +
             per_rank(r.steady, es[r.array]) + "\n";
    for (std::size_t a : delegated_gather_)
      s += "    array " + arrays_[a].name + ": by map '" + names_[std::size_t(arrays_[a].writers.front())] +
           "' (overlapping partial results, combined on root; its gather steps above)\n";
    s += "  bytes through root: scatter " + detail::bytes_text(root_scatter_total()) + ", gather " +
         detail::bytes_text(root_gather_total()) + "; rank to rank: first execute() " +
         detail::bytes_text(rank_first_total_) + ", each later execute() " +
         detail::bytes_text(rank_steady_total_) + "\n";
    return s;
  }

  /// This rank reads an array in exactly the box another map's buffer holds it in, and takes
  /// all of it from there on every execute(): an input no map writes, read before by an
  /// earlier map, or an intermediate whose last writer before this map is the same in the
  /// first and every later execute(). Its read buffer is then that buffer (nothing copied, no
  /// second allocation). A per-rank decision: it changes no message.
  void mark_shared_reads() {
    shared_from_.clear();
    // the single local piece that fills this rank's whole need, or nullptr
    auto whole_local = [&](const detail::transfer& t, const detail::box& need) -> const detail::piece* {
      const detail::piece* only = nullptr;
      for (const auto& p : t.pieces)
        if (p.to == rank_) {
          if (only) return nullptr;
          only = &p;
        }
      return only && only->from == rank_ && only->b == need ? only : nullptr;
    };
    for (const auto& r : redists_) {
      // not where root sends (or init() generates) the reader's box at scatter(): that would
      // write into the shared buffer
      if (r.gather || r.combine || r.old_values || r.first.any_remainder()) continue;
      auto& dst = slot(r.to_map, r.array);
      const detail::box& need = dst.rbox[std::size_t(rank_)];
      if (need.empty()) continue;
      const detail::piece* p = whole_local(r.first, need);
      if (!p) continue;
      const int src = r.first_layers[std::size_t(p->layer)];
      if (r.first_reads) {
        if (!(slot(src, r.array).rbox[std::size_t(rank_)] == need)) continue;
        dst.shares_reads = true;
        shared_from_.push_back({&dst, &slot(src, r.array), false});
        continue;
      }
      const detail::piece* q = whole_local(r.steady, need);
      if (!q || r.steady_layers[std::size_t(q->layer)] != src ||
          !(slot(src, r.array).wbox[std::size_t(rank_)] == need))
        continue;
      dst.shares_reads = true;
      shared_from_.push_back({&dst, &slot(src, r.array), true});
    }
  }
  /// After allocation: the shared buffers (a shared input's source comes earlier in program
  /// order, so a chain of sharers resolves to the first reader's buffer).
  void link_shared_reads() {
    for (auto& sh : shared_from_)
      sh.reader->shared_rdata = sh.write ? detail::buf_data(sh.owner->wbuf) : detail::read_data(*sh.owner);
  }

  // ---------- running ----------
  /// Root's values of what no layer of redistribution r holds, into the reader's buffer.
  void scatter_part(redist& r) {
    auto& dst = slot(r.to_map, r.array);
    const double t0 = MPI_Wtime();
    const detail::held_buffer target =
        r.old_values ? detail::held_buffer{detail::buf_data(dst.wbuf), dst.wbox[std::size_t(rank_)]}
                     : detail::held_buffer{detail::read_data(dst), dst.rbox[std::size_t(rank_)]};
    const detail::held_buffer root{rank_ == 0 ? dst.use.root_data() : nullptr, detail::whole_box(dst.use)};
    const detail::moved mv = detail::exchange_pieces(
        comm_, dst.use, r.first.rest, r.rest_remote, [&](const detail::piece&) { return root; },
        [&](const detail::piece&) { return target; });
    visit_plan(r.to_map, [&](auto& mp) {
      mp.stats_.scatter.bytes_sent += mv.sent;
      mp.stats_.scatter.bytes_received += mv.received;
      mp.stats_.scatter.seconds += MPI_Wtime() - t0;
    });
  }

  /// Redistribution x into the map about to run (the first or a later execute()'s pieces).
  void move_into(std::size_t x) {
    redist& r = redists_[x];
    auto& dst = slot(r.to_map, r.array);
    const detail::box& dbox = r.old_values ? dst.wbox[std::size_t(rank_)] : dst.rbox[std::size_t(rank_)];
    void* dbuf = r.old_values ? detail::buf_data(dst.wbuf) : detail::read_data(dst);
    move_pieces(r, first_, {dbuf, dbox}, stats_.execute);
  }
  /// Moves r's pieces (of the first or of a later execute()) from the buffers of its source
  /// layers into `target`, counting them in r's figures and in `phase`.
  void move_pieces(redist& r, bool first, const detail::held_buffer& target, phase_stats& phase) {
    const auto& t = first ? r.first : r.steady;
    const auto& lay = first ? r.first_layers : r.steady_layers;
    if (t.pieces.empty()) return;
    const double t0 = MPI_Wtime();
    auto source = [&](const detail::piece& p) {
      auto& src = slot(lay[std::size_t(p.layer)], r.array);
      if (first && r.first_reads)
        return detail::held_buffer{detail::read_data(src), src.rbox[std::size_t(rank_)]};
      return detail::held_buffer{detail::buf_data(src.wbuf), src.wbox[std::size_t(rank_)]};
    };
    const detail::device_marks dm = detail::device_now(device_.get());
    const auto& use = slot(arrays_[r.array].first_user, r.array).use;
    std::vector<detail::piece> rest;  // the device backend: the pieces the host moves
    const std::vector<detail::piece>& pieces = device_ ? detail::stage_pieces(*device_, rank_, t.pieces, use, source, target, rest) : t.pieces;
    const detail::moved mv = detail::exchange_pieces(
        comm_, use, pieces,
        first ? r.first_remote : r.steady_remote, source,
        [&](const detail::piece&) { return target; });
    detail::count_device(r.stats.measured, device_.get(), dm);
    detail::count_device(phase, device_.get(), dm);
    r.stats.measured.bytes_sent += mv.sent;
    r.stats.measured.bytes_received += mv.received;
    r.stats.measured.seconds += MPI_Wtime() - t0;
    phase.bytes_sent += mv.sent;
    phase.bytes_received += mv.received;
  }

  /// Members of a split reduction start each run from the identity (their partials were
  /// combined after the last run; after an Allreduce or a reduce-scatter they held the whole
  /// value or their part of it until now; a leader takes the old values first).
  template <class Plan>
  void refill_identity(int m, Plan& mp) {
    if (first_) return;  // scatter() filled them
    for (std::size_t c : combines_of_[std::size_t(m)]) {
      if (combines_[c].mode == reduce_to_leaders) continue;  // those restarted at once
      auto& ap = slot(m, combines_[c].array);
      const index_t n = ap.wbox[std::size_t(rank_)].size();
      if (n == 0 || ap.wleader) continue;
      detail::with_elem(ap.use.elem, [&](auto z) {
        detail::fill_identity<decltype(z)>(detail::buf_data(ap.wbuf), n, ap.use.write_kind);
      });
      if (device_) device_->host_wrote(detail::buf_data(ap.wbuf));  // whole block refilled
    }
    (void)mp;
  }

  void combine_partials(std::size_t c) {
    const auto& pc = combines_[c];
    auto& ap = slot(pc.map, pc.array);
    auto& st = redists_[pc.stat].stats;
    const index_t n = ap.wbox[std::size_t(rank_)].size();
    if (!ap.wcomm || n == 0) return;
    const double t0 = MPI_Wtime();
    void* buf = detail::buf_data(ap.wbuf);
    if (device_) {  // the partials are the device's; the combined values the host's
      const detail::device_marks dm = detail::device_now(device_.get());
      device_->to_host(buf);
      device_->host_wrote(buf);
      detail::count_device(st.measured, device_.get(), dm);
    }
    if (pc.mode == reduce_scatter) {
      const detail::moved mv = detail::reduce_scatter_boxes(ap.wcomm, ap.use, ap.use.write_kind, buf,
                                                            ap.wbox[std::size_t(rank_)], pc.parts);
      count_combine(st, mv, t0);
      return;
    }
    detail::moved mv = detail::reduce_onto_leader(ap.wcomm, ap.use.elem, ap.use.write_kind, buf, n);
    if (pc.mode == all_reduce) {
      const detail::moved b = detail::bcast_box(ap.wcomm, ap.use.elem, buf, n);
      mv.sent += b.sent;
      mv.received += b.received;
    } else if (ap.wcomm.rank() != 0) {
      detail::with_elem(ap.use.elem, [&](auto z) {
        detail::fill_identity<decltype(z)>(buf, n, ap.use.write_kind);
      });
    }
    count_combine(st, mv, t0);
  }
  void count_combine(redistribution_stats& st, const detail::moved& mv, double t0) {
    st.measured.bytes_sent += mv.sent;
    st.measured.bytes_received += mv.received;
    st.measured.seconds += MPI_Wtime() - t0;
    stats_.execute.bytes_sent += mv.sent;
    stats_.execute.bytes_received += mv.received;
  }

  void gather_arrays(const std::vector<std::size_t>& which) {
    if (!failed_.empty())
      throw plan_error("plan for the program: the last " + failed_ + ", so the ranks' blocks "
                       "hold partial results; gather() copies nothing of them to root (root's "
                       "arrays are unchanged). Call scatter() or run() to start again");
    if (!executed_) return;  // nothing ran since the last scatter: root holds the values
    const double t0 = MPI_Wtime();
    local_then_agree([&] {
      for_each_plan([&](int, auto& mp) { mp.check_alive(); });
      detail::blocks_to_host(device_.get(), stats_.gather);
      if (rank_ == 0)
        for (std::size_t a : which) {
          const int m = arrays_[a].writers.back();
          visit_plan(m, [&](auto& mp) {
            (void)mp;
            auto& ap = slot(m, a);
            try {
              ap.use.root_data();
            } catch (const error&) {
              throw;
            } catch (const std::exception& e) {
              throw error("[workpart.error] program: root could not make its copy of array '" +
                          ap.use.name + "': " + e.what());
            }
          });
        }
    });
    detail::with_comm_errors([&] {
      for (std::size_t a : which) {
        if (std::find(delegated_gather_.begin(), delegated_gather_.end(), a) != delegated_gather_.end()) {
          const int m = arrays_[a].writers.front();
          visit_plan(m, [&](auto& mp) {
            auto& ap = slot(m, a);
            const auto before = mp.stats_.gather;
            mp.gather_writes_now(ap);
            stats_.gather.bytes_sent += mp.stats_.gather.bytes_sent - before.bytes_sent;
            stats_.gather.bytes_received += mp.stats_.gather.bytes_received - before.bytes_received;
          });
          note_gathered(a);
          continue;
        }
        for (auto& r : redists_) {
          if (!r.gather || r.array != a) continue;
          const auto& u = slot(arrays_[a].writers.front(), a).use;
          move_pieces(r, false, {rank_ == 0 ? u.root_data() : nullptr, detail::whole_box(u)}, stats_.gather);
        }
        note_gathered(a);
      }
    });
    stats_.gather.seconds += MPI_Wtime() - t0;
  }

  /// Root now holds array a: later scatters send root's values instead of init()'s.
  void note_gathered(std::size_t a) {
    bool changed = false;
    for_each_plan([&](int m, auto& mp) {
      const int u = arrays_[a].slot[std::size_t(m)];
      if (u >= 0 && mp.generated_[std::size_t(u)]) {
        mp.generated_[std::size_t(u)] = 0;
        changed = true;
      }
    });
    if (changed) apply_program_steps();
  }

  // ---------- helpers ----------
  template <class F>
  void for_each_plan(F&& f) {
    std::apply([&](auto&... p) {
      int m = 0;
      ((f(m++, p)), ...);
    }, plans_);
  }
  template <class F>
  void for_each_plan(F&& f) const {
    std::apply([&](const auto&... p) {
      int m = 0;
      ((f(m++, p)), ...);
    }, plans_);
  }
  template <class F>
  decltype(auto) visit_plan(int m, F&& f) {
    return visit_impl(m, f, std::index_sequence_for<Maps...>{});
  }
  template <class F, std::size_t I0, std::size_t... I>
  decltype(auto) visit_impl(int m, F& f, std::index_sequence<I0, I...>) {
    if constexpr (sizeof...(I) == 0) {
      return f(std::get<I0>(plans_));
    } else {
      if (m == int(I0)) return f(std::get<I0>(plans_));
      return visit_impl(m, f, std::index_sequence<I...>{});
    }
  }
  template <class A>
  std::size_t find_array(const A& a, const char* what) const {
    for (std::size_t x = 0; x < arrays_.size(); ++x)
      if (arrays_[x].id == static_cast<const void*>(&a)) return x;
    throw plan_error(std::string("plan.") + what + "(" + a.name() + "): the program does not "
                     "use array '" + a.name() + "'");
  }
  template <class F>
  void local_then_agree(F&& f) {
    detail::local_then_agree(comm_, f);
  }
  void require_live(const char* what) const { live_.require(what); }

  plans_type plans_;
  boost::mpi::communicator comm_;
  int rank_ = 0, size_ = 1;
  std::vector<std::string> names_;
  std::vector<grid_shape> grids_;
  std::vector<program_array> arrays_;
  std::vector<std::vector<detail::array_plan*>> slot_ptr_;  // [map][u]: the map plan's records
  std::vector<redist> redists_;
  std::vector<std::vector<std::size_t>> into_;  // [map]: redistributions before it runs
  std::vector<partial_combine> combines_;
  std::vector<std::vector<std::size_t>> combines_of_;  // [map]: combines after it runs
  std::vector<std::size_t> delegated_gather_;
  struct shared_read {
    detail::array_plan* reader;
    detail::array_plan* owner;
    bool write;  // the owner's write buffer (else its read buffer)
  };
  std::vector<shared_read> shared_from_;
  index_t root_total_ = 0, rank_first_total_ = 0, rank_steady_total_ = 0;
  std::string explain_;
  program_stats stats_;
  std::string failed_;
  bool scattered_ = false, first_ = true, executed_ = false;
  std::shared_ptr<detail::device_context> device_;  // backend::cuda: the maps' one context
  detail::live_flag live_;
};

template <class... Maps>
std::string program_plan<Maps...>::to_json() const {
  const auto esc = detail::json_escape;
  const auto ph = detail::phase_json;
  const program_stats st = stats();
  std::string s = "{\"program\":[";
  bool first = true;
  for_each_plan([&](int, const auto& mp) {
    s += std::string(first ? "" : ",") + mp.to_json();
    first = false;
  });
  s += "],\"redistributions\":[";
  for (std::size_t x = 0; x < st.redistributions.size(); ++x) {
    const auto& r = st.redistributions[x];
    s += std::string(x ? "," : "") + "{\"array\":\"" + esc(r.array) + "\",\"from\":\"" + esc(r.from) +
         "\",\"to\":\"" + esc(r.to) + "\",\"kind\":\"" + esc(r.kind) + "\",\"predicted_sent\":" +
         std::to_string(r.predicted_sent) + ",\"predicted_received\":" +
         std::to_string(r.predicted_received) + ",\"predicted_first_sent\":" +
         std::to_string(r.predicted_first_sent) + ",\"predicted_first_received\":" +
         std::to_string(r.predicted_first_received) + ",\"measured\":" + ph(r.measured) + "}";
  }
  s += "],\"stats\":{\"scatter\":" + ph(st.scatter) + ",\"execute\":" + ph(st.execute) +
       ",\"gather\":" + ph(st.gather) + ",\"runs\":" + std::to_string(st.runs) +
       "},\"bytes\":{\"through_root_gather\":" + std::to_string(root_total_) +
       ",\"rank_to_rank_first\":" + std::to_string(rank_first_total_) +
       ",\"rank_to_rank_later\":" + std::to_string(rank_steady_total_) + "},\"explain\":\"" +
       esc(explain_) + "\"}";
  return s;
}

}  // namespace workpart
