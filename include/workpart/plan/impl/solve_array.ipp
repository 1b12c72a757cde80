#pragma once
/// \file solve_array.ipp
/// The bodies of solve_array.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include <utility>

#include "../solve_array.hpp"

namespace workpart::detail {

WORKPART_DECL std::vector<int> group_dims(const grid_shape& g, const std::vector<box>& boxes,
                                          int active, bool empty_joins) {
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

WORKPART_DECL std::vector<int> with_replica_dim(const grid_shape& g, std::vector<int> dims) {
  if (g.replicas() > 1) dims.push_back(g.replica_dim());
  return dims;
}

WORKPART_DECL std::vector<int> partial_dims(const grid_shape& g, const std::vector<box>& boxes,
                                            int active, bool empty_joins) {
  std::vector<int> dims = group_dims(g, boxes, active, empty_joins);
  if (g.replica_axis) std::erase(dims, g.replica_dim());
  return dims;
}

WORKPART_DECL std::pair<int, int> group_key(const grid_shape& g, int rank,
                                            const std::vector<int>& dims) {
  if (rank >= g.product()) return {-1, 0};
  // row-major over the dimensions in `dims` (key) and the others (color), last fastest; no
  // coordinates vector (the optimizer asks this for every rank of ~10^5 small programs)
  index_t r = rank, color = 0, key = 0, color_step = 1, key_step = 1;
  for (int d = g.rank() - 1; d >= 0; --d) {
    if (g.dims[std::size_t(d)] == 1) continue;  // coordinate 0, nothing to divide
    const index_t c = r % g.dims[std::size_t(d)];
    r /= g.dims[std::size_t(d)];
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
      key += c * key_step;
      key_step *= g.dims[std::size_t(d)];
    } else {
      color += c * color_step;
      color_step *= g.dims[std::size_t(d)];
    }
  }
  return {int(color), int(key)};
}

WORKPART_DECL int group_leader(const grid_shape& g, int rank, const std::vector<int>& dims) {
  // no coordinates vector: the optimizer asks this for every rank of ~10^4 small programs
  index_t rest = rank, stride = 1, leader = rank;
  for (int d = g.rank() - 1; d >= 0; --d) {
    if (g.dims[std::size_t(d)] == 1) continue;  // coordinate 0, nothing to divide
    const index_t c = rest % g.dims[std::size_t(d)];
    rest /= g.dims[std::size_t(d)];
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) leader -= c * stride;
    stride *= g.dims[std::size_t(d)];
  }
  return int(leader);
}

WORKPART_DECL std::string dims_text(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "g" : ",g") + std::to_string(d);
  return s;
}

WORKPART_DECL const char* combine_name(combine k) {
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

WORKPART_DECL std::string access_mapping_text(const std::string& name, int rank,
                                              const std::array<axis_form, detail::max_rank>& f,
                                              const grid_shape& g) {
  std::vector<std::string> axis_txt(rank);
  std::string tail;
  bool general = false;
  for (int d = 0; d < g.space_rank(); ++d) {
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
  if (g.replicas() > 1) tail += " g" + std::to_string(g.replica_dim()) + ":REPLICAS";
  s += "]" + tail;
  if (general) s += " (general)";
  return s;
}

WORKPART_DECL index_t predicted_bytes(const solutions& arrays, int r, bool scatter_phase,
                                      bool sent) {
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

WORKPART_DECL index_t predicted_total(const solutions& arrays, int nranks, bool scatter_phase) {
  index_t t = 0;
  for (int r = 0; r < nranks; ++r) t += predicted_bytes(arrays, r, scatter_phase, false);
  return t;
}

WORKPART_DECL std::vector<box> disjoint_parts(const std::vector<box>& boxes, int active) {
  std::vector<box> parts(boxes.size());
  std::vector<box> left, next;
  for (int r = 0; r < active && r < int(boxes.size()); ++r) {
    const box& b = boxes[std::size_t(r)];
    if (b.empty()) continue;
    left.assign(1, b);
    for (int s = 0; s < r && !left.empty(); ++s) {
      const box& o = parts[std::size_t(s)];
      if (o.empty()) continue;
      next.clear();
      for (const box& x : left) {  // x less o: up to two boxes per axis
        const box c = box::intersect(x, o);
        if (c.empty()) {
          next.push_back(x);
          continue;
        }
        box rest = x;
        for (int a = 0; a < x.rank; ++a) {
          if (rest.lo[a] < c.lo[a]) {
            box p = rest;
            p.hi[a] = c.lo[a];
            next.push_back(p);
          }
          if (c.hi[a] < rest.hi[a]) {
            box p = rest;
            p.lo[a] = c.hi[a];
            next.push_back(p);
          }
          rest.lo[a] = c.lo[a];
          rest.hi[a] = c.hi[a];
        }
      }
      left.swap(next);
    }
    // the rest is one box where its pieces (disjoint) fill their hull
    box hull;
    index_t n = 0;
    for (const box& x : left) {
      hull.hull_with(x);
      n += x.size();
    }
    if (hull.size() != n) return {};
    parts[std::size_t(r)] = hull;
  }
  return parts;
}

WORKPART_DECL bool reads_own_writes(const array_use& use) {
  return use.read && use.written && use.read_after_write && !use.read_before_write;
}

WORKPART_DECL array_solution solve_array(const array_use& use_in, std::vector<box> rbox,
                                         std::vector<box> wbox, const grid_shape& g, int nranks,
                                         bool generated) {
  const int P = nranks, active = int(g.product());
  {
    array_solution ap;
    ap.use = use_in;
    const auto& use = ap.use;
    const index_t es = index_t(use.elem_size);
    ap.rbox = std::move(rbox);
    ap.wbox = std::move(wbox);
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
            const int l = group_leader(g, r, ap.rgroup);
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
        ap.wgroup = partial_dims(g, ap.wbox, active, true);
        if (!ap.wgroup.empty())
          for (int r = 0; r < active; ++r) {
            if (!ap.wbox[r].empty()) continue;
            ap.wbox[r] = ap.wbox[group_leader(g, r, ap.wgroup)];
          }
      }
      // holders: the ranks that hold whole values once the groups are combined (every
      // replica of a replicated grid); leaders: those root gathers from (replica 0's)
      std::vector<int> holders, leaders;
      const std::vector<int> leader_dims = with_replica_dim(g, ap.wgroup);
      for (int r = 0; r < active; ++r) {
        if (ap.wbox[r].empty() || group_key(g, r, ap.wgroup).second != 0) continue;
        holders.push_back(r);
        if (group_key(g, r, leader_dims).second == 0) leaders.push_back(r);
      }
      bool overlap = false;
      for (std::size_t x = 0; x < leaders.size() && !overlap; ++x)
        for (std::size_t y = x + 1; y < leaders.size() && !overlap; ++y)
          overlap = !box::intersect(ap.wbox[leaders[x]], ap.wbox[leaders[y]]).empty();
      ap.w_combine_on_root = conflicted && overlap;
      if (ap.w_combine_on_root && g.replicas() <= 1) ap.w_parts = disjoint_parts(ap.wbox, active);
      ap.w_init_old = conflicted ? !overlap : !use.dense_writes;
      if (ap.w_init_old) {
        if (generated) {
          ap.init_steps.push_back(
              {step_op::generate, "generate", "old values from init(), in place", zero, zero});
        } else {
          // Why the old values travel: the map combines into them (a second run() combines
          // again), or '=' leaves some of them as they were.
          const char* why = use.write_kind == combine::add   ? "; += adds to them"
                            : use.write_kind == combine::max ? "; max_into combines with them"
                            : use.write_kind == combine::min ? "; min_into combines with them"
                                                             : "; kept where '=' does not write";
          comm_step sc{step_op::scatterv, "Scatterv",
                       std::string(conflicted ? "old values -> group leaders"
                                              : "old values under the written boxes") +
                           why,
                       zero, zero};
          for (int r : holders)
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
          rd.sent[r] += n;
          rd.received[group_leader(g, r, ap.wgroup)] += n;
        }
        ap.out_steps.push_back(rd);
      }
      comm_step ga{ap.w_combine_on_root ? step_op::gatherv_combine : step_op::gatherv,
                   ap.w_combine_on_root ? "Gatherv+combine" : "Gatherv",
                   ap.w_combine_on_root  ? "group leaders -> root, combined there"
                   : leader_dims.empty() ? "each rank -> root"
                   : ap.wgroup.empty()   ? "replica 0 of each block -> root"
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
