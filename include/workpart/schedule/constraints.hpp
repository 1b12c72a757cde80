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
#include "../config.hpp"

namespace workpart::detail {

/// An inner range whose bounds read data, as root found it over one rank's block
/// (runtime/inspect.hpp): it runs inside [lo, hi) (nowhere when hi <= lo). An unknown one
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
WORKPART_DECL void describe_uses(std::vector<array_use>& uses, const std::vector<access_event>& ev);

/// Registers the arrays of a map and the structure of their uses (no boxes yet).
template <int N, class... S>
std::vector<array_use> array_uses(const map_t<N, S...>& m,
                                  const std::vector<access_event>& events) {
  std::vector<array_use> uses;
  use_maker mk{uses};
  m.for_each_statement([&](const auto& st) {
    st.rhs.visit(mk);
    st.lhs.visit_subscripts(mk);  // a scatter's h(idx(i)) reads idx
    mk.add(*st.lhs.arr);
  });
  describe_uses(uses, events);
  return uses;
}
template <int N, class... S>
std::vector<array_use> array_uses(const map_t<N, S...>& m) {
  return array_uses(m, m.access_events());
}

/// The boxes each access touches over one rank's block, hulled per array: reads[u], writes[u].
WORKPART_DECL void collect_boxes(const std::vector<array_use>& uses,
                                 const std::vector<access_event>& ev, const rank_block& blk,
                                 const range_inspection* inspected, int rank,
                                 std::vector<box>& reads, std::vector<box>& writes);

/// Boxes of every array for every rank of the communicator: [array][rank].
struct map_constraints {
  std::vector<array_use> arrays;
  std::vector<rank_block> blocks;             // [rank]
  std::vector<std::vector<box>> read, write;  // [array][rank]
};

/// The boxes of every array for every rank, from the map's uses, access events and blocks.
WORKPART_DECL void constraints_from_events(map_constraints& c, const std::vector<access_event>& ev,
                                           int rank_of_space, const range_inspection* inspected);

template <int N, class... S>
map_constraints extract_constraints(const map_t<N, S...>& m, const grid_shape& g, int nranks,
                                    const range_inspection* inspected = nullptr) {
  map_constraints c;
  const std::vector<access_event> ev = m.access_events();
  c.arrays = array_uses(m, ev);
  for (int r = 0; r < nranks; ++r) c.blocks.push_back(tile(m.iteration_space(), g, r));
  constraints_from_events(c, ev, N, inspected);
  return c;
}

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/constraints.ipp"
#endif
