// The two forms a program plan's Allreduce of partial sums takes, timed against each other and
// against MPI_Allreduce on the same buffers:
//   parts   the box's elements cut into P runs, each reduce-scattered to one rank and then
//           gathered by all (detail::all_reduce_in_parts: 2 (P-1)/P of the box per rank);
//   leader  a Reduce onto rank 0 and a Bcast back (detail::reduce_onto_leader, bcast_box: the
//           leader moves P-1 boxes each way);
//   MPI     MPI_Allreduce(MPI_SUM), the library's own choice of algorithm (a reference: the
//           plans do not use it, see comm/collectives/reduce.hpp).
//
//   mpirun -np P ./bench_allreduce [--sizes=16384,65536,...] [--reps=15] [--csv FILE]
//
// Sizes are bytes of float per rank (default 16 KiB to 32 MiB). Each round runs the three in a
// balanced order (round_order), each once, after a barrier; a form's time is the slowest
// rank's; the figures are medians over the rounds. Before timing, every form's result is
// checked against the sum of the ranks' inputs (each rank r holds r + 1 + e % 7 at element e).
// The plans choose parts from 64 KiB on 3 ranks (all_reduce_parts_min_bytes); the ratio
// column shows where that pays on the machine it runs on.

#include <mpi.h>

#include <workpart/workpart.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_mpi.hpp"

namespace wp = workpart;
using wp::index_t;
using namespace workpart_bench;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const int P = ctx.size(), me = ctx.rank();
  std::vector<std::int64_t> sizes = {16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 32 << 20};
  int reps = 15;
  std::string csv_path;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (const char* v = option_value(arg, "--sizes=")) {
      sizes = parse_sizes(v);
    } else if (const char* r = option_value(arg, "--reps=")) {
      reps = std::max(1, std::atoi(r));
    } else if (const char* c = csv_option(argc, argv, a)) {
      csv_path = c;
    } else {
      sizes.clear();
    }
    if (sizes.empty()) {
      if (me == 0)
        std::fprintf(stderr,
                     "usage: bench_allreduce [--sizes=BYTES,...] [--reps=N] [--csv FILE]\n");
      return 2;
    }
  }
  csv_writer csv;
  if (me == 0) {
    std::printf("bench_allreduce: an Allreduce of float partial sums, P = %d\n", P);
    print_run_environment(P);
    csv = csv_writer(csv_path, {"benchmark", "p", "bytes", "parts_s", "leader_s", "mpi_s",
                                "leader_over_parts", "mpi_over_parts"});
    std::printf("%12s %12s %12s %12s %10s %10s\n", "bytes", "parts s", "leader s", "MPI s",
                "leader/parts", "MPI/parts");
  }
  const boost::mpi::communicator& comm = ctx.comm();
  for (const std::int64_t bytes : sizes) {
    const index_t n = std::max<index_t>(1, index_t(bytes) / index_t(sizeof(float)));
    std::vector<float> buf(static_cast<std::size_t>(n)), in(static_cast<std::size_t>(n)), scratch;
    auto fill = [&] {
      for (index_t e = 0; e < n; ++e) in[std::size_t(e)] = float(me + 1 + e % 7);
      buf = in;
    };
    scratch.resize(std::max(wp::detail::all_reduce_parts_scratch_bytes(sizeof(float), n, P, me),
                            wp::detail::reduce_scratch_bytes(sizeof(float), n)) /
                       sizeof(float) +
                   1);
    auto run = [&](std::size_t form) {
      if (form == 0) {
        wp::detail::all_reduce_in_parts(comm, 'f', wp::detail::combine::add, buf.data(), n,
                                        scratch.data());
      } else if (form == 1) {
        wp::detail::reduce_onto_leader(comm, 'f', wp::detail::combine::add, buf.data(), n,
                                       scratch.data());
        wp::detail::bcast_box(comm, 'f', buf.data(), n);
      } else {
        MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(n), MPI_FLOAT, MPI_SUM, comm);
      }
    };
    // each form's result: sum over ranks of (r + 1 + e % 7)
    int wrong = 0;
    for (std::size_t form = 0; form < 3; ++form) {
      fill();
      run(form);
      for (index_t e = 0; e < n; ++e)
        wrong += buf[std::size_t(e)] != float(P * (P + 1) / 2 + P * (e % 7));
    }
    int any = 0;
    MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_SUM, comm);
    if (any) {
      if (me == 0) std::printf("%12lld: WRONG results (%d elements)\n", (long long)bytes, any);
      return 1;
    }
    std::vector<double> t[3];
    for (int r = 0; r < reps; ++r)
      for (std::size_t form : round_order(r, 3)) {
        fill();
        quiet_barrier(comm);
        const auto t0 = std::chrono::steady_clock::now();
        run(form);
        t[form].push_back(slowest(seconds_since(t0), comm));
      }
    if (me == 0) {
      const double parts = median(t[0]), leader = median(t[1]), mpi = median(t[2]);
      std::printf("%12lld %12.6f %12.6f %12.6f %10.2fx %10.2fx\n", (long long)bytes, parts, leader,
                  mpi, leader / parts, mpi / parts);
      csv.row({"bench_allreduce", std::to_string(P), std::to_string(bytes), std::to_string(parts),
               std::to_string(leader), std::to_string(mpi), std::to_string(leader / parts),
               std::to_string(mpi / parts)});
    }
  }
  return 0;
}
