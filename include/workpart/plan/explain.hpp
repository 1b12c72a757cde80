#pragma once
/// \file explain.hpp
/// A map's plan in words (explain()): blocks, local execution, and per array its mappings,
/// collectives with bytes, and boxes. The same text on every rank.

#include <string>
#include <vector>

#include "../schedule/tiling.hpp"
#include "solve_array.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// The plan in words (identical on every rank): blocks, local execution (`local_text`, one
/// line per statement), and per array its mappings, collectives with bytes, and boxes.
WORKPART_DECL std::string explain_text(const std::string& map, const grid_shape& g, int nranks,
                                       const std::string& space_text, int N,
                                       const std::vector<rank_block>& blocks,
                                       const std::string& local_text, const solutions& arrays,
                                       bool in_place);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/explain.ipp"
#endif
