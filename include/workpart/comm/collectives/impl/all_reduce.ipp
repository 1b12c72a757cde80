#pragma once
/// \file all_reduce.ipp
/// The bodies of all_reduce.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include <memory>
#include <vector>

#include "../all_reduce.hpp"

namespace workpart::detail {

WORKPART_DECL moved all_reduce_in_parts(const boost::mpi::communicator& group, char elem,
                                        combine kind, void* buf, index_t n, void* scratch) {
  const int G = group.size(), me = group.rank();
  to_int(n, "an Allreduce's box");
  const MPI_Datatype t = mpi_elem_type(elem);
  // the group communicator is the plan's own: no other traffic; a tag per step for clarity
  constexpr int scatter_tag = 7303, gather_tag = 7304;
  const block_range mine = all_reduce_part(n, G, me);
  const int own = int(mine.size());
  moved m;
  with_elem(elem, [&](auto zero) {
    using T = decltype(zero);
    T* acc = static_cast<T*>(buf);
    std::unique_ptr<T[]> own_in;  // only without reserved scratch
    if (!scratch) {
      own_in = std::make_unique_for_overwrite<T[]>(std::size_t(own) * std::size_t(G - 1));
      scratch = own_in.get();
    }
    T* const in = static_cast<T*>(scratch);
    std::vector<MPI_Request> recv, send;
    recv.reserve(std::size_t(G));
    send.reserve(std::size_t(G));
    auto wait_all = [](std::vector<MPI_Request>& v) {
      if (!v.empty())
        WORKPART_MPI_CHECK(MPI_Waitall, (int(v.size()), v.data(), MPI_STATUSES_IGNORE));
      v.clear();
    };
    // reduce-scatter: every other member's partial of my run arrives; each gets mine of its
    for (int src = 0, slot = 0; src < G && own > 0; ++src) {
      if (src == me) continue;
      recv.push_back(MPI_REQUEST_NULL);
      WORKPART_MPI_CHECK(MPI_Irecv, (in + std::size_t(slot++) * std::size_t(own), own, t, src,
                                     scatter_tag, group, &recv.back()));
      m.received += type_bytes(t, own);
    }
    for (int dst = 0; dst < G; ++dst) {
      const block_range p = all_reduce_part(n, G, dst);
      if (dst == me || p.size() == 0) continue;
      send.push_back(MPI_REQUEST_NULL);
      WORKPART_MPI_CHECK(MPI_Isend,
                         (acc + p.start, int(p.size()), t, dst, scatter_tag, group, &send.back()));
      m.sent += type_bytes(t, int(p.size()));
    }
    wait_all(recv);  // combined in group-rank order, whatever order they came in
    for (int src = 0, slot = 0; src < G && own > 0; ++src)
      if (src != me)
        combine_into(acc + mine.start, in + std::size_t(slot++) * std::size_t(own), own, kind);
    wait_all(send);  // my runs of others' parts are sent before their combined values land
    // allgather: my combined run to every other member, theirs into place
    for (int src = 0; src < G; ++src) {
      const block_range p = all_reduce_part(n, G, src);
      if (src == me || p.size() == 0) continue;
      recv.push_back(MPI_REQUEST_NULL);
      WORKPART_MPI_CHECK(MPI_Irecv,
                         (acc + p.start, int(p.size()), t, src, gather_tag, group, &recv.back()));
      m.received += type_bytes(t, int(p.size()));
    }
    for (int dst = 0; dst < G && own > 0; ++dst) {
      if (dst == me) continue;
      send.push_back(MPI_REQUEST_NULL);
      WORKPART_MPI_CHECK(MPI_Isend,
                         (acc + mine.start, own, t, dst, gather_tag, group, &send.back()));
      m.sent += type_bytes(t, own);
    }
    wait_all(recv);
    wait_all(send);
  });
  return m;
}
}  // namespace workpart::detail
