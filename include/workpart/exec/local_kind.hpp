#pragma once
/// \file local_kind.hpp
/// Which kind of local work a map's block is, as the CPU executor runs it (exec/local.hpp,
/// what explain_local() names): GEMMs (a statement recognised as a contraction) or loops.
/// Type traits only (no executor), so the cost model (optimize/priced_map.hpp) prices a map at
/// the machine model's rate for the kernel that will run it.

#include <algorithm>
#include <type_traits>
#include <vector>

#include "../core/local_work.hpp"
#include "../expr/map.hpp"
#include "../expr/operation_count.hpp"
#include "contraction.hpp"
#include "contraction_affine.hpp"
#include "cpu/row_dim.hpp"
#include "cpu/row_vector.hpp"
#include "own_output.hpp"

namespace workpart::detail {

/// Whether a statement of a space of rank N runs as a GEMM: a contraction, or an affine one
/// (its packed operands copied out first), that does not read its own output (which runs as a
/// loop on a snapshot).
template <int N, class Stmt>
bool statement_runs_as_gemm(const Stmt& st) {
  if constexpr (is_contraction_v<N, Stmt> || is_affine_contraction_v<N, Stmt>)
    return !reads_own_output(st);
  else
    return false;
}

/// Whether some statement of the map runs as a GEMM. Its GEMMs then dominate the map's
/// operations.
template <int N, class... S>
bool runs_as_gemm(const map_t<N, S...>& m) {
  bool gemm = false;
  m.for_each_statement([&](const auto& st) { gemm = gemm || statement_runs_as_gemm<N>(st); });
  return gemm;
}

/// The dimension the loop executor runs the rows of the map's first statement that runs as a
/// loop along (cpu/row_dim.hpp); -1 where every statement runs as GEMMs. The cost model prices
/// a loop block's rows by it (machine_model::row_seconds).
template <int N, class... S>
int loop_row_dim(const map_t<N, S...>& m) {
  int dim = -1;
  m.for_each_statement([&](const auto& st) {
    if (dim < 0 && !statement_runs_as_gemm<N>(st))
      dim = choose_row_dim<N, std::decay_t<decltype(st)>>();
  });
  return dim;
}

/// Bytes per element of what the map's first statement writes: the cost model prices a map of
/// 4-byte elements at float's rates (machine_model::float_flops, float_gemm).
template <int N, class... S>
int written_elem_bytes(const map_t<N, S...>& m) {
  int bytes = 0;
  m.for_each_statement([&](const auto& st) {
    if (bytes == 0) bytes = int(sizeof(typename std::decay_t<decltype(st)>::value_type));
  });
  return bytes > 0 ? bytes : 8;
}

/// The copies a statement that runs as GEMMs makes (cpu/gemm_packed.hpp): A packed over its
/// batch, m and k dims, B over batch, k and n, C's buffer over batch, m and n; none for a plain
/// contraction (its operands used in place) or a loop.
template <int N, class Stmt>
void add_packed_copies(const Stmt& st, local_work& w) {
  if constexpr (is_affine_contraction_v<N, Stmt>) {
    if (!statement_runs_as_gemm<N>(st)) return;
    using tr = affine_contraction_traits<N, Stmt>;
    constexpr auto cd = tr::dims();
    index_t lo[tr::rank > 0 ? tr::rank : 1] = {}, hi[tr::rank > 0 ? tr::rank : 1] = {};
    tr::nest::bounds(st.rhs, lo, hi);
    auto copy = [&](const int* a, int na, const int* b, int nb) {
      packed_copy c;
      auto add = [&](const int* dims, int n) {
        for (int x = 0; x < n; ++x) {
          const int d = dims[x];
          if (d < N)
            c.dims |= std::uint32_t(1) << d;
          else if (d < tr::rank)  // a sum range's dim: its whole extent in every block
            c.times *= double(std::max<index_t>(0, hi[d] - lo[d]));
        }
      };
      add(cd.batch, cd.nbatch);
      add(a, na);
      add(b, nb);
      if (w.npacked < 3) w.packed[w.npacked++] = c;
    };
    if (cd.pack_a) copy(cd.m, cd.nm, cd.k, cd.nk);
    if (cd.pack_b) copy(cd.k, cd.nk, cd.n, cd.nn);
    if (cd.pack_c) copy(cd.m, cd.nm, cd.n, cd.nn);
  }
}

/// Whether the rows of the map's first statement that runs as a loop run as vectors (true where
/// none runs as a loop).
template <int N, class... S>
bool loop_rows_vector(const map_t<N, S...>& m) {
  bool found = false, vector = true;
  m.for_each_statement([&](const auto& st) {
    if (!found && !statement_runs_as_gemm<N>(st)) {
      found = true;
      vector = loop_rows_are_vectors<N, std::decay_t<decltype(st)>>();
    }
  });
  return vector;
}

template <int N, class... S>
local_work local_work_of(const map_t<N, S...>& m) {
  local_work w{ops_per_point(m), slow_ops_per_point(m), runs_as_gemm(m), loop_row_dim(m),
               written_elem_bytes(m)};
  w.vector_rows = loop_rows_vector(m);
  m.for_each_statement([&](const auto& st) { add_packed_copies<N>(st, w); });
  return w;
}

/// Elements the largest block of a space of `extents` on `grid` copies for `c` (each
/// dimension of c.dims at ceil(extent / parts), times c.times).
template <class Grid>
double block_packed(const packed_copy& c, const std::vector<index_t>& extents, const Grid& grid) {
  double e = c.times;
  for (std::size_t d = 0; d < extents.size() && d < 32; ++d)
    if (c.dims & (std::uint32_t(1) << d)) {
      const index_t parts = std::max<index_t>(1, grid.dims[d]);
      e *= double((extents[d] + parts - 1) / parts);
    }
  return e;
}
/// All of a map's copies in its largest block.
template <class Grid>
double block_packed(const local_work& w, const std::vector<index_t>& extents, const Grid& grid) {
  double e = 0;
  for (int k = 0; k < w.npacked; ++k) e += block_packed(w.packed[k], extents, grid);
  return e;
}
template <class Grid>
double block_packed(const std::vector<packed_copy>& copies, const std::vector<index_t>& extents,
                    const Grid& grid) {
  double e = 0;
  for (const auto& c : copies) e += block_packed(c, extents, grid);
  return e;
}

/// Rows the loop executor runs in the largest block of `points` points of a space of
/// `extents` on `grid` (its extent along the row dimension, ceil(extent / parts)); 0 where the
/// map runs no loop (row_dim < 0).
template <class Grid>
double block_rows(double points, const std::vector<index_t>& extents, const Grid& grid,
                  int row_dim) {
  if (row_dim < 0 || std::size_t(row_dim) >= extents.size() || points <= 0) return 0;
  const index_t parts = std::max<index_t>(1, grid.dims[std::size_t(row_dim)]);
  const index_t along = (extents[std::size_t(row_dim)] + parts - 1) / parts;
  return along > 0 ? points / double(along) : 0;
}

}  // namespace workpart::detail
