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
inline std::vector<int> group_dims(const grid_shape& g, const std::vector<box>& boxes, int active,
                                   bool empty_joins = false) {
  std::vector<int> dims;
  for (int d = 0; d < g.rank(); ++d) {
    if (g.dims[d] <= 1) continue;
    bool same = true;
    for (int r = 0; r < active && same; ++r) {
      auto c = grid_coords(g, r);
      c[d] = 0;
      same = boxes[r] == boxes[grid_rank(g, c)] || (empty_joins && boxes[r].empty());
    }
    if (same) dims.push_back(d);
  }
  return dims;
}

/// Key of a rank's group (its coordinates off `dims`) and its place in it (coordinates on).
inline std::pair<int, int> group_key(const grid_shape& g, int rank, const std::vector<int>& dims) {
  const auto c = grid_coords(g, rank);
  if (c.empty()) return {-1, 0};
  index_t color = 0, key = 0;
  for (int d = 0; d < g.rank(); ++d) {
    const bool in = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (in)
      key = key * g.dims[d] + c[d];
    else
      color = color * g.dims[d] + c[d];
  }
  return {int(color), int(key)};
}

inline std::string dims_text(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "g" : ",g") + std::to_string(d);
  return s;
}

inline const char* combine_name(combine k) {
  switch (k) {
    case combine::add:
      return "sum";
    case combine::max:
      return "max";
    case combine::min:
      return "min";
    default:
      return "assign";
  }
}

inline std::string bytes_text(index_t b) { return std::to_string(b) + " B"; }

/// The partition/broadcast text of one access under a grid, from its runtime forms.
inline std::string access_mapping_text(const std::string& name, int rank,
                                       const std::array<axis_form, detail::max_rank>& f,
                                       const grid_shape& g) {
  std::vector<std::string> axis_txt(rank);
  std::string tail;
  bool general = false;
  for (int d = 0; d < g.rank(); ++d) {
    int uses = 0, plain_axis = -1;
    for (int a = 0; a < rank; ++a) {
      if (f[a].kind == axis_kind::indirect) {
        general = true;
        continue;
      }
      if (f[a].kind != axis_kind::affine || f[a].coef[d] == 0) continue;
      ++uses;
      bool plain = f[a].coef[d] == 1 && f[a].offset == 0;
      for (int e = 0; e < max_dims; ++e)
        if (e != d && f[a].coef[e] != 0) plain = false;
      if (plain) plain_axis = a;
    }
    // A grid dimension of extent 1 splits nothing: the axis it would partition is held whole
    // (REPLICATE), and there is nothing to broadcast along it.
    if (uses == 0) {
      if (g.dims[d] > 1) tail += " g" + std::to_string(d) + ":BROADCAST";
    } else if (uses == 1 && plain_axis >= 0) {
      axis_txt[plain_axis] =
          g.dims[d] > 1 ? "PARTITION:" + std::to_string(plain_axis) + " on g" + std::to_string(d)
                        : "REPLICATE:" + std::to_string(plain_axis);
    } else {
      general = true;
    }
  }
  std::string s = name + "[";
  for (int a = 0; a < rank; ++a) {
    if (a) s += ", ";
    if (!axis_txt[a].empty())
      s += axis_txt[a];
    else if (f[a].kind == axis_kind::affine) {
      // wp::all reaches here as the implicit index of its reduction (a reserved slot), alone
      // with coefficient 1: the whole axis
      bool any = false, whole = f[a].offset == 0;
      for (int e = 0; e < max_dims; ++e) {
        any = any || f[a].coef[e] != 0;
        if (f[a].coef[e] != 0 && (e < all_dim_first || f[a].coef[e] != 1)) whole = false;
      }
      if (any && whole)
        s += "REPLICATE:" + std::to_string(a);
      else
        s += any ? "GENERAL:" + std::to_string(a) : "FIXED:" + std::to_string(a);
      if (any && !whole) general = true;
    } else if (f[a].kind == axis_kind::all) {
      s += "REPLICATE:" + std::to_string(a);
    } else {
      s += "INDIRECT:" + std::to_string(a);
    }
  }
  s += "]" + tail;
  if (general) s += " (general)";
  return s;
}

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
  std::vector<int> wgroup;         // grid dims of the partial-result groups
  bool w_init_old = false;         // leaders' write buffers start from the old values
  bool w_combine_on_root = false;  // leaders' boxes overlap: root combines what it gathers
  std::vector<comm_step> init_steps, out_steps;
};

/// The arrays of a plan, as the solver sees them (a plan's runtime records derive from
/// array_solution).
using solutions = std::vector<const array_solution*>;

/// Bytes rank r sends (or receives) in the scatter or the gather phase of a plan.
inline index_t predicted_bytes(const solutions& arrays, int r, bool scatter_phase, bool sent) {
  index_t t = 0;
  for (const array_solution* ap : arrays) {
    auto add = [&](const std::vector<comm_step>& steps) {
      for (const auto& s : steps) t += sent ? s.sent[r] : s.received[r];
    };
    if (scatter_phase) {
      add(ap->in_steps);
      add(ap->init_steps);
    } else {
      add(ap->out_steps);
    }
  }
  return t;
}
/// Bytes over all ranks (received) in the scatter or the gather phase.
inline index_t predicted_total(const solutions& arrays, int nranks, bool scatter_phase) {
  index_t t = 0;
  for (int r = 0; r < nranks; ++r) t += predicted_bytes(arrays, r, scatter_phase, false);
  return t;
}

/// Whether the map reads the array only after earlier statements of the map wrote it.
inline bool reads_own_writes(const array_use& use) {
  return use.read && use.written && use.read_after_write && !use.read_before_write;
}
/// The boxes, groups and collectives of one array (no communication). `generated`: every rank
/// generates its boxes from init() in place (root holds no copy to send).
inline array_solution solve_array(const array_use& use_in, const std::vector<box>& rbox,
                                  const std::vector<box>& wbox, const grid_shape& g, int nranks,
                                  bool generated) {
  const int P = nranks, active = int(g.product());
  {
    array_solution ap;
    ap.use = use_in;
    const auto& use = ap.use;
    const index_t es = index_t(use.elem_size);
    ap.rbox = rbox;
    ap.wbox = wbox;
    std::vector<index_t> zero(P, 0);
    // ---- reads: Scatterv to the group leaders, Bcast in the groups ----
    ap.reads_own_writes = reads_own_writes(use);
    if (ap.reads_own_writes) {
      ap.in_steps.push_back(
          {step_op::none, "none", "each rank reads what it wrote earlier in the map", zero, zero});
    } else if (use.read) {
      ap.rgroup = group_dims(g, ap.rbox, active);
      if (generated) {
        ap.in_steps.push_back(
            {step_op::generate, "generate", "init() on each rank, in place", zero, zero});
      } else {
        comm_step sc{step_op::scatterv, "Scatterv", "root -> group leaders", zero, zero};
        comm_step bc{step_op::bcast, "Bcast", "over " + dims_text(ap.rgroup), zero, zero};
        for (int r = 0; r < active; ++r) {
          const index_t n = ap.rbox[r].size() * es;
          if (n == 0) continue;
          auto [color, key] = group_key(g, r, ap.rgroup);
          if (key == 0) {
            if (r != 0) {
              sc.sent[0] += n;
              sc.received[r] += n;
            }
          } else {
            // the leader of r's group: r with coordinates 0 along the group dims
            auto c = grid_coords(g, r);
            for (int d : ap.rgroup) c[d] = 0;
            const int l = grid_rank(g, c);
            bc.sent[l] += n;
            bc.received[r] += n;
          }
        }
        if (ap.rgroup.empty()) sc.where = "root -> each rank";
        ap.in_steps.push_back(sc);
        if (!ap.rgroup.empty()) ap.in_steps.push_back(bc);
      }
    }
    // ---- writes ----
    if (use.written) {
      const bool conflicted = use.write_kind != combine::assign;
      if (conflicted) {
        // More ranks along a split reduction than its extent leaves some with an empty block:
        // they join their group with identity partials of its box (filled at scatter, never
        // written), so that the group combines like any other instead of overlapping.
        ap.wgroup = group_dims(g, ap.wbox, active, true);
        if (!ap.wgroup.empty())
          for (int r = 0; r < active; ++r) {
            if (!ap.wbox[r].empty()) continue;
            auto c = grid_coords(g, r);
            for (int d : ap.wgroup) c[d] = 0;
            ap.wbox[r] = ap.wbox[grid_rank(g, c)];
          }
      }
      std::vector<int> leaders;
      for (int r = 0; r < active; ++r) {
        if (ap.wbox[r].empty()) continue;
        if (group_key(g, r, ap.wgroup).second == 0) leaders.push_back(r);
      }
      bool overlap = false;
      for (std::size_t x = 0; x < leaders.size() && !overlap; ++x)
        for (std::size_t y = x + 1; y < leaders.size() && !overlap; ++y)
          overlap = !box::intersect(ap.wbox[leaders[x]], ap.wbox[leaders[y]]).empty();
      ap.w_combine_on_root = conflicted && overlap;
      ap.w_init_old = conflicted ? !overlap : !use.dense_writes;
      if (ap.w_init_old) {
        if (generated) {
          ap.init_steps.push_back(
              {step_op::generate, "generate", "old values from init(), in place", zero, zero});
        } else {
          comm_step sc{
              step_op::scatterv, "Scatterv",
              conflicted ? "old values -> group leaders" : "old values under the written boxes",
              zero, zero};
          for (int r : leaders)
            if (r != 0) {
              sc.sent[0] += ap.wbox[r].size() * es;
              sc.received[r] += ap.wbox[r].size() * es;
            }
          ap.init_steps.push_back(sc);
        }
      }
      if (!ap.wgroup.empty()) {
        comm_step rd{step_op::reduce, std::string("Reduce(") + combine_name(use.write_kind) + ")",
                     "over " + dims_text(ap.wgroup) + " onto group leaders", zero, zero};
        for (int r = 0; r < active; ++r) {
          const index_t n = ap.wbox[r].size() * es;
          if (n == 0 || group_key(g, r, ap.wgroup).second == 0) continue;
          auto c = grid_coords(g, r);
          for (int d : ap.wgroup) c[d] = 0;
          rd.sent[r] += n;
          rd.received[grid_rank(g, c)] += n;
        }
        ap.out_steps.push_back(rd);
      }
      comm_step ga{ap.w_combine_on_root ? step_op::gatherv_combine : step_op::gatherv,
                   ap.w_combine_on_root ? "Gatherv+combine" : "Gatherv",
                   ap.w_combine_on_root ? "group leaders -> root, combined there"
                   : ap.wgroup.empty()  ? "each rank -> root"
                                        : "group leaders -> root",
                   zero, zero};
      for (int r : leaders)
        if (r != 0) {
          ga.sent[r] += ap.wbox[r].size() * es;
          ga.received[0] += ap.wbox[r].size() * es;
        }
      ap.out_steps.push_back(ga);
    }
    // mapping text, per access
    std::string mt;
    for (std::size_t x = 0; x < use.write_forms.size(); ++x)
      mt += "    write " + use.write_texts[x] + ": " +
            access_mapping_text(use.name, use.rank, use.write_forms[x], g) + "\n";
    for (std::size_t x = 0; x < use.read_forms.size(); ++x)
      mt += "    read  " + use.read_texts[x] + ": " +
            access_mapping_text(use.name, use.rank, use.read_forms[x], g) + "\n";
    ap.mapping_text = mt;
    return ap;
  }
}

}  // namespace workpart::detail
