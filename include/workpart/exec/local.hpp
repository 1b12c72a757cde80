#pragma once
/// \file local.hpp
/// Runs a map's statements, in order, over a box of its space on the buffers an env gives:
/// the whole space on root's arrays for `wp::run`, a rank's block on local buffers for a
/// distributed plan. Picks GEMM for recognised contractions and the loop executor otherwise.

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../expr/interval.hpp"
#include "../expr/map.hpp"
#include "cpu/fusion.hpp"
#include "cpu/gemm.hpp"
#include "cpu/gemm_packed.hpp"
#include "cpu/loop.hpp"
#include "cpu/row_vector.hpp"
#include "backend.hpp"
#include "env.hpp"
#include "own_output.hpp"

namespace workpart::detail {

/// The box of array `id` that the right side of a statement reads over the box [lo, hi) of
/// the space (hull over its accesses; data-dependent subscripts take the whole axis), inside
/// the view `v`: a statement that reads its own output snapshots only this box.
template <int R>
struct own_read_box {
  const void* id;
  const raw_view& v;
  index_t lo[max_dims] = {}, hi[max_dims] = {};
  index_t box_lo[max_rank] = {}, box_hi[max_rank] = {};
  bool any = false;
  std::vector<range_form> ranges;
  void enter_range(const range_form& r) { ranges.push_back(r); }
  void leave_range() { ranges.pop_back(); }
  template <class A>
  void on_access(const A& a) {
    if constexpr (A::array_type::rank != R) {
      return;  // another array: the left side's has rank R
    } else {
      if (static_cast<const void*>(a.arr) != id) return;
      on_own_access(a.axis_forms());
    }
  }
  void on_own_access(const std::array<axis_form, R>& forms) {
    for (int x = 0; x < R; ++x) {
      index_t l = v.origin[x], h = v.origin[x] + v.extent[x];  // whole axis unless bounded
      if (forms[x].kind == axis_kind::affine)
        if (auto iv = form_interval(to_linear(forms[x]), ranges, lo, hi)) {
          l = index_t(std::max<wide>(l, iv->lo));
          h = index_t(std::min<wide>(h, iv->hi + 1));
        }
      box_lo[x] = any ? std::min(box_lo[x], l) : l;
      box_hi[x] = any ? std::max(box_hi[x], h) : h;
    }
    any = true;
  }
};

/// Copies the box [blo, bhi) of `src` into `store` (row-major) and views it there.
template <class T>
raw_view snapshot(const raw_view& src, int rank, const index_t* blo, const index_t* bhi,
                  std::vector<T>& store) {
  raw_view v = src;
  index_t n = 1;
  for (int a = 0; a < rank; ++a) {
    v.origin[a] = blo[a];
    v.extent[a] = std::max<index_t>(0, bhi[a] - blo[a]);
    n *= v.extent[a];
  }
  store.resize(static_cast<std::size_t>(n));
  counters().snapshot_elements.fetch_add(long(n), std::memory_order_relaxed);
  index_t st = 1;
  for (int a = rank - 1; a >= 0; --a) {
    v.stride[a] = st;
    st *= v.extent[a];
  }
  // Copy element by element in row-major order of the box.
  index_t idx[max_rank] = {};
  const T* s = static_cast<const T*>(src.data);
  for (index_t e = 0; e < n; ++e) {
    index_t off = 0;
    for (int a = 0; a < rank; ++a) off += (v.origin[a] + idx[a] - src.origin[a]) * src.stride[a];
    store[static_cast<std::size_t>(e)] = s[off];
    for (int a = rank - 1; a >= 0; --a) {
      if (++idx[a] < v.extent[a]) break;
      idx[a] = 0;
    }
  }
  v.data = store.data();
  return v;
}

/// Raises the first out-of-bounds access a statement's run recorded (a data-dependent
/// subscript or range), in either env.
inline void raise_recorded_oob(const std::string& map_name, const buffer_env& wenv,
                               const buffer_env& renv) {
  for (const error_sink* s : {&wenv.sink(), &renv.sink()})
    if (s->failed())
      throw shape_error("map '" + map_name + "': " + s->message() +
                        " (a data-dependent subscript or range left the array)");
}

/// Runs one statement over the box [lo, hi). Left sides bind through `wenv`, right sides
/// through `renv` (the same env on one process; a rank's separate read buffers when
/// distributed, which already hold the values from before the map, so no snapshot is needed).
/// A statement that reads its own output reads a snapshot through a copy of `renv` (not a
/// wrapper type), so its loop is compiled once, not once more for the snapshot.
template <int N, class Stmt>
void run_statement(const std::string& map_name, const Stmt& st, const buffer_env& wenv,
                   const buffer_env& renv, const index_t* lo, const index_t* hi,
                   bool reads_are_separate) {
  using Lhs = typename Stmt::lhs_type;
  using T = typename Lhs::value_type;
  const bool alias = !reads_are_separate && reads_own_output(st);
  if constexpr (is_contraction_v<N, Stmt>) {
    if (!alias) {
      run_contraction<N>(st, wenv, renv, lo, hi);
      return;
    }
  }
  if constexpr (is_affine_contraction_v<N, Stmt>) {
    // the loop's vector rows' length, if it runs (0 where they are scalar: a padded read)
    constexpr int row = choose_row_dim<N, Stmt>();
    const index_t vector_row = loop_rows_are_vectors<N, Stmt>() ? hi[row] - lo[row] : 0;
    if (!alias && run_affine_contraction<N>(st, wenv, renv, lo, hi, vector_row)) return;
  }
  counters().loop_statements.fetch_add(1, std::memory_order_relaxed);
  auto run_with = [&](const buffer_env& read_env) {
    const auto bl = st.lhs.bind(wenv, 0, &read_env);
    const auto br = st.rhs.bind(read_env, 0);
    run_statement_loop<N, Stmt>(bl, br, lo, hi);
    raise_recorded_oob(map_name, wenv, read_env);
  };
  if (!alias) {
    run_with(renv);
    return;
  }
  constexpr int R = Lhs::array_type::rank;
  const raw_view& whole = renv.view(*st.lhs.arr);
  own_read_box<R> rb{st.lhs.arr, whole, {}, {}, {}, {}, false, {}};
  for (int d = 0; d < N; ++d) {
    rb.lo[d] = lo[d];
    rb.hi[d] = hi[d];
  }
  st.rhs.visit(rb);
  std::vector<T> store;
  buffer_env snap_env = renv;
  snap_env.add(st.lhs.arr, snapshot<T>(whole, R, rb.box_lo, rb.box_hi, store));
  run_with(snap_env);
}

/// Whether some statement of a map (a tuple of statements) goes to GEMM: such maps run
/// statement by statement, each contraction over the whole box.
template <int N, class Tuple>
struct has_contraction;
template <int N, class... S>
struct has_contraction<N, std::tuple<S...>>
    : std::bool_constant<((is_contraction_v<N, S> || is_affine_contraction_v<N, S>) || ...)> {};

/// What fusion needs of a map's statements that run; `separate(id)`: whether array id is read
/// from a buffer other than the one written (a rank's block of a distributed plan).
template <int N, class Map, class Separate>
fusion_facts map_fusion_facts(const Map& m, Separate&& separate) {
  fusion_facts f;
  int s = 0;
  m.for_each_statement([&](const auto& st) {
    if (!f.refusal && !separate(st.lhs.arr) && reads_own_output(st))
      f.refusal = "a statement reads its own output elsewhere than where it writes (a snapshot)";
    fusion_collector w{f, s, true};
    w.on_access(st.lhs);  // a data-dependent left subscript refuses fusion by its kind
    // the dimensions threads may split it along, as the loop executor decides (combine.hpp)
    f.lhs_moves.push_back(lhs_owned_dims<typename std::remove_cvref_t<decltype(st)>::lhs_type>());
    fusion_collector r{f, s, false};
    st.rhs.visit(r);
    ++s;
  });
  return f;
}

/// How a map's statements run together over [lo, hi), or why they run one after another;
/// `separate` as in map_fusion_facts (explain texts: none, as on one process).
template <int N, class Map, class Separate>
fusion_plan map_fusion_plan(const Map& m, const index_t* lo, const index_t* hi,
                            Separate&& separate) {
  if constexpr (Map::statement_count < 2) {
    fusion_plan p;
    p.why = "one statement";
    return p;
  } else if constexpr (has_contraction<N, typename Map::statements_type>::value) {
    fusion_plan p;
    p.why = "a statement is a contraction (GEMM over the whole box)";
    return p;
  } else {
    return plan_fusion(map_fusion_facts<N>(m, separate), N, lo, hi, worker_threads());
  }
}
template <int N, class Map>
fusion_plan map_fusion_plan(const Map& m, const index_t* lo, const index_t* hi) {
  return map_fusion_plan<N>(m, lo, hi, [](const void*) { return false; });
}

/// Runs a map's statements over the blocks of plan p: every statement on a block, then the
/// next block. Each statement is bound once; blocks go to threads when p says so.
template <int N, class Map>
void run_fused(const std::string& map_name, const Map& m, const buffer_env& wenv,
               const buffer_env& renv, const fusion_plan& p, const index_t* lo, const index_t* hi) {
  using stmts = typename Map::statements_type;
  constexpr std::size_t S = Map::statement_count;
  // Only the statements that run are bound: a pruned one's arrays (a gradient wp::backward
  // need not make, and what only it reads) have no buffers in the plan.
  auto bind_if_runs = [&](std::size_t s, const auto& st) {
    using bound_pair = decltype(std::make_pair(st.lhs.bind(wenv, 0, &renv), st.rhs.bind(renv, 0)));
    return m.runs(s) ? std::optional<bound_pair>(std::in_place, st.lhs.bind(wenv, 0, &renv),
                                                 st.rhs.bind(renv, 0))
                     : std::optional<bound_pair>();
  };
  const auto bound = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::make_tuple(bind_if_runs(I, std::get<I>(m.statements()))...);
  }
  (std::make_index_sequence<S>{});
  long running = 0;
  for (std::size_t s = 0; s < S; ++s) running += m.runs(s) ? 1 : 0;
  counters().loop_statements.fetch_add(running, std::memory_order_relaxed);
  counters().fused_maps.fetch_add(1, std::memory_order_relaxed);
  counters().fused_blocks.fetch_add(long(p.blocks), std::memory_order_relaxed);
  auto run_block = [&](index_t b) {
    index_t blo[max_dims] = {}, bhi[max_dims] = {};
    fusion_block_box(p, N, lo, hi, b, blo, bhi);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((m.runs(I) ? run_statement_loop<N, std::tuple_element_t<I, stmts>>(
                        std::get<I>(bound)->first, std::get<I>(bound)->second, blo, bhi)
                  : void()),
       ...);
    }
    (std::make_index_sequence<S>{});
  };
  const index_t blocks = p.blocks;
  if (p.threads) {
    counters().threaded_outer.fetch_add(1, std::memory_order_relaxed);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(worker_threads())
#endif
    for (index_t b = 0; b < blocks; ++b) run_block(b);
  } else {
    for (index_t b = 0; b < blocks; ++b) run_block(b);
  }
  raise_recorded_oob(map_name, wenv, renv);
}

/// Runs a map's statements over [lo, hi): fused over cache-sized blocks where that keeps the
/// map's meaning and pays (fusion.hpp), otherwise one after another over the whole box.
template <int N, class Map, class Separate>
void run_map_statements(const std::string& map_name, const Map& m, const buffer_env& wenv,
                        const buffer_env& renv, const index_t* lo, const index_t* hi,
                        Separate&& separate) {
  if constexpr (Map::statement_count >= 2) {
    const fusion_plan p = map_fusion_plan<N>(m, lo, hi, separate);
    if (p.fused) {
      run_fused<N>(map_name, m, wenv, renv, p, lo, hi);
      return;
    }
  }
  m.for_each_statement([&](const auto& st) {
    run_statement<N>(map_name, st, wenv, renv, lo, hi, separate(st.lhs.arr));
  });
}

/// The CPU backend's executor (backend.hpp): the rank's blocks are its buffers, nothing to
/// copy before or after.
template <>
class executor<cpu_backend> {
 public:
  void add_read(const void* id, const raw_view& v, std::size_t) { renv_.add(id, v); }
  void add_write(const void* id, const raw_view& v, std::size_t) { wenv_.add(id, v); }
  void begin() {}
  void end() {}
  template <int N, class Stmt>
  void run(const std::string& map_name, const Stmt& st, const index_t* lo, const index_t* hi,
           bool reads_are_separate) {
    run_statement<N>(map_name, st, wenv_, renv_, lo, hi, reads_are_separate);
  }
  template <int N, class Map, class Separate>
  void run_map(const std::string& map_name, const Map& m, const index_t* lo, const index_t* hi,
               Separate&& separate) {
    run_map_statements<N>(map_name, m, wenv_, renv_, lo, hi, separate);
  }

 private:
  buffer_env renv_, wenv_;
};

/// Runs every statement of `m`, in order (fused where that pays), over the box [lo, hi).
template <int N, class... S>
void run_map_box(const map_t<N, S...>& m, const buffer_env& env, const index_t* lo,
                 const index_t* hi) {
  run_map_statements<N>(m.name(), m, env, env, lo, hi, [](const void*) { return false; });
}

/// The loop executor's plan for a statement in words (local_strategy()).
inline std::string loop_strategy_text(const loop_shape& ls, bool snapshot) {
  std::string s = "loop";
  if (ls.row_dim >= 0) s += ": rows along i" + std::to_string(ls.row_dim);
  if (ls.thread_dim >= 0) s += ", threads over i" + std::to_string(ls.thread_dim);
  if (ls.split_rows)
    s += (ls.thread_dim >= 0 ? " or" : ",") + std::string(" rows split over threads");
  if (ls.thread_dim < 0 && !ls.split_rows) s += ", one thread";
  s += " (large spaces only)";
  if (snapshot) s += ", reads a snapshot of its output";
  return s;
}

/// The words of vector_text. (Out of line: GCC 12 warns falsely about std::string appends
/// whose lengths it sees as constants.)
[[gnu::noinline]] inline std::string rows_text(const char* scalar_why, int lanes,
                                               const char* type_name, bool accumulators,
                                               const char* prefix = "") {
  std::string s = prefix;
  if (scalar_why) {
    s += "scalar rows";
    if (*scalar_why) {
      s += ": ";
      s += scalar_why;
    }
    return s;
  }
  s += "vector rows: ";
  s += std::to_string(lanes);
  s += " x ";
  s += type_name;
  if (accumulators) s += ", vector accumulators";
  return s;
}

/// Whether the loop executor's rows of a statement run as vectors (simd_row.hpp), in words:
/// "vector rows: 8 x float" (", vector accumulators" for a row reduction), or "scalar rows:
/// " and the reason.
template <int N, class Stmt>
std::string vector_text() {
  if constexpr (N == 0) {
    return rows_text("", 1, "", false);
  } else {
    using Lhs = typename Stmt::lhs_type;
    using T = typename Lhs::array_type::value_type;
    using plan = loop_row_plan_of<N, Stmt>;
    using BR = typename plan::rhs_type;
    using Row = typename plan::Row;
    using V = std::remove_cvref_t<decltype(std::declval<const Row&>()(0))>;
    constexpr step_kind ls = plan::lhs_step;
    if constexpr (plan::range_outside) {
      // the range runs outside the row (inner_rows.hpp), its body's rows as vectors
      using RV = typename BR::value_type;
      return rows_text(nullptr, simd::width<RV>, std::is_same_v<RV, float> ? "float" : "double",
                       false, "inner range outside the row (a row buffer per value of it), ");
    }
    const char* why = nullptr;  // why the row is scalar, if it is
    if (plan::vector_reduce || plan::vector_store)
      why = nullptr;
    else if (plan::scatter)
      why = "a scatter (the element is found point by point)";
    else if (!simd::enabled<T>)
      why = "integer elements";
    else if (ls != step_kind::unit && ls != step_kind::zero)
      why = "the left side is strided along the row";
    else if (ls == step_kind::zero && Stmt::kind == combine::assign)
      why = "";
    else if (!std::is_same_v<V, T>)
      why =
          "the row computes in another type than it stores (a double constant on float "
          "data computes in double: write 0.1f)";
    else
      why = simd::vector_form<T, Row>::why;
    return rows_text(why, simd::width<T>, std::is_same_v<T, float> ? "float" : "double",
                     ls == step_kind::zero);
  }
}

/// How one statement runs locally, e.g. "gemm: C[i0 x i1] += A[i0 x i2] * B[i2 x i1], no batch".
template <int N, class Stmt>
std::string local_strategy(const Stmt& st) {
  const bool snapshot = reads_own_output(st);
  if constexpr (is_contraction_v<N, Stmt>) {
    if (!snapshot) return contraction_text<N, Stmt>();
  }
  std::string s;
  if constexpr (is_affine_contraction_v<N, Stmt>) {
    if (!snapshot) {
      constexpr auto cd = affine_contraction_traits<N, Stmt>::dims();
      if (!cd.pack_a && !cd.pack_b && !cd.pack_c)
        return affine_contraction_text<N, Stmt>();  // always a GEMM
      s = affine_contraction_text<N, Stmt>();       // then the loop that small matrices take
    }
  }
  s += loop_strategy_text(loop_shape_of<N, Stmt>(), snapshot);
  s += "; ";
  s += vector_text<N, Stmt>();
  return s;
}

}  // namespace workpart::detail
