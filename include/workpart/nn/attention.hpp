#pragma once
/// \file attention.hpp
/// `wp::nn::multi_head_attention(name, x, heads)`: self-attention over x (batch, sequence,
/// embedding), as in "Attention is all you need", optionally causal; with a memory
/// (`multi_head_attention(name, x, memory, heads)`), x's attention over another sequence (a
/// decoder's over its encoder's output).

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "../core/space.hpp"
#include "../expr/reduce.hpp"
#include "layer.hpp"

namespace workpart::nn {

struct attention_options {
  bool causal = false;  ///< position s attends to positions t <= s only
};

namespace detail {

/// The arrays and parameters both attentions share, made in `a`: queries from x (batch, S,
/// E), keys and values from m (batch, T, E).
template <class T>
struct attention_arrays {
  index_t B, S, Sm, E, H, D;  // batch, x's and the memory's lengths, embedding, heads, E / H
  array<T, 3>&Wq, &Wk, &Wv, &Wo, &dWq, &dWk, &dWv, &dWo;
  array<T, 4>&Q, &K, &V, &A, &P, &O;
  array<T, 3>&M, &Z, &y;
  attention_arrays(layer_arrays& a, const std::string& name, const array<T, 3>& x,
                   const array<T, 3>& m, index_t heads)
      : B(x.extent(0)),
        S(x.extent(1)),
        Sm(m.extent(1)),
        E(x.extent(2)),
        H(heads),
        D(heads >= 1 && x.extent(2) % heads == 0 ? x.extent(2) / heads : 1),
        Wq(param(a, name + ".Wq", {E, H, D}, E)),
        Wk(param(a, name + ".Wk", {E, H, D}, E)),
        Wv(param(a, name + ".Wv", {E, H, D}, E)),
        Wo(param(a, name + ".Wo", {H, D, E}, E)),
        dWq(a.make<T, 3>("d" + name + ".Wq", {E, H, D})),
        dWk(a.make<T, 3>("d" + name + ".Wk", {E, H, D})),
        dWv(a.make<T, 3>("d" + name + ".Wv", {E, H, D})),
        dWo(a.make<T, 3>("d" + name + ".Wo", {H, D, E})),
        Q(a.make<T, 4>(name + ".Q", {B, S, H, D})),
        K(a.make<T, 4>(name + ".K", {B, Sm, H, D})),
        V(a.make<T, 4>(name + ".V", {B, Sm, H, D})),
        A(a.make<T, 4>(name + ".A", {B, H, S, Sm})),
        P(a.make<T, 4>(name + ".P", {B, H, S, Sm})),
        O(a.make<T, 4>(name + ".O", {B, S, H, D})),
        M(a.make<T, 3>(name + ".M", {B, H, S})),
        Z(a.make<T, 3>(name + ".Z", {B, H, S})),
        y(a.make<T, 3>(name + ".y", {B, S, E})) {}
  /// A projection, uniform in +-1/sqrt(E) (PyTorch's bound for a fan-in of E).
  static array<T, 3>& param(layer_arrays& a, const std::string& name,
                            const std::array<index_t, 3>& shape, index_t E) {
    auto& w = a.make<T, 3>(name, shape);
    init_uniform(w, 1 / std::sqrt(double(E)));
    return w;
  }
  auto params() const { return std::tuple{wrt(Wq, dWq), wrt(Wk, dWk), wrt(Wv, dWv), wrt(Wo, dWo)}; }

  /// The maps after the projections: scores, softmax, the heads' outputs and y = O Wo.
  auto after_projections(const std::string& name, attention_options o) {
    const T scale = T(1 / std::sqrt(double(D)));
    const T inf = std::numeric_limits<T>::infinity();
    const index_t ahead = o.causal ? 0 : Sm;  // t <= s + ahead: every t unless causal
    auto [b, s, h, d, e] = indices<5>();
    auto [qb, qh, qs, qt] = indices<4>();
    return std::tuple{
        map(name + ".scores", space(B, H, S, Sm),
            A(qb, qh, qs, qt) =
                select(val(qt) <= val(qs) + ahead,
                       sum(range(e, 0, D), Q(qb, qs, qh, e) * K(qb, qt, qh, e)) * scale, -inf)),
        map(name + ".max", space(B, H, S),
            M(qb, qh, qs) = max_of(range(qt, 0, Sm), A(qb, qh, qs, qt))),
        map(name + ".exp", space(B, H, S, Sm),
            P(qb, qh, qs, qt) = workpart::exp(A(qb, qh, qs, qt) - M(qb, qh, qs))),
        map(name + ".sum", space(B, H, S),
            Z(qb, qh, qs) = sum(range(qt, 0, Sm), P(qb, qh, qs, qt))),
        map(name + ".heads", space(B, S, H, D),
            O(b, s, h, d) = sum(range(e, 0, Sm), P(b, h, s, e) * V(b, e, h, d)) / Z(b, h, s)),
        map(name + ".y0", space(B, S, E), y(b, s, h) = T(0)),
        map(name, space(B, S, H, D, E), y(b, s, e) += O(b, s, h, d) * Wo(h, d, e))};
  }
};

template <class T>
void check_attention(const std::string& name, const array<T, 3>& x, const array<T, 3>* m,
                     index_t heads) {
  const index_t E = x.extent(2);
  if (heads < 1 || E % heads != 0)
    refuse(name,
           "heads " + std::to_string(heads) + " must divide the embedding " + std::to_string(E));
  if (m && (m->extent(0) != x.extent(0) || m->extent(2) != E))
    refuse(name, "its memory '" + m->name() + "' (batch " + std::to_string(m->extent(0)) +
                     ", embedding " + std::to_string(m->extent(2)) + ") does not match '" +
                     x.name() + "' (batch " + std::to_string(x.extent(0)) + ", embedding " +
                     std::to_string(E) + ")");
}

}  // namespace detail

/// With D = E / heads: Q, K, V (batch, seq, heads, D) = x Wq, x Wk, x Wv (one map of three
/// statements, `<name>.qkv`, so that under a head split x's gradient is combined once);
/// scores A(b, h, s, t) = Q(s) . K(t) / sqrt(D) (`<name>.scores`, -infinity where causal
/// masks), a softmax over t (`<name>.max`, `<name>.exp`, `<name>.sum`), the heads' outputs
/// O(b, s, h, d) = sum_t P(s, t) V(t) (`<name>.heads`) and y = O Wo (`<name>`). Parameters
/// `<name>.Wq`, `.Wk`, `.Wv` (E, heads, D) and `<name>.Wo` (heads, D, E), uniform in
/// +-1/sqrt(E); no biases.
template <class T>
layer_of<T, 3, 3, 3, 3, 3> multi_head_attention(const std::string& name, array<T, 3>& x,
                                                index_t heads, attention_options o = {}) {
  detail::check_attention(name, x, static_cast<const array<T, 3>*>(nullptr), heads);
  detail::layer_arrays a;
  detail::attention_arrays<T> t(a, name, x, x, heads);
  auto [b, s, h, d, e] = indices<5>();
  auto p = std::apply(
      [&](const auto&... rest) {
        return detail::program_of(
            a,
            map(name + ".qkv0", space(t.B, t.S, t.H, t.D), t.Q(b, s, h, d) = T(0),
                t.K(b, s, h, d) = T(0), t.V(b, s, h, d) = T(0)),
            map(name + ".qkv", space(t.B, t.S, t.H, t.D, t.E),
                t.Q(b, s, h, d) += x(b, s, e) * t.Wq(e, h, d),
                t.K(b, s, h, d) += x(b, s, e) * t.Wk(e, h, d),
                t.V(b, s, h, d) += x(b, s, e) * t.Wv(e, h, d)),
            rest...);
      },
      t.after_projections(name, o));
  return detail::make_layer(std::move(p), t.y, t.params());
}

/// Attention of x (batch, S, E) over a memory (batch, T, E), as a Transformer's decoder
/// attends to its encoder's output: Q = x Wq (`<name>.q0`, `<name>.q`), K = memory Wk and
/// V = memory Wv (one map of two statements, `<name>.kv0`, `<name>.kv`, so that under a head
/// split the memory's gradient is combined once), then as above over t < T (causal: t <= s).
/// The same parameters; x and the memory must agree in batch and embedding.
template <class T>
layer_of<T, 3, 3, 3, 3, 3> multi_head_attention(const std::string& name, array<T, 3>& x,
                                                array<T, 3>& memory, index_t heads,
                                                attention_options o = {}) {
  detail::check_attention(name, x, &memory, heads);
  detail::layer_arrays a;
  detail::attention_arrays<T> t(a, name, x, memory, heads);
  auto [b, s, h, d, e] = indices<5>();
  auto p = std::apply(
      [&](const auto&... rest) {
        return detail::program_of(
            a, map(name + ".q0", space(t.B, t.S, t.H, t.D), t.Q(b, s, h, d) = T(0)),
            map(name + ".q", space(t.B, t.S, t.H, t.D, t.E),
                t.Q(b, s, h, d) += x(b, s, e) * t.Wq(e, h, d)),
            map(name + ".kv0", space(t.B, t.Sm, t.H, t.D), t.K(b, s, h, d) = T(0),
                t.V(b, s, h, d) = T(0)),
            map(name + ".kv", space(t.B, t.Sm, t.H, t.D, t.E),
                t.K(b, s, h, d) += memory(b, s, e) * t.Wk(e, h, d),
                t.V(b, s, h, d) += memory(b, s, e) * t.Wv(e, h, d)),
            rest...);
      },
      t.after_projections(name, o));
  return detail::make_layer(std::move(p), t.y, t.params());
}

/// The instances compiled once in workpart::nn_compiled (see layer.hpp).
#define WORKPART_NN_ATTENTION_INSTANCES(EXTERN, T)                    \
  EXTERN template layer_of<T, 3, 3, 3, 3, 3> multi_head_attention<T>( \
      const std::string&, array<T, 3>&, index_t, attention_options);  \
  EXTERN template layer_of<T, 3, 3, 3, 3, 3> multi_head_attention<T>( \
      const std::string&, array<T, 3>&, array<T, 3>&, index_t, attention_options);
WORKPART_NN_EXTERN_TEMPLATES(WORKPART_NN_ATTENTION_INSTANCES)

}  // namespace workpart::nn
