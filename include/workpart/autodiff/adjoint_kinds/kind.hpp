#pragma once
/// \file kind.hpp
/// The customisation point over the kinds of contribution a statement's derivative returns
/// (rules.hpp: `statement_adjoint`, `adjoint`): a plain derivative statement, an
/// `inner_reduction_adjoint`, a `ties_count`, a `padded_adjoint`. `adjoint_kind<C>` says what
/// a contribution of type C gives at each step of a derivative; the steps (backward_map in
/// map_derivative.hpp, an inner reduction's levels in inner_reduction.hpp) loop over the
/// contributions asking each its kind, so that a kind is one specialisation in a file of its
/// own (adjoint_kinds/*.hpp, all included by adjoint_kinds.hpp), not a branch in each step.
///
/// A kind provides, as static members (each step's results in contribution order):
///   - `ties(c)`: the statements it adds to `d<map>.ties` (a std::tuple, maybe empty);
///   - `stores(c, site)`: the statements it runs as in the derivative map `site` (a tuple);
///     it may make arrays and note them in c for the later steps;
///   - `maps_after(c, fwd, site)`: the maps it adds after that derivative map (`<map>.sum`
///     ...), `fwd` the forward map differentiated;
///   - `unpad(c, grads)`: the maps it adds after those (`unpad.*`);
///   - `note_origin(c, origin)`: takes note of the forward array its statement writes;
///   - `gradient_origin(c, grads)`: the forward array whose gradient it writes in its
///     derivative map, nullptr for none (inner_reduction.hpp's order check).
///
/// The steps in rules.hpp, derivative_maps.hpp and inner_reduction.hpp see this declaration
/// only (the kinds call them: an inner reduction's kind makes the maps that differentiate its
/// body, whose terms are contributions again); the specialisations are found where they are
/// instantiated, from backward_map, which includes them all.

#include <string>
#include <type_traits>

#include "../../core/space.hpp"
#include "../gradient_table.hpp"

namespace workpart::detail {

/// What a contribution of type C gives at each step of a derivative (above); the second
/// parameter leaves room for a kind that matches types by a condition (std::enable_if_t).
template <class C, class = void>
struct adjoint_kind;

/// The kind of a contribution given as an expression's type (`decltype(c)` of an auto&).
template <class C>
using adjoint_kind_of = adjoint_kind<std::remove_cvref_t<C>>;

/// The derivative map a step makes (d<map>, or a reduction's d<map>.sum, ...), as the kinds
/// see it.
template <int N>
struct derivative_site {
  const space<N>& sp;  ///< its space
  std::string name;    ///< its name: the maps after it are named after it (<name>.sum)
  std::string stored;  ///< what the arrays stored in it are named after (dsum.<stored>)
  gradient_table& grads;
  int sums;  ///< the inner reductions met so far in the current pass (numbers their names)
};

}  // namespace workpart::detail
