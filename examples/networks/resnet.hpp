#pragma once
/// \file resnet.hpp
/// ResNet101 as PaSE trains it (../shared/anchors/pase-graphs/resnet101.json; He et al. 2016):
/// a 7 x 7 stride-2 convolution (padding 3), batch norm, ReLU and a 3 x 3 stride-2 max pooling
/// (padding 1); four stages of bottleneck blocks (3, 4, 23 and 3 blocks; 64, 128, 256 and 512
/// channels inside a block, four times as many out) -- 1 x 1, 3 x 3 (padding 1) and 1 x 1
/// convolutions, each followed by batch norm (training statistics), ReLU after the first two,
/// the block's input added, ReLU; a stage's first block takes the stride (2 but in the first
/// stage, on its 3 x 3 convolution, as PaSE's graph has it) and projects its input to the new width
/// by a strided 1 x 1 convolution and batch norm; then the mean over the last plane, a fully
/// connected layer to 1000 classes and softmax cross-entropy. Batch 128, 3 x 227 x 227 images at
/// full size (114, 57, 29, 15 and 8 pixels a side after the stem's convolution, its pooling and
/// each stage).
///
/// `Blocks` bottlenecks per stage, named s<k>.b1 .. s<k>.b<Blocks> (their layers .conv1, .bn1,
/// .relu1, .conv2, .bn2, .relu2, .conv3, .bn3, the projection's .proj and .bnp, .add, .relu3),
/// so that a step written with three per stage is repeated to ResNet101's 3/4/23/3 by
/// wpnet::resnet101_description (wp::repeat_blocks): the typed step of 33 blocks would cost
/// ten times the compile time for the same tables. `width` divides every channel count and the
/// classes, and `image` sets the input's side, so tests train it small (image 35 leaves
/// 2 x 2 before the mean).

#include "network.hpp"

#include <workpart/optimize/repeat_blocks.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

namespace wpnet {

struct resnet_size {
  index_t batch = 128;
  index_t image = 227;     ///< input height and width
  index_t width = 1;       ///< divides every channel count and the classes
  index_t classes = 1000;  ///< (divided by width too)
};

namespace detail {

/// A bottleneck block over x: 1 x 1, 3 x 3 (stride), 1 x 1 to `out` channels, each with its
/// batch norm, ReLU after the first two, the shortcut added, ReLU. With `Projection` (a
/// stage's first block) the shortcut is x projected to `out` channels by a strided 1 x 1
/// convolution and batch norm; without, x itself (stride 1, out = x's channels).
template <bool Projection, class T>
auto bottleneck(const std::string& name, wp::array<T, 4>& x, index_t mid, index_t out,
                index_t stride) {
  namespace nn = wp::nn;
  auto c1 = nn::conv2d(name + ".conv1", x, mid, 1);
  auto b1 = nn::batch_norm(name + ".bn1", c1.out());
  auto r1 = nn::relu(name + ".relu1", b1.out());
  auto c2 = nn::conv2d(name + ".conv2", r1.out(), mid, 3, {.stride = stride, .padding = 1});
  auto b2 = nn::batch_norm(name + ".bn2", c2.out());
  auto r2 = nn::relu(name + ".relu2", b2.out());
  auto c3 = nn::conv2d(name + ".conv3", r2.out(), out, 1);
  auto b3 = nn::batch_norm(name + ".bn3", c3.out());
  auto body = wp::program(c1.program, b1.program, r1.program, c2.program, b2.program, r2.program,
                          c3.program, b3.program);
  if constexpr (Projection) {
    auto cp = nn::conv2d(name + ".proj", x, out, 1, {.stride = stride});
    auto bp = nn::batch_norm(name + ".bnp", cp.out());
    auto a = nn::add(name + ".add", b3.out(), bp.out());
    auto r3 = nn::relu(name + ".relu3", a.out());
    return join(wp::program(body, cp.program, bp.program, a.program, r3.program), r3.out(),
                nn::parameters(c1, b1, c2, b2, c3, b3, cp, bp));
  } else {
    auto a = nn::add(name + ".add", b3.out(), x);
    auto r3 = nn::relu(name + ".relu3", a.out());
    return join(wp::program(body, a.program, r3.program), r3.out(),
                nn::parameters(c1, b1, c2, b2, c3, b3));
  }
}

/// Stage `name` ("s1" .. "s4") of Blocks blocks over x.
template <std::size_t Blocks, class T>
auto stage(const std::string& name, wp::array<T, 4>& x, index_t mid, index_t out, index_t stride) {
  return stack<0, Blocks>(
      bottleneck<true>(name + ".b1", x, mid, out, stride), [&](std::size_t k, wp::array<T, 4>& y) {
        return bottleneck<false>(name + ".b" + std::to_string(k), y, mid, out, 1);
      });
}

}  // namespace detail

/// The network's inputs (images, labels) and its training step, built over them.
template <class T, std::size_t Blocks = 3>
struct resnet {
  static_assert(Blocks >= 1, "wpnet::resnet: at least one block per stage");
  resnet_size size;
  wp::array<T, 4> x;
  wp::array<std::int32_t, 1> label;

  explicit resnet(resnet_size s)
      : size(s), x("x", {s.batch, 3, s.image, s.image}), label("label", {s.batch}) {}

  /// Forward, backward and SGD with learning rate lr, as one program (keep this object alive
  /// and in place while the program is used: the program reads x and label).
  auto step(T lr) {
    namespace nn = wp::nn;
    const index_t d = size.width;
    auto c1 = nn::conv2d("conv1", x, narrow(64, d), 7, {.stride = 2, .padding = 3});
    auto b1 = nn::batch_norm("bn1", c1.out());
    auto r1 = nn::relu("relu1", b1.out());
    auto p1 = nn::max_pool2d("pool1", r1.out(), 3, {.stride = 2, .padding = 1});
    auto s1 = detail::stage<Blocks>("s1", p1.out(), narrow(64, d), narrow(256, d), 1);
    auto s2 = detail::stage<Blocks>("s2", *s1.out, narrow(128, d), narrow(512, d), 2);
    auto s3 = detail::stage<Blocks>("s3", *s2.out, narrow(256, d), narrow(1024, d), 2);
    auto s4 = detail::stage<Blocks>("s4", *s3.out, narrow(512, d), narrow(2048, d), 2);
    wp::array<T, 4>& y = *s4.out;                       // square, as the images are
    auto gp = nn::avg_pool2d("gpool", y, y.extent(2));  // the mean over the whole plane
    auto fl = nn::flatten("flat", gp.out());
    auto fc = nn::linear("fc", fl.out(), narrow(size.classes, d));
    auto ce = nn::softmax_cross_entropy("loss", fc.out(), label);
    auto params = std::tuple_cat(nn::parameters(c1, b1), s1.params, s2.params, s3.params, s4.params,
                                 nn::parameters(fc));
    auto fwd = wp::program(c1.program, b1.program, r1.program, p1.program, s1.program, s2.program,
                           s3.program, s4.program, gp.program, fl.program, fc.program, ce.program);
    auto bwd =
        std::apply([&](const auto&... w) { return wp::backward(fwd, ce.out(), w...); }, params);
    auto upd = std::apply(
        [&](const auto&... w) { return wp::program(nn::detail::sgd_map(lr, w)...); }, params);
    return make_step(wp::program(fwd, bwd, upd), ce.out(), params);
  }
};

/// ResNet101's blocks per stage.
inline constexpr std::size_t resnet101_blocks[4] = {3, 4, 23, 3};

/// ResNet101's step from the description of the step written with three blocks per stage
/// (wp::describe(resnet<T, 3>(size).step(lr).program)): the second stage's middle block
/// repeated to four blocks, the third's to 23 (wp::repeat_blocks), 4990 maps.
inline wp::program_description resnet101_description(const wp::program_description& three) {
  return wp::repeat_blocks(wp::repeat_blocks(three, "s2.b", long(resnet101_blocks[1])), "s3.b",
                           long(resnet101_blocks[2]));
}

/// The experts' strategy for ResNet: data-parallel convolutions, a model-parallel classifier
/// ("one weird trick", Krizhevsky 2014, as wpnet::alexnet_expert).
template <class Program>
wp::schedule resnet_expert(const Program& prog, int P) {
  return expert(prog, P, {"fc"});
}

}  // namespace wpnet
