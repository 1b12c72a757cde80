#pragma once
/// \file gradient_table.hpp
/// The bookkeeping of one wp::backward: which array holds the gradient of which (arrays are
/// identified by address), the arrays made here (owned by the program), and, per gradient
/// buffer, whether it accumulates, has been written, and which of its zeroing maps runs.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/space.hpp"

namespace workpart::detail {

/// The space [0, extent) on every axis of `a`: the maps the backward program (and the layers
/// of nn/) run over a whole array.
template <class T, int N>
space<N> space_of(const array<T, N>& a) {
  std::array<bounds, std::size_t(N)> b{};
  for (int d = 0; d < N; ++d) b[std::size_t(d)] = {0, a.extent(d)};
  return space<N>(typename space<N>::from_bounds_t{}, b);
}

class gradient_table {
 public:
  /// The gradient of `a`: the named one, or an array made here (`d<name>`) on first use.
  template <class T, int N>
  array<T, N>& of(const array<T, N>& a) {
    for (const entry& e : entries_)
      if (e.array == &a) return *static_cast<array<T, N>*>(e.grad);
    return make<T, N>(&a, "d" + a.name(), a.shape(), false);
  }
  /// A new array of a's shape counting the ties of a wp::max_into / min_into into a.
  template <class T, int N>
  array<T, N>& ties_of(const array<T, N>& a) {
    return make<T, N>(&a, "ties." + a.name(), a.shape(), false);
  }
  /// A new array of `shape` holding a padded read's gradient over X's box widened to the
  /// read's subscripts (padded_gradient.hpp), accumulated with '+=' (zeroed in every
  /// execution): named after X's gradient, `dX.padded`, `dX.padded2`, ...
  template <class T, int N>
  array<T, N>& padded_of(const array<T, N>& a, const std::array<index_t, N>& shape) {
    int k = 0;
    for (const entry& e : entries_) k += e.array == &a && e.padded;
    const std::string name = of(a).name() + ".padded" + (k == 0 ? "" : std::to_string(k + 1));
    array<T, N>& g = make<T, N>(&a, name, shape, false);
    entries_.back().padded = true;
    return g;
  }
  /// A new array of values the backward program computes once per point and reads again
  /// (the seed of an inner sum's derivative): written with '=' before it is read, so never
  /// zeroed. `origin`: the forward array whose statement it serves (for pruning).
  template <class T, int N>
  array<T, N>& scratch(const void* origin, const std::string& name,
                       const std::array<index_t, N>& shape) {
    return make<T, N>(origin, name, shape, true);
  }
  /// A new array the backward program counts into with '+=' (zeroed in every execution).
  template <class T, int N>
  array<T, N>& counts(const void* origin, const std::string& name,
                      const std::array<index_t, N>& shape) {
    return make<T, N>(origin, name, shape, false);
  }
  void add_named(const void* param, void* grad, bool accumulate) {
    entries_.push_back({param, grad, accumulate, 0});
  }
  /// Whether the zeroing map of gradient buffer g is the one that runs (the first asked
  /// for, unless the gradient accumulates or its first write covers it), and its name: maps
  /// are known by name, so the others (over an empty space) are numbered.
  std::pair<bool, std::string> claim_zeroing(const void* g, const std::string& name) {
    entry* e = find(g);
    if (!e) return {false, "zero." + name};
    const int k = e->zero_maps++;
    return {k == 0 && !e->accumulate && !e->covered,
            "zero." + name + (k == 0 ? std::string() : "." + std::to_string(k + 1))};
  }
  /// Records a write of buffer g in backward program order; true for its first. `covers`:
  /// that write sets every element exactly once ('='), so g needs no zeroing.
  bool note_write(const void* g, bool covers = false) {
    entry* e = find(g);
    if (!e) return false;
    const bool first = !e->written;
    e->written = true;
    if (first && covers) e->covered = true;
    return first;
  }
  bool accumulates(const void* g) const {
    const entry* e = find(g);
    return e && e->accumulate;
  }
  /// The forward array whose gradient (or ties count, or scratch values) buffer g is.
  const void* origin_of(const void* g) const {
    const entry* e = find(g);
    return e ? e->array : nullptr;
  }
  std::vector<std::shared_ptr<const void>> owned() const { return owned_; }

 private:
  struct entry {
    const void* array;
    void* grad;
    bool accumulate;
    int zero_maps;
    bool written = false;  ///< by a map of the backward program built so far
    bool covered = false;  ///< its first write is a '=' over the whole buffer
    bool padded = false;   ///< made by padded_of
  };
  template <class T, int N>
  array<T, N>& make(const void* origin, const std::string& name,
                    const std::array<index_t, N>& shape, bool covered) {
    auto g = std::make_shared<array<T, N>>(name, shape);
    entries_.push_back({origin, g.get(), false, 0, false, covered});
    owned_.push_back(g);
    return *g;
  }
  entry* find(const void* g) {
    for (entry& e : entries_)
      if (e.grad == g) return &e;
    return nullptr;
  }
  const entry* find(const void* g) const {
    for (const entry& e : entries_)
      if (e.grad == g) return &e;
    return nullptr;
  }
  std::vector<entry> entries_;
  std::vector<std::shared_ptr<const void>> owned_;
};

}  // namespace workpart::detail
