#pragma once
/// \file local_work.hpp
/// What a map's block does per point, as the cost model prices it
/// (machine_model::block_work): found from the map's type (exec/local_kind.hpp), carried by
/// the program's map entries (program/map_interface.hpp) and descriptions.

namespace workpart::detail {

struct local_work {
  double ops = 1;      ///< arithmetic operations per point (ops_per_point)
  double slow = 0;     ///< of those, calls of slow functions (slow_ops_per_point)
  bool gemm = false;   ///< its statements run as GEMMs (runs_as_gemm)
  int row_dim = -1;    ///< the dimension the loop executor's rows run along; -1: no loop
  int elem_bytes = 8;  ///< bytes per element its first statement writes (4: float's rates)
};

}  // namespace workpart::detail
