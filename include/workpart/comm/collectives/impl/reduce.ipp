#pragma once
/// \file reduce.ipp
/// The bodies of reduce.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../reduce.hpp"

namespace workpart::detail {

WORKPART_DECL moved reduce_onto_leader(const boost::mpi::communicator& group, char elem,
                                       combine kind, void* buf, index_t n, void* scratch) {
  const int count = to_int(n, "a reduced box");
  const MPI_Datatype t = mpi_elem_type(elem);
  constexpr int tag = 7301;  // the group communicator is the plan's own: no other traffic
  moved m;
  with_elem(elem, [&](auto zero) {
    using T = decltype(zero);
    const index_t piece = reduce_piece(sizeof(T));
    T* acc = static_cast<T*>(buf);
    if (group.rank() != 0) {
      for (index_t off = 0; off < n; off += piece)
        WORKPART_MPI_CHECK(MPI_Send, (acc + off, int(std::min(piece, n - off)), t, 0, tag, group));
      m.sent = type_bytes(t, count);
      return;
    }
    const index_t first = std::min(piece, n);
    std::unique_ptr<T[]> own;  // only without reserved scratch
    if (!scratch) {
      own = std::make_unique_for_overwrite<T[]>(2 * std::size_t(first));
      scratch = own.get();
    }
    T* in[2] = {static_cast<T*>(scratch), static_cast<T*>(scratch) + first};
    for (int src = 1; src < group.size(); ++src) {
      MPI_Request req;
      WORKPART_MPI_CHECK(MPI_Irecv, (in[0], int(first), t, src, tag, group, &req));
      int cur = 0;
      for (index_t off = 0; off < n; off += piece) {
        WORKPART_MPI_CHECK(MPI_Wait, (&req, MPI_STATUS_IGNORE));
        if (off + piece < n)  // the next piece arrives while this one is combined
          WORKPART_MPI_CHECK(MPI_Irecv, (in[1 - cur], int(std::min(piece, n - off - piece)), t, src,
                                         tag, group, &req));
        combine_into(acc + off, in[cur], std::min(piece, n - off), kind);
        cur = 1 - cur;
      }
    }
    m.received = type_bytes(t, count) * (group.size() - 1);
  });
  return m;
}
}  // namespace workpart::detail
