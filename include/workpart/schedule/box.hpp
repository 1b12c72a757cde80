#pragma once
/// \file box.hpp
/// Boxes of array coordinates and the layout of an array (its name, shape and element type):
/// what the solvers reason about and what the collectives move. No MPI, no expression types.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>

#include "../config.hpp"
#include "../error.hpp"

namespace workpart::detail {

/// An axis-aligned box of array coordinates, [lo, hi) per axis. Rank 0: one element.
struct box {
  int rank = 0;
  bool valid = false;  ///< false: no element
  index_t lo[max_rank] = {}, hi[max_rank] = {};

  bool empty() const {
    if (!valid) return true;
    for (int a = 0; a < rank; ++a)
      if (hi[a] <= lo[a]) return true;
    return false;
  }
  index_t size() const {  // (one pass: the cost model asks this of millions of pieces)
    if (!valid) return 0;
    index_t n = 1;
    for (int a = 0; a < rank; ++a) {
      if (hi[a] <= lo[a]) return 0;
      n *= hi[a] - lo[a];
    }
    return n;
  }
  void hull_with(const box& o) {
    if (o.empty()) return;
    if (empty()) {
      *this = o;
      return;
    }
    for (int a = 0; a < rank; ++a) {
      lo[a] = std::min(lo[a], o.lo[a]);
      hi[a] = std::max(hi[a], o.hi[a]);
    }
  }
  /// (Empty where either is: an axis empty in x or y is empty in the meet.)
  static box intersect(const box& x, const box& y) {
    box r;
    r.rank = x.rank;
    if (!x.valid || !y.valid) return r;
    r.valid = true;
    for (int a = 0; a < x.rank; ++a) {
      r.lo[a] = std::max(x.lo[a], y.lo[a]);
      r.hi[a] = std::min(x.hi[a], y.hi[a]);
      if (r.hi[a] <= r.lo[a]) r.valid = false;
    }
    return r;
  }
  bool operator==(const box& o) const {
    if (empty() || o.empty()) return empty() == o.empty();
    for (int a = 0; a < rank; ++a)
      if (lo[a] != o.lo[a] || hi[a] != o.hi[a]) return false;
    return true;
  }
  std::string str() const {
    if (empty()) return "{}";
    std::string s = "[";
    for (int a = 0; a < rank; ++a)
      s += (a ? ", " : "") + std::to_string(lo[a]) + ":" + std::to_string(hi[a]);
    return s + "]";
  }
};

/// The number of elements in a meet b (box::intersect(a, b).size() without the box).
inline index_t meet_size(const box& a, const box& b) {
  if (!a.valid || !b.valid) return 0;  // (an axis empty in a or b is empty in the meet)
  index_t n = 1;
  for (int x = 0; x < a.rank; ++x) {
    const index_t lo = std::max(a.lo[x], b.lo[x]), hi = std::min(a.hi[x], b.hi[x]);
    if (hi <= lo) return 0;
    n *= hi - lo;
  }
  return n;
}

/// What the solvers and the collectives need of an array: its name (for messages), rank,
/// shape and element type.
struct array_layout {
  std::string name;
  int rank = 0;
  index_t shape[max_rank] = {};
  std::size_t elem_size = 0;
  char elem = '?';  ///< 'f' float, 'd' double, 'i' int32, 'l' int64, 'L' long long
};

/// Every element of an array.
inline box whole_box(const array_layout& u) {
  box b;
  b.rank = u.rank;
  b.valid = true;
  for (int a = 0; a < u.rank; ++a) b.hi[a] = u.shape[a];
  return b;
}

/// v as an MPI count (int), or a plan_error naming `what`.
inline int to_int(index_t v, const std::string& what) {
  if (v > INT_MAX)
    throw plan_error(what + " has " + std::to_string(v) +
                     " elements along one axis, more than an MPI count can carry (2^31 - 1)");
  return int(v);
}

}  // namespace workpart::detail
