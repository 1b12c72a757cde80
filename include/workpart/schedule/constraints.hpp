#pragma once
/// \file constraints.hpp
/// Constraint extraction: for one map, one grid and every rank, the box of each array the
/// rank's block reads and the box it writes (interval hull of the affine subscripts over the
/// block, exact; inner ranges with affine bounds widen it exactly, and so do ranges whose
/// bounds read data once root has inspected them (inspect.hpp); other data-dependent
/// subscripts and wp::all take the whole axis; several accesses of one array take the hull).

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../core/array.hpp"
#include "box.hpp"
#include "../expr/access_list.hpp"
#include "../expr/interval.hpp"
#include "../expr/map.hpp"
#include "grid.hpp"
#include "tiling.hpp"

namespace workpart::detail {

/// An inner range whose bounds read data, as root found it over one rank's block
/// (comm/inspect.hpp): it runs inside [lo, hi) (nowhere when hi <= lo). An unknown one
/// leaves the accesses under it whole axes.
struct inspected_range {
  bool known = false;
  index_t lo = 0, hi = 0;
};
using range_inspection = std::vector<std::vector<inspected_range>>;  ///< [range][rank]

/// What a map does with one array, with type-erased hooks back to the array.
struct array_use : array_layout {
  const void* id = nullptr;
  bool read = false, written = false;
  combine write_kind = combine::assign;
  bool mixed_writes = false;       ///< written with different statement kinds
  dim_mask read_dims = 0;          ///< space dimensions the reads use
  dim_mask write_dims = 0;         ///< space dimensions the writes use
  bool dense_writes = true;        ///< writes cover their box (no strides, no sums)
  bool read_after_write = false;   ///< a later statement reads it after an earlier one wrote it
  bool read_before_write = false;  ///< a statement reads it before (or where) it is first written
  std::vector<std::string> read_texts, write_texts;
  std::vector<std::array<axis_form, max_rank>> read_forms, write_forms;
  std::function<void*()> root_data;                 ///< root's global data (materialises it)
  std::function<bool()> generated_in_place;         ///< has init() and root holds no copy
  std::function<int()> init_calls;                  ///< how many times init() was called here
  std::function<void(void*, const box&)> generate;  ///< fill a box from init()
  std::shared_ptr<const bool> alive;                ///< false once the array is destroyed
  const void* view_begin = nullptr;                 ///< root: a view's buffer (else nullptr)
  std::size_t view_bytes = 0;                       ///< and its length in bytes
};

template <class T>
constexpr char elem_code() {
  if constexpr (std::is_same_v<T, float>)
    return 'f';
  else if constexpr (std::is_same_v<T, double>)
    return 'd';
  else if constexpr (sizeof(T) == 4)
    return 'i';
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return 'l';
  else
    return 'L';  // another 64-bit spelling (long long where std::int64_t is long)
}

/// Fills box b of a row-major buffer holding box b from the array's generator.
template <class T, int N>
void generate_box(const array<T, N>& a, T* out, const box& b) {
  const auto& g = a.get_generator();
  std::array<index_t, N> c{};
  for (int x = 0; x < N; ++x) c[x] = b.lo[x];
  const index_t n = b.size();
  for (index_t e = 0; e < n; ++e) {
    out[e] = g(c);
    for (int x = N - 1; x >= 0; --x) {
      if (++c[x] < b.hi[x]) break;
      c[x] = b.lo[x];
    }
  }
}

/// Makes an array's use record: the one part of the analysis that needs the array's type
/// (element size, root's data, the generator).
template <class T, int N>
array_use make_use(array<T, N>& arr) {
  array_use u;
  u.id = &arr;
  u.name = arr.name();
  u.rank = N;
  for (int x = 0; x < N; ++x) u.shape[x] = arr.extent(x);
  u.elem_size = sizeof(T);
  u.elem = elem_code<T>();
  array<T, N>* p = &arr;
  u.root_data = [p]() -> void* { return p->data(); };
  u.generated_in_place = [p] { return p->has_generator() && !p->root_materialized(); };
  u.init_calls = [p] { return p->init_calls(); };
  u.generate = [p](void* buf, const box& b) { generate_box(*p, static_cast<T*>(buf), b); };
  u.alive = arr.liveness();
  u.view_begin = arr.view_data();
  u.view_bytes = u.view_begin ? std::size_t(arr.size()) * sizeof(T) : 0;
  return u;
}

/// Registers each array of the visited expressions once, in the order met.
struct use_maker {
  std::vector<array_use>& uses;
  void enter_range(const range_form&) {}
  void leave_range() {}
  template <class A>
  void on_access(const A& a) {
    add(*a.arr);
  }
  template <class T, int N>
  void add(array<T, N>& arr) {
    for (const auto& u : uses)
      if (u.id == static_cast<const void*>(&arr)) return;
    uses.push_back(make_use(arr));
  }
};

/// What the statements do with each array (reads, writes, their forms and texts), from the
/// map's access events; `uses` holds every array the events name.
inline void describe_uses(std::vector<array_use>& uses, const std::vector<access_event>& ev) {
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

/// Registers the arrays of a map and the structure of their uses (no boxes yet).
template <int N, class... S>
std::vector<array_use> array_uses(const map_t<N, S...>& m,
                                  const std::vector<access_event>& events) {
  std::vector<array_use> uses;
  use_maker mk{uses};
  m.for_each_statement([&](const auto& st) {
    st.rhs.visit(mk);
    mk.add(*st.lhs.arr);
  });
  describe_uses(uses, events);
  return uses;
}
template <int N, class... S>
std::vector<array_use> array_uses(const map_t<N, S...>& m) {
  return array_uses(m, access_events(m.statements()));
}

/// The boxes each access touches over one rank's block, hulled per array: reads[u], writes[u].
inline void collect_boxes(const std::vector<array_use>& uses, const std::vector<access_event>& ev,
                          const rank_block& blk, const range_inspection* inspected, int rank,
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
    box b;
    b.rank = e.rank;
    b.valid = true;
    for (int x = 0; x < b.rank; ++x) {
      const axis_form& f = e.forms[std::size_t(x)];
      b.lo[x] = 0;
      b.hi[x] = e.extent[std::size_t(x)];
      if (f.kind != axis_kind::affine) continue;
      auto iv = form_interval(to_linear(f), rs.ranges(), lo, hi);
      if (!iv) continue;  // depends on data: the whole axis
      b.lo[x] = index_t(std::max<wide>(0, iv->lo));
      b.hi[x] = index_t(std::min<wide>(e.extent[std::size_t(x)], iv->hi + 1));
    }
    (e.write ? writes : reads)[u].hull_with(b);
  }
}

/// Boxes of every array for every rank of the communicator: [array][rank].
struct map_constraints {
  std::vector<array_use> arrays;
  std::vector<rank_block> blocks;             // [rank]
  std::vector<std::vector<box>> read, write;  // [array][rank]
};

/// The boxes of every array for every rank, from the map's uses, access events and blocks.
inline void constraints_from_events(map_constraints& c, const std::vector<access_event>& ev,
                                    int rank_of_space, const range_inspection* inspected) {
  const std::size_t nranks = c.blocks.size();
  c.read.assign(c.arrays.size(), std::vector<box>(nranks));
  c.write.assign(c.arrays.size(), std::vector<box>(nranks));
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

template <int N, class... S>
map_constraints extract_constraints(const map_t<N, S...>& m, const grid_shape& g, int nranks,
                                    const range_inspection* inspected = nullptr) {
  map_constraints c;
  const std::vector<access_event> ev = access_events(m.statements());
  c.arrays = array_uses(m, ev);
  for (int r = 0; r < nranks; ++r) c.blocks.push_back(tile(m.iteration_space(), g, r));
  constraints_from_events(c, ev, N, inspected);
  return c;
}

}  // namespace workpart::detail
