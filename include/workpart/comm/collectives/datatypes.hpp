#pragma once
/// \file datatypes.hpp
/// MPI datatypes for boxes of row-major arrays (subarray types: no packing copies).

#include <mpi.h>

#include <climits>
#include <string>
#include <utility>

#include "../../error.hpp"
#include "../../expr/access.hpp"
#include "../../expr/ops.hpp"
#include "../../schedule/box.hpp"
#include "../mpi_check.hpp"

namespace workpart::detail {

inline MPI_Datatype mpi_elem_type(char e) {
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

/// An owned, committed MPI datatype.
class datatype {
 public:
  datatype() = default;
  explicit datatype(MPI_Datatype t) : t_(t) {}
  datatype(datatype&& o) noexcept : t_(std::exchange(o.t_, MPI_DATATYPE_NULL)) {}
  datatype& operator=(datatype&& o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  ~datatype() {
    if (t_ == MPI_DATATYPE_NULL) return;
    int finalized = 0;  // a plan that keeps types may outlive MPI; then they are gone already
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(&t_);
  }
  MPI_Datatype get() const { return t_; }

 private:
  MPI_Datatype t_ = MPI_DATATYPE_NULL;
};

/// Box b inside an array of shape `shape` (row-major).
inline datatype box_type(const array_layout& u, const index_t* shape, const box& b) {
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

/// Box `inner` inside a row-major buffer that holds box `outer`.
inline datatype box_in_box_type(const array_layout& u, const box& outer, const box& inner) {
  box rel = inner;
  index_t shape[max_rank];
  for (int a = 0; a < u.rank; ++a) {
    shape[a] = outer.hi[a] - outer.lo[a];
    rel.lo[a] = inner.lo[a] - outer.lo[a];
    rel.hi[a] = inner.hi[a] - outer.lo[a];
  }
  return box_type(u, shape, rel);
}

/// Bytes that `count` items of datatype t carry, as MPI sees the type.
inline index_t type_bytes(MPI_Datatype t, index_t count) {
  MPI_Count size = 0;
  WORKPART_MPI_CHECK(MPI_Type_size_x, (t, &size));
  return index_t(size) * count;
}

/// What one collective moved for the calling rank (copies to itself excluded), counted from
/// the datatypes and counts handed to MPI.
struct moved {
  index_t sent = 0, received = 0;
};

/// max / min that propagate NaN as the local executors do (op_max, op_min); MPI_MAX and
/// MPI_MIN leave NaN to the implementation, which then depends on the order of operands.
template <bool Max>
void nan_propagating(void* in, void* inout, int* len, MPI_Datatype* type) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(inout);
    for (int e = 0; e < *len; ++e)
      b[e] = Max ? T(op_max::apply(a[e], b[e])) : T(op_min::apply(a[e], b[e]));
  };
  if (*type == MPI_FLOAT)
    run(0.0f);
  else
    run(0.0);  // only float and double use these ops
}
inline MPI_Op nan_propagating_op(bool max) {
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

/// The MPI op of a write's conflict resolution for element type code `elem`.
inline MPI_Op mpi_op(combine k, char elem) {
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

/// Calls f(T{}) for the element type code.
template <class F>
decltype(auto) with_elem(char e, F&& f) {
  switch (e) {
    case 'f':
      return f(float{});
    case 'd':
      return f(double{});
    case 'i':
      return f(std::int32_t{});
    case 'L':
      return f(static_cast<long long>(0));
    default:
      return f(std::int64_t{});
  }
}

}  // namespace workpart::detail
