#pragma once
/// \file inception.hpp
/// InceptionV3 as PaSE trains it (../shared/anchors/pase-graphs/inception3.json; Szegedy et al.
/// 2016, torchvision's layout without the auxiliary classifier): every convolution is a unit
/// of convolution, batch norm (training statistics) and ReLU. The stem: 3 x 3 stride 2 (32),
/// 3 x 3 (32), 3 x 3 padding 1 (64), a 3 x 3 stride-2 max pooling, 1 x 1 (80), 3 x 3 (192), a
/// 3 x 3 stride-2 max pooling; then the modules, each joining its branches along the channels
/// (wp::nn::concat):
///  - A (m5b, m5c, m5d; 35 x 35): 1 x 1 (64) | 1 x 1 (48), 5 x 5 (64) | 1 x 1 (64), 3 x 3 (96),
///    3 x 3 (96) | a 3 x 3 average pooling (stride 1, padding 1), 1 x 1 (32, then 64);
///  - B (m6a, to 17 x 17): 3 x 3 stride 2 (384) | 1 x 1 (64), 3 x 3 (96), 3 x 3 stride 2 (96) |
///    a 3 x 3 stride-2 max pooling;
///  - C (m6b .. m6e; 17 x 17, c = 128, 160, 160, 192): 1 x 1 (192) | 1 x 1 (c), 1 x 7 (c),
///    7 x 1 (192) | 1 x 1 (c), 7 x 1 (c), 1 x 7 (c), 7 x 1 (c), 1 x 7 (192) | average pooling,
///    1 x 1 (192);
///  - D (m7a, to 8 x 8): 1 x 1 (192), 3 x 3 stride 2 (320) | 1 x 1 (192), 1 x 7, 7 x 1, 3 x 3
///    stride 2 (192 each) | a 3 x 3 stride-2 max pooling;
///  - E (m7b, m7c; 8 x 8): 1 x 1 (320) | 1 x 1 (384) then 1 x 3 and 3 x 1 (384 each, joined) |
///    1 x 1 (448), 3 x 3 (384) then 1 x 3 and 3 x 1 (384 each, joined) | average pooling, 1 x 1
///    (192);
/// then the mean over the last plane (2048 channels), a fully connected layer to 1000 classes
/// and softmax cross-entropy. Padding keeps a plane's size except in the stem and where a
/// stride is said; 1 x 7 pads (0, 3), 7 x 1 (3, 0). Batch 128, 3 x 299 x 299 images: 94
/// convolutions, as PaSE's graph.
///
/// `size.layout` chooses the modules, at run time: all of PaSE's (`full`), one of each kind
/// (`one_each`: m5b, m6a, m6b, m7a, m7b, 41 convolutions) or those but the C module (`small`:
/// 31 convolutions; D's 1 x 7 and 7 x 1 stand for C's). `width` divides every channel count
/// and the classes, and `image` sets the input's side, so tests train it small (image 75 leaves
/// 7, 3 and 1 pixels a side in the modules).
///
/// The step is a run-time program and its parameters a run-time list (parameter_list), so the
/// full network's typed step (94 convolutions, 4000-odd maps) compiles as one module of each
/// kind does; `inception_description` also describes any layout's step piece by piece
/// (wp::join_pieces), for the optimizer.

#include "network.hpp"

#include <workpart/optimize/describe.hpp>
#include <workpart/optimize/join_descriptions.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace wpnet {

/// Which of InceptionV3's modules a wpnet::inception holds (the stem, the mean, the classifier
/// always).
enum class inception_layout {
  full,      ///< PaSE's: m5b, m5c, m5d, m6a, m6b .. m6e, m7a, m7b, m7c (94 convolutions)
  one_each,  ///< one module of each kind: m5b, m6a, m6b, m7a, m7b (41 convolutions)
  small,     ///< m5b, m6a, m7a, m7b (31 convolutions)
};

struct inception_size {
  index_t batch = 128;
  index_t image = 299;     ///< input height and width
  index_t width = 1;       ///< divides every channel count and the classes
  index_t classes = 1000;  ///< (divided by width too)
  inception_layout layout = inception_layout::full;  ///< which modules
};

namespace detail {

/// Parameter lists joined, at run time (parameter_list): the full network's 378 parameters
/// cost no compile time.
template <class T, class... P>
parameter_list<T> params_cat(parameter_list<T> first, const P&... rest) {
  (first.add(rest), ...);
  return first;
}

/// Inception's unit: a convolution, its batch norm and a ReLU (`<name>.conv`, `.bn`, `.relu`).
template <class T>
auto unit(const std::string& name, wp::array<T, 4>& x, index_t out, wp::nn::size2d kernel,
          wp::nn::conv2d_options o = {}) {
  namespace nn = wp::nn;
  auto c = nn::conv2d(name + ".conv", x, out, kernel, o);
  auto b = nn::batch_norm(name + ".bn", c.out());
  auto r = nn::relu(name + ".relu", b.out());
  parameter_list<T> params;
  params.add(nn::parameters(c, b));
  return join(wp::program(c.program, b.program, r.program), r.out(), std::move(params));
}

/// A pooling as a joined layer (no parameters).
template <class Layer>
auto no_params(Layer l) {
  using T = typename std::remove_reference_t<decltype(l.out())>::value_type;
  return join(std::move(l.program), l.out(), parameter_list<T>{});
}

/// `first`, then each of `next` over the output before it: a branch of units in a row.
template <class J>
auto chain(J first) {
  return first;
}
template <class J, class F, class... Fs>
auto chain(J first, F next, Fs... rest) {
  auto second = next(*first.out);
  return chain(join(wp::program(first.program, second.program), *second.out,
                    params_cat(first.params, second.params)),
               rest...);
}

/// Branches joined along the channels by the concat `name`.
template <class... J>
auto joined_branches(const std::string& name, J... branches) {
  auto c = wp::nn::concat(name, *branches.out...);
  return join(wp::program(branches.program..., c.program), c.out(), params_cat(branches.params...));
}

/// `stem`, then two units over its output (1 x 3 padded (0, 1) and 3 x 1 padded (1, 0), `out`
/// channels each) joined: module E's split branches.
template <class J>
auto split_1x3_3x1(const std::string& name, J stem, index_t out) {
  auto& y = *stem.out;
  auto both = joined_branches(name + ".cat", unit(name + "a", y, out, {1, 3}, {.padding = {0, 1}}),
                              unit(name + "b", y, out, {3, 1}, {.padding = {1, 0}}));
  return join(wp::program(stem.program, both.program), *both.out,
              params_cat(stem.params, both.params));
}

/// A 3 x 3 average pooling keeping the plane (stride 1, padding 1), then a 1 x 1 unit.
template <class T>
auto pool_branch(const std::string& name, wp::array<T, 4>& x, index_t out) {
  return chain(no_params(wp::nn::avg_pool2d(name + ".pool", x, 3, {.stride = 1, .padding = 1})),
               [&](wp::array<T, 4>& y) { return unit(name + ".bp", y, out, 1); });
}

template <class T>
auto stem(wp::array<T, 4>& x, index_t d) {
  namespace nn = wp::nn;
  using A = wp::array<T, 4>;
  return chain(
      unit("stem1", x, narrow(32, d), 3, {.stride = 2}),
      [&](A& y) { return unit("stem2", y, narrow(32, d), 3); },
      [&](A& y) { return unit("stem3", y, narrow(64, d), 3, {.padding = 1}); },
      [&](A& y) { return no_params(nn::max_pool2d("pool1", y, 3, {.stride = 2})); },
      [&](A& y) { return unit("stem4", y, narrow(80, d), 1); },
      [&](A& y) { return unit("stem5", y, narrow(192, d), 3); },
      [&](A& y) { return no_params(nn::max_pool2d("pool2", y, 3, {.stride = 2})); });
}

template <class T>
auto module_a(const std::string& m, wp::array<T, 4>& x, index_t pool_features, index_t d) {
  using A = wp::array<T, 4>;
  return joined_branches(
      m + ".cat", unit(m + ".b1", x, narrow(64, d), 1),
      chain(unit(m + ".b5_1", x, narrow(48, d), 1),
            [&](A& y) { return unit(m + ".b5_2", y, narrow(64, d), 5, {.padding = 2}); }),
      chain(
          unit(m + ".b3_1", x, narrow(64, d), 1),
          [&](A& y) { return unit(m + ".b3_2", y, narrow(96, d), 3, {.padding = 1}); },
          [&](A& y) { return unit(m + ".b3_3", y, narrow(96, d), 3, {.padding = 1}); }),
      pool_branch(m, x, narrow(pool_features, d)));
}

template <class T>
auto module_b(const std::string& m, wp::array<T, 4>& x, index_t d) {
  using A = wp::array<T, 4>;
  return joined_branches(
      m + ".cat", unit(m + ".b3", x, narrow(384, d), 3, {.stride = 2}),
      chain(
          unit(m + ".bd_1", x, narrow(64, d), 1),
          [&](A& y) { return unit(m + ".bd_2", y, narrow(96, d), 3, {.padding = 1}); },
          [&](A& y) { return unit(m + ".bd_3", y, narrow(96, d), 3, {.stride = 2}); }),
      no_params(wp::nn::max_pool2d(m + ".pool", x, 3, {.stride = 2})));
}

template <class T>
auto module_c(const std::string& m, wp::array<T, 4>& x, index_t c7, index_t d) {
  using A = wp::array<T, 4>;
  const index_t c = narrow(c7, d), o = narrow(192, d);
  const wp::nn::conv2d_options row{.padding = {0, 3}}, column{.padding = {3, 0}};
  return joined_branches(m + ".cat", unit(m + ".b1", x, o, 1),
                         chain(
                             unit(m + ".b7_1", x, c, 1),
                             [&](A& y) {
                               return unit(m + ".b7_2", y, c, {1, 7}, row);
                             },
                             [&](A& y) {
                               return unit(m + ".b7_3", y, o, {7, 1}, column);
                             }),
                         chain(
                             unit(m + ".b7d_1", x, c, 1),
                             [&](A& y) {
                               return unit(m + ".b7d_2", y, c, {7, 1}, column);
                             },
                             [&](A& y) {
                               return unit(m + ".b7d_3", y, c, {1, 7}, row);
                             },
                             [&](A& y) {
                               return unit(m + ".b7d_4", y, c, {7, 1}, column);
                             },
                             [&](A& y) {
                               return unit(m + ".b7d_5", y, o, {1, 7}, row);
                             }),
                         pool_branch(m, x, o));
}

template <class T>
auto module_d(const std::string& m, wp::array<T, 4>& x, index_t d) {
  using A = wp::array<T, 4>;
  const index_t o = narrow(192, d);
  return joined_branches(
      m + ".cat",
      chain(unit(m + ".b3_1", x, o, 1),
            [&](A& y) { return unit(m + ".b3_2", y, narrow(320, d), 3, {.stride = 2}); }),
      chain(
          unit(m + ".b7_1", x, o, 1),
          [&](A& y) {
            return unit(m + ".b7_2", y, o, {1, 7}, {.padding = {0, 3}});
          },
          [&](A& y) {
            return unit(m + ".b7_3", y, o, {7, 1}, {.padding = {3, 0}});
          },
          [&](A& y) { return unit(m + ".b7_4", y, o, 3, {.stride = 2}); }),
      no_params(wp::nn::max_pool2d(m + ".pool", x, 3, {.stride = 2})));
}

template <class T>
auto module_e(const std::string& m, wp::array<T, 4>& x, index_t d) {
  using A = wp::array<T, 4>;
  const index_t o = narrow(384, d);
  return joined_branches(
      m + ".cat", unit(m + ".b1", x, narrow(320, d), 1),
      split_1x3_3x1(m + ".b3_2", unit(m + ".b3_1", x, o, 1), o),
      split_1x3_3x1(m + ".bd_3",
                    chain(unit(m + ".bd_1", x, narrow(448, d), 1),
                          [&](A& y) { return unit(m + ".bd_2", y, o, 3, {.padding = 1}); }),
                    o),
      pool_branch(m, x, narrow(192, d)));
}

}  // namespace detail

/// InceptionV3's modules in a layout, in order: kind ('a' .. 'e', as module_a .. module_e),
/// name, and the channel count that sets a module apart from others of its kind (A: its
/// pooling branch's; C: c7; 0 for the others). The typed step (inception::step) chains the same.
struct inception_module {
  char kind;
  const char* name;
  index_t channels;
};
inline std::vector<inception_module> inception_modules(inception_layout l) {
  switch (l) {
    case inception_layout::full:
      return {{'a', "m5b", 32},  {'a', "m5c", 64},  {'a', "m5d", 64},  {'b', "m6a", 0},
              {'c', "m6b", 128}, {'c', "m6c", 160}, {'c', "m6d", 160}, {'c', "m6e", 192},
              {'d', "m7a", 0},   {'e', "m7b", 0},   {'e', "m7c", 0}};
    case inception_layout::one_each:
      return {
          {'a', "m5b", 32}, {'b', "m6a", 0}, {'c', "m6b", 128}, {'d', "m7a", 0}, {'e', "m7b", 0}};
    case inception_layout::small:
    default:
      return {{'a', "m5b", 32}, {'b', "m6a", 0}, {'d', "m7a", 0}, {'e', "m7b", 0}};
  }
}

namespace detail {

/// Module `m` over x (module_a .. module_e by its kind).
template <class T>
auto inception_module_over(const inception_module& m, wp::array<T, 4>& x, index_t d) {
  const std::string n = m.name;
  switch (m.kind) {
    case 'a':
      return module_a(n, x, m.channels, d);
    case 'b':
      return module_b(n, x, d);
    case 'c':
      return module_c(n, x, m.channels, d);
    case 'd':
      return module_d(n, x, d);
    default:
      return module_e(n, x, d);
  }
}

}  // namespace detail

/// The network's inputs (images, labels) and its training step, built over them.
template <class T>
struct inception {
  inception_size size;
  wp::array<T, 4> x;
  wp::array<std::int32_t, 1> label;

  explicit inception(inception_size s)
      : size(s), x("x", {s.batch, 3, s.image, s.image}), label("label", {s.batch}) {}

  /// Forward, backward and SGD with learning rate lr, as one program (keep this object alive
  /// and in place while the program is used: the program reads x and label). The modules of
  /// `size.layout` are added in a loop: every layout compiles alike.
  training_step<wp::program, wp::array<T, 0>, parameter_list<T>> step(T lr) {
    namespace nn = wp::nn;
    using A = wp::array<T, 4>;
    const index_t d = size.width;
    auto body = detail::stem(x, d);
    for (const inception_module& m : inception_modules(size.layout))
      body = detail::chain(std::move(body),
                           [&](A& y) { return detail::inception_module_over(m, y, d); });
    A& y = *body.out;                                   // square, as the images are
    auto gp = nn::avg_pool2d("gpool", y, y.extent(2));  // the mean over the whole plane
    auto fl = nn::flatten("flat", gp.out());
    auto fc = nn::linear("fc", fl.out(), narrow(size.classes, d));
    auto ce = nn::softmax_cross_entropy("loss", fc.out(), label);
    parameter_list<T> params = std::move(body.params);
    params.add(nn::parameters(fc));
    auto fwd = wp::program(body.program, gp.program, fl.program, fc.program, ce.program);
    wp::program step(fwd, params.backward(fwd, ce.out()), params.sgd(lr));
    return make_step(std::move(step), ce.out(), std::move(params));
  }
};

namespace detail {

/// One piece of the step for wp::join_pieces: the layers make(x) makes over an input x called
/// `name` of shape `shape` (the previous piece's output; updated to this piece's), described:
/// their forward, wp::backward from the gradient of their output (and, with InputGradient, to
/// x's gradient "d<name>"), their parameters' updates.
template <bool InputGradient, class T, class Make>
wp::step_piece described_piece(std::string& name, typename wp::array<T, 4>::shape_type& shape, T lr,
                               Make make) {
  wp::array<T, 4> x(name, shape), dx("d" + name, shape);
  auto j = make(x);
  wp::array<T, 4>& y = *j.out;
  wp::array<T, 4> dy("given.d" + y.name(), y.shape());
  wp::step_piece p;
  p.forward = wp::describe(j.program);
  const auto& w = j.params;
  if constexpr (InputGradient)
    p.backward = wp::describe(wp::backward(j.program, wp::seed(y, dy), wp::wrt(x, dx), w.rank1,
                                           w.rank2, w.rank3, w.rank4));
  else
    p.backward =
        wp::describe(wp::backward(j.program, wp::seed(y, dy), w.rank1, w.rank2, w.rank3, w.rank4));
  p.update = wp::describe(w.sgd(lr));
  name = y.name();
  shape = y.shape();
  return p;
}

}  // namespace detail

/// InceptionV3's training step described piece by piece and joined (wp::join_pieces): the
/// stem, each module, and the head (the mean over the plane, the classifier, the loss) typed,
/// differentiated and described apart -- the same maps, arrays and prices as the typed step of
/// the whole layout (inception::step; checked for `one_each` by bench_networks, and the
/// joining by tests/unit/test_describe.cpp), but for the zeroing maps that run nowhere. Faster
/// to build at full size than the typed step (each piece is differentiated apart).
template <class T>
wp::program_description inception_description(inception_size s, inception_layout layout, T lr) {
  namespace nn = wp::nn;
  using A = wp::array<T, 4>;
  const index_t d = s.width;
  std::string name = "x";
  typename A::shape_type shape{s.batch, 3, s.image, s.image};
  std::vector<wp::step_piece> pieces;
  pieces.push_back(
      detail::described_piece<false>(name, shape, lr, [&](A& x) { return detail::stem(x, d); }));
  for (const inception_module& m : inception_modules(layout))
    pieces.push_back(detail::described_piece<true>(
        name, shape, lr, [&](A& x) { return detail::inception_module_over(m, x, d); }));
  {  // the head, differentiated from the loss
    A x(name, shape), dx("d" + name, shape);
    wp::array<std::int32_t, 1> label("label", {s.batch});
    auto gp = nn::avg_pool2d("gpool", x, x.extent(2));  // the mean over the whole plane
    auto fl = nn::flatten("flat", gp.out());
    auto fc = nn::linear("fc", fl.out(), narrow(s.classes, d));
    auto ce = nn::softmax_cross_entropy("loss", fc.out(), label);
    auto fwd = wp::program(gp.program, fl.program, fc.program, ce.program);
    wp::step_piece p;
    p.forward = wp::describe(fwd);
    std::apply(
        [&](const auto&... w) {
          p.backward = wp::describe(wp::backward(fwd, ce.out(), wp::wrt(x, dx), w...));
          p.update = wp::describe(wp::program(wp::forward_only, nn::detail::sgd_map(lr, w)...));
        },
        nn::parameters(fc));
    pieces.push_back(std::move(p));
  }
  return wp::join_pieces(pieces);
}

/// The experts' strategy for InceptionV3: data-parallel convolutions, a model-parallel
/// classifier ("one weird trick", Krizhevsky 2014, as wpnet::alexnet_expert).
template <class Program>
wp::schedule inception_expert(const Program& prog, int P) {
  return expert(prog, P, {"fc"});
}

}  // namespace wpnet
