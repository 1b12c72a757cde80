#pragma once
/// \file machine_model.hpp
/// The machine the optimizer prices schedules for: arithmetic rates per rank (one for loops,
/// one per size for the GEMMs contractions run as, each for 8- and for 4-byte elements), the
/// bandwidth a block streams at, a fixed cost per map, how many ranks share a core, and an
/// alpha-beta network (a message costs alpha seconds plus beta seconds per byte). No MPI here;
/// `calibrate` (calibrate.hpp) measures them on the running machine, io/machine_file.hpp reads and
/// writes them as JSON. The defaults of the fields after `beta` leave the model one flop rate and
/// alpha-beta.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace workpart {

class context;

struct machine_model {
  double flops = 1e10;  ///< arithmetic operations per second on one rank (loops)
  double alpha = 2e-6;  ///< seconds per message
  double beta = 1e-9;   ///< seconds per byte
  /// The GEMM rate by size: {operations of one block's GEMMs, operations per second}, in
  /// ascending operations; between two points the rate is interpolated in log(operations),
  /// outside them the nearest point's. Empty: `flops` (a contraction priced as a loop).
  struct rate_point {
    double ops = 0, rate = 0;
  };
  std::vector<rate_point> gemm{};
  /// Bytes per second one rank streams through a block (what its boxes hold, read and written
  /// once): a map costs the longer of its arithmetic and its streaming. 0: bytes not priced.
  double stream = 0;
  /// Seconds every map costs per execute() whatever its block (starting it, timing it, the
  /// plan's bookkeeping). 0: none.
  double map_seconds = 0;
  /// Ranks per core on a node (>= 1): ranks sharing cores compute this much slower.
  double core_share = 1;
  /// Seconds the loop executor spends per row beyond its points' operations (starting a row:
  /// its accesses' addresses, its bounds; a map whose rows are short, a pooling window's 3
  /// points, pays it on every few points). 0: rows not priced.
  double row_seconds = 0;
  /// Operations per second of the slow functions (exp, log, tanh, erf, sqrt, pow and their
  /// kin) in loops, which run one call per element at a fraction of `flops`. 0: `flops`.
  double slow_flops = 0;
  /// The same rates for maps whose elements are 4 bytes (float; a vector register holds twice
  /// as many, and contractions run the single-precision GEMM): where set, they replace
  /// `flops`, `gemm` and `slow_flops` for such maps (block_work::elem_bytes). 0, empty: the
  /// rates above for every element type.
  double float_flops = 0;
  std::vector<rate_point> float_gemm{};
  double float_slow_flops = 0;
  /// Bytes per second an affine contraction's GEMMs copy besides their operations (an operand
  /// packed as its matrix: a convolution's im2col; a buffer added into an overlapping left
  /// side). 0: copies not priced.
  double packing = 0;
  /// Operations per second of loops whose rows have no vector form (a padded, strided or
  /// indexed read; the executor's "scalar rows"), whatever their element type. 0: the loop
  /// rates above for every loop.
  double scalar_flops = 0;

  /// What a block does, as block_seconds prices it.
  struct block_work {
    double points = 0;          ///< points of the block
    double ops_per_point = 0;   ///< arithmetic operations per point (ops_per_point)
    double slow_per_point = 0;  ///< of those, calls of slow functions (slow_ops_per_point)
    double rows = 0;            ///< rows the loop executor runs (points / the row's length)
    double bytes = 0;           ///< bytes its boxes hold
    bool gemm = false;          ///< its statements run as GEMMs (runs_as_gemm)
    double elem_bytes = 8;      ///< bytes per element it writes (4: the float rates)
    double packed_bytes = 0;    ///< bytes its GEMMs copy (packed operands, a buffer)
    bool vector_rows = true;    ///< its loop's rows run as vectors (else: scalar_flops)
  };

  /// Measures the model on the ranks of `ctx` (calibrate.hpp); every rank returns the same.
  /// (A template only so that a translation unit that never calls it never instantiates the
  /// maps and kernels it measures with; `Context` is always `wp::context`.)
  template <class Context = context>
  static machine_model calibrate(const Context& ctx);

  double compute_seconds(double ops) const { return ops / flops; }
  double message_seconds(double messages, double bytes) const {
    return alpha * messages + beta * bytes;
  }
  /// The GEMM rate for a block of `ops` operations (see `gemm`); `elem_bytes` 4: float's
  /// (`float_gemm`, where measured).
  double gemm_rate(double ops, double elem_bytes = 8) const {
    const bool narrow = elem_bytes <= 4 && !float_gemm.empty();
    const std::vector<rate_point>& table = narrow ? float_gemm : gemm;
    if (table.empty()) return loop_flops(elem_bytes);
    if (ops <= table.front().ops) return table.front().rate;
    if (ops >= table.back().ops) return table.back().rate;
    std::size_t k = 1;
    while (table[k].ops < ops) ++k;
    const rate_point &a = table[k - 1], &b = table[k];
    const double t = std::log(ops / a.ops) / std::log(b.ops / a.ops);
    return a.rate + t * (b.rate - a.rate);
  }
  /// The loop rate for elements of `elem_bytes` bytes (`float_flops` for 4, where measured).
  double loop_flops(double elem_bytes = 8) const {
    return elem_bytes <= 4 && float_flops > 0 ? float_flops : flops;
  }
  /// The slow functions' rate for elements of `elem_bytes` bytes (0: the loop rate).
  double slow_rate(double elem_bytes = 8) const {
    return elem_bytes <= 4 && float_slow_flops > 0 ? float_slow_flops : slow_flops;
  }
  /// Seconds of a map's busiest block: `ops` operations (at the GEMM rate when the map's
  /// statements run as GEMMs, else at `flops`), or streaming `bytes` if longer, slowed by the
  /// ranks sharing a core, plus the map's fixed cost. A block of no operations (an empty one, or
  /// a map whose statements were all pruned) costs nothing, whatever its boxes hold.
  double block_seconds(double ops, double bytes, bool runs_as_gemm) const {
    return block_seconds(
        block_work{.points = 1, .ops_per_point = ops, .bytes = bytes, .gemm = runs_as_gemm});
  }
  /// The same for a block described in full: a GEMM block's operations at its element size's
  /// GEMM rate plus the bytes it packs at `packing`; a loop block's at its element size's loop
  /// rate (`scalar_flops` where its rows have no vector form), those of slow functions at
  /// their rate, plus `row_seconds` per row.
  double block_seconds(const block_work& w) const {
    const double ops = w.points * w.ops_per_point;
    if (ops <= 0) return 0;
    double arithmetic = 0;
    if (w.gemm) {
      arithmetic = ops / gemm_rate(ops, w.elem_bytes);
      if (packing > 0) arithmetic += w.packed_bytes / packing;
    } else {
      // (each term only where the model has it: a model without them prices ops / flops
      // exactly, as a description that does not say its slow functions or rows is priced)
      const double rate =
          !w.vector_rows && scalar_flops > 0 ? scalar_flops : loop_flops(w.elem_bytes);
      const double slow_fn_rate = slow_rate(w.elem_bytes);
      arithmetic = ops / rate;
      if (slow_fn_rate > 0) {
        const double slow = std::min(ops, w.points * w.slow_per_point);
        arithmetic = (ops - slow) / rate + slow / slow_fn_rate;
      }
      if (row_seconds > 0) arithmetic += w.rows * row_seconds;
    }
    const double streaming = stream > 0 ? w.bytes / stream : 0;
    return map_seconds + std::max(1.0, core_share) * std::max(arithmetic, streaming);
  }
  /// The model in words: every field, in the units above.
  std::string str() const {
    char b[160];
    std::snprintf(b, sizeof b, "machine_model{.flops = %.3g, .alpha = %.3g, .beta = %.3g", flops,
                  alpha, beta);
    std::string s = b;
    if (!gemm.empty()) {
      s += ", .gemm = {";
      for (std::size_t k = 0; k < gemm.size(); ++k) {
        std::snprintf(b, sizeof b, "%s{%.3g, %.3g}", k ? ", " : "", gemm[k].ops, gemm[k].rate);
        s += b;
      }
      s += "}";
    }
    if (stream > 0) std::snprintf(b, sizeof b, ", .stream = %.3g", stream), s += b;
    if (map_seconds > 0) std::snprintf(b, sizeof b, ", .map_seconds = %.3g", map_seconds), s += b;
    if (core_share > 1) std::snprintf(b, sizeof b, ", .core_share = %.3g", core_share), s += b;
    if (row_seconds > 0) std::snprintf(b, sizeof b, ", .row_seconds = %.3g", row_seconds), s += b;
    if (slow_flops > 0) std::snprintf(b, sizeof b, ", .slow_flops = %.3g", slow_flops), s += b;
    if (float_flops > 0) std::snprintf(b, sizeof b, ", .float_flops = %.3g", float_flops), s += b;
    if (!float_gemm.empty()) {
      s += ", .float_gemm = {";
      for (std::size_t k = 0; k < float_gemm.size(); ++k) {
        std::snprintf(b, sizeof b, "%s{%.3g, %.3g}", k ? ", " : "", float_gemm[k].ops,
                      float_gemm[k].rate);
        s += b;
      }
      s += "}";
    }
    if (float_slow_flops > 0)
      std::snprintf(b, sizeof b, ", .float_slow_flops = %.3g", float_slow_flops), s += b;
    if (packing > 0) std::snprintf(b, sizeof b, ", .packing = %.3g", packing), s += b;
    if (scalar_flops > 0)
      std::snprintf(b, sizeof b, ", .scalar_flops = %.3g", scalar_flops), s += b;
    return s + "}";
  }
};

}  // namespace workpart
