#pragma once
/// \file loss.hpp
/// `wp::nn::softmax_cross_entropy(name, logits, labels)`: the mean over the batch of
/// -log softmax(logits(b, .))(labels(b)), a rank-0 array to differentiate from.

#include <cstdint>
#include <string>
#include <type_traits>

#include "../core/space.hpp"
#include "../expr/reduce.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// logits (batch, classes), labels (batch) of class numbers. Maps `<name>.max` (the row's
/// maximum, for a softmax that cannot overflow), `<name>.lse` (its log-sum-exp), `<name>.l0`
/// and `<name>` (L += (lse(b) - logits(b, labels(b))) / batch: an indirect read, whose
/// gradient is a scatter-add). `out()` is L. A label outside [0, classes) is an out-of-bounds
/// error when the map runs.
template <class T, class I>
auto softmax_cross_entropy(const std::string& name, array<T, 2>& logits, array<I, 1>& labels) {
  static_assert(std::is_integral_v<I>, "wp::nn::softmax_cross_entropy: labels are integers");
  const index_t B = logits.extent(0), C = logits.extent(1);
  if (labels.extent(0) != B)
    detail::refuse(name, "labels '" + labels.name() + "' hold " + std::to_string(labels.extent(0)) +
                             " entries for a batch of " + std::to_string(B));
  if (B < 1 || C < 1) detail::refuse(name, "the logits are empty");
  detail::layer_arrays a;
  auto& mx = a.make<T, 1>(name + ".max", {B});
  auto& lse = a.make<T, 1>(name + ".lse", {B});
  auto& L = a.make<T, 0>(name + ".L", {});
  auto [b] = indices<1>();
  auto p = detail::program_of(
      a, map(name + ".max", space(B), mx(b) = max_of(logits(b, all))),
      map(name + ".lse", space(B),
          lse(b) = workpart::log(sum(workpart::exp(logits(b, all) - mx(b)))) + mx(b)),
      map(name + ".l0", space(), L() = T(0)),
      map(name, space(B), L() += (lse(b) - logits(b, labels(b))) * (T(1) / T(B))));
  return detail::make_layer(std::move(p), L, std::tuple<>{});
}

}  // namespace workpart::nn
