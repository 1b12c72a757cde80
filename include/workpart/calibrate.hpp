#pragma once
/// \file calibrate.hpp
/// machine_model::calibrate(ctx): the arithmetic rate of one rank (a dependent-free
/// multiply-add loop over an array larger than cache lines but small enough to stay in L2),
/// and alpha and beta from ping-pongs between ranks 0 and 1 (1 byte and 4 MiB, the medians
/// of several). Rank 0's figures are broadcast: every rank returns the same model. On one
/// rank alpha and beta keep machine_model's defaults. At the top, beside distribute.hpp: it
/// joins comm/ (it measures over MPI) and optimize/ (whose model it fills), which know
/// nothing of each other.

#include <mpi.h>

#include <algorithm>
#include <boost/mpi/collectives/broadcast.hpp>
#include <vector>

#include "comm/context.hpp"
#include "optimize/machine_model.hpp"

namespace workpart {

inline machine_model machine_model::calibrate(const context& ctx) {
  const auto& comm = ctx.comm();
  machine_model m;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  {  // flops: 2 operations per element per pass
    std::vector<double> x(1 << 14, 1.0), y(1 << 14, 0.5);
    std::vector<double> t;
    for (int rep = 0; rep < 5; ++rep) {
      const double t0 = MPI_Wtime();
      for (int pass = 0; pass < 64; ++pass)
        for (std::size_t e = 0; e < x.size(); ++e) y[e] = y[e] * 0.999 + x[e];
      t.push_back(MPI_Wtime() - t0);
    }
    volatile double sink = y[7];
    (void)sink;
    m.flops = 2.0 * 64 * double(x.size()) / std::max(1e-9, median(t));
  }
  if (comm.size() >= 2) {
    auto pingpong = [&](std::size_t bytes) {
      std::vector<char> buf(bytes, 1);
      std::vector<double> t;
      for (int rep = 0; rep < 7; ++rep) {
        comm.barrier();
        const double t0 = MPI_Wtime();
        if (comm.rank() == 0) {
          MPI_Send(buf.data(), int(bytes), MPI_BYTE, 1, 77, comm);
          MPI_Recv(buf.data(), int(bytes), MPI_BYTE, 1, 77, comm, MPI_STATUS_IGNORE);
        } else if (comm.rank() == 1) {
          MPI_Recv(buf.data(), int(bytes), MPI_BYTE, 0, 77, comm, MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), int(bytes), MPI_BYTE, 0, 77, comm);
        }
        t.push_back((MPI_Wtime() - t0) / 2);
      }
      return median(t);
    };
    const double small = pingpong(1), big_bytes = double(4 << 20), big = pingpong(4 << 20);
    m.alpha = std::max(1e-8, small);
    m.beta = std::max(1e-13, (big - small) / big_bytes);
  }
  double v[3] = {m.flops, m.alpha, m.beta};
  boost::mpi::broadcast(comm, v, 3, 0);
  m.flops = v[0];
  m.alpha = v[1];
  m.beta = v[2];
  return m;
}

}  // namespace workpart
