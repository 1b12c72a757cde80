#pragma once
/// \file copy.hpp
/// A box of an array copied between two device blocks (row-major, each holding a box of the
/// array): the part of a redistribution that stays on a rank, when both ends live on its
/// device, runs as one Thrust kernel there instead of going down to the host and back.

#include <cstddef>

#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include "../../config.hpp"
#include "context.hpp"

namespace workpart::detail {

struct box_copy_kernel {
  unsigned char* to;
  const unsigned char* from;
  int rank;
  index_t es;                    ///< element size in bytes
  index_t ext[max_rank];         ///< the box's extents
  index_t to_step[max_rank];     ///< element strides of the target block
  index_t from_step[max_rank];   ///< element strides of the source block
  index_t to_first, from_first;  ///< the box's first element in each block

  WORKPART_HD void operator()(index_t e) const {
    index_t t = to_first, f = from_first;
    for (int a = rank - 1; a >= 0; --a) {
      const index_t c = e % ext[a];
      e /= ext[a];
      t += c * to_step[a];
      f += c * from_step[a];
    }
    for (index_t k = 0; k < es; ++k) to[t * es + k] = from[f * es + k];
  }
};

/// Copies the box [lo, hi) from a device block holding [from_lo, from_hi) to one holding
/// [to_lo, to_hi) (every bound of rank `rank`; the box inside both).
inline void device_copy_box(int rank, std::size_t es, void* to, const index_t* to_lo,
                            const index_t* to_hi, const void* from, const index_t* from_lo,
                            const index_t* from_hi, const index_t* lo, const index_t* hi) {
  box_copy_kernel k{static_cast<unsigned char*>(to),
                    static_cast<const unsigned char*>(from),
                    rank,
                    index_t(es),
                    {},
                    {},
                    {},
                    0,
                    0};
  index_t n = 1, ts = 1, fs = 1;
  for (int a = rank - 1; a >= 0; --a) {
    k.ext[a] = hi[a] - lo[a];
    if (k.ext[a] <= 0) return;
    n *= k.ext[a];
    k.to_step[a] = ts;
    k.from_step[a] = fs;
    k.to_first += (lo[a] - to_lo[a]) * ts;
    k.from_first += (lo[a] - from_lo[a]) * fs;
    ts *= to_hi[a] - to_lo[a];
    fs *= from_hi[a] - from_lo[a];
  }
  device_call("copying a box between device blocks", [&] {
    thrust::for_each(thrust::device, thrust::counting_iterator<index_t>(0),
                     thrust::counting_iterator<index_t>(n), k);
  });
}

}  // namespace workpart::detail
