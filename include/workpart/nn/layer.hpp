#pragma once
/// \file layer.hpp
/// What every layer function of <workpart/nn.hpp> returns, and the arrays it makes.
///
/// A layer is plain maps: `layer::program` holds its forward maps and keeps alive the arrays
/// the layer made (its output, its parameters and their gradients), `layer::out()` is its
/// output, `layer::params` its parameters as `wp::wrt(W, dW)`, for wp::backward and the
/// updates (train.hpp). Programs concatenate, so a network is `wp::program(l1.program,
/// l2.program, ...)`, planned, optimised and explained like any program.

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../autodiff/backward.hpp"
#include "../core/array.hpp"
#include "../error.hpp"
#include "../expr/map.hpp"
#include "../entries/map_model.hpp"
#include "../program/program.hpp"

namespace workpart::nn {

/// A layer: its maps (owning the arrays it made), its output, its parameters.
template <class Program, class Out, class Params>
struct layer {
  Program program;  ///< the forward maps
  Out* output;      ///< the layer's output (owned by `program`)
  Params params;    ///< std::tuple of wp::wrt(W, dW), one per parameter
  Out& out() const noexcept { return *output; }
};

/// What a layer function returns: its output an array<T, N>, its parameters wp::wrt of arrays
/// of the ranks ParamRanks, in order (none: std::tuple<>).
template <class T, int N, int... ParamRanks>
using layer_of = layer<workpart::program, array<T, N>, std::tuple<wrt_t<T, ParamRanks>...>>;

/// Where the layers are compiled. With WORKPART_NN_SEPARATE_COMPILATION (the CMake target
/// workpart::nn_compiled) each header declares its layer functions for the element types the
/// library was built for (WORKPART_NN_COMPILED_FLOAT and _DOUBLE, 1 or 0: CMake's
/// WORKPART_NN_COMPILED_TYPES; both by default) `extern template`: they are instantiated once,
/// in src/nn/*.cpp, and a network's file does not compile its layers' maps (their plans,
/// kernels and derivatives) again. Other element types, ranks and forms are instantiated where
/// used, as header-only. Each header names its instances in a macro LIST(EXTERN, T) that
/// src/nn/ expands with EXTERN empty (WORKPART_NN_DEFINE_TEMPLATES).
#if !defined(WORKPART_NN_COMPILED_FLOAT)
#define WORKPART_NN_COMPILED_FLOAT 1
#endif
#if !defined(WORKPART_NN_COMPILED_DOUBLE)
#define WORKPART_NN_COMPILED_DOUBLE 1
#endif
#if WORKPART_NN_COMPILED_FLOAT
#define WORKPART_NN_FOR_FLOAT(LIST, EXTERN) LIST(EXTERN, float)
#else
#define WORKPART_NN_FOR_FLOAT(LIST, EXTERN)
#endif
#if WORKPART_NN_COMPILED_DOUBLE
#define WORKPART_NN_FOR_DOUBLE(LIST, EXTERN) LIST(EXTERN, double)
#else
#define WORKPART_NN_FOR_DOUBLE(LIST, EXTERN)
#endif
#define WORKPART_NN_DEFINE_TEMPLATES(LIST) \
  WORKPART_NN_FOR_FLOAT(LIST, ) WORKPART_NN_FOR_DOUBLE(LIST, )
#if defined(WORKPART_NN_SEPARATE_COMPILATION)
#define WORKPART_NN_EXTERN_TEMPLATES(LIST) \
  WORKPART_NN_FOR_FLOAT(LIST, extern) WORKPART_NN_FOR_DOUBLE(LIST, extern)
#else
#define WORKPART_NN_EXTERN_TEMPLATES(LIST)
#endif

namespace detail {

/// The arrays one layer makes, kept alive by its program (and every program made from it).
struct layer_arrays {
  std::vector<std::shared_ptr<const void>> owned;
  template <class T, int N>
  array<T, N>& make(std::string name, const std::array<index_t, std::size_t(N)>& shape) {
    auto a = std::make_shared<array<T, N>>(std::move(name), shape);
    owned.push_back(a);
    return *a;
  }
};

/// The program of `maps` owning `arrays`.
template <class... M>
workpart::program program_of(const layer_arrays& arrays, const M&... maps) {
  workpart::program p(maps...);
  p.keep(arrays.owned);
  return p;
}

template <class Program, class Out, class Params>
auto make_layer(Program p, Out& out, Params params) {
  return layer<Program, Out, Params>{std::move(p), &out, std::move(params)};
}

/// FNV-1a of a name: the seed of a parameter's initial values (the same on every rank).
inline std::uint64_t name_seed(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
/// splitmix64: a counter-based generator, so element e's value is the same on every grid.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/// Uniform in [0, 1) from (seed, counter).
inline double uniform01(std::uint64_t seed, std::uint64_t counter) {
  return double(mix(seed ^ mix(counter)) >> 11) * 0x1.0p-53;
}

/// Fills `a` with values uniform in [-bound, bound) (PyTorch's default for linear and
/// convolution weights and biases: bound = 1 / sqrt(fan_in)), from a counter-based generator
/// seeded by the array's name: the same values on every rank and every grid.
template <class T, int N>
void init_uniform(array<T, N>& a, double bound) {
  const std::uint64_t seed = name_seed(a.name());
  const auto shape = a.shape();
  a.init([seed, bound, shape](const std::array<index_t, std::size_t(N)>& g) {
    std::uint64_t e = 0;
    for (int d = 0; d < N; ++d)
      e = e * std::uint64_t(shape[std::size_t(d)]) + std::uint64_t(g[std::size_t(d)]);
    return T(bound * (2 * uniform01(seed, e) - 1));
  });
}

/// A shape as "(2, 3, 6)", for the layers' messages.
inline std::string shape_text(const index_t* e, int n) {
  std::string s;
  for (int d = 0; d < n; ++d) s += (d ? ", " : "") + std::to_string(e[d]);
  return "(" + s + ")";
}

[[noreturn]] inline void refuse(const std::string& layer, const std::string& why) {
  throw shape_error("wp::nn: layer '" + layer + "': " + why);
}

}  // namespace detail
}  // namespace workpart::nn
