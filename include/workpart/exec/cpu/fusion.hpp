#pragma once
/// \file fusion.hpp
/// Fusion inside a map. A map whose statements read what earlier ones wrote at the same
/// point (softmax's max, exp-sum and normalise; a layer norm's mean, variance and scale) runs
/// all its statements over one cache-sized block of its space before moving to the next, so
/// an intermediate is written and read again while it is in cache instead of streaming
/// through memory once per statement.
///
/// Blocking along a dimension d keeps the map's meaning when every array that two statements
/// share, one of them writing it, is reached by all its accesses through one axis at `d + c`
/// (the same axis and c everywhere): points in different blocks then touch different elements
/// of every such array, so each statement still sees exactly what the earlier statements
/// wrote at its points, and nothing a later statement writes reaches an earlier one.
/// Threads take whole blocks only when every statement's left side also moves along each
/// blocked dimension (no two blocks write one element).

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <unistd.h>

#include "../../expr/access.hpp"
#include "../../expr/reduce.hpp"
#include "loop.hpp"

namespace workpart::detail {

/// One access of a map as fusion sees it: the array, who reads or writes it, and how.
struct fusion_access {
  const void* id = nullptr;
  int statement = 0;
  bool write = false;
  int rank = 0;
  std::size_t elem_bytes = 0;
  const char* begin = nullptr;  ///< a view's elements on root (owned arrays: nullptr)
  const char* end = nullptr;
  std::array<axis_form, max_rank> axes{};
};

/// What the fusion plan needs to know of a map's statements.
struct fusion_facts {
  std::vector<fusion_access> accesses;
  std::vector<dim_mask> lhs_moves;  ///< per statement: its left side's lhs_owned_dims
  const char* refusal = nullptr;    ///< why no blocking keeps the map's meaning, if so
};

/// Collects a statement's accesses (fusion_facts) through the access visitor protocol.
struct fusion_collector {
  fusion_facts& facts;
  int statement;
  bool write;
  void enter_range(const range_form& r) {
    if (r.data_dependent && !facts.refusal)
      facts.refusal = "an inner range has data-dependent bounds (it may fail part way)";
  }
  void leave_range() {}
  template <class A>
  void on_access(const A& a) {
    constexpr int R = A::array_type::rank;
    fusion_access x;
    x.id = static_cast<const void*>(a.arr);
    x.statement = statement;
    x.write = write;
    x.rank = R;
    x.elem_bytes = sizeof(typename A::array_type::value_type);
    if (const auto* data = a.arr->view_data()) {  // (owned arrays never overlap: no look)
      x.begin = reinterpret_cast<const char*>(data);
      x.end = x.begin + std::size_t(a.arr->size()) * x.elem_bytes;
    }
    const auto forms = a.axis_forms();
    for (int k = 0; k < R; ++k) {
      x.axes[std::size_t(k)] = forms[std::size_t(k)];
      if (forms[std::size_t(k)].kind != axis_kind::affine && !facts.refusal)
        facts.refusal = "a data-dependent subscript (it may fail part way)";
    }
    facts.accesses.push_back(x);
  }
};

/// How a map's statements run together: blocks of the space, each holding every point along
/// the dimensions neither blocked nor iterated one at a time.
struct fusion_plan {
  bool fused = false;
  const char* why = "";  ///< why not, when not fused
  dim_mask legal = 0;    ///< dimensions blocking keeps the meaning along
  int chunk_dim = -1;    ///< the dimension cut into chunks of `chunk` points
  index_t chunk = 0;
  dim_mask singles = 0;         ///< dimensions outside the chunked one, one value per block
  index_t blocks = 0;           ///< number of blocks
  index_t block_points = 0;     ///< points in a full block
  std::size_t block_bytes = 0;  ///< what a block's accesses span, at most (one element a point)
  bool threads = false;         ///< blocks are shared among OpenMP threads
};

/// Bytes a block's working set may take: a quarter of the L2 cache (256 KiB if unknown).
/// Tests and benchmarks may set it (a small budget fuses small maps).
inline std::size_t& fusion_budget_bytes() {
  static std::size_t bytes = [] {
    long l2 = -1;
#if defined(_SC_LEVEL2_CACHE_SIZE)
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return l2 > 0 ? std::size_t(l2) / 4 : std::size_t(256) << 10;
  }();
  return bytes;
}

/// Whether axis form f is exactly `d + c` (and nothing else moves it).
inline bool is_dim_plus_constant(const axis_form& f, int d) {
  if (f.kind != axis_kind::affine || f.coef[d] != 1) return false;
  for (int e = 0; e < max_dims; ++e)
    if (e != d && f.coef[e] != 0) return false;
  return true;
}

/// Whether every access to `id` reaches it through one axis at `d + c`, one c.
inline bool shared_array_splits_along(const std::vector<fusion_access>& acc, const void* id,
                                      int d) {
  const fusion_access* first = nullptr;
  for (const fusion_access& a : acc)
    if (a.id == id) {
      first = &a;
      break;
    }
  for (int x = 0; x < first->rank; ++x) {
    const axis_form& f0 = first->axes[std::size_t(x)];
    if (!is_dim_plus_constant(f0, d)) continue;
    bool all = true;
    for (const fusion_access& a : acc)
      if (a.id == id && (!is_dim_plus_constant(a.axes[std::size_t(x)], d) ||
                         a.axes[std::size_t(x)].offset != f0.offset))
        all = false;
    if (all) return true;
  }
  return false;
}

/// Whether two arrays of the map, one of them written, are views of overlapping memory (two
/// wp::array views of one buffer): the analysis knows arrays by identity, so such a map keeps
/// the statement-by-statement order.
inline bool written_arrays_overlap(const std::vector<fusion_access>& acc) {
  for (const fusion_access& a : acc)
    for (const fusion_access& b : acc)
      if (a.id != b.id && (a.write || b.write) && a.begin && b.begin && a.begin < b.end &&
          b.begin < a.end)
        return true;
  return false;
}

/// The dimensions of a space of rank n along which blocking keeps the map's meaning.
inline dim_mask fusion_legal_dims(const fusion_facts& f, int n) {
  dim_mask legal = dims_below(n);
  std::vector<const void*> seen;
  for (const fusion_access& a : f.accesses) {
    if (std::find(seen.begin(), seen.end(), a.id) != seen.end()) continue;
    seen.push_back(a.id);
    bool written = false, shared = false;
    for (const fusion_access& b : f.accesses)
      if (b.id == a.id) {
        written = written || b.write;
        shared = shared || b.statement != a.statement;
      }
    if (!written || !shared) continue;  // read-only, or one statement's own
    for (int d = 0; d < n; ++d)
      if ((legal & dim_bit(d)) && !shared_array_splits_along(f.accesses, a.id, d))
        legal &= ~dim_bit(d);
  }
  return legal;
}

/// Plans the blocks of the box [lo, hi) of a space of rank n for the statements `f` describes
/// (`threads`: the OpenMP threads the loop executor would use).
inline fusion_plan plan_fusion(const fusion_facts& f, int n, const index_t* lo, const index_t* hi,
                               int threads, std::size_t budget = fusion_budget_bytes()) {
  fusion_plan p;
  if (f.refusal) {
    p.why = f.refusal;
    return p;
  }
  if (written_arrays_overlap(f.accesses)) {
    p.why = "two of its arrays view overlapping memory";
    return p;
  }
  p.legal = fusion_legal_dims(f, n);
  if (p.legal == 0) {
    p.why = "no dimension keeps every shared array's elements apart between blocks";
    return p;
  }
  index_t points = 1;
  for (int d = 0; d < n; ++d) points *= std::max<index_t>(0, hi[d] - lo[d]);
  std::size_t point_bytes = 0;  // a bound: one element of each array per point
  std::vector<const void*> seen;
  for (const fusion_access& a : f.accesses)
    if (std::find(seen.begin(), seen.end(), a.id) == seen.end()) {
      seen.push_back(a.id);
      point_bytes += a.elem_bytes;
    }
  point_bytes = std::max<std::size_t>(point_bytes, 1);
  if (points <= 0 || std::size_t(points) * point_bytes <= budget) {
    p.why = "the whole box fits in cache";
    return p;
  }
  dim_mask usable = p.legal;
  const bool threaded = threads > 1 && points >= parallel_threshold;
  if (threaded) {
    for (dim_mask moves : f.lhs_moves) usable &= moves;
    if (usable == 0) {
      p.why = "threads over blocks would let two of them write one element";
      return p;
    }
  }
  const index_t target = std::max<index_t>(1, index_t(budget / point_bytes));
  index_t units = 1;  // points of a block along the dimensions it holds whole
  for (int d = 0; d < n; ++d)
    if (!(usable & dim_bit(d))) units *= std::max<index_t>(0, hi[d] - lo[d]);
  for (int d = n - 1; d >= 0; --d) {
    if (!(usable & dim_bit(d))) continue;
    const index_t ext = hi[d] - lo[d];
    if (p.chunk_dim >= 0) {
      p.singles |= dim_bit(d);
    } else if (units * ext <= target) {
      units *= ext;
    } else {
      p.chunk_dim = d;
      p.chunk = std::max<index_t>(1, target / std::max<index_t>(units, 1));
      if (p.chunk >= 16) p.chunk = p.chunk / 8 * 8;  // whole vectors when rows run along it
      units *= p.chunk;
    }
  }
  if (p.chunk_dim < 0) {  // cannot happen: the whole box exceeds the budget
    p.why = "the whole box fits in cache";
    return p;
  }
  p.blocks = (hi[p.chunk_dim] - lo[p.chunk_dim] + p.chunk - 1) / p.chunk;
  for (int d = 0; d < n; ++d)
    if (p.singles & dim_bit(d)) p.blocks *= hi[d] - lo[d];
  p.block_points = units;
  p.block_bytes = std::size_t(units) * point_bytes;
  p.threads = threaded && p.blocks > 1;
  p.fused = true;
  return p;
}

/// The box of block b of plan p over [lo, hi): blocks run chunk-fastest, then the single
/// dimensions in row-major order.
inline void fusion_block_box(const fusion_plan& p, int n, const index_t* lo, const index_t* hi,
                             index_t b, index_t* blo, index_t* bhi) {
  for (int d = 0; d < n; ++d) {
    blo[d] = lo[d];
    bhi[d] = hi[d];
  }
  const index_t chunks = (hi[p.chunk_dim] - lo[p.chunk_dim] + p.chunk - 1) / p.chunk;
  const index_t c = b % chunks;
  b /= chunks;
  blo[p.chunk_dim] = lo[p.chunk_dim] + c * p.chunk;
  bhi[p.chunk_dim] = std::min(hi[p.chunk_dim], blo[p.chunk_dim] + p.chunk);
  for (int d = n - 1; d >= 0; --d)
    if (p.singles & dim_bit(d)) {
      const index_t ext = hi[d] - lo[d];
      blo[d] = lo[d] + b % ext;
      bhi[d] = blo[d] + 1;
      b /= ext;
    }
}

/// The plan in words, for explain_local() and a plan's explain().
[[gnu::noinline]] inline std::string fusion_text(const fusion_plan& p, int n) {
  if (!p.fused)
    return std::string("statements run one after another over the box (not fused: ") + p.why + ")";
  std::string s = "fused: every statement runs on one block before the next block (";
  s += std::to_string(p.blocks);
  s += " blocks of up to ";
  s += std::to_string(p.block_points);
  s += " points, ~";
  s += std::to_string((p.block_bytes + 1023) / 1024);
  s += " KiB; i";
  s += std::to_string(p.chunk_dim);
  s += " in chunks of ";
  s += std::to_string(p.chunk);
  for (int d = 0; d < n; ++d)
    if (p.singles & dim_bit(d)) {
      s += ", i";
      s += std::to_string(d);
    }
  if (p.singles) s += " one value at a time";
  s += p.threads ? "), threads over blocks" : "), one thread";
  return s;
}

}  // namespace workpart::detail
