#pragma once
/// \file machine_model.hpp
/// The machine the optimizer prices schedules for: an arithmetic rate per rank and an
/// alpha-beta network (a message costs alpha seconds plus beta seconds per byte).
/// No MPI here; `calibrate` (calibrate.hpp) measures the three on the running
/// machine.

namespace workpart {

class context;

struct machine_model {
  double flops = 1e10;  ///< arithmetic operations per second on one rank
  double alpha = 2e-6;  ///< seconds per message
  double beta = 1e-9;   ///< seconds per byte
  /// Measures flops, alpha and beta on the ranks of `ctx` (calibrate.hpp); every
  /// rank returns the same model.
  static machine_model calibrate(const context& ctx);

  double compute_seconds(double ops) const { return ops / flops; }
  double message_seconds(double messages, double bytes) const {
    return alpha * messages + beta * bytes;
  }
};

}  // namespace workpart
