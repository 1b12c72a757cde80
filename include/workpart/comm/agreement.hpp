#pragma once
/// \file agreement.hpp
/// Failure agreement: work that can fail on some ranks only (planning from values that may
/// differ by rank, init() generators, root's allocation, data-dependent subscripts, user
/// exceptions) runs locally first; then one small collective tells every rank whether any
/// failed, and whether all of them planned the same thing (a fingerprint); then every rank
/// throws the same wp::error, or none does. No rank is ever left inside a collective that
/// another rank skipped.

#include <mpi.h>

#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/exception.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <thread>

#include "../error.hpp"
#include "mpi_check.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// Which wp::error (or none) a failure is, so that every rank can throw the same type.
enum class error_kind : int { none = 0, error, shape, grid, plan, comm, backend, foreign };

/// What failed on this rank: the kind, and the message without its "[workpart.x] " tag; for
/// a failed MPI call also the routine and its result code (kept when rethrown everywhere).
struct failure {
  error_kind kind = error_kind::none;
  std::string message;
  std::string routine;
  int code = 0;
  /// When it happened, where failures are agreed on later than they happen (a program's
  /// maps): agree() raises the earliest, then the lowest rank's.
  std::uint32_t when = 0;
  explicit operator bool() const { return kind != error_kind::none; }
};

/// Throws the error a failure describes, with `prefix` before its message.
[[noreturn]] inline void rethrow(const failure& f, const std::string& prefix) {
  const std::string m = prefix + f.message;
  switch (f.kind) {
    case error_kind::shape:
      throw shape_error(m);
    case error_kind::grid:
      throw grid_error(m);
    case error_kind::plan:
      throw plan_error(m);
    case error_kind::comm:
      throw comm_error(f.routine.empty() ? "MPI" : f.routine, f.code, m);
    case error_kind::backend:
      throw backend_error(m);
    default:
      throw error(m);
  }
}

/// The exception in flight, as a failure. Called only from a catch block: it rethrows and
/// sorts what it catches, so that these clauses are compiled once, not once per capture().
WORKPART_DECL failure current_failure() noexcept;

/// Runs f() and returns what it threw, as a failure (nothing thrown: kind none).
template <class F>
failure capture(F&& f) noexcept {
  try {
    f();
    return {};
  } catch (...) {
    return current_failure();
  }
}

/// Broadcasts a string from `root` as its length and its characters (plain MPI datatypes: no
/// Boost.Serialization archive is instantiated for it).
WORKPART_DECL void broadcast_text(const boost::mpi::communicator& comm, std::string& s, int root);

/// How a failure's message names the rank it came from.
enum class name_rank {
  always,       ///< "rank 2: ..." (data-dependent failures: where the bad data was read)
  when_partial  ///< only when some ranks did not fail (planning: usually all fail alike)
};

/// The collective step. Every rank passes what it found (`mine`) and a fingerprint of what it
/// planned (0 where there is nothing to compare); all ranks then throw the same error, or
/// none does. `mismatch` is the message for ranks whose fingerprints differ (root's is
/// raised everywhere). Ranks that
/// arrive early sleep rather than spin (on an oversubscribed node a spinning wait takes the
/// core from the ranks still working).
WORKPART_DECL void agree(const boost::mpi::communicator& comm, const failure& mine,
                         std::uint64_t fingerprint, name_rank naming,
                         const std::string& mismatch = std::string());

/// Runs the local part of a phase (f, which may fail on some ranks only), then agrees with
/// every rank of comm on whether it failed: the same error everywhere, or none.
template <class F>
void local_then_agree(const boost::mpi::communicator& comm, F&& f) {
  const failure fl = capture(f);
  with_comm_errors([&] { agree(comm, fl, 0, name_rank::when_partial); });
}

/// FNV-1a, for fingerprints of what each rank planned.
struct fingerprint_hash {
  std::uint64_t h = 1469598103934665603ull;
  fingerprint_hash& add(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return *this;
  }
  fingerprint_hash& add(const std::string& s) {
    add(s.data(), s.size());
    return add(std::int64_t(s.size()));
  }
  template <class T>
  requires std::is_arithmetic_v<T> fingerprint_hash& add(T v) { return add(&v, sizeof v); }
};

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/agreement.ipp"
#endif
