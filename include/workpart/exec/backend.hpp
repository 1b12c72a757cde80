#pragma once
/// \file backend.hpp
/// The backends a rank's block runs on, as tags, and the one executor protocol they share
/// (as Kokkos' `ParallelFor<..., ExecSpace>` and Eigen's `TensorExecutor<Expr, Device>`):
/// `executor<cpu_backend>` (exec/local.hpp: loops and GEMM on the host buffers) and
/// `executor<device_backend>` (exec/device/executor.hpp: Thrust kernels and cuBLAS on device
/// mirrors) each take
///   add_read(id, view, bytes) / add_write(id, view, bytes)   the rank's blocks,
///   begin()                                                  before the first statement,
///   run<N>(map_name, statement, lo, hi, reads_are_separate)  one statement over [lo, hi),
///   run_map<N>(map_name, map, lo, hi, separate)              every statement of a map (the CPU
///                                                            one fuses them, cpu/fusion.hpp),
///   end()                                                    after the last one.
/// A plan drives whichever its options name; nothing above exec/ knows how either runs.

namespace workpart::detail {

struct cpu_backend {};
struct device_backend {};

template <class Backend>
class executor;

}  // namespace workpart::detail
