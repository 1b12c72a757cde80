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
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../exec/counters.hpp"
#include "../../plan/redistribute.hpp"
#include "datatypes.hpp"
#include "../../config.hpp"

namespace workpart::detail {

/// One end of a piece on this rank: the buffer and the box it holds (row-major).
struct held_buffer {
  void* data = nullptr;
  box held;
};

/// Copies box b from a buffer holding box `from` to a buffer holding box `to`.
WORKPART_DECL void copy_box(const array_layout& u, const held_buffer& to, const held_buffer& from,
                            const box& b);

/// The MPI_Alltoallw arguments of one exchange on this rank: per peer one struct datatype
/// (or nothing). They point at the buffers' addresses, so a plan keeps them per
/// redistribution and builds them again only when a buffer or a piece changes (`key`).
struct exchange_types {
  std::vector<std::uintptr_t> key;  ///< what they were built for (pieces, buffers, boxes)
  std::vector<int> scount, rcount;
  std::vector<MPI_Datatype> stype, rtype;
  std::vector<datatype> owned;  ///< the struct types
  moved bytes;                  ///< what they carry
  bool built = false;
};

namespace exchange_detail {

/// The numbers that decide the remote types: each remote piece this rank takes part in, with
/// its buffer and the box the buffer holds.
inline std::vector<std::uintptr_t> key_of(int rank, const std::vector<piece>& pieces,
                                          const std::vector<held_buffer>& src,
                                          const std::vector<held_buffer>& tgt) {
  std::vector<std::uintptr_t> k;
  auto add_box = [&](const box& b) {
    k.push_back(std::uintptr_t(b.rank));
    for (int a = 0; a < b.rank; ++a) {
      k.push_back(std::uintptr_t(b.lo[a]));
      k.push_back(std::uintptr_t(b.hi[a]));
    }
  };
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const piece& p = pieces[i];
    if (p.from == p.to || (p.from != rank && p.to != rank)) continue;
    k.push_back(std::uintptr_t(p.from));
    k.push_back(std::uintptr_t(p.to));
    add_box(p.b);
    const held_buffer& h = p.from == rank ? src[i] : tgt[i];
    k.push_back(reinterpret_cast<std::uintptr_t>(h.data));
    add_box(h.held);
  }
  return k;
}

inline void build(exchange_types& x, const boost::mpi::communicator& comm, const array_layout& u,
                  const std::vector<piece>& pieces, const std::vector<held_buffer>& src,
                  const std::vector<held_buffer>& tgt) {
  const int rank = comm.rank();
  const std::size_t S = static_cast<std::size_t>(comm.size());
  std::vector<std::vector<MPI_Datatype>> sparts(S), rparts(S);
  std::vector<std::vector<MPI_Aint>> sdisp(S), rdisp(S);
  std::vector<datatype> keep;  // the subarray members, freed after the struct types exist
  auto add = [&](std::vector<MPI_Datatype>& parts, std::vector<MPI_Aint>& disp,
                 const held_buffer& hb, const box& b) {
    keep.push_back(box_in_box_type(u, hb.held, b));
    MPI_Aint addr;
    WORKPART_MPI_CHECK(MPI_Get_address, (hb.data, &addr));
    parts.push_back(keep.back().get());
    disp.push_back(addr);
  };
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const piece& p = pieces[i];
    if (p.from == p.to) continue;
    if (p.from == rank) add(sparts[std::size_t(p.to)], sdisp[std::size_t(p.to)], src[i], p.b);
    if (p.to == rank) add(rparts[std::size_t(p.from)], rdisp[std::size_t(p.from)], tgt[i], p.b);
  }
  const MPI_Datatype elem = mpi_elem_type(u.elem);
  x.built = false;
  x.owned.clear();
  x.bytes = moved{};
  x.scount.assign(S, 0);
  x.rcount.assign(S, 0);
  x.stype.assign(S, elem);
  x.rtype.assign(S, elem);
  x.owned.reserve(2 * S);
  auto make = [&](std::vector<MPI_Datatype>& parts, std::vector<MPI_Aint>& disp, int& count,
                  MPI_Datatype& type, index_t& bytes) {
    if (parts.empty()) return;
    std::vector<int> ones(parts.size(), 1);
    MPI_Datatype t;
    WORKPART_MPI_CHECK(MPI_Type_create_struct,
                       (int(parts.size()), ones.data(), disp.data(), parts.data(), &t));
    x.owned.emplace_back(t);
    WORKPART_MPI_CHECK(MPI_Type_commit, (&t));
    count = 1;
    type = t;
    bytes += type_bytes(t, 1);
  };
  for (std::size_t r = 0; r < S; ++r) {
    make(sparts[r], sdisp[r], x.scount[r], x.stype[r], x.bytes.sent);
    make(rparts[r], rdisp[r], x.rcount[r], x.rtype[r], x.bytes.received);
  }
  x.built = true;
  counters().exchange_type_builds.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace exchange_detail

/// exchange_pieces() with each piece's ends looked up: src[i] where this rank sends piece i,
/// tgt[i] where it receives it (both for a piece it keeps).
WORKPART_DECL moved exchange_resolved(const boost::mpi::communicator& comm, const array_layout& u,
                                      const std::vector<piece>& pieces, bool collective,
                                      const std::vector<held_buffer>& src,
                                      const std::vector<held_buffer>& tgt, exchange_types* types);

/// Moves `pieces`: this rank sends those with from == rank, reading source(piece), and
/// receives those with to == rank into target(piece). `collective`: some piece moves between
/// two ranks somewhere (the same on every rank), so every rank takes part in the Alltoallw.
/// `types`, when given, keeps the datatypes for the next call with the same pieces and
/// buffers (a redistribution repeated by every execute()); they are rebuilt when either
/// changes. Only the lookups are a template; the exchange is exchange_resolved().
template <class Source, class Target>
moved exchange_pieces(const boost::mpi::communicator& comm, const array_layout& u,
                      const std::vector<piece>& pieces, bool collective, Source&& source,
                      Target&& target, exchange_types* types = nullptr) {
  const int rank = comm.rank();
  std::vector<held_buffer> src(pieces.size()), tgt(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].from == rank) src[i] = source(pieces[i]);
    if (pieces[i].to == rank) tgt[i] = target(pieces[i]);
  }
  return exchange_resolved(comm, u, pieces, collective, src, tgt, types);
}

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/exchange.ipp"
#endif
