#pragma once
/// \file eigen_view.hpp
/// Eigen views of host buffers: `wp::array::matrix()` (declared in fwd.hpp, so that core/
/// needs no Eigen) and the CPU GEMM's operands.

#include <Eigen/Core>

#include "../../fwd.hpp"

namespace workpart::detail {

template <class T>
auto row_major_matrix(T* data, index_t rows, index_t cols) {
  using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return Eigen::Map<M>(data, rows, cols);
}

}  // namespace workpart::detail
