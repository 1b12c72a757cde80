// Helpers the MPI benchmarks share: a barrier that sleeps, the slowest rank's figure, and the
// lines that say what a run ran on. Not part of the library (never installed).
#pragma once

#include <mpi.h>

#include <Eigen/Core>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

#include "bench_common.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

// OpenBLAS's thread count, where OpenBLAS is the BLAS linked in (weak: absent elsewhere).
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace workpart_bench {

/// A barrier whose waiting ranks sleep instead of spinning: while root runs a one-process
/// baseline alone, the other ranks must not take CPU time from it (MPI_Barrier busy-polls).
inline void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  int done = 0;
  for (;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const timespec pause{0, 200000};  // 0.2 ms
    nanosleep(&pause, nullptr);
  }
}

/// The slowest rank's value of x (on root).
inline double slowest(double x, MPI_Comm comm) {
  double worst = 0;
  MPI_Reduce(&x, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  return worst;
}

/// Root prints what the run ran on: MPI library and process count, thread settings, Eigen and
/// its BLAS, the vCPUs (and whether P oversubscribes them), the load average at the start.
inline void print_run_environment(int P) {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string first = lib;
  first = first.substr(0, first.find_first_of(",\n"));
  std::printf("  MPI: %s; P = %d processes\n", first.c_str(), P);
  auto env = [](const char* v) {
    const char* s = std::getenv(v);
    return s ? s : "(unset)";
  };
  std::printf("  OMP_NUM_THREADS=%s OPENBLAS_NUM_THREADS=%s", env("OMP_NUM_THREADS"),
              env("OPENBLAS_NUM_THREADS"));
  if (openblas_get_num_threads) std::printf("; OpenBLAS threads: %d", openblas_get_num_threads());
#if defined(_OPENMP)
  std::printf("; OpenMP max threads: %d", omp_get_max_threads());
#endif
  std::printf("\n");
#if defined(EIGEN_USE_BLAS)
  std::printf(
      "  Eigen %d.%d.%d with EIGEN_USE_BLAS (the baselines' GEMMs and the plans' local "
      "ones call the BLAS)\n",
      EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
#else
  std::printf("  Eigen %d.%d.%d with its own kernels (no EIGEN_USE_BLAS)\n", EIGEN_WORLD_VERSION,
              EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
#endif
  const unsigned cpus = std::thread::hardware_concurrency();
  std::printf("  machine: %u vCPU(s) seen by this process", cpus);
  if (cpus > 0 && unsigned(P) > cpus)
    std::printf(
        "; P = %d is oversubscribed: a speed-up above %u over one process cannot be "
        "expected",
        P, cpus);
  std::printf("\n");
  print_load_average();  // the machine may be shared
}

}  // namespace workpart_bench
