#pragma once
/// \file constraints.hpp
/// Constraint extraction: for one map, one grid and every rank, the box of each array the
/// rank's block reads and the box it writes (interval hull of the affine subscripts over the
/// block, exact; inner ranges with affine bounds widen it exactly, and so do ranges whose
/// bounds read data once root has inspected them (inspect.hpp); other data-dependent
/// subscripts and wp::all take the whole axis; several accesses of one array take the hull).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../core/array.hpp"
#include "box.hpp"
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

/// Records the reads of a right side into the array uses.
struct use_reader {
  std::function<array_use&(const void*, const std::function<array_use()>&)> f;
  std::vector<const void*>& before;
  void enter_range(const range_form&) {}
  void leave_range() {}
  template <class A>
  void on_access(const A& a) {
    array_use& u = f(a.arr, [&] { return make_use(*a.arr); });
    u.read = true;
    u.read_dims |= A::info.free;
    u.read_texts.push_back(a.str());
    std::array<axis_form, max_rank> fm{};
    const auto af = a.axis_forms();
    for (std::size_t x = 0; x < af.size(); ++x) fm[x] = af[x];
    u.read_forms.push_back(fm);
    bool after = false;
    for (const void* w : before) after = after || w == a.arr;
    (after ? u.read_after_write : u.read_before_write) = true;
  }
  template <class T, int N>
  static array_use make_use(array<T, N>& arr) {
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
};

/// Registers the arrays of a map and the structure of their uses (no boxes yet).
template <int N, class... S>
std::vector<array_use> array_uses(const map_t<N, S...>& m) {
  std::vector<array_use> uses;
  std::vector<const void*> written_before;
  auto find = [&](const void* id, const std::function<array_use()>& make) -> array_use& {
    for (auto& u : uses)
      if (u.id == id) return u;
    uses.push_back(make());
    return uses.back();
  };
  m.for_each_statement([&](const auto& st) {
    using Stmt = std::remove_cvref_t<decltype(st)>;
    use_reader rd{find, written_before};
    st.rhs.visit(rd);
    array_use& u = find(st.lhs.arr, [&] { return use_reader::make_use(*st.lhs.arr); });
    if (u.written && u.write_kind != Stmt::kind) u.mixed_writes = true;
    if (u.written) u.dense_writes = false;  // the hull of two writes may hold unwritten holes
    u.written = true;
    u.write_kind = Stmt::kind;
    u.write_dims |= Stmt::lhs_type::info.free;
    u.write_texts.push_back(st.lhs.str());
    const auto af = st.lhs.axis_forms();
    std::array<axis_form, max_rank> fm{};
    dim_mask seen = 0;
    for (std::size_t x = 0; x < af.size(); ++x) {
      fm[x] = af[x];
      int terms = 0;
      for (int d = 0; d < max_dims; ++d)
        if (af[x].coef[d] != 0) {
          ++terms;
          if ((af[x].coef[d] != 1 && af[x].coef[d] != -1) || (seen & dim_bit(d)))
            u.dense_writes = false;
          seen |= dim_bit(d);
        }
      if (terms > 1) u.dense_writes = false;
    }
    u.write_forms.push_back(fm);
    written_before.push_back(st.lhs.arr);
  });
  return uses;
}

/// The boxes each access touches over one rank's block, hulled per array.
class box_collector {
 public:
  box_collector(std::vector<array_use>& uses, const rank_block& blk,
                const range_inspection* inspected = nullptr, int rank = 0)
      : uses_(uses), read_(uses.size()), write_(uses.size()), inspected_(inspected), rank_(rank) {
    for (int d = 0; d < max_dims; ++d) {
      lo_[d] = blk.lo[d];
      hi_[d] = blk.hi[d];
    }
    for (std::size_t u = 0; u < uses.size(); ++u) {
      read_[u].rank = write_[u].rank = uses[u].rank;
    }
  }
  template <class A>
  void on_access(const A& a) {
    std::size_t u = 0;
    while (uses_[u].id != static_cast<const void*>(a.arr)) ++u;
    box b;
    b.rank = A::array_type::rank;
    b.valid = skip_ == 0;
    if (!b.valid) return;
    const auto forms = a.axis_forms();
    for (int x = 0; x < b.rank; ++x) {
      b.lo[x] = 0;
      b.hi[x] = a.arr->extent(x);
      if (forms[x].kind != axis_kind::affine) continue;
      auto iv = form_interval(to_linear(forms[x]), ranges_, lo_, hi_);
      if (!iv) continue;  // depends on data: the whole axis
      b.lo[x] = index_t(std::max<wide>(0, iv->lo));
      b.hi[x] = index_t(std::min<wide>(a.arr->extent(x), iv->hi + 1));
    }
    (writing_ ? write_ : read_)[u].hull_with(b);
  }
  void enter_range(range_form r) {
    if (r.data_dependent) {  // inspected on root: a range with constant bounds on this rank
      const std::size_t k = std::size_t(data_ranges_++);
      if (inspected_ && k < inspected_->size() && (*inspected_)[k][std::size_t(rank_)].known) {
        const inspected_range& ir = (*inspected_)[k][std::size_t(rank_)];
        r.data_dependent = false;
        r.lo = axis_form{};
        r.lo.offset = ir.lo;
        r.hi = axis_form{};
        r.hi.offset = std::max(ir.lo, ir.hi);
      }
    }
    ranges_.push_back(r);
    if (skip_ > 0 || !range_may_run(ranges_, lo_, hi_)) ++skip_;
  }
  void leave_range() {
    if (skip_ > 0) --skip_;
    ranges_.pop_back();
  }
  void set_writing(bool w) { writing_ = w; }
  const std::vector<box>& reads() const { return read_; }
  const std::vector<box>& writes() const { return write_; }

 private:
  std::vector<array_use>& uses_;
  std::vector<box> read_, write_;
  index_t lo_[max_dims], hi_[max_dims];
  std::vector<range_form> ranges_;
  int skip_ = 0;
  bool writing_ = false;
  const range_inspection* inspected_;
  int rank_;
  int data_ranges_ = 0;  // data-dependent ranges seen so far (the inspection's order)
};

/// Boxes of every array for every rank of the communicator: [array][rank].
struct map_constraints {
  std::vector<array_use> arrays;
  std::vector<rank_block> blocks;             // [rank]
  std::vector<std::vector<box>> read, write;  // [array][rank]
};

template <int N, class... S>
map_constraints extract_constraints(const map_t<N, S...>& m, const grid_shape& g, int nranks,
                                    const range_inspection* inspected = nullptr) {
  map_constraints c;
  c.arrays = array_uses(m);
  c.read.assign(c.arrays.size(), std::vector<box>(nranks));
  c.write.assign(c.arrays.size(), std::vector<box>(nranks));
  for (int r = 0; r < nranks; ++r) {
    rank_block blk = tile(m.iteration_space(), g, r);
    c.blocks.push_back(blk);
    if (blk.empty(N)) {
      for (std::size_t u = 0; u < c.arrays.size(); ++u)
        c.read[u][r].rank = c.write[u][r].rank = c.arrays[u].rank;
      continue;
    }
    box_collector bc(c.arrays, blk, inspected, r);
    m.for_each_statement([&](const auto& st) {
      bc.set_writing(true);
      st.lhs.visit(bc);
      bc.set_writing(false);
      st.rhs.visit(bc);
    });
    for (std::size_t u = 0; u < c.arrays.size(); ++u) {
      c.read[u][r] = bc.reads()[u];
      c.write[u][r] = bc.writes()[u];
    }
  }
  return c;
}

}  // namespace workpart::detail
