#pragma once
/// \file stats.hpp
/// What a plan measured beside what it predicted, per rank and phase, and the plan as JSON.

#include <string>
#include <vector>

#include "../config.hpp"
#include "../core/json_text.hpp"
#include "../plan/picture.hpp"
#include "../plan/solve_array.hpp"
#include "../schedule/grid.hpp"

namespace workpart {

/// Bytes this rank sent and received in one phase (self copies excluded), and its seconds.
struct phase_stats {
  index_t bytes_sent = 0;
  index_t bytes_received = 0;
  double seconds = 0;
  /// The device backend: bytes this rank copied host to device and device to host in the
  /// phase (0 on the CPU backend). Blocks are copied only where the plan moves them.
  index_t bytes_to_device = 0;
  index_t bytes_from_device = 0;
};

/// Per-rank figures of a plan: measured (what the calls moved) beside predicted (the plan).
struct plan_stats {
  phase_stats scatter, execute, gather;
  index_t predicted_scatter_sent = 0, predicted_scatter_received = 0;
  index_t predicted_gather_sent = 0, predicted_gather_received = 0;
  int runs = 0;
};

/// One redistribution of a program plan, with this rank's figures.
struct redistribution_stats {
  std::string array;
  std::string from;  // the maps whose values it carries ("root" for inputs), or the map whose
                     // partials it combines
  std::string to;    // the map that reads them ("root" for a gather)
  std::string kind;  // none, Alltoallw, halo exchange, Allreduce(sum), reduce-scatter(sum),
                     // Reduce(max), Gatherv
  index_t predicted_sent = 0, predicted_received = 0;  // each later execute() (or each gather)
  index_t predicted_first_sent = 0,
          predicted_first_received = 0;  // the first execute() after a scatter
  phase_stats measured;                  // over every execute() (or gather) so far
};

/// Per-rank figures of a program plan: the phases (execute includes the redistributions),
/// each map's own plan_stats, and each redistribution.
/// (A plan_stats too: a program of one map reports its map's figures as that map's plan does.)
struct program_stats : plan_stats {
  std::vector<plan_stats> maps;
  std::vector<redistribution_stats> redistributions;
};

namespace detail {

/// One phase's figures as a JSON object.
inline std::string phase_json(const phase_stats& p) {
  return "{\"bytes_sent\":" + std::to_string(p.bytes_sent) +
         ",\"bytes_received\":" + std::to_string(p.bytes_received) +
         ",\"seconds\":" + std::to_string(p.seconds) +
         ",\"bytes_to_device\":" + std::to_string(p.bytes_to_device) +
         ",\"bytes_from_device\":" + std::to_string(p.bytes_from_device) + "}";
}

/// A plan as JSON: its collectives with bytes, this rank's stats, and explain().
inline std::string plan_json(const std::string& map, const grid_shape& grid, int rank, int size,
                             const solutions& arrays, const plan_stats& stats,
                             const std::string& explain) {
  const auto esc = json_escape;
  const auto ph = phase_json;
  std::string s = "{\"map\":\"" + esc(map) + "\",\"grid\":[";
  for (int d = 0; d < grid.space_rank(); ++d) s += (d ? "," : "") + std::to_string(grid.dims[d]);
  s += "]";
  if (grid.replica_axis) s += ",\"replicas\":" + std::to_string(grid.replicas());
  s += ",\"rank\":" + std::to_string(rank) + ",\"ranks\":" + std::to_string(size) + ",\"arrays\":[";
  bool first = true;
  for (const array_solution* a : arrays) {
    const array_solution& ap = *a;
    s += std::string(first ? "" : ",") + "{\"name\":\"" + esc(ap.use.name) + "\"";
    // every rank's boxes as numbers ([[lo...],[hi...]] or null): what it reads, what it writes
    if (ap.use.read && !ap.reads_own_writes) s += ",\"read_boxes\":" + boxes_json(ap.rbox);
    if (ap.use.written) s += ",\"write_boxes\":" + boxes_json(ap.wbox);
    s += ",\"collectives\":[";
    first = false;
    bool f2 = true;
    for (const auto* steps : {&ap.in_steps, &ap.init_steps, &ap.out_steps})
      for (const auto& st : *steps) {
        s += std::string(f2 ? "" : ",") + "{\"collective\":\"" + esc(st.collective) +
             "\",\"where\":\"" + esc(st.where) +
             "\",\"total_bytes\":" + std::to_string(st.total()) + ",\"received\":[";
        f2 = false;
        for (int r = 0; r < size; ++r) s += (r ? "," : "") + std::to_string(st.received[r]);
        s += "]}";
      }
    s += "]}";
  }
  s += "],\"stats\":{\"scatter\":" + ph(stats.scatter) + ",\"execute\":" + ph(stats.execute) +
       ",\"gather\":" + ph(stats.gather) +
       ",\"predicted\":{\"scatter_sent\":" + std::to_string(stats.predicted_scatter_sent) +
       ",\"scatter_received\":" + std::to_string(stats.predicted_scatter_received) +
       ",\"gather_sent\":" + std::to_string(stats.predicted_gather_sent) +
       ",\"gather_received\":" + std::to_string(stats.predicted_gather_received) +
       "},\"runs\":" + std::to_string(stats.runs) + "},\"explain\":\"" + esc(explain) + "\"}";
  return s;
}

}  // namespace detail
}  // namespace workpart
