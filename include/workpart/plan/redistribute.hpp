#pragma once
/// \file redistribute.hpp
/// Redistribution between the maps of a program, as planned (no MPI, no templates): what each
/// rank needs of an array (the boxes a later map reads, or the old values it combines into),
/// satisfied from where the array's current values are, by box intersection.
///
/// The current values of an array are in *layers*, newest first: the write boxes of the maps
/// that wrote it last (a map that writes part of an array leaves the rest to the layers below
/// it). A rank's need is cut into pieces: first what the rank itself holds in the newest layer
/// (a local copy, nothing moves), then what the other ranks hold there, then the layer below;
/// whatever no layer holds is what root's values (the program's inputs) provide. So every
/// element a reader needs moves once, from one holder, and only if the reader does not
/// already hold it.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "../schedule/constraints.hpp"
#include "solve_array.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// Appends a minus b as disjoint boxes (at most two per axis) to out.
WORKPART_DECL void subtract_into(const box& a, const box& b, std::vector<box>& out);

/// Box b of an array moves from rank `from` (its buffer in layer `layer`) to rank `to`.
struct piece {
  int from = 0, to = 0, layer = 0;
  box b;
};

/// Where one version of an array lives: the box each rank holds (empty where it holds none).
struct layer {
  int map = 0;  // the program's map whose buffers hold it
  std::vector<box> boxes;
};

/// The pieces that satisfy a need, and which ranks need more than the layers hold.
struct transfer {
  std::vector<piece> pieces;    // local ones (from == to) included
  std::vector<char> remainder;  // [rank]: part of its need is in no layer (root's values)
  std::vector<piece> rest;      // those parts, from root (from 0, layer -1)
  index_t bytes_sent(int r, std::size_t es) const {
    index_t t = 0;
    for (const auto& p : pieces)
      if (p.from == r && p.to != r) t += p.b.size() * index_t(es);
    return t;
  }
  index_t bytes_received(int r, std::size_t es) const {
    index_t t = 0;
    for (const auto& p : pieces)
      if (p.to == r && p.from != r) t += p.b.size() * index_t(es);
    return t;
  }
  bool any_remote() const {
    for (const auto& p : pieces)
      if (p.from != p.to) return true;
    return false;
  }
  bool any_remainder() const {
    for (char c : remainder)
      if (c) return true;
    return false;
  }
};

/// Transfers whose storage is reused: the program solver plans every redistribution once per
/// combine candidate, and the optimizer solves thousands of such programs, so at 64 ranks
/// (hundreds of pieces per transfer) allocating the pieces afresh cost a quarter of its time.
struct transfer_pool {
  std::vector<transfer> spare;
  /// An empty transfer, with the capacity of one given back earlier where there is one.
  transfer take() {
    if (spare.empty()) return {};
    transfer t = std::move(spare.back());
    spare.pop_back();
    return t;
  }
  /// Keeps t's storage for a later take(), unless it has none (a combine's entry) or the pool
  /// is full: a pricer solves ~10^5 small programs per pool, and a pool that kept every
  /// transfer given back to it grew by their number (650 MB of a Transformer's 1 GB at 8 ranks).
  void give(transfer&& t) {
    if (t.pieces.capacity() == 0 && t.rest.capacity() == 0 && t.remainder.capacity() == 0) return;
    if (spare.size() < max_spare) spare.push_back(std::move(t));
  }
  static constexpr std::size_t max_spare = 1024;
};

/// The boxes of one layer, sorted along each axis, to find the holders a need can meet
/// without testing every rank (plans and the cost model ask this for every pair of grids, so
/// it must not be quadratic in the ranks). A query scans the axis whose overlapping run is
/// shortest.
class holder_index {
 public:
  explicit holder_index(const std::vector<box>& held);
  /// The ranks whose box may meet `b` (a superset of those that meet it).
  void candidates(const box& b, std::vector<int>& out) const;

 private:
  struct entry {
    index_t lo, hi;
    int rank;
  };
  struct axis {
    std::vector<entry> entries;  // by start
    bool monotone = true;        // ends grow with starts (a tiling): bisect both ends
  };
  using iter = std::vector<entry>::const_iterator;
  struct range {
    iter first, last;
  };
  /// Entries of axis a that may overlap b along a: starts before b ends, and (monotone) ends
  /// after b starts.
  range run(std::size_t a, const box& b) const;
  std::vector<axis> axes_;
  bool rank_zero_ = false;
};

/// need[r]: the box rank r needs. layers: newest first.
WORKPART_DECL transfer plan_transfer(const std::vector<box>& need,
                                     const std::vector<layer>& layers);
/// The same into `t`, whose vectors keep their capacity (see transfer_pool).
WORKPART_DECL void plan_transfer(const std::vector<box>& need, const std::vector<layer>& layers,
                                 transfer& t);

/// What each rank needs of an array before a map on grid g runs: its read boxes, or
/// (old_values) the old values under the write boxes of the ranks that combine into them (its
/// group leaders). The program plans and the optimizer's cost model both ask this.
WORKPART_DECL std::vector<box> need_before(const array_solution& ap, const grid_shape& g,
                                           int nranks, bool old_values);
/// Where a map's writes hold whole values when its partial results are reduced onto the group
/// leaders (or it has none): the leaders' write boxes.
WORKPART_DECL std::vector<box> leaders_write_boxes(const array_solution& ap, const grid_shape& g,
                                                   int nranks);

/// The name of a redistribution, from its pieces: nothing moves between ranks (`none`); every
/// receiving rank needs all it holds itself and a margin around it from other ranks (a halo
/// exchange: only neighbours send); otherwise one Alltoallw.
WORKPART_DECL std::string transfer_kind(const transfer& t, const std::vector<layer>& layers);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/redistribute.ipp"
#endif
