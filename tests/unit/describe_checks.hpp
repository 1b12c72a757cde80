#pragma once
// What tests/unit/test_describe*.cpp share: programs described and priced against their typed
// forms.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>
#include <workpart/optimize.hpp>
#include <workpart/nn/lstm.hpp>

#include "../error_text.hpp"
#include "../conv_train_step.hpp"
#include "priced_alike.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace wp = workpart;
using workpart::index_t;

namespace {

/// The description of `prog`, checked to read back from its JSON to the same JSON, and to
/// price as the typed program.
template <class Prog>
wp::program_description require_described(const Prog& prog) {
  const wp::program_description d = wp::describe(prog);
  const std::string json = wp::to_json(d);
  INFO(json);
  const wp::program_description back = wp::parse_program_description(json, "described.json");
  REQUIRE(wp::to_json(back) == json);
  require_same_as_typed(prog, back);
  return d;
}

inline const wp::access_description& access_of(const wp::program_description& d,
                                               const std::string& map, std::size_t k) {
  for (const auto& m : d.maps)
    if (m.name == map) return m.accesses.at(k);
  FAIL("no map " << map);
  throw 0;
}

}  // namespace
