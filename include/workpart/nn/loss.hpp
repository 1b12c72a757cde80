#pragma once
/// \file loss.hpp
/// `wp::nn::softmax_cross_entropy(name, logits, labels)`: the mean over the batch of
/// -log softmax(logits(b, .))(labels(b)), a rank-0 array to differentiate from; over a
/// sequence (logits (batch, positions, classes), labels (batch, positions)), the mean over
/// every position of the batch (a language model's next-token loss).

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
layer_of<T, 0> softmax_cross_entropy(const std::string& name, array<T, 2>& logits,
                                     array<I, 1>& labels) {
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

/// logits (batch, positions, classes), labels (batch, positions): L = the mean over (b, s)
/// of lse(b, s) - logits(b, s, labels(b, s)). The same maps over (batch, positions).
template <class T, class I>
layer_of<T, 0> softmax_cross_entropy(const std::string& name, array<T, 3>& logits,
                                     array<I, 2>& labels) {
  static_assert(std::is_integral_v<I>, "wp::nn::softmax_cross_entropy: labels are integers");
  const index_t B = logits.extent(0), S = logits.extent(1), C = logits.extent(2);
  if (labels.extent(0) != B || labels.extent(1) != S)
    detail::refuse(name, "labels '" + labels.name() + "' are (" + std::to_string(labels.extent(0)) +
                             ", " + std::to_string(labels.extent(1)) + ") for logits of (" +
                             std::to_string(B) + ", " + std::to_string(S) + ") positions");
  if (B < 1 || S < 1 || C < 1) detail::refuse(name, "the logits are empty");
  detail::layer_arrays a;
  auto& mx = a.make<T, 2>(name + ".max", {B, S});
  auto& lse = a.make<T, 2>(name + ".lse", {B, S});
  auto& L = a.make<T, 0>(name + ".L", {});
  auto [b, s] = indices<2>();
  auto p = detail::program_of(
      a, map(name + ".max", space(B, S), mx(b, s) = max_of(logits(b, s, all))),
      map(name + ".lse", space(B, S),
          lse(b, s) = workpart::log(sum(workpart::exp(logits(b, s, all) - mx(b, s)))) + mx(b, s)),
      map(name + ".l0", space(), L() = T(0)),
      map(name, space(B, S), L() += (lse(b, s) - logits(b, s, labels(b, s))) * (T(1) / T(B * S))));
  return detail::make_layer(std::move(p), L, std::tuple<>{});
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_LOSS_INSTANCES(EXTERN, T)                            \
  EXTERN template layer_of<T, 0> softmax_cross_entropy<T, std::int32_t>( \
      const std::string&, array<T, 2>&, array<std::int32_t, 1>&);        \
  EXTERN template layer_of<T, 0> softmax_cross_entropy<T, std::int64_t>( \
      const std::string&, array<T, 2>&, array<std::int64_t, 1>&);        \
  EXTERN template layer_of<T, 0> softmax_cross_entropy<T, std::int32_t>( \
      const std::string&, array<T, 3>&, array<std::int32_t, 2>&);        \
  EXTERN template layer_of<T, 0> softmax_cross_entropy<T, std::int64_t>( \
      const std::string&, array<T, 3>&, array<std::int64_t, 2>&);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_LOSS_INSTANCES)

}  // namespace workpart::nn
