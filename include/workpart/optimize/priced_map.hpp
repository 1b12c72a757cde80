#pragma once
/// \file priced_map.hpp
/// A map as the optimizer prices it (`detail::priced_map`): its name, space, operations per
/// point and constraints on any grid. Typed maps, a run-time program's entries and program
/// descriptions (program_description.hpp) all become one, so the optimizer has one code path
/// and its bodies need no map's type (they are compiled once in workpart::compiled).

#include <functional>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../exec/local_kind.hpp"
#include "../expr/map.hpp"
#include "../expr/operation_count.hpp"
#include "../program/program.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"

namespace workpart::detail {

/// A map as the pricer sees it: its name, the extents of its space, its operations per point
/// and its constraints on any grid. Typed maps (map_t) and run-time descriptions
/// (optimize/program_description.hpp) both become this, so both are priced by one code path.
struct priced_map {
  std::string name;
  std::vector<index_t> extents;
  double ops = 1;
  /// Its statements run as GEMMs (exec/local_kind.hpp): priced at the model's GEMM rate.
  bool gemm = false;
  /// Of `ops`, calls of slow functions per point (priced at the model's slow_flops).
  double slow_ops = 0;
  /// The dimension the loop executor's rows run along (-1: none; exec/local_kind.hpp).
  int row_dim = -1;
  /// Bytes per element of what it writes (4: priced at the model's float rates).
  int elem_bytes = 8;
  /// The copies its GEMMs make (an affine contraction's packed operands, core/local_work.hpp):
  /// their bytes priced at the model's packing rate.
  std::vector<packed_copy> packed{};
  /// Its loop's rows run as vectors (else priced at the model's scalar_flops).
  bool vector_rows = true;
  std::function<map_constraints(const grid_shape&, int)> constraints;
  /// Maps with the same non-empty key are alike but for names: the same constraints on every
  /// grid, their accesses to arrays of the same shapes and types. A combine of partial results
  /// between two such pairs of maps is priced once (a network's repeated blocks: a
  /// Transformer's six encoder blocks price their combines as one). Empty: alike to no other.
  /// Alike maps may read and write their arrays at other positions along axes that every
  /// access of the map subscripts with a constant (an LSTM's steps, each at its own slice of
  /// the sequence): `positions` [array, in the order of the constraints][axis] is where (0
  /// elsewhere), and two alike maps' boxes differ by the difference of their positions.
  std::string shape_key{};
  std::vector<std::vector<index_t>> positions{};
};
/// What a map does per point (local_work), as the pricer reads it.
inline void set_work(priced_map& p, const local_work& w) {
  p.ops = w.ops;
  p.gemm = w.gemm;
  p.slow_ops = w.slow;
  p.row_dim = w.row_dim;
  p.elem_bytes = w.elem_bytes;
  p.packed.assign(w.packed, w.packed + w.npacked);
  p.vector_rows = w.vector_rows;
}
template <int N, class... S>
priced_map priced_view(const map_t<N, S...>& m) {
  priced_map p;
  p.name = m.name();
  for (int d = 0; d < N; ++d) p.extents.push_back(m.iteration_space().extent(d));
  set_work(p, local_work_of(m));
  p.constraints = [&m](const grid_shape& g, int nranks) {
    return extract_constraints(m, g, nranks);
  };
  return p;
}
/// A program's maps as the pricer sees them (each through its program entry).
WORKPART_DECL std::vector<priced_map> priced_views(const program& p);

}  // namespace workpart::detail
