#pragma once
/// \file program_cost_tables.hpp
/// `wp::program_cost_tables`: a program's schedule problem as the search (search.hpp) takes
/// it, what the pricer (pricer.hpp) builds and wp::program_costs returns.

#include <cstddef>
#include <string>
#include <vector>

#include "../schedule/grid.hpp"
#include "cost_graph.hpp"

namespace workpart {

/// A program's schedule problem under a machine model: every map's candidate grids and what
/// each costs, as a cost-table graph (vertex 0 is `root (inputs)`, the last `root
/// (outputs)`, map m is vertex m + 1).
struct program_cost_tables {
  cost_graph graph;
  std::vector<std::string> maps;
  std::vector<std::vector<grid_shape>> grids;  // [map][config]
  /// [edge]: the arrays it carries
  std::vector<std::vector<std::string>> edge_arrays;
  /// Maps no grid allowed by config_options fits ("map 'loss': no grid of ..."): they keep
  /// the all-ones grid, and the optimum is over the grids that remain.
  std::vector<std::string> unmet;
  /// [vertex]: the vertex whose configuration it takes (itself when free); empty when none is
  /// tied (config_options::tie_backward).
  std::vector<std::size_t> tied;
};

}  // namespace workpart
