#pragma once
/// \file differentiability.hpp
/// Whether wp::backward can differentiate a map, decided from its types alone: a program
/// (entries/map_model.hpp) holds maps that are never differentiated too (a CSR sum whose
/// bounds read data), so the derivative of a map type is instantiated only where this says
/// it exists, and asking for it elsewhere is a wp::error naming the reason at run time. The
/// reasons are the ones the rules (rules.hpp, swap_dims.hpp) stop the build with.

#include <tuple>
#include <type_traits>

#include "../expr/access.hpp"
#include "../expr/map.hpp"
#include "../expr/ops.hpp"
#include "../expr/padded.hpp"
#include "../expr/reduce.hpp"
#include "../expr/statement.hpp"
#include "rules.hpp"

namespace workpart::detail {

inline constexpr const char* refuse_all_read =
    "a wp::all read outside an inner reduction has no derivative";
inline constexpr const char* refuse_indirect_inner =
    "a read through an indirect subscript of an inner reduction's index is not differentiable "
    "yet";
inline constexpr const char* refuse_data_bounds =
    "an inner wp::sum, wp::max_of or wp::min_of is differentiable over affine bounds; one whose "
    "bounds read data is not yet (write it as a statement over a space that includes its "
    "index: a CSR row sum as y(row_of(q)) += val(q) * x(col(q)))";
inline constexpr const char* refuse_no_rule = "an expression node has no differentiation rule";

/// nullptr where the expression E (inside inner reductions over the dimensions `inner`) is
/// differentiable, else why not.
template <class E, dim_mask inner>
struct refusal_of {
  static constexpr const char* value = refuse_no_rule;
};
template <class V, dim_mask inner>
struct refusal_of<scalar_node<V>, inner> {
  static constexpr const char* value = nullptr;
};
template <int D, dim_mask inner>
struct refusal_of<val_node<D>, inner> {
  static constexpr const char* value = nullptr;
};
template <class A, dim_mask inner>
struct refusal_of<padded_node<A>, inner> {
  static constexpr const char* value = nullptr;
};
template <class T, int N, class... Subs, dim_mask inner>
struct refusal_of<access_node<T, N, Subs...>, inner> {
  using A = access_node<T, N, Subs...>;
  static constexpr const char* value =
      !std::is_floating_point_v<T>                           ? nullptr
      : inner == 0 && (std::is_same_v<Subs, all_sub> || ...) ? refuse_all_read
      : !A::all_affine && (A::indirect_free & inner) != 0    ? refuse_indirect_inner
                                                             : nullptr;
};
template <class Op, class E, dim_mask inner>
struct refusal_of<unary_node<Op, E>, inner> {
  static constexpr const char* value =
      std::is_same_v<Op, op_unit_interval> ? nullptr : refusal_of<E, inner>::value;
};
template <class Op, class L, class R, dim_mask inner>
struct refusal_of<binary_node<Op, L, R>, inner> {
  static constexpr const char* value = [] {
    if constexpr (!binary_derivative<Op>::differentiable)
      return static_cast<const char*>(nullptr);  // a gate: nothing flows through it
    else if constexpr (refusal_of<L, inner>::value != nullptr)
      return refusal_of<L, inner>::value;
    else
      return refusal_of<R, inner>::value;
  }();
};
template <class C, class A, class B, dim_mask inner>
struct refusal_of<select_node<C, A, B>, inner> {
  static constexpr const char* value = refusal_of<A, inner>::value != nullptr
                                           ? refusal_of<A, inner>::value
                                           : refusal_of<B, inner>::value;
};
template <class Red, int D, class Lo, class Hi, class Body, dim_mask inner>
struct refusal_of<reduce_node<Red, D, Lo, Hi, Body>, inner> {
  static constexpr const char* value = !is_affine_v<Lo> || !is_affine_v<Hi>
                                           ? refuse_data_bounds
                                           : refusal_of<Body, inner | dim_bit(D)>::value;
};

template <class St>
struct statement_refusal;
template <class K, class L, class R>
struct statement_refusal<statement<K, L, R>> {
  static constexpr const char* value =
      std::is_floating_point_v<typename L::value_type> ? refusal_of<R, 0>::value : nullptr;
};

/// nullptr where wp::backward can differentiate every statement of the map type, else why not.
template <class Map>
struct map_refusal;
template <int N, class... S>
struct map_refusal<map_t<N, S...>> {
  static constexpr const char* value = [] {
    const char* r = nullptr;
    ((r = r != nullptr ? r : statement_refusal<S>::value), ...);
    return r;
  }();
};

}  // namespace workpart::detail
