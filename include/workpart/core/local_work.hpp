#pragma once
/// \file local_work.hpp
/// What a map's block does per point, as the cost model prices it
/// (machine_model::block_work): found from the map's type (exec/local_kind.hpp), carried by
/// the program's map entries (program/map_interface.hpp) and descriptions.

#include <cstdint>

namespace workpart::detail {

/// A copy a map's GEMMs make besides their operations: an affine contraction's operand packed
/// as its GEMM matrix (im2col) or its left side's buffer added in after (col2im). A block
/// copies `times` elements per point of its extents along `dims` (a bit per dimension of the
/// space; `times`: the extents of the sum ranges among the copy's dimensions). A split of a
/// dimension outside `dims` (a convolution's output channels, for its packed input) does not
/// shrink it.
struct packed_copy {
  std::uint32_t dims = 0;
  double times = 1;
};

struct local_work {
  double ops = 1;           ///< arithmetic operations per point (ops_per_point)
  double slow = 0;          ///< of those, calls of slow functions (slow_ops_per_point)
  bool gemm = false;        ///< its statements run as GEMMs (runs_as_gemm)
  int row_dim = -1;         ///< the dimension the loop executor's rows run along; -1: no loop
  int elem_bytes = 8;       ///< bytes per element its first statement writes (4: float's rates)
  bool vector_rows = true;  ///< its loop's rows run as vectors (else: the scalar rate)
  int npacked = 0;          ///< copies its GEMMs make (packed operands, a left side's buffer)
  packed_copy packed[3] = {};
};

}  // namespace workpart::detail
