#pragma once
/// \file phase_scope.hpp
/// The one place a plan measures a phase (scatter, execute, gather, one redistribution or one
/// combine): its seconds, the bytes its collectives moved and the bytes the device backend
/// copied, added to the plan's figures when the scope ends, normally or by an exception.

#include <mpi.h>

#include "../comm/collectives/datatypes.hpp"
#include "device_staging.hpp"
#include "stats.hpp"

namespace workpart::detail {

/// Measures into `timed` (seconds, device copies, bytes moved) and, when given, counts the
/// same bytes into `also`: the enclosing phase, whose own scope takes its seconds and device
/// copies. `dev` is the plan's device context (null on the CPU backend, or where the device
/// copies are counted elsewhere).
/// \code
///   phase_scope ps(rstats_[x].measured, device_.get(), &stats_.execute);
///   ps.moved_bytes(exchange_pieces(...));
/// \endcode
class phase_scope {
 public:
  explicit phase_scope(phase_stats& timed, const device_context* dev = nullptr,
                       phase_stats* also = nullptr)
      : timed_(timed), also_(also), dev_(dev), marks_(device_now(dev)), t0_(MPI_Wtime()) {}
  /// Counts device copies and bytes into `into` without timing: a part of a phase that an
  /// enclosing scope times.
  struct untimed_t {};
  static constexpr untimed_t untimed{};
  phase_scope(untimed_t, phase_stats& into, const device_context* dev)
      : timed_(into), also_(nullptr), dev_(dev), marks_(device_now(dev)), t0_(-1) {}
  phase_scope(const phase_scope&) = delete;
  phase_scope& operator=(const phase_scope&) = delete;
  ~phase_scope() {
    if (t0_ >= 0) timed_.seconds += MPI_Wtime() - t0_;
    count_device(timed_, dev_, marks_);
  }

  /// What a collective of the phase moved for this rank.
  void moved_bytes(const moved& m) {
    for (phase_stats* p : {&timed_, also_}) {
      if (!p) continue;
      p->bytes_sent += m.sent;
      p->bytes_received += m.received;
    }
  }

 private:
  phase_stats& timed_;
  phase_stats* also_;
  const device_context* dev_;
  device_marks marks_;
  double t0_;
};

}  // namespace workpart::detail
