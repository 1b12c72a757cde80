#pragma once
/// \file exchange.ipp
/// The bodies of exchange.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../exchange.hpp"

namespace workpart::detail {

WORKPART_DECL void copy_box(const array_layout& u, const held_buffer& to, const held_buffer& from,
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

WORKPART_DECL moved exchange_resolved(const boost::mpi::communicator& comm, const array_layout& u,
                                      const std::vector<piece>& pieces, bool collective,
                                      const std::vector<held_buffer>& src,
                                      const std::vector<held_buffer>& tgt, exchange_types* types) {
  const int size = comm.size(), rank = comm.rank();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const piece& p = pieces[i];
    if (p.from == rank && p.to == rank && src[i].data != tgt[i].data)
      copy_box(u, tgt[i], src[i], p.b);
  }
  if (!collective) return moved{};
  exchange_types local;
  exchange_types& x = types ? *types : local;
  std::vector<std::uintptr_t> key = exchange_detail::key_of(rank, pieces, src, tgt);
  if (!x.built || x.key != key || x.scount.size() != std::size_t(size)) {
    exchange_detail::build(x, comm, u, pieces, src, tgt);
    x.key = std::move(key);
  }
  const std::vector<int> zero(static_cast<std::size_t>(size), 0);
  WORKPART_MPI_CHECK(MPI_Alltoallw,
                     (MPI_BOTTOM, x.scount.data(), zero.data(), x.stype.data(), MPI_BOTTOM,
                      x.rcount.data(), zero.data(), x.rtype.data(), comm));
  return x.bytes;
}
}  // namespace workpart::detail
