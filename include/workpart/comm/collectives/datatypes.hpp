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
#include "../../config.hpp"

namespace workpart::detail {

WORKPART_DECL MPI_Datatype mpi_elem_type(char e);

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
WORKPART_DECL datatype box_type(const array_layout& u, const index_t* shape, const box& b);

/// Box `inner` inside a row-major buffer that holds box `outer`.
WORKPART_DECL datatype box_in_box_type(const array_layout& u, const box& outer, const box& inner);

/// Bytes that `count` items of datatype t carry, as MPI sees the type.
WORKPART_DECL index_t type_bytes(MPI_Datatype t, index_t count);

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
WORKPART_DECL MPI_Op nan_propagating_op(bool max);

/// The MPI op of a write's conflict resolution for element type code `elem`.
WORKPART_DECL MPI_Op mpi_op(combine k, char elem);

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

#if WORKPART_HEADER_ONLY
#include "impl/datatypes.ipp"
#endif
