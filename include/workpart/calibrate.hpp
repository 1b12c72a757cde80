#pragma once
/// \file calibrate.hpp
/// machine_model::calibrate(ctx): the model measured on the running machine, for the kinds of
/// local work the executor runs and the network between the ranks:
///  - `flops`: a loop's rate (a multiply-add over arrays that stay in L2);
///  - `gemm`: the GEMM rate at three sizes (the executor's own GEMM, exec/cpu/gemm.hpp: the
///    BLAS where linked, else Eigen), by the operations of one call;
///  - `stream`: the bytes per second of a loop over arrays much larger than the caches;
///  - `map_seconds`: what a map of one point per rank costs per execute() of a program of
///    several of them on all the ranks (a plan's fixed cost per map: starting and timing it,
///    the agreement after it where there is one), less nothing: the maps do no arithmetic;
///  - `core_share`: the ranks on this node over its hardware threads (at least 1);
///  - `alpha`, `beta`: ping-pongs between ranks 0 and 1 (1 byte and 4 MiB).
/// Rank 0 measures the local rates alone (the other ranks wait without spinning), so that
/// ranks sharing cores do not slow what is measured: `core_share` models that. Rank 0's
/// figures are broadcast: every rank returns the same model. On one rank alpha and beta keep
/// machine_model's defaults. At the top, beside distribute.hpp: it joins comm/ and runtime/
/// (it measures over MPI) and optimize/ (whose model it fills), which know nothing of each
/// other. Element type: double.

#include "comm/context.hpp"
#include "config.hpp"
#include "core/array.hpp"
#include "core/index.hpp"
#include "core/space.hpp"
#include "distribute.hpp"
#include "expr/map.hpp"
#include "expr/ops.hpp"
#include "optimize/machine_model.hpp"

#if WORKPART_HEADER_ONLY
#include "impl/calibrate.ipp"
#else
namespace workpart {
// (instantiated once in workpart::compiled: src/workpart.cpp)
extern template machine_model machine_model::calibrate<context>(const context&);
}  // namespace workpart
#endif
