#pragma once
/// The optimizer, beside the one header (it adds Boost.Graph and the search to a translation
/// unit, about 1.6 s of compile time, so workpart.hpp leaves it out):
/// `#include <workpart/optimize.hpp>` gives wp::optimize, wp::automatic for wp::distribute,
/// wp::machine_model::calibrate, wp::pase_search and the cost-table graphs.
#include "workpart.hpp"
#include "optimize/automatic.hpp"
#include "optimize/calibrate.hpp"
#include "optimize/cost_model.hpp"
#include "optimize/optimize.hpp"
#include "optimize/paper_plan.hpp"
#include "optimize/program_reader.hpp"
#include "optimize/search.hpp"
#include "optimize/table_reader.hpp"
