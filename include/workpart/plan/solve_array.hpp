#pragma once
/// \file solve_array.hpp
/// The solver: from a map's constraints (the box of each array every rank reads and writes)
/// and a grid to the collectives that move them, with the bytes of each per rank, for any
/// number of ranks. No MPI and no templates: the optimizer can price a schedule with it for
/// a virtual communicator, and every map type shares one copy of it.
///
/// Ranks whose boxes of an array are equal along some grid dimensions form groups along them:
/// for reads, root sends each group's leader (the rank at coordinate 0 along those dimensions)
/// its box and the leader broadcasts it in the group; for `+=`, `max_into` and `min_into`, the
/// members' partial results are reduced onto the leader. For a grid-mapped access these groups
/// are exactly its BROADCAST dimensions, so this is the grid-mapped solver; halos, strides,
/// reversed and indirect subscripts simply give other boxes (overlapping ones too) and the
/// same machinery serves them.

#include <algorithm>
#include <climits>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "../schedule/tiling.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// What a planned step does (its text is in comm_step::collective).
/// scatterv_part: root sends only the parts of a box no earlier map of a program provides
/// (the program plan runs it).
enum class step_op {
  none,
  generate,
  scatterv,
  scatterv_part,
  bcast,
  reduce,
  gatherv,
  gatherv_combine
};

/// One collective on one array, as planned: its name, where it goes, bytes per rank.
struct comm_step {
  step_op op = step_op::none;
  std::string collective;  // Scatterv, Bcast, Reduce(sum), Gatherv, generate, ...
  std::string where;
  std::vector<index_t> sent, received;  // [rank], bytes
  index_t total() const {
    index_t t = 0;
    for (index_t b : received) t += b;
    return t;
  }
};

/// Grid dimensions along which every rank's box equals the box at coordinate 0 there.
/// `empty_joins`: a rank whose box is empty counts as holding its group's box (for partial
/// results: a rank whose block along a split reduction is empty holds identity partials).
WORKPART_DECL std::vector<int> group_dims(const grid_shape& g, const std::vector<box>& boxes,
                                          int active, bool empty_joins = false);

/// `dims` and a replicated grid's replica axis: groups whose leaders are replica 0's ranks.
WORKPART_DECL std::vector<int> with_replica_dim(const grid_shape& g, std::vector<int> dims);
/// The grid dimensions along which the ranks' write boxes are partial results of one box
/// (group_dims without the replica axis: a block's replicas each compute the whole value).
WORKPART_DECL std::vector<int> partial_dims(const grid_shape& g, const std::vector<box>& boxes,
                                            int active, bool empty_joins = false);

/// Key of a rank's group (its coordinates off `dims`) and its place in it (coordinates on).
WORKPART_DECL std::pair<int, int> group_key(const grid_shape& g, int rank,
                                            const std::vector<int>& dims);
/// The leader of a rank's group: the rank with its coordinates along `dims` zero (an active
/// rank of g).
WORKPART_DECL int group_leader(const grid_shape& g, int rank, const std::vector<int>& dims);

WORKPART_DECL std::string dims_text(const std::vector<int>& dims);

WORKPART_DECL const char* combine_name(combine k);

inline std::string bytes_text(index_t b) { return std::to_string(b) + " B"; }

/// The partition/broadcast text of one access under a grid, from its runtime forms.
WORKPART_DECL std::string access_mapping_text(const std::string& name, int rank,
                                              const std::array<axis_form, detail::max_rank>& f,
                                              const grid_shape& g);

/// What the solver decides for one array: boxes, groups and the planned steps.
struct array_solution {
  array_use use;
  std::string mapping_text;  // e.g. A[PARTITION:0 on g0, REPLICATE:1] g1:BROADCAST
  // reads
  std::vector<box> rbox;          // [rank]
  bool reads_own_writes = false;  // every read is of what this rank wrote earlier in the map
  std::vector<int> rgroup;        // grid dims of the broadcast groups
  std::vector<comm_step> in_steps;
  // writes
  std::vector<box> wbox;
  std::vector<int> wgroup;         // grid dims of the partial-result groups (never replicas)
  bool w_init_old = false;         // leaders' write buffers start from the old values
  bool w_combine_on_root = false;  // leaders' boxes overlap: root combines what it gathers
  /// [rank], where the write boxes overlap (w_combine_on_root) on a grid without replicas:
  /// boxes inside the ranks' write boxes that cut their union into disjoint parts (empty
  /// where they cannot: no box is left of some rank's). A program combines the overlapping
  /// partial results on them rank to rank (combine_mode::overlapping) when it uses the array
  /// again: each rank then holds the whole values of its part.
  std::vector<box> w_parts;
  std::vector<comm_step> init_steps, out_steps;
};

/// Disjoint boxes, one per rank, inside the ranks' boxes and covering their union: rank by
/// rank, what no earlier rank's part holds of its box (empty where that is no single box).
/// Ranks with identical boxes (a group of partial results) leave all to the first of them.
WORKPART_DECL std::vector<box> disjoint_parts(const std::vector<box>& boxes, int active);

/// Whether a split write combined on root (`w_combine_on_root`: partial results that overlap,
/// combined with root's old values) cannot be planned because the program uses the array
/// again: another map uses it, or this map reads it on its next run. One test for the program
/// solver, which refuses such a grid, and the cost model, which drops it from the candidates.
inline bool combine_on_root_used_again(const array_solution& ap, bool used_by_other_maps) {
  return ap.w_combine_on_root && (used_by_other_maps || (ap.use.read && !ap.reads_own_writes));
}
/// Whether the program combines such partial results rank to rank on their disjoint parts
/// (`w_parts`), and whether it must refuse the grid (no such parts).
inline bool overlapping_combined(const array_solution& ap, bool used_by_other_maps) {
  return combine_on_root_used_again(ap, used_by_other_maps) && !ap.w_parts.empty();
}
inline bool overlapping_refused(const array_solution& ap, bool used_by_other_maps) {
  return combine_on_root_used_again(ap, used_by_other_maps) && ap.w_parts.empty();
}

/// f(r, s, n) for every rank r whose write box holds n > 0 elements of another rank s's part
/// (w_parts): what the combine of overlapping partial results sends from r to s.
template <class F>
void for_each_overlap(const array_solution& ap, F&& f) {
  const int P = int(ap.w_parts.size());
  for (int r = 0; r < P; ++r)
    for (int s = 0; s < P; ++s)
      if (s != r)
        if (const index_t n = meet_size(ap.wbox[std::size_t(r)], ap.w_parts[std::size_t(s)]); n > 0)
          f(r, s, n);
}

/// The arrays of a plan, as the solver sees them (a plan's runtime records derive from
/// array_solution).
using solutions = std::vector<const array_solution*>;

/// Bytes rank r sends (or receives) in the scatter or the gather phase of a plan.
WORKPART_DECL index_t predicted_bytes(const solutions& arrays, int r, bool scatter_phase,
                                      bool sent);
/// Bytes over all ranks (received) in the scatter or the gather phase.
WORKPART_DECL index_t predicted_total(const solutions& arrays, int nranks, bool scatter_phase);

/// Whether the map reads the array only after earlier statements of the map wrote it.
WORKPART_DECL bool reads_own_writes(const array_use& use);
/// The boxes, groups and collectives of one array (no communication); the solution keeps
/// `rbox` and `wbox` (solve_map moves its constraints' boxes in). `generated`: every rank
/// generates its boxes from init() in place (root holds no copy to send).
WORKPART_DECL array_solution solve_array(const array_use& use_in, std::vector<box> rbox,
                                         std::vector<box> wbox, const grid_shape& g, int nranks,
                                         bool generated);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/solve_array.ipp"
#endif
