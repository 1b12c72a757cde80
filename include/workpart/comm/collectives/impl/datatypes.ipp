#pragma once
/// \file datatypes.ipp
/// The bodies of datatypes.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../datatypes.hpp"

namespace workpart::detail {

WORKPART_DECL MPI_Datatype mpi_elem_type(char e) {
  switch (e) {
    case 'f':
      return MPI_FLOAT;
    case 'd':
      return MPI_DOUBLE;
    case 'i':
      return MPI_INT32_T;
    case 'L':
      return MPI_LONG_LONG;
    default:
      return MPI_INT64_T;
  }
}

WORKPART_DECL datatype box_type(const array_layout& u, const index_t* shape, const box& b) {
  MPI_Datatype t;
  if (u.rank == 0) {
    WORKPART_MPI_CHECK(MPI_Type_contiguous, (1, mpi_elem_type(u.elem), &t));
  } else {
    int sizes[max_rank], subs[max_rank], starts[max_rank];
    for (int a = 0; a < u.rank; ++a) {
      sizes[a] = to_int(shape[a], "array '" + u.name + "'");
      subs[a] = to_int(b.hi[a] - b.lo[a], "array '" + u.name + "'");
      starts[a] = to_int(b.lo[a], "array '" + u.name + "'");
    }
    WORKPART_MPI_CHECK(MPI_Type_create_subarray,
                       (u.rank, sizes, subs, starts, MPI_ORDER_C, mpi_elem_type(u.elem), &t));
  }
  datatype owned(t);  // freed even if the commit fails
  WORKPART_MPI_CHECK(MPI_Type_commit, (&t));
  return owned;
}

WORKPART_DECL datatype box_in_box_type(const array_layout& u, const box& outer, const box& inner) {
  box rel = inner;
  index_t shape[max_rank];
  for (int a = 0; a < u.rank; ++a) {
    shape[a] = outer.hi[a] - outer.lo[a];
    rel.lo[a] = inner.lo[a] - outer.lo[a];
    rel.hi[a] = inner.hi[a] - outer.lo[a];
  }
  return box_type(u, shape, rel);
}

WORKPART_DECL index_t type_bytes(MPI_Datatype t, index_t count) {
  MPI_Count size = 0;
  WORKPART_MPI_CHECK(MPI_Type_size_x, (t, &size));
  return index_t(size) * count;
}

WORKPART_DECL MPI_Op nan_propagating_op(bool max) {
  static const MPI_Op ops[2] = {
      [] {
        MPI_Op op;
        check_mpi(MPI_Op_create(&nan_propagating<false>, 1, &op), "MPI_Op_create");
        return op;
      }(),
      [] {
        MPI_Op op;
        check_mpi(MPI_Op_create(&nan_propagating<true>, 1, &op), "MPI_Op_create");
        return op;
      }()};
  return ops[max ? 1 : 0];
}

WORKPART_DECL MPI_Op mpi_op(combine k, char elem) {
  const bool floating = elem == 'f' || elem == 'd';
  switch (k) {
    case combine::max:
      return floating ? nan_propagating_op(true) : MPI_MAX;
    case combine::min:
      return floating ? nan_propagating_op(false) : MPI_MIN;
    default:
      return MPI_SUM;
  }
}
}  // namespace workpart::detail
