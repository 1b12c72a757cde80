#pragma once
/// \file attention.hpp
/// `wp::nn::multi_head_attention(name, x, heads)`: self-attention over x (batch, sequence,
/// embedding), as in "Attention is all you need", optionally causal.

#include <cmath>
#include <limits>
#include <string>

#include "../core/space.hpp"
#include "../expr/reduce.hpp"
#include "layer.hpp"

namespace workpart::nn {

struct attention_options {
  bool causal = false;  ///< position s attends to positions t <= s only
};

/// With D = E / heads: Q, K, V (batch, seq, heads, D) = x Wq, x Wk, x Wv (one map of three
/// statements, `<name>.qkv`, so that under a head split x's gradient is combined once);
/// scores A(b, h, s, t) = Q(s) . K(t) / sqrt(D) (`<name>.scores`, -infinity where causal
/// masks), a softmax over t (`<name>.max`, `<name>.exp`, `<name>.sum`), the heads' outputs
/// O(b, s, h, d) = sum_t P(s, t) V(t) (`<name>.heads`) and y = O Wo (`<name>`). Parameters
/// `<name>.Wq`, `.Wk`, `.Wv` (E, heads, D) and `<name>.Wo` (heads, D, E), uniform in
/// +-1/sqrt(E); no biases.
template <class T>
auto multi_head_attention(const std::string& name, array<T, 3>& x, index_t heads,
                          attention_options o = {}) {
  const index_t B = x.extent(0), S = x.extent(1), E = x.extent(2), H = heads;
  if (H < 1 || E % H != 0)
    detail::refuse(
        name, "heads " + std::to_string(H) + " must divide the embedding " + std::to_string(E));
  const index_t D = E / H;
  detail::layer_arrays a;
  auto param = [&](const std::string& p, const std::array<index_t, 3>& shape) -> array<T, 3>& {
    auto& w = a.make<T, 3>(name + "." + p, shape);
    detail::init_uniform(w, 1 / std::sqrt(double(E)));
    return w;
  };
  auto& Wq = param("Wq", {E, H, D});
  auto& Wk = param("Wk", {E, H, D});
  auto& Wv = param("Wv", {E, H, D});
  auto& Wo = param("Wo", {H, D, E});
  auto& dWq = a.make<T, 3>("d" + name + ".Wq", {E, H, D});
  auto& dWk = a.make<T, 3>("d" + name + ".Wk", {E, H, D});
  auto& dWv = a.make<T, 3>("d" + name + ".Wv", {E, H, D});
  auto& dWo = a.make<T, 3>("d" + name + ".Wo", {H, D, E});
  auto& Q = a.make<T, 4>(name + ".Q", {B, S, H, D});
  auto& K = a.make<T, 4>(name + ".K", {B, S, H, D});
  auto& V = a.make<T, 4>(name + ".V", {B, S, H, D});
  auto& A = a.make<T, 4>(name + ".A", {B, H, S, S});
  auto& M = a.make<T, 3>(name + ".M", {B, H, S});
  auto& P = a.make<T, 4>(name + ".P", {B, H, S, S});
  auto& Z = a.make<T, 3>(name + ".Z", {B, H, S});
  auto& O = a.make<T, 4>(name + ".O", {B, S, H, D});
  auto& y = a.make<T, 3>(name + ".y", {B, S, E});
  const T scale = T(1 / std::sqrt(double(D)));
  const T inf = std::numeric_limits<T>::infinity();
  const index_t ahead = o.causal ? 0 : S;  // t <= s + ahead: every t unless causal
  auto [b, s, h, d, e] = indices<5>();
  auto [qb, qh, qs, qt] = indices<4>();
  auto p = detail::program_of(
      a,
      map(name + ".qkv0", space(B, S, H, D), Q(b, s, h, d) = T(0), K(b, s, h, d) = T(0),
          V(b, s, h, d) = T(0)),
      map(name + ".qkv", space(B, S, H, D, E), Q(b, s, h, d) += x(b, s, e) * Wq(e, h, d),
          K(b, s, h, d) += x(b, s, e) * Wk(e, h, d), V(b, s, h, d) += x(b, s, e) * Wv(e, h, d)),
      map(name + ".scores", space(B, H, S, S),
          A(qb, qh, qs, qt) =
              select(val(qt) <= val(qs) + ahead,
                     sum(range(e, 0, D), Q(qb, qs, qh, e) * K(qb, qt, qh, e)) * scale, -inf)),
      map(name + ".max", space(B, H, S),
          M(qb, qh, qs) = max_of(range(qt, 0, S), A(qb, qh, qs, qt))),
      map(name + ".exp", space(B, H, S, S),
          P(qb, qh, qs, qt) = workpart::exp(A(qb, qh, qs, qt) - M(qb, qh, qs))),
      map(name + ".sum", space(B, H, S), Z(qb, qh, qs) = sum(range(qt, 0, S), P(qb, qh, qs, qt))),
      map(name + ".heads", space(B, S, H, D),
          O(b, s, h, d) = sum(range(e, 0, S), P(b, h, s, e) * V(b, e, h, d)) / Z(b, h, s)),
      map(name + ".y0", space(B, S, E), y(b, s, h) = T(0)),
      map(name, space(B, S, H, D, E), y(b, s, e) += O(b, s, h, d) * Wo(h, d, e)));
  return detail::make_layer(std::move(p), y,
                            std::tuple{wrt(Wq, dWq), wrt(Wk, dWk), wrt(Wv, dWv), wrt(Wo, dWo)});
}

}  // namespace workpart::nn
