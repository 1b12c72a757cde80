/// \file workpart.cpp
/// workpart::compiled: the bodies of the library's functions that are not templates (the
/// planner, the plans' runtimes, the collectives), compiled once. Programs built against it
/// define WORKPART_SEPARATE_COMPILATION (the target does), so their headers only declare these
/// functions; see config.hpp.

#if !defined(WORKPART_SEPARATE_COMPILATION)
#error "src/workpart.cpp is built with WORKPART_SEPARATE_COMPILATION (CMake target workpart::compiled)"
#endif

#include <workpart/workpart.hpp>

#include <workpart/comm/collectives/impl/datatypes.ipp>
#include <workpart/comm/collectives/impl/exchange.ipp>
#include <workpart/comm/collectives/impl/reduce.ipp>
#include <workpart/comm/collectives/impl/reduce_scatter.ipp>
#include <workpart/comm/collectives/impl/all_reduce.ipp>
#include <workpart/comm/collectives/impl/root_exchange.ipp>
#include <workpart/comm/impl/agreement.ipp>
#include <workpart/runtime/impl/inspect.ipp>
#include <workpart/runtime/impl/map_pictures.ipp>
#include <workpart/runtime/impl/map_runtime.ipp>
#include <workpart/runtime/impl/plan_batch.ipp>
#include <workpart/runtime/impl/profile.ipp>
#include <workpart/runtime/impl/program_plan.ipp>
#include <workpart/runtime/impl/program_runtime.ipp>
#include <workpart/expr/impl/interval.ipp>
#include <workpart/expr/impl/map.ipp>
#include <workpart/plan/impl/combine_choice.ipp>
#include <workpart/plan/impl/explain.ipp>
#include <workpart/plan/impl/picture.ipp>
#include <workpart/plan/impl/program.ipp>
#include <workpart/plan/impl/redistribute.ipp>
#include <workpart/plan/impl/solve_array.ipp>
#include <workpart/plan/impl/validate.ipp>
#include <workpart/entries/impl/backward.ipp>
#include <workpart/impl/distribute_automatic.ipp>
#include <workpart/impl/calibrate.ipp>
#include <workpart/impl/profile.ipp>
#include <workpart/optimize/impl/optimize.ipp>
#include <workpart/schedule/impl/constraints.ipp>

// The float and double GEMMs (exec/cpu/gemm.hpp declares them extern where this library is
// linked): the BLAS calls, the operands' packing and Eigen's small products compiled once.
namespace workpart::detail {
#define WORKPART_GEMM_TYPES(T)                                                                   \
  template void gemm_strided<T>(index_t, index_t, index_t, T, const T*, index_t, index_t,        \
                                const T*, index_t, index_t, T*, index_t, index_t, bool);          \
  template void run_gemms<T>(const gemm_layout&, T, T*, const index_t*, const T*, const index_t*, \
                             const T*, const index_t*, const index_t*, const index_t*);
WORKPART_GEMM_TYPES(float)
WORKPART_GEMM_TYPES(double)
#undef WORKPART_GEMM_TYPES
}  // namespace workpart::detail

// machine_model::calibrate, a template so that header-only TUs instantiate it only where called
template workpart::machine_model workpart::machine_model::calibrate<workpart::context>(
    const workpart::context&);
