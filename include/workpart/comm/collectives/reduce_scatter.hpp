#pragma once
/// \file reduce_scatter.hpp
/// Reduce-scatter of partial results within a group: every member holds a partial of the same
/// box; afterwards member i holds the combined values of its own part `owned[i]` (a box inside
/// it), in place in its buffer, and the rest of its buffer is left as it was.
///
/// Not MPI_Reduce_scatter: with Open MPI 4.1 on a 2-vCPU node, MPI_Reduce_scatter_block of
/// 128 MiB of doubles takes 0.53 s at np 2 and 1.0 s at np 4, where sending each rank its part
/// point to point and summing there takes 0.26 s and 0.75 s (/tmp probe, same run). So each
/// member sends every other member the part that member owns, straight from its buffer (a
/// subarray datatype, no packing), and combines what it receives in group-rank order (the
/// result does not depend on arrival order).

#include <mpi.h>

#include <boost/mpi/communicator.hpp>
#include <memory>
#include <vector>

#include "datatypes.hpp"
#include "reduce.hpp"
#include "../../config.hpp"

namespace workpart::detail {

/// For each row of box b inside a row-major buffer holding box `held`: f(offset of the row's
/// first element in the buffer, its offset within b's elements, the row's length).
template <class F>
void for_each_row(const box& held, const box& b, int R, F&& f) {
  if (b.empty()) return;
  if (R == 0) {
    f(index_t(0), index_t(0), index_t(1));
    return;
  }
  index_t st[max_rank];
  index_t s = 1;
  for (int a = R - 1; a >= 0; --a) {
    st[a] = s;
    s *= held.hi[a] - held.lo[a];
  }
  const index_t row = b.hi[R - 1] - b.lo[R - 1];
  index_t c[max_rank];
  for (int a = 0; a < R; ++a) c[a] = b.lo[a];
  for (index_t done = 0;; done += row) {
    index_t off = 0;
    for (int a = 0; a < R; ++a) off += (c[a] - held.lo[a]) * st[a];
    f(off, done, row);
    int a = R - 2;
    for (; a >= 0; --a) {
      if (++c[a] < b.hi[a]) break;
      c[a] = b.lo[a];
    }
    if (a < 0) return;
  }
}

/// Bytes of receive buffer member `me` of a group of G uses: the others' partials of its part.
inline std::size_t reduce_scatter_scratch_bytes(std::size_t elem_size, const box& own, int G) {
  return std::size_t(own.size()) * std::size_t(G > 1 ? G - 1 : 0) * elem_size;
}

/// Combines the group's partials of box `held` so that member i holds owned[i] (by group rank).
/// `scratch`: at least reduce_scatter_scratch_bytes, reserved before the phase's first
/// collective (so that no rank runs out of memory inside this one); null: allocated here.
WORKPART_DECL moved reduce_scatter_boxes(const boost::mpi::communicator& group,
                                         const array_layout& u, combine kind, void* buf,
                                         const box& held, const std::vector<box>& owned,
                                         void* scratch = nullptr);

/// Elements rank `me` receives in combine_overlapping_boxes: the others' boxes' meets with
/// its part.
inline index_t overlapping_receive_elements(const std::vector<box>& boxes,
                                            const std::vector<box>& parts, int me) {
  index_t n = 0;
  for (std::size_t r = 0; r < boxes.size(); ++r)
    if (int(r) != me) n += meet_size(boxes[r], parts[std::size_t(me)]);
  return n;
}

/// Combines partial results whose boxes overlap between the ranks of `comm` (a sliding
/// window's input gradient): rank r holds partials of boxes[r] in its buffer; afterwards each
/// rank holds the combined values of its part parts[rank] (a box inside its own; the parts are
/// disjoint), in place, and the rest of its buffer is left as it was. Each rank sends every
/// other what its box holds of that one's part, straight from its buffer (a subarray
/// datatype), and combines what it receives in rank order. `scratch`: at least
/// overlapping_receive_elements elements, reserved before the phase's first collective; null:
/// allocated here.
WORKPART_DECL moved combine_overlapping_boxes(const boost::mpi::communicator& comm,
                                              const array_layout& u, combine kind, void* buf,
                                              const std::vector<box>& boxes,
                                              const std::vector<box>& parts,
                                              void* scratch = nullptr);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/reduce_scatter.ipp"
#endif
