#pragma once
/// \file inspect.hpp
/// Range inspection: an inner range whose bounds read data, as CSR's
/// `wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj)))`, runs over positions no
/// analysis of the types can bound. Root evaluates the bounds over every rank's block, on the
/// values it holds when the plan is made, so that `val` and `col` are cut to exactly the
/// positions a rank's rows use instead of being sent whole. The one place where planning
/// reads values; extract_constraints() then treats each inspected range as one with constant
/// bounds. Before every scatter root inspects again: values that now need more than the plan
/// holds are refused (plan_error) on every rank, never read out of bounds.

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "../error.hpp"
#include "../exec/env.hpp"
#include "../expr/map.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/tiling.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// How many inner ranges of a map have bounds that read data (in visit order: statements in
/// order, left side then right side, outer ranges before inner ones).
struct data_range_counter {
  int count = 0;
  template <class A>
  void on_access(const A&) {}
  void enter_range(const range_form& r) { count += r.data_dependent; }
  void leave_range() {}
};

template <int N, class... S>
int count_data_ranges(const map_t<N, S...>& m) {
  data_range_counter c;
  m.visit_accesses(c);
  return c.count;
}

/// Whether a map's local run can fail from the values it reads, and so on some ranks only:
/// an indirect subscript (checked element by element) or an inner range whose bounds read
/// data. A map with neither reads only where its plan proved in bounds: its run fails on a
/// rank only by running out of memory, which a program's execute() agrees on once, at its end
/// or at the next map that reads data (runtime/impl/program_runtime.ipp), not map by map.
struct data_read_finder {
  bool found = false;
  template <class A>
  void on_access(const A&) {
    if constexpr (!A::all_affine) found = true;
  }
  void enter_range(const range_form& r) { found = found || r.data_dependent; }
  void leave_range() {}
};

template <int N, class... S>
bool run_reads_data(const map_t<N, S...>& m) {
  data_read_finder f;
  m.visit_accesses(f);
  return f.found;
}

/// Evaluates the bounds of each data-dependent range over each rank's block on root's values.
/// A range is inspected when it is not nested in another range, its bounds use only the
/// space's indices, and every array they read holds its values on root (not written by the
/// map, not generated in place); the others stay unknown (their accesses take whole axes).
template <int N>
class range_inspector {
 public:
  range_inspector(const map_constraints& cons, int nranks) : cons_(cons), nranks_(nranks) {}

  template <class A>
  void on_access(const A&) {}
  void enter_range(const range_form&) { ++depth_; }
  void leave_range() { --depth_; }

  template <class Node>
  void inspect_bounds(const Node& node) {
    std::vector<inspected_range> per_rank(static_cast<std::size_t>(nranks_));
    result_.push_back(per_rank);
    constexpr dim_mask used =
        bound_info<decltype(node.lo)>().free | bound_info<decltype(node.hi)>().free;
    constexpr dim_mask space = N >= max_dims ? ~dim_mask(0) : dim_mask((dim_mask(1) << N) - 1);
    if (depth_ > 0 || (used & ~space)) return;  // nested, or bounds over inner indices
    bool readable = true;
    buffer_env env;
    auto add = [&](auto& arr) {
      for (const auto& u : cons_.arrays)
        if (u.id == static_cast<const void*>(&arr) && (u.written || u.generated_in_place()))
          readable = false;
      if (readable && !env.has(&arr)) env.add(&arr, global_view(arr));
    };
    if constexpr (!is_affine_v<decltype(node.lo)>) for_each_array(node.lo, add);
    if constexpr (!is_affine_v<decltype(node.hi)>) for_each_array(node.hi, add);
    if (!readable) return;
    const auto lo = bind_bound(node.lo, env, 0);
    const auto hi = bind_bound(node.hi, env, 0);
    for (int r = 0; r < nranks_; ++r) {
      const rank_block& blk = cons_.blocks[std::size_t(r)];
      inspected_range& out = result_.back()[std::size_t(r)];
      if (blk.empty(N)) {
        out.known = true;  // no rows: the range never runs here
        continue;
      }
      index_t q[max_dims] = {};
      for (int d = 0; d < N; ++d) q[d] = blk.lo[d];
      bool any = false;
      index_t a = 0, b = 0;
      for (;;) {  // every point of the block in the dimensions the bounds use
        const index_t x = bound_value(lo, q), y = bound_value(hi, q);
        if (y > x) {
          a = any ? std::min(a, x) : x;
          b = any ? std::max(b, y) : y;
          any = true;
        }
        int d = N - 1;
        for (; d >= 0; --d) {
          if (!(used & dim_bit(d))) continue;
          if (++q[d] < blk.hi[d]) break;
          q[d] = blk.lo[d];
        }
        if (d < 0) break;
      }
      if (env.sink().failed()) {  // an indirect bound left its array: leave it to execution
        for (auto& o : result_.back()) o = inspected_range{};
        return;
      }
      out.known = true;
      out.lo = any ? a : 0;
      out.hi = any ? b : 0;
    }
  }

  range_inspection take() { return std::move(result_); }

 private:
  const map_constraints& cons_;
  int nranks_;
  int depth_ = 0;
  range_inspection result_;
};

/// Root's inspection of every data-dependent range of m, [range][rank] (call on root only).
template <int N, class... S>
range_inspection inspect_data_ranges(const map_t<N, S...>& m, const map_constraints& cons,
                                     int nranks) {
  range_inspector<N> ins(cons, nranks);
  m.visit_accesses(ins);
  return ins.take();
}

/// The inspection as numbers for a broadcast (known, lo, hi per range and rank), and back.
WORKPART_DECL std::vector<index_t> flatten(const range_inspection& in);
WORKPART_DECL range_inspection unflatten(const std::vector<index_t>& v, int ranges, int nranks);
WORKPART_DECL bool any_known(const range_inspection& in);

/// Whether root's values still fit the plan: every inspected range, on every rank, runs
/// inside what was inspected when the plan was made. Throws plan_error naming the first
/// that does not (root only; the caller spreads the failure to every rank).
WORKPART_DECL void check_inspection_current(const std::string& map, const range_inspection& planned,
                                            const range_inspection& now);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/inspect.ipp"
#endif
