#pragma once
/// \file map_derivative.hpp
/// The derivative maps of one forward map, derived from its statement types (rules.hpp):
/// `d<map>` holds its statements' contributions in reverse statement order; before it
/// `d<map>.ties` where it takes max_into/min_into shares, after it a `d<map>.sum` map for each
/// inner sum differentiated and the `unpad.*` maps of its padded reads. A program's map entry
/// (entries/map_model.hpp) calls it; wp::backward (backward.hpp) assembles the program.

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../expr/map.hpp"
#include "adjoint_kinds.hpp"
#include "derivative_maps.hpp"
#include "differentiable.hpp"
#include "gradient_table.hpp"
#include "rules.hpp"
#include "swap_dims.hpp"

namespace workpart::detail {

/// `d<map>`: the contributions of a forward map's statements, in reverse statement order;
/// before it `d<map>.ties` where it takes max_into/min_into shares, after it a `d<map>.sum`
/// map for each inner sum differentiated: at each step, what each contribution's kind gives
/// (adjoint_kinds/).
template <int N, class... S>
auto backward_map(const map_t<N, S...>& m, gradient_table& grads) {
  constexpr std::size_t n = sizeof...(S);
  auto contributions = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple_cat(statement_adjoint(std::get<n - 1 - I>(m.statements()), grads)...);
  }
  (std::make_index_sequence<n>{});
  if constexpr (std::tuple_size_v<decltype(contributions)> == 0) {
    return std::tuple<>{};
  } else {
    auto ties = std::apply(
        [&](const auto&... c) { return std::tuple_cat(adjoint_kind_of<decltype(c)>::ties(c)...); },
        contributions);
    auto ties_maps = [&] {
      if constexpr (std::tuple_size_v<decltype(ties)> == 0) {
        return std::tuple<>{};
      } else {
        return std::tuple{
            derivative_map("d" + m.name() + ".ties", m.iteration_space(), ties, grads)};
      }
    }();
    derivative_site<N> site{m.iteration_space(), "d" + m.name(), m.name(), grads, 0};
    auto form_of = [&](auto& c) { return adjoint_kind_of<decltype(c)>::stores(c, site); };
    auto forms = std::apply(
        [&](auto&... c) { return flatten(std::tuple<decltype(form_of(c))...>{form_of(c)...}); },
        contributions);
    auto dm = std::apply(
        [&](const auto&... st) { return workpart::map(site.name, m.iteration_space(), st...); },
        forms);
    choose_forms(dm, grads);
    site.sums = 0;
    auto sum_map_of = [&](const auto& c) {
      return adjoint_kind_of<decltype(c)>::maps_after(c, m, site);
    };
    auto sum_maps = std::apply(
        [&](const auto&... c) {
          return flatten(std::tuple<decltype(sum_map_of(c))...>{sum_map_of(c)...});
        },
        contributions);
    return std::tuple_cat(std::move(ties_maps), std::tuple{std::move(dm)}, std::move(sum_maps),
                          unpad_maps(contributions, grads));
  }
}

}  // namespace workpart::detail
