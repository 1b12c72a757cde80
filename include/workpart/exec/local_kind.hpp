#pragma once
/// \file local_kind.hpp
/// Which kind of local work a map's block is, as the CPU executor runs it (exec/local.hpp,
/// what explain_local() names): GEMMs (a statement recognised as a contraction) or loops.
/// Type traits only (no executor), so the cost model (optimize/priced_map.hpp) prices a map at
/// the machine model's rate for the kernel that will run it.

#include "../expr/map.hpp"
#include "contraction.hpp"
#include "contraction_affine.hpp"
#include "own_output.hpp"

namespace workpart::detail {

/// Whether some statement of the map runs as a GEMM: a contraction, or an affine one (its
/// packed operands copied out first), that does not read its own output (which runs as a loop
/// on a snapshot). Its GEMMs then dominate the map's operations.
template <int N, class... S>
bool runs_as_gemm(const map_t<N, S...>& m) {
  bool gemm = false;
  m.for_each_statement([&](const auto& st) {
    using Stmt = std::decay_t<decltype(st)>;
    if constexpr (is_contraction_v<N, Stmt> || is_affine_contraction_v<N, Stmt>)
      gemm = gemm || !reads_own_output(st);
  });
  return gemm;
}

}  // namespace workpart::detail
