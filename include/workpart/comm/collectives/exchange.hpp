#pragma once
/// \file exchange.hpp
/// Moves the pieces of a redistribution (plan/redistribute.hpp) between the ranks' buffers.
///
/// All remote pieces go in one MPI_Alltoallw: per peer one struct datatype whose members are
/// subarray types of the pieces at their buffers' absolute addresses (MPI_BOTTOM), so pieces
/// from several buffers (layers) need no packing on either side. A peer with nothing to send
/// or receive exchanges no message. Pieces a rank holds itself are copied row by row.

#include <mpi.h>

#include <boost/mpi/communicator.hpp>
#include <cstring>
#include <vector>

#include "../../plan/redistribute.hpp"
#include "datatypes.hpp"

namespace workpart::detail {

/// One end of a piece on this rank: the buffer and the box it holds (row-major).
struct held_buffer {
  void* data = nullptr;
  box held;
};

/// Copies box b from a buffer holding box `from` to a buffer holding box `to`.
inline void copy_box(const array_layout& u, const held_buffer& to, const held_buffer& from,
                     const box& b) {
  if (b.empty()) return;
  const std::size_t es = u.elem_size;
  if (u.rank == 0) {
    std::memcpy(to.data, from.data, es);
    return;
  }
  const int R = u.rank;
  index_t tst[max_rank], fst[max_rank];
  index_t ts = 1, fs = 1;
  for (int a = R - 1; a >= 0; --a) {
    tst[a] = ts;
    fst[a] = fs;
    ts *= to.held.hi[a] - to.held.lo[a];
    fs *= from.held.hi[a] - from.held.lo[a];
  }
  const std::size_t row = std::size_t(b.hi[R - 1] - b.lo[R - 1]) * es;
  index_t c[max_rank];
  for (int a = 0; a < R; ++a) c[a] = b.lo[a];
  for (;;) {
    index_t to_off = 0, from_off = 0;
    for (int a = 0; a < R; ++a) {
      to_off += (c[a] - to.held.lo[a]) * tst[a];
      from_off += (c[a] - from.held.lo[a]) * fst[a];
    }
    std::memmove(static_cast<char*>(to.data) + to_off * index_t(es),
                 static_cast<const char*>(from.data) + from_off * index_t(es), row);
    int a = R - 2;
    for (; a >= 0; --a) {
      if (++c[a] < b.hi[a]) break;
      c[a] = b.lo[a];
    }
    if (a < 0) return;
  }
}

/// Moves `pieces`: this rank sends those with from == rank, reading source(piece), and
/// receives those with to == rank into target(piece). `collective`: some piece moves between
/// two ranks somewhere (the same on every rank), so every rank takes part in the Alltoallw.
template <class Source, class Target>
moved exchange_pieces(const boost::mpi::communicator& comm, const array_layout& u,
                      const std::vector<piece>& pieces, bool collective, Source&& source,
                      Target&& target) {
  const int size = comm.size(), rank = comm.rank();
  moved m;
  for (const auto& p : pieces)
    if (p.from == rank && p.to == rank) {
      const held_buffer s = source(p), t = target(p);
      if (s.data != t.data) copy_box(u, t, s, p.b);
    }
  if (!collective) return m;
  std::vector<std::vector<MPI_Datatype>> sparts(static_cast<std::size_t>(size)),
      rparts(static_cast<std::size_t>(size));
  std::vector<std::vector<MPI_Aint>> sdisp(static_cast<std::size_t>(size)),
      rdisp(static_cast<std::size_t>(size));
  std::vector<datatype> keep;  // the subarray members, freed after the struct types exist
  auto add = [&](std::vector<MPI_Datatype>& parts, std::vector<MPI_Aint>& disp,
                 const held_buffer& hb, const box& b) {
    keep.push_back(box_in_box_type(u, hb.held, b));
    MPI_Aint addr;
    WORKPART_MPI_CHECK(MPI_Get_address, (hb.data, &addr));
    parts.push_back(keep.back().get());
    disp.push_back(addr);
  };
  for (const auto& p : pieces) {
    if (p.from == p.to) continue;
    if (p.from == rank) add(sparts[std::size_t(p.to)], sdisp[std::size_t(p.to)], source(p), p.b);
    if (p.to == rank) add(rparts[std::size_t(p.from)], rdisp[std::size_t(p.from)], target(p), p.b);
  }
  const MPI_Datatype elem = mpi_elem_type(u.elem);
  std::vector<int> scount(static_cast<std::size_t>(size), 0),
      rcount(static_cast<std::size_t>(size), 0), zero(static_cast<std::size_t>(size), 0);
  std::vector<MPI_Datatype> stype(static_cast<std::size_t>(size), elem),
      rtype(static_cast<std::size_t>(size), elem);
  std::vector<datatype> structs;
  structs.reserve(std::size_t(2 * size));
  auto make = [&](std::vector<MPI_Datatype>& parts, std::vector<MPI_Aint>& disp, int& count,
                  MPI_Datatype& type, index_t& bytes) {
    if (parts.empty()) return;
    std::vector<int> ones(parts.size(), 1);
    MPI_Datatype t;
    WORKPART_MPI_CHECK(MPI_Type_create_struct,
                       (int(parts.size()), ones.data(), disp.data(), parts.data(), &t));
    structs.emplace_back(t);
    WORKPART_MPI_CHECK(MPI_Type_commit, (&t));
    count = 1;
    type = t;
    bytes += type_bytes(t, 1);
  };
  for (int r = 0; r < size; ++r) {
    make(sparts[std::size_t(r)], sdisp[std::size_t(r)], scount[std::size_t(r)],
         stype[std::size_t(r)], m.sent);
    make(rparts[std::size_t(r)], rdisp[std::size_t(r)], rcount[std::size_t(r)],
         rtype[std::size_t(r)], m.received);
  }
  WORKPART_MPI_CHECK(MPI_Alltoallw, (MPI_BOTTOM, scount.data(), zero.data(), stype.data(),
                                     MPI_BOTTOM, rcount.data(), zero.data(), rtype.data(), comm));
  return m;
}

}  // namespace workpart::detail
