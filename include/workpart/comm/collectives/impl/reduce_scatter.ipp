#pragma once
/// \file reduce_scatter.ipp
/// The bodies of reduce_scatter.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../reduce_scatter.hpp"

namespace workpart::detail {

WORKPART_DECL moved reduce_scatter_boxes(const boost::mpi::communicator& group,
                                         const array_layout& u, combine kind, void* buf,
                                         const box& held, const std::vector<box>& owned,
                                         void* scratch) {
  const int G = group.size(), me = group.rank();
  const box& own = owned[std::size_t(me)];
  const int n = to_int(own.size(), "a reduce-scattered part of array '" + u.name + "'");
  const MPI_Datatype t = mpi_elem_type(u.elem);
  constexpr int tag = 7302;  // the group communicator is the plan's own: no other traffic
  moved m;
  with_elem(u.elem, [&](auto zero) {
    using T = decltype(zero);
    T* acc = static_cast<T*>(buf);
    // what arrives: every other member's partial of my part, one after the other
    std::unique_ptr<T[]> own_in;  // only without reserved scratch
    if (!scratch) {
      own_in = std::make_unique_for_overwrite<T[]>(std::size_t(n) * std::size_t(G > 1 ? G - 1 : 0));
      scratch = own_in.get();
    }
    T* const in = static_cast<T*>(scratch);
    std::vector<MPI_Request> recv(std::size_t(G), MPI_REQUEST_NULL), send;
    std::vector<datatype> types;
    types.reserve(std::size_t(G));
    for (int src = 0, slot = 0; src < G; ++src) {
      if (src == me || n == 0) continue;
      WORKPART_MPI_CHECK(MPI_Irecv, (in + std::size_t(slot++) * std::size_t(n), n, t, src, tag,
                                     group, &recv[std::size_t(src)]));
      m.received += type_bytes(t, n);
    }
    for (int dst = 0; dst < G; ++dst) {
      if (dst == me || owned[std::size_t(dst)].empty()) continue;
      types.push_back(box_in_box_type(u, held, owned[std::size_t(dst)]));
      send.push_back(MPI_REQUEST_NULL);
      WORKPART_MPI_CHECK(MPI_Isend, (buf, 1, types.back().get(), dst, tag, group, &send.back()));
      m.sent += type_bytes(types.back().get(), 1);
    }
    for (int src = 0, slot = 0; src < G; ++src) {
      if (src == me || n == 0) continue;
      WORKPART_MPI_CHECK(MPI_Wait, (&recv[std::size_t(src)], MPI_STATUS_IGNORE));
      const T* part = in + std::size_t(slot++) * std::size_t(n);
      for_each_row(held, own, u.rank, [&](index_t off, index_t done, index_t row) {
        combine_into(acc + off, part + done, row, kind);
      });
    }
    if (!send.empty())
      WORKPART_MPI_CHECK(MPI_Waitall, (int(send.size()), send.data(), MPI_STATUSES_IGNORE));
  });
  return m;
}
}  // namespace workpart::detail
