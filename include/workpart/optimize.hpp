#pragma once
/// \file optimize.hpp
/// The one header (it has the optimizer: wp::optimize, wp::automatic, wp::machine_model,
/// wp::plan_on_paper) plus the optimizer's input formats: cost tables of published graphs
/// (io/table_reader.hpp: wp::read_cost_tables) and program descriptions
/// (io/program_reader.hpp), as the command-line tool workpart-optimize reads them, and
/// wp::describe (optimize/describe.hpp) with wp::to_json, which write a typed program as one.
#include "workpart.hpp"
#include "io/program_reader.hpp"
#include "io/program_writer.hpp"
#include "io/table_reader.hpp"
#include "optimize/describe.hpp"
#include "optimize/join_descriptions.hpp"
#include "optimize/repeat_blocks.hpp"
#include "optimize/search.hpp"
