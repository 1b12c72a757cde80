#pragma once
/// \file fwd.hpp
/// Forward declarations that let the layers refer to each other's names in one direction.

#include "config.hpp"

namespace workpart {
template <class T, int N>
class array;
template <int D>
struct index;
template <int N>
struct space;

namespace detail {
/// Builds the access node for `array(args...)`; defined in expr/access.hpp.
template <class Array, class... Args>
struct access_builder;

/// A row-major Eigen map of rows x cols elements at data: `array::matrix()`; defined with the
/// CPU executor (exec/cpu/eigen_view.hpp), the one folder that includes Eigen.
template <class T>
auto row_major_matrix(T* data, index_t rows, index_t cols);

/// The calling process's rank in the current context (0 when there is no context, as
/// for a program started without mpirun). Set by comm/context.hpp; core knows nothing of MPI.
inline int (*current_rank_hook)() = nullptr;
inline int current_rank() { return current_rank_hook ? current_rank_hook() : 0; }
/// The number of ranks in the current context (1 without one).
inline int (*current_size_hook)() = nullptr;
inline int current_size() { return current_size_hook ? current_size_hook() : 1; }
}  // namespace detail
}  // namespace workpart
