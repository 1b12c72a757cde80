#pragma once
/// \file program.hpp
/// `solve_program`: what a program of several maps moves between its maps, decided with no
/// MPI and no templates, for any number of ranks. The program plan (runtime/program_plan.hpp)
/// runs what this decides; the optimizer's cost model (optimize/cost_model.hpp) and
/// `wp::plan_on_paper` price it.
///
/// Each map is solved on its own grid first (solve_array.hpp). Then, per array of the program:
///  - its *layers* (redistribute.hpp): where its values are after each map that writes it;
///  - before each map that reads it (or combines into its old values), the pieces that bring
///    what each rank needs from the maps that wrote it last, or, for an input no map writes,
///    from the maps that read it before (root sends only what no layer holds);
///  - after each map whose writes are partial results of a split reduction, how they are
///    combined in their groups: Allreduce (every member then holds the whole box), a
///    reduce-scatter (each member then holds the combined values of one part, cut to what the
///    next reader needs or in blocks along one axis), or Reduce onto the group leaders —
///    whichever moves the fewest bytes together with what the readers then fetch (ties go to
///    the Allreduce, one step, then to a reduce-scatter); except where the array's next writer
///    adds onto the same boxes in the same groups with the same op and no map uses the array
///    between (an LSTM's recurrent weight gradient over its steps): the partial results are then
///    kept where they are, the next writer adds onto a local copy of them, and the last writer
///    of such a chain combines them all once;
///  - after each map whose partial results overlap between ranks (a sliding window's input
///    gradient, whose ranks' boxes share the window's halo) and whose array the program uses
///    again (a zeroing map before it, a reader after it, its own next run): each rank owns a
///    disjoint part of the union of the boxes (array_solution::w_parts), starts its part from
///    the old values and the rest of its box from the identity, and after the map sends each
///    owner what its box holds of that owner's part, which the owner combines
///    (combine_mode::overlapping); the readers then fetch the parts. Where no map uses the
///    array again the map gathers its partial results itself, combined on root;
///  - root's gather of the final values, from the maps that wrote each element last.
/// Every byte is known per rank before anything runs (`bytes_of`).

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "explain.hpp"
#include "redistribute.hpp"
#include "solve_array.hpp"
#include "solve_map.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// How the partial results of a split reduction are combined after their map.
enum class combine_mode : int {
  none = 0,
  reduce_to_leaders = 1,
  all_reduce = 2,
  reduce_scatter = 3,
  /// partial results whose boxes overlap between ranks (a sliding window's input gradient):
  /// each rank sends every other what its box holds of that rank's part (w_parts), which
  /// combines them, so that each rank holds the whole values of its own part
  overlapping = 4
};

/// Bytes of box per member from which an Allreduce of 3 or more members runs in parts
/// (comm/collectives/all_reduce.hpp): each member then moves 2 (G - 1) / G of the box each way
/// in 4 (G - 1) messages, where the Reduce onto the leader and the Bcast back make the leader
/// move G - 1 boxes each way in 2 (G - 1). Under an alpha-beta model the parts win past about
/// 2 (alpha / beta) G / (G - 2) bytes; alpha / beta is 2-20 KB with machine_model's default
/// latency (2 us at 0.1-1 ns per byte) and 160 KB in PaSE's model, and this lies between. At 2
/// members both forms move one box each way.
inline constexpr index_t all_reduce_parts_min_bytes = index_t(64) << 10;
/// Whether an Allreduce of n elements of es bytes over a group of G runs in parts.
inline bool all_reduce_uses_parts(index_t n, std::size_t es, int G) {
  return G >= 3 && n * index_t(es) >= all_reduce_parts_min_bytes;
}

/// The maps of a program as solve_program reads them: names, grids and each map's solution
/// of its arrays (as the map's constraints list them). The solutions must outlive the
/// program_solution (it refers to them, and sees later changes to their steps).
struct program_maps {
  std::vector<std::string> names;                          ///< [map]
  std::vector<grid_shape> grids;                           ///< [map]
  std::vector<std::vector<const array_solution*>> arrays;  ///< [map][u]
  int nranks = 1;
  /// Whether the solution plans root's gather of the final values. The cost model
  /// (optimize/cost_model.hpp) prices a combine and the pass into the next map alone, and the
  /// gather, never consulted when choosing a combine, would be planned once per choice.
  bool gathers = true;
  /// Whether the redistributions carry their words for explain() and stats() (from, to,
  /// kind). The cost model reads only their bytes, and ~10^4 programs' words cost it time.
  bool words = true;
  /// Storage for the solution's transfers, lent by a caller that solves many programs (the
  /// cost model); the solution gives its transfers back when it is destroyed. Null: its own.
  transfer_pool* pool = nullptr;
  /// Plans every combine candidate's redistributions to price it (the reference the tests
  /// compare choose_combines' pricing from one plan against).
  bool plan_every_candidate = false;
  /// Arrays that maps outside these ones use too (the cost model prices a writer alone, or
  /// with one reader, of a longer program): their partial results that overlap are combined
  /// as that program's plan combines them.
  std::vector<const void*> used_elsewhere;
};

/// The program_maps of solved maps (pointers into `maps`, which must outlive the solution).
WORKPART_DECL program_maps program_maps_of(const std::vector<map_solution>& maps, int nranks);

/// Values per map kept only for the maps that have one: an array is used by a few of a long
/// program's maps, and a dense [map] table per array grows as the square of the program's
/// length (a 1408-map training step: 1.1 million entries per table). Reading a map without a
/// value gives an empty T.
template <class T>
class by_map {
 public:
  T& operator[](std::size_t m) { return v_[m]; }
  const T& operator[](std::size_t m) const {
    const auto it = v_.find(m);
    return it == v_.end() ? empty() : it->second;
  }

 private:
  static const T& empty() {
    static const T e{};
    return e;
  }
  std::map<std::size_t, T> v_;
};

/// An array of the program and where each map holds it.
struct program_array {
  std::string name;
  const void* id = nullptr;
  std::vector<int> slot;     ///< [map]: index in the map's arrays, -1 where unused
  std::vector<int> writers;  ///< maps that write it, in program order
  int first_user = 0;
  std::vector<combine_mode> partial;  ///< [map]: how its partial results are combined
  /// [map]: its partial results are not combined after it (its combine_mode is none): the next
  /// writer adds onto them on every member, so a chain of such writers combines once, after
  /// its last (pass_partials)
  std::vector<char> passes_on;
  by_map<std::vector<box>> owned;  ///< [map][rank]: the parts a reduce-scatter leaves
  /// [map][group][group rank]: the members of each group of the map's partial results, for
  /// the maps whose partial results are combined (found once: each candidate combine and its
  /// bytes ask for them)
  by_map<std::vector<std::vector<int>>> groups;
};

/// A redistribution: what map `to_map` needs of array `array` (read boxes, or old values under
/// its write boxes), root's gather of the final values (`gather`, to_map -1), or the entry of
/// a partial combine (`combine`, its bytes from combine_bytes).
struct program_redist {
  std::size_t array = 0;
  int to_map = -1;
  bool old_values = false, gather = false, combine = false;
  /// An input no map writes: the first execute() takes it from the read buffers of earlier
  /// maps that read it (root sends it once), and later ones need nothing (it stays).
  bool first_reads = false;
  /// The old values of a writer whose previous writer passes its partial results on
  /// (program_array::passes_on): every member's own partial results, a local copy.
  bool partials = false;
  std::vector<int> first_layers, steady_layers;  ///< maps, newest first
  transfer first, steady;  ///< the first execute() after a scatter, and later ones
  bool first_remote = false, steady_remote = false;
  /// root sends at scatter() what of the need no layer holds (first.rest) into the reader's
  /// buffer; the first execute() brings the rest
  bool root_part = false, rest_remote = false;
  std::string from;  ///< the maps whose values it carries ("root" for inputs), or whose partials it
                     ///< combines
  std::string to;    ///< the map that reads them ("root" for a gather)
  std::string kind;  ///< none, Alltoallw, halo exchange, Allreduce(sum), reduce-scatter(sum),
                     ///< Reduce(max), Gatherv, kept (partial results passed on)
};

/// Partial results of `array` written by `map`, combined in their groups after it runs.
struct partial_combine {
  std::size_t array = 0;
  int map = 0;
  combine_mode mode = combine_mode::reduce_to_leaders;
  std::size_t entry = 0;  ///< its entry in program_solution::redists
};

/// Bytes one rank sends and receives in each phase of a program plan, as planned.
struct program_bytes {
  index_t scatter_sent = 0, scatter_received = 0;  ///< root's inputs (and old values)
  index_t first_sent = 0, first_received = 0;      ///< the first execute() after a scatter
  index_t steady_sent = 0, steady_received = 0;    ///< each later execute()
  index_t gather_sent = 0, gather_received = 0;    ///< gather() of every written array
};

/// An array a rank reads in exactly the box another map's buffer holds it in (see
/// program_solution::shared_reads).
struct shared_read {
  int reader_map = 0;
  std::size_t array = 0;
  int owner_map = 0;
  bool write = false;  ///< the owner's write buffer (else its read buffer)
};

/// Everything a program plan decides without MPI: see the file comment.
class program_solution {
 public:
  program_solution() = default;
  explicit program_solution(program_maps maps) : in_(std::move(maps)) {}
  program_solution(const program_solution&) = default;
  program_solution(program_solution&&) = default;
  program_solution& operator=(const program_solution&) = default;
  program_solution& operator=(program_solution&&) = default;
  ~program_solution() {
    if (in_.pool)
      for (auto& r : redists_) {
        in_.pool->give(std::move(r.first));
        in_.pool->give(std::move(r.steady));
      }
  }

  int num_maps() const { return int(in_.names.size()); }
  int nranks() const { return in_.nranks; }
  const std::string& name(int m) const { return in_.names[std::size_t(m)]; }
  const grid_shape& grid(int m) const { return in_.grids[std::size_t(m)]; }
  const std::vector<program_array>& arrays() const { return arrays_; }
  const std::vector<program_redist>& redists() const { return redists_; }
  program_redist& redist_at(std::size_t x) { return redists_[x]; }
  /// [map]: the redistributions into it, in the order they run (before it).
  const std::vector<std::size_t>& into(int m) const { return into_[std::size_t(m)]; }
  const std::vector<partial_combine>& combines() const { return combines_; }
  /// [map]: the partial combines after it runs.
  const std::vector<std::size_t>& combines_after(int m) const {
    return combines_of_[std::size_t(m)];
  }
  /// The writer of array a before map m that passes its partial results on to m, or -1.
  int passed_from(std::size_t a, int m) const;
  /// [map]: the arrays whose partial results map m starts each later execute() from the
  /// identity on the members that are not leaders (they held combined values, or partial
  /// results passed on, since the last run; a Reduce restarts them at once, and a map the
  /// partial results are passed to takes them as its old values).
  const std::vector<std::size_t>& restarts(int m) const { return restarts_of_[std::size_t(m)]; }
  /// Arrays whose partial results overlap and that no other map reads: their map gathers them
  /// itself (combined on root), not the program.
  bool gathered_by_map(std::size_t a) const {
    return std::find(delegated_gather_.begin(), delegated_gather_.end(), a) !=
           delegated_gather_.end();
  }
  /// The map's solution of array a.
  const array_solution& slot(int m, std::size_t a) const {
    return *in_.arrays[std::size_t(m)][std::size_t(arrays_[a].slot[std::size_t(m)])];
  }
  std::size_t elem_size(std::size_t a) const {
    return slot(arrays_[a].first_user, a).use.elem_size;
  }
  /// The program's array with this identity (its index), or npos.
  std::size_t find(const void* id) const {
    for (std::size_t a = 0; a < arrays_.size(); ++a)
      if (arrays_[a].id == id) return a;
    return std::size_t(-1);
  }

  /// Boxes each rank holds of array a after map m ran (for the maps after it; `gather_side`:
  /// for root's gather, which takes an Allreduce's values from the leaders only).
  std::vector<box> held_after(int m, std::size_t a, bool gather_side) const;
  /// The layers redistribution r takes its pieces from in the first or a later execute().
  std::vector<layer> source_layers(const program_redist& r, bool first) const;
  /// The members of each group of map m's partial results of array a: [group][group rank]
  /// (empty where map m's partial results of it are not combined).
  const std::vector<std::vector<int>>& write_groups(std::size_t a, int m) const {
    return arrays_[a].groups[std::size_t(m)];
  }
  /// The parts the members of rank r's group own after a reduce-scatter, by group rank.
  std::vector<box> group_parts(std::size_t a, int m, int r) const;
  /// Bytes (sent, received) per rank of a partial combine.
  std::vector<std::pair<index_t, index_t>> combine_bytes(std::size_t a, int m,
                                                         combine_mode mode) const;
  std::vector<std::pair<index_t, index_t>> combine_bytes(const partial_combine& c) const {
    return combine_bytes(c.array, c.map, c.mode);
  }
  /// Messages per rank of a partial combine (each send and each receive counted once).
  std::vector<int> combine_messages(const partial_combine& c) const;
  /// Redistribution x's bytes for rank r: sent (else received), first (else a later) execute().
  index_t redist_bytes(std::size_t x, int r, bool first, bool sent) const;
  /// Whether a redistribution is worth a line in explain() and stats(): not when all of it
  /// comes from root (that is the map's scatter) or only from the reader's own buffers of its
  /// last run (nothing moves).
  bool shown(const program_redist& r) const;

  /// Bytes over all ranks (received): rank to rank in the first and in each later execute(),
  /// and root's gather of what the program gathers itself.
  index_t rank_to_rank_total(bool first) const {
    return first ? rank_first_total_ : rank_steady_total_;
  }
  index_t program_gather_total() const { return root_total_; }
  /// root's scatter and gather in total (what every map sends from root, the program's
  /// gathers, and what maps gather themselves), received over all ranks.
  index_t root_scatter_total() const;
  index_t root_gather_total() const;
  /// Rank r's bytes per phase (with the map solutions' steps as set by program_steps()).
  program_bytes bytes_of(int r) const;

  /// The scatter, old-value and gather steps of an array of map m inside the program, from the
  /// map's own solution of it (`fresh`: root sends only what no earlier map provides; the
  /// gather and the partial combines are the program's). Notes in the redistributions which
  /// of them root's scatter feeds.
  void program_steps(int m, const array_solution& fresh, std::vector<comm_step>& in,
                     std::vector<comm_step>& init, std::vector<comm_step>& out);
  /// This rank's reads that can use another map's buffer (nothing copied, no second buffer):
  /// an input no map writes, read in the same box by an earlier map, or an intermediate whose
  /// last writer before the reader is the same in the first and every later execute() and
  /// holds exactly the box read. A per-rank decision: it changes no message.
  std::vector<shared_read> shared_reads(int r) const;
  /// The program in words, after each map's own explain text (`map_texts`).
  std::string explain(const std::vector<std::string>& map_texts) const;

  /// Checks and decisions (solve_program runs them in this order).
  void collect_arrays();
  void check_split_writes();
  void choose_combines();
  /// Which split writers pass their partial results on to the next writer (passes_on).
  void pass_partials();

 private:
  std::vector<layer> layers(const std::vector<int>& maps, std::size_t a, bool gather_side) const;
  std::vector<int> readers_before(std::size_t a, int m) const;
  std::vector<std::vector<int>> find_write_groups(std::size_t a, int m) const;
  std::vector<int> writers_before(std::size_t a, int m, bool cyclic) const;
  std::vector<box> need_of(int m, std::size_t a, bool old_values) const {
    // overlapping partial results combine into the old values of each rank's own part
    if (old_values && arrays_[a].partial[std::size_t(m)] == combine_mode::overlapping)
      return slot(m, a).w_parts;
    return need_before(slot(m, a), grid(m), nranks(), old_values);
  }
  std::string overlap_refusal(std::size_t a, int m) const;
  std::vector<std::vector<box>> ownership_candidates(std::size_t a, int m) const;
  index_t combine_only_cost(std::size_t a, int m) const;  // 2x the combine's bytes received
  index_t combine_cost(std::size_t a, int m) const;
  /// combine_cost of the mode set now for map m, from the redistributions planned under
  /// another mode: map m's pieces are the same boxes, held by other ranks.
  index_t combine_cost_from(std::size_t a, int m) const;
  /// The redistributions of every array, or of array `only` alone (a combine's candidates).
  void build_redists(std::size_t only = std::size_t(-1));
  transfer_pool& pool() { return in_.pool ? *in_.pool : own_pool_; }
  void finish(program_redist& r) const;
  void add_combine_entries();
  void totals();

  program_maps in_;
  std::vector<program_array> arrays_;
  std::vector<program_redist> redists_;
  transfer_pool own_pool_;  ///< earlier builds' transfers, reused (without program_maps::pool)
  std::vector<std::vector<std::size_t>> into_;
  std::vector<partial_combine> combines_;
  std::vector<std::vector<std::size_t>> combines_of_;
  std::vector<std::vector<std::size_t>> restarts_of_;
  std::vector<std::size_t> delegated_gather_;
  index_t root_total_ = 0, rank_first_total_ = 0, rank_steady_total_ = 0;
};

/// Solves a program (no MPI): the arrays and their layers, every redistribution, the combine
/// chosen per split write, root's remainders and gathers, and the bytes per rank. Raises
/// plan_error where the program cannot run as scheduled (partial results that overlap, that
/// the program uses again, and that cannot be cut into one part per rank). The map solutions' steps
/// are then set with program_steps().
WORKPART_DECL program_solution solve_program(program_maps maps);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/combine_choice.ipp"
#include "impl/program.ipp"
#endif
