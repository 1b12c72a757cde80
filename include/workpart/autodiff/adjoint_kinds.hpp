#pragma once
/// \file adjoint_kinds.hpp
/// Every kind of contribution a statement's derivative returns (adjoint_kinds/kind.hpp): what
/// instantiates the steps over contributions (map_derivative.hpp's backward_map) includes
/// this, so that each kind is found wherever a step asks it.

#include "adjoint_kinds/inner_reduction.hpp"
#include "adjoint_kinds/kind.hpp"
#include "adjoint_kinds/padded.hpp"
#include "adjoint_kinds/statement.hpp"
#include "adjoint_kinds/ties_count.hpp"
