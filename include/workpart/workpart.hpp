#pragma once
/// \file workpart.hpp
/// The one header: `#include <workpart/workpart.hpp>` and `namespace wp = workpart;`.
/// Everything in the public API (docs/ and the API reference) comes from here, the optimizer
/// included (wp::optimize, wp::automatic, wp::machine_model, wp::plan_on_paper). The input formats
/// of the optimizer's command-line tool (cost tables, program descriptions) are not part of it:
/// `#include <workpart/optimize.hpp>` adds them.

#include "config.hpp"
#include "error.hpp"
#include "fwd.hpp"

#include "core/affine.hpp"
#include "core/array.hpp"
#include "core/index.hpp"
#include "core/space.hpp"

#include "expr/access.hpp"
#include "expr/map.hpp"
#include "expr/ops.hpp"
#include "expr/padded.hpp"
#include "expr/reduce.hpp"
#include "expr/statement.hpp"

#include "schedule/constraints.hpp"
#include "schedule/grid.hpp"
#include "schedule/schedule.hpp"
#include "schedule/tiling.hpp"

#include "exec/options.hpp"
#include "exec/run.hpp"

#include "comm/context.hpp"

#include "entries/backward.hpp"
#include "entries/map_model.hpp"
#include "program/program.hpp"

#include "optimize/optimize.hpp"
#include "optimize/paper_plan.hpp"

#include "calibrate.hpp"
#include "distribute.hpp"
#include "distribute_automatic.hpp"
#include "profile.hpp"
