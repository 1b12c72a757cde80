#pragma once
/// \file uncaught.hpp
/// An exception that escapes main under MPI: one message and MPI_Abort, instead of every
/// rank's std::terminate and Open MPI's signal backtrace around the message. Installed by the
/// first wp::context.
///
/// workpart raises its errors on every rank alike, so rank 0 speaks for all: it prints and
/// aborts the job at once. Another rank that fails waits a moment for rank 0 to do so; still
/// alive after that, it was the only one to fail (rank 0 is elsewhere, perhaps waiting in a
/// collective for it), and it prints its own message, naming itself, and aborts.

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "../error.hpp"

namespace workpart::detail {

/// How long a failing rank other than 0 waits for rank 0 to abort the job.
inline constexpr std::chrono::milliseconds uncaught_grace{2000};

inline std::terminate_handler& previous_terminate_handler() {
  static std::terminate_handler h = nullptr;
  return h;
}

/// The text of the exception in flight ("" when none is).
inline std::string uncaught_text() {
  const std::exception_ptr e = std::current_exception();
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

[[noreturn]] inline void on_uncaught_exception() noexcept {
  const std::string what = uncaught_text();
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (what.empty() || !inited || finalized) {  // not ours to report: the default path
    if (std::terminate_handler h = previous_terminate_handler()) h();
    std::abort();
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) std::this_thread::sleep_for(uncaught_grace);  // rank 0 may speak for all
  const std::string who =
      size == 1   ? std::string("workpart: uncaught exception, the program stops:")
      : rank == 0 ? "workpart: uncaught exception on rank 0 of " + std::to_string(size) +
                        " (workpart's errors are raised on every rank alike); all ranks stop:"
                  : "workpart: uncaught exception on rank " + std::to_string(rank) + " of " +
                        std::to_string(size) + " (rank 0 did not fail); all ranks stop:";
  std::fprintf(stderr, "%s\n  %s\n", who.c_str(), what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);  // (MPI_Abort does not return)
}

/// Installs on_uncaught_exception once (the handler before it serves where MPI is not running).
inline void install_uncaught_handler() {
  static const bool installed = [] {
    previous_terminate_handler() = std::set_terminate(&on_uncaught_exception);
    return true;
  }();
  (void)installed;
}

}  // namespace workpart::detail
