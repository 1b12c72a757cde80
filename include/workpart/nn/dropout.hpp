#pragma once
/// \file dropout.hpp
/// Inverted dropout with a counter-based mask: `wp::nn::dropout(name, x, p, step)`.

#include <array>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/space.hpp"
#include "../expr/ops.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// y(i...) = x(i...) / (1 - p) where random_uniform(seed, step(), val(i)...) >= p, else 0,
/// with seed = the FNV-1a hash of `name`: each element is dropped with probability p, by a
/// counter-based generator of (layer, step, global coordinates), so the mask is the same on
/// every rank, every grid and the device, and the backward pass (which evaluates the same
/// expression) drops the same elements. `step` is a rank-0 integer array the caller owns: its
/// root value when the plan scatters is the first step's; `next_step(step)` at the end of the
/// training step's program advances it on the ranks, so each execute() draws new masks. One
/// counter can serve every dropout layer (each mixes in its own name). p = 0 keeps every
/// element.
template <class T, int N, class S>
layer_of<T, N> dropout(const std::string& name, array<T, N>& x, double p, array<S, 0>& step) {
  static_assert(std::is_integral_v<S>,
                "wp::nn::dropout: the step counter must be an integer array");
  if (!(p >= 0.0 && p < 1.0)) {
    std::ostringstream got;
    got << p;
    detail::refuse(name, "the drop probability must be in [0, 1), got " + got.str());
  }
  detail::layer_arrays a;
  auto& y = a.make<T, N>(name + ".y", x.shape());
  const auto sp = workpart::detail::space_of(x);
  const auto seed = std::int64_t(detail::name_seed(name) >> 1);
  const T scale = T(1.0 / (1.0 - p));
  auto m = [&]<std::size_t... D>(std::index_sequence<D...>) {
    const auto keep =
        workpart::random_uniform(seed, step(), workpart::val(index<int(D)>{})...) >= p;
    return workpart::map(
        name, sp,
        y(index<int(D)>{}...) = workpart::select(keep, x(index<int(D)>{}...) * scale, T(0)));
  }
  (std::make_index_sequence<std::size_t(N)>{});
  return detail::make_layer(detail::program_of(a, m), y, std::tuple<>{});
}

/// The map `<name>`: step() += 1. Put it after the updates in a training step's program
/// (wp::program(fwd, backward, sgd, next_step(step))): each execute() then runs with the next
/// counter, on every rank, as the weights it updates.
template <class S>
workpart::program next_step(array<S, 0>& step, const std::string& name = "step.next") {
  static_assert(std::is_integral_v<S>,
                "wp::nn::next_step: the step counter must be an integer array");
  return workpart::program(forward_only, workpart::map(name, space(), step() += S(1)));
}

/// The instances compiled once in workpart::nn_compiled, ranks 2 to 4 with a step counter of
/// std::int64_t (see layer.hpp).
#define WORKPART_NN_DROPOUT_INSTANCES(EXTERN, T)                                               \
  EXTERN template layer_of<T, 2> dropout<T, 2, std::int64_t>(const std::string&, array<T, 2>&, \
                                                             double, array<std::int64_t, 0>&); \
  EXTERN template layer_of<T, 3> dropout<T, 3, std::int64_t>(const std::string&, array<T, 3>&, \
                                                             double, array<std::int64_t, 0>&); \
  EXTERN template layer_of<T, 4> dropout<T, 4, std::int64_t>(const std::string&, array<T, 4>&, \
                                                             double, array<std::int64_t, 0>&);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_DROPOUT_INSTANCES)

}  // namespace workpart::nn
