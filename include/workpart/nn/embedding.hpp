#pragma once
/// \file embedding.hpp
/// `wp::nn::embedding(name, tokens, vocabulary, dim)`: y(b, s, d) = E(tokens(b, s), d).

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// A lookup of each token's row of the table `<name>.E` (vocabulary, dim), initialised
/// uniform in +-sqrt(3) (unit variance, as PyTorch's normal(0, 1) has). Map `<name>` over
/// (batch, sequence, dim): an indirect read, whose gradient is a scatter-add into the
/// table's. A token outside [0, vocabulary) is an out-of-bounds error when the map runs.
template <class T, class I>
layer_of<T, 3, 2> embedding(const std::string& name, array<I, 2>& tokens, index_t vocabulary,
                            index_t dim) {
  static_assert(std::is_integral_v<I>, "wp::nn::embedding: tokens are integers");
  if (vocabulary < 1 || dim < 1) detail::refuse(name, "vocabulary and dim must be at least 1");
  const index_t B = tokens.extent(0), S = tokens.extent(1);
  detail::layer_arrays a;
  auto& E = a.make<T, 2>(name + ".E", {vocabulary, dim});
  auto& dE = a.make<T, 2>("d" + name + ".E", {vocabulary, dim});
  auto& y = a.make<T, 3>(name + ".y", {B, S, dim});
  detail::init_uniform(E, std::sqrt(3.0));
  auto [b, s, d] = indices<3>();
  auto p = detail::program_of(a, map(name, space(B, S, dim), y(b, s, d) = E(tokens(b, s), d)));
  return detail::make_layer(std::move(p), y, std::tuple{wrt(E, dE)});
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_EMBEDDING_INSTANCES(EXTERN, T)                    \
  EXTERN template layer_of<T, 3, 2> embedding<T, std::int32_t>(       \
      const std::string&, array<std::int32_t, 2>&, index_t, index_t); \
  EXTERN template layer_of<T, 3, 2> embedding<T, std::int64_t>(       \
      const std::string&, array<std::int64_t, 2>&, index_t, index_t);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_EMBEDDING_INSTANCES)

}  // namespace workpart::nn
