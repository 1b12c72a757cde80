#pragma once
/// \file explain.ipp
/// The bodies of explain.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../explain.hpp"

namespace workpart::detail {

WORKPART_DECL std::string explain_text(const std::string& map, const grid_shape& g, int nranks,
                                       const std::string& space_text, int N,
                                       const std::vector<rank_block>& blocks,
                                       const std::string& local_text, const solutions& arrays,
                                       bool in_place) {
  const int active = int(g.product());
  std::string s = "plan for map '" + map + "' on grid " + g.str() + ": " + std::to_string(active) +
                  " of " + std::to_string(nranks) + " ranks active, space " + space_text + "\n";
  if (g.replicas() > 1)
    s += "  replicas: each block runs on " + std::to_string(g.replicas()) +
         " ranks, each computing it whole on its own copy (root gathers replica 0's)\n";
  s += "  blocks:\n";
  for (int r = 0; r < nranks; ++r) {
    const auto& b = blocks[r];
    s += "    rank " + std::to_string(r) + ": ";
    if (!b.active) {
      s += "idle\n";
      continue;
    }
    s += "[";
    for (int d = 0; d < N; ++d)
      s += (d ? ", " : "") + std::to_string(b.lo[d]) + ":" + std::to_string(b.hi[d]);
    s += "]\n";
  }
  // How each rank runs its block: the one-process executor on its local buffers.
  s += "  local execution of each block:\n" + local_text;
  for (const array_solution* a : arrays) {
    const array_solution& ap = *a;
    s += "  array " + ap.use.name + " (" + (ap.use.read ? "read" : "") +
         (ap.use.read && ap.use.written ? ", " : "") +
         (ap.use.written ? std::string("written: ") + combine_name(ap.use.write_kind) : "") +
         "):\n" + ap.mapping_text;
    auto steps = [&](const char* phase, const std::vector<comm_step>& v) {
      for (const auto& st : v) {
        s += "    " + std::string(phase) + ": " + st.collective + " (" + st.where + "), total " +
             bytes_text(st.total()) + "; received per rank:";
        for (int r = 0; r < nranks; ++r) s += " " + std::to_string(st.received[r]);
        s += "\n";
      }
    };
    steps("scatter", ap.in_steps);
    steps("scatter", ap.init_steps);
    steps("gather", ap.out_steps);
    if (ap.use.read)
      for (int r = 0; r < nranks; ++r)
        if (!ap.rbox[r].empty())
          s += "      rank " + std::to_string(r) + " reads " + ap.rbox[r].str() + "\n";
    if (ap.use.written)
      for (int r = 0; r < nranks; ++r)
        if (!ap.wbox[r].empty())
          s += "      rank " + std::to_string(r) + " writes " + ap.wbox[r].str() + "\n";
  }
  s += "  bytes: scatter " + bytes_text(predicted_total(arrays, nranks, true)) + ", gather " +
       bytes_text(predicted_total(arrays, nranks, false)) + "\n";
  if (in_place)
    s += "  run(): in place on root's arrays (no other rank holds any part), nothing copied\n";
  return s;
}
}  // namespace workpart::detail
