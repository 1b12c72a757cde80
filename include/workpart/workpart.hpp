#pragma once
/// \file workpart.hpp
/// The one header: `#include <workpart/workpart.hpp>` and `namespace wp = workpart;`.

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
#include "expr/reduce.hpp"
#include "expr/statement.hpp"

#include "comm/context.hpp"

#include "exec/run.hpp"

#include "schedule/constraints.hpp"
#include "schedule/distribute.hpp"
#include "schedule/grid.hpp"
#include "schedule/schedule.hpp"
#include "schedule/tiling.hpp"
