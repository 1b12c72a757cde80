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

WORKPART_DECL moved combine_overlapping_boxes(const boost::mpi::communicator& comm,
                                              const array_layout& u, combine kind, void* buf,
                                              const std::vector<box>& boxes,
                                              const std::vector<box>& parts, void* scratch) {
  const int P = comm.size(), me = comm.rank();
  const box& mine = boxes[std::size_t(me)];
  const MPI_Datatype t = mpi_elem_type(u.elem);
  constexpr int tag = 7303;  // every message of it completes before it returns
  moved m;
  with_elem(u.elem, [&](auto zero) {
    using T = decltype(zero);
    T* acc = static_cast<T*>(buf);
    std::unique_ptr<T[]> own_in;  // only without reserved scratch
    if (!scratch) {
      own_in = std::make_unique_for_overwrite<T[]>(
          std::size_t(overlapping_receive_elements(boxes, parts, me)));
      scratch = own_in.get();
    }
    T* const in = static_cast<T*>(scratch);
    // what arrives: each other rank's partials of my part, one after the other
    std::vector<MPI_Request> recv(std::size_t(P), MPI_REQUEST_NULL), send;
    std::vector<T*> at(std::size_t(P), nullptr);
    std::vector<datatype> types;
    types.reserve(std::size_t(P));
    T* next = in;
    for (int src = 0; src < P; ++src) {
      const index_t k = src == me ? 0 : meet_size(boxes[std::size_t(src)], parts[std::size_t(me)]);
      if (k == 0) continue;
      const int n = to_int(k, "a part of array '" + u.name + "' combined from overlapping boxes");
      at[std::size_t(src)] = next;
      WORKPART_MPI_CHECK(MPI_Irecv, (next, n, t, src, tag, comm, &recv[std::size_t(src)]));
      next += k;
      m.received += type_bytes(t, n);
    }
    for (int dst = 0; dst < P; ++dst) {
      if (dst == me) continue;
      const box c = box::intersect(mine, parts[std::size_t(dst)]);
      if (c.empty()) continue;
      types.push_back(box_in_box_type(u, mine, c));
      send.push_back(MPI_REQUEST_NULL);
      WORKPART_MPI_CHECK(MPI_Isend, (buf, 1, types.back().get(), dst, tag, comm, &send.back()));
      m.sent += type_bytes(types.back().get(), 1);
    }
    for (int src = 0; src < P; ++src) {
      if (!at[std::size_t(src)]) continue;
      WORKPART_MPI_CHECK(MPI_Wait, (&recv[std::size_t(src)], MPI_STATUS_IGNORE));
      const box c = box::intersect(boxes[std::size_t(src)], parts[std::size_t(me)]);
      const T* part = at[std::size_t(src)];
      for_each_row(mine, c, u.rank, [&](index_t off, index_t done, index_t row) {
        combine_into(acc + off, part + done, row, kind);
      });
    }
    if (!send.empty())
      WORKPART_MPI_CHECK(MPI_Waitall, (int(send.size()), send.data(), MPI_STATUSES_IGNORE));
  });
  return m;
}
}  // namespace workpart::detail
