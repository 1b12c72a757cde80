#pragma once
/// \file constraints.ipp
/// The bodies of constraints.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../constraints.hpp"

namespace workpart::detail {

WORKPART_DECL void describe_uses(std::vector<array_use>& uses,
                                 const std::vector<access_event>& ev) {
  auto find = [&](const void* id) -> array_use& {
    std::size_t u = 0;
    while (uses[u].id != id) ++u;
    return uses[u];
  };
  std::vector<const void*> written_before;
  for (std::size_t i = 0; i < ev.size();) {
    std::size_t end = i;
    while (end < ev.size() && ev[end].statement == ev[i].statement) ++end;
    // the statement's reads first (its right side), then its write
    for (std::size_t k = i; k < end; ++k) {
      const access_event& e = ev[k];
      if (e.what != access_event::kind::access || e.write) continue;
      array_use& u = find(e.arr);
      u.read = true;
      u.read_dims |= e.free;
      u.read_texts.push_back(e.text);
      u.read_forms.push_back(e.forms);
      bool after = false;
      for (const void* w : written_before) after = after || w == e.arr;
      (after ? u.read_after_write : u.read_before_write) = true;
    }
    for (std::size_t k = i; k < end; ++k) {
      const access_event& e = ev[k];
      if (e.what != access_event::kind::access || !e.write) continue;
      array_use& u = find(e.arr);
      if (u.written && u.write_kind != e.statement_kind) u.mixed_writes = true;
      if (u.written) u.dense_writes = false;  // the hull of two writes may hold unwritten holes
      u.written = true;
      u.write_kind = e.statement_kind;
      u.write_dims |= e.free;
      u.write_texts.push_back(e.text);
      dim_mask seen = 0;
      for (int x = 0; x < e.rank; ++x) {
        const axis_form& f = e.forms[std::size_t(x)];
        if (f.kind != axis_kind::affine) u.dense_writes = false;  // a scatter: holes between
        int terms = 0;
        for (int d = 0; d < max_dims; ++d)
          if (f.coef[d] != 0) {
            ++terms;
            if ((f.coef[d] != 1 && f.coef[d] != -1) || (seen & dim_bit(d))) u.dense_writes = false;
            seen |= dim_bit(d);
          }
        if (terms > 1) u.dense_writes = false;
      }
      u.write_forms.push_back(e.forms);
      written_before.push_back(e.arr);
    }
    i = end;
  }
}

/// The box one access touches over a block whose inner ranges are `ranges`.
inline box access_box(const access_event& e, const std::vector<range_form>& ranges,
                      const index_t* lo, const index_t* hi) {
  box b;
  b.rank = e.rank;
  b.valid = true;
  for (int x = 0; x < b.rank; ++x) {
    const axis_form& f = e.forms[std::size_t(x)];
    b.lo[x] = 0;
    b.hi[x] = e.extent[std::size_t(x)];
    if (f.kind != axis_kind::affine) continue;
    auto iv = form_interval(to_linear(f), ranges, lo, hi);
    if (!iv) continue;  // depends on data: the whole axis
    b.lo[x] = index_t(std::max<wide>(0, iv->lo));
    b.hi[x] = index_t(std::min<wide>(e.extent[std::size_t(x)], iv->hi + 1));
  }
  return b;
}

WORKPART_DECL void collect_boxes(const std::vector<array_use>& uses,
                                 const std::vector<access_event>& ev, const rank_block& blk,
                                 const range_inspection* inspected, int rank,
                                 std::vector<box>& reads, std::vector<box>& writes) {
  index_t lo[max_dims], hi[max_dims];
  for (int d = 0; d < max_dims; ++d) {
    lo[d] = blk.lo[d];
    hi[d] = blk.hi[d];
  }
  reads.assign(uses.size(), box{});
  writes.assign(uses.size(), box{});
  for (std::size_t u = 0; u < uses.size(); ++u) reads[u].rank = writes[u].rank = uses[u].rank;
  range_stack rs;
  int data_ranges = 0;  // data-dependent ranges seen so far (the inspection's order)
  for (const access_event& e : ev) {
    if (e.what == access_event::kind::enter_range) {
      range_form r = e.range;
      if (r.data_dependent) {  // inspected on root: a range with constant bounds on this rank
        const std::size_t k = std::size_t(data_ranges++);
        if (inspected && k < inspected->size() && (*inspected)[k][std::size_t(rank)].known) {
          const inspected_range& ir = (*inspected)[k][std::size_t(rank)];
          r.data_dependent = false;
          r.lo = axis_form{};
          r.lo.offset = ir.lo;
          r.hi = axis_form{};
          r.hi.offset = std::max(ir.lo, ir.hi);
        }
      }
      rs.enter(r, lo, hi);
      continue;
    }
    if (e.what == access_event::kind::leave_range) {
      rs.leave();
      continue;
    }
    if (rs.skipping()) continue;
    std::size_t u = 0;
    while (uses[u].id != e.arr) ++u;
    (e.write ? writes : reads)[u].hull_with(access_box(e, rs.ranges(), lo, hi));
  }
}

/// constraints_from_events for a map without inner ranges: an access's box then depends on
/// the block only along the space dimensions its subscripts use, so the ranks whose blocks
/// agree along those of an array's accesses touch the same boxes of it, found once (a
/// convolution's weights on a grid that splits its batch: one box per split of the channels,
/// not per rank; the optimizer asks this for every rank of every candidate grid).
inline void constraints_without_ranges(map_constraints& c, const std::vector<access_event>& ev,
                                       int rank_of_space) {
  const std::size_t nranks = c.blocks.size(), A = c.arrays.size();
  std::vector<std::vector<const access_event*>> of(A);  // [array]: its accesses
  std::vector<dim_mask> dims(A, 0);                     // [array]: the dimensions they use
  for (const access_event& e : ev) {
    std::size_t u = 0;
    while (c.arrays[u].id != e.arr) ++u;
    of[u].push_back(&e);
    dims[u] |= e.free;
    for (int x = 0; x < e.rank; ++x)
      for (int d = 0; d < max_dims; ++d)
        if (e.forms[std::size_t(x)].coef[d] != 0) dims[u] |= dim_bit(d);
  }
  std::vector<int> ranks;  // the ranks with work, grouped by their blocks along dims[u]
  for (std::size_t r = 0; r < nranks; ++r)
    if (!c.blocks[r].empty(rank_of_space)) ranks.push_back(int(r));
  const std::vector<range_form> none;
  for (std::size_t u = 0; u < A; ++u) {
    for (std::size_t r = 0; r < nranks; ++r)
      c.read[u][r].rank = c.write[u][r].rank = c.arrays[u].rank;
    auto differ = [&](int x, int y, bool less) {  // x's block before y's (less), or unequal
      const rank_block &a = c.blocks[std::size_t(x)], &b = c.blocks[std::size_t(y)];
      for (int d = 0; d < max_dims; ++d) {
        if (!(dims[u] & dim_bit(d))) continue;
        if (a.lo[d] != b.lo[d]) return !less || a.lo[d] < b.lo[d];
        if (a.hi[d] != b.hi[d]) return !less || a.hi[d] < b.hi[d];
      }
      return false;
    };
    std::sort(ranks.begin(), ranks.end(), [&](int x, int y) { return differ(x, y, true); });
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      const std::size_t r = std::size_t(ranks[k]);
      if (k > 0 && !differ(ranks[k - 1], ranks[k], false)) {  // as the rank before it
        c.read[u][r] = c.read[u][std::size_t(ranks[k - 1])];
        c.write[u][r] = c.write[u][std::size_t(ranks[k - 1])];
        continue;
      }
      for (const access_event* e : of[u])
        (e->write ? c.write : c.read)[u][r].hull_with(
            access_box(*e, none, c.blocks[r].lo, c.blocks[r].hi));
    }
  }
}

WORKPART_DECL void constraints_from_events(map_constraints& c, const std::vector<access_event>& ev,
                                           int rank_of_space, const range_inspection* inspected) {
  const std::size_t nranks = c.blocks.size();
  c.read.assign(c.arrays.size(), std::vector<box>(nranks));
  c.write.assign(c.arrays.size(), std::vector<box>(nranks));
  bool ranges = false;
  for (const access_event& e : ev) ranges = ranges || e.what != access_event::kind::access;
  if (!ranges) return constraints_without_ranges(c, ev, rank_of_space);
  std::vector<box> reads, writes;
  for (std::size_t r = 0; r < nranks; ++r) {
    if (c.blocks[r].empty(rank_of_space)) {
      for (std::size_t u = 0; u < c.arrays.size(); ++u)
        c.read[u][r].rank = c.write[u][r].rank = c.arrays[u].rank;
      continue;
    }
    collect_boxes(c.arrays, ev, c.blocks[r], inspected, int(r), reads, writes);
    for (std::size_t u = 0; u < c.arrays.size(); ++u) {
      c.read[u][r] = reads[u];
      c.write[u][r] = writes[u];
    }
  }
}
}  // namespace workpart::detail
