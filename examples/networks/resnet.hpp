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
/// `size.blocks` bottlenecks per stage, a run-time value (ResNet101's {3, 4, 23, 3} by
/// default; ResNet50 is {3, 4, 6, 3}), named s<k>.b1 .. s<k>.b<n> (their layers .conv1, .bn1,
/// .relu1, .conv2, .bn2, .relu2, .conv3, .bn3, the projection's .proj and .bnp, .add, .relu3):
/// the blocks are added to the program in a loop, so the depth costs no compile time.
/// wpnet::resnet101_description also lengthens a step of three blocks per stage to
/// ResNet101's (wp::repeat_blocks), describing it from a third of its maps. `width` divides
/// every channel count and the classes, and `image` sets the input's side, so tests train it
/// small (image 35 leaves 2 x 2 before the mean).

#include "network.hpp"

#include <workpart/optimize/repeat_blocks.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace wpnet {

/// ResNet101's blocks per stage.
inline constexpr std::array<std::size_t, 4> resnet101_blocks = {3, 4, 23, 3};

struct resnet_size {
  index_t batch = 128;
  index_t image = 227;     ///< input height and width
  index_t width = 1;       ///< divides every channel count and the classes
  index_t classes = 1000;  ///< (divided by width too)
  std::array<std::size_t, 4> blocks = resnet101_blocks;  ///< bottlenecks per stage
};

namespace detail {

/// A bottleneck block over x: 1 x 1, 3 x 3 (stride), 1 x 1 to `out` channels, each with its
/// batch norm, ReLU after the first two, the shortcut added, ReLU. With `projection` (a
/// stage's first block) the shortcut is x projected to `out` channels by a strided 1 x 1
/// convolution and batch norm; without, x itself (stride 1, out = x's channels). Appends the
/// block's maps to `prog` and its parameters to `params`; returns its output.
template <class T>
wp::array<T, 4>& bottleneck(wp::program& prog, parameter_list<T>& params, const std::string& name,
                            wp::array<T, 4>& x, index_t mid, index_t out, index_t stride,
                            bool projection) {
  namespace nn = wp::nn;
  auto c1 = nn::conv2d(name + ".conv1", x, mid, 1);
  auto b1 = nn::batch_norm(name + ".bn1", c1.out());
  auto r1 = nn::relu(name + ".relu1", b1.out());
  auto c2 = nn::conv2d(name + ".conv2", r1.out(), mid, 3, {.stride = stride, .padding = 1});
  auto b2 = nn::batch_norm(name + ".bn2", c2.out());
  auto r2 = nn::relu(name + ".relu2", b2.out());
  auto c3 = nn::conv2d(name + ".conv3", r2.out(), out, 1);
  auto b3 = nn::batch_norm(name + ".bn3", c3.out());
  prog.add(wp::program(c1.program, b1.program, r1.program, c2.program, b2.program, r2.program,
                       c3.program, b3.program));
  params.add(nn::parameters(c1, b1, c2, b2, c3, b3));
  wp::array<T, 4>* shortcut = &x;
  if (projection) {
    auto cp = nn::conv2d(name + ".proj", x, out, 1, {.stride = stride});
    auto bp = nn::batch_norm(name + ".bnp", cp.out());
    prog.add(wp::program(cp.program, bp.program));
    params.add(nn::parameters(cp, bp));
    shortcut = &bp.out();
  }
  auto a = nn::add(name + ".add", b3.out(), *shortcut);
  auto r3 = nn::relu(name + ".relu3", a.out());
  prog.add(wp::program(a.program, r3.program));
  return r3.out();
}

/// Stage `name` ("s1" .. "s4") of `blocks` blocks over x, appended to `prog`; its output.
template <class T>
wp::array<T, 4>& stage(wp::program& prog, parameter_list<T>& params, const std::string& name,
                       wp::array<T, 4>& x, std::size_t blocks, index_t mid, index_t out,
                       index_t stride) {
  wp::array<T, 4>* y = &bottleneck(prog, params, name + ".b1", x, mid, out, stride, true);
  for (std::size_t k = 2; k <= blocks; ++k)
    y = &bottleneck(prog, params, name + ".b" + std::to_string(k), *y, mid, out, 1, false);
  return *y;
}

}  // namespace detail

/// The network's inputs (images, labels) and its training step, built over them.
template <class T>
struct resnet {
  resnet_size size;
  wp::array<T, 4> x;
  wp::array<std::int32_t, 1> label;

  explicit resnet(resnet_size s)
      : size(s), x("x", {s.batch, 3, s.image, s.image}), label("label", {s.batch}) {
    for (std::size_t b : s.blocks)
      if (b < 1) throw wp::shape_error("wpnet::resnet: at least one block per stage");
  }

  /// Forward, backward and SGD with learning rate lr, as one program (keep this object alive
  /// and in place while the program is used: the program reads x and label).
  training_step<wp::program, wp::array<T, 0>, parameter_list<T>> step(T lr) {
    namespace nn = wp::nn;
    const index_t d = size.width;
    parameter_list<T> params;
    auto c1 = nn::conv2d("conv1", x, narrow(64, d), 7, {.stride = 2, .padding = 3});
    auto b1 = nn::batch_norm("bn1", c1.out());
    auto r1 = nn::relu("relu1", b1.out());
    auto p1 = nn::max_pool2d("pool1", r1.out(), 3, {.stride = 2, .padding = 1});
    wp::program fwd(c1.program, b1.program, r1.program, p1.program);
    params.add(nn::parameters(c1, b1));
    wp::array<T, 4>* y = &p1.out();
    const index_t mid[4] = {64, 128, 256, 512};
    for (std::size_t s = 0; s < 4; ++s)
      y = &detail::stage(fwd, params, "s" + std::to_string(s + 1), *y, size.blocks[s],
                         narrow(mid[s], d), narrow(4 * mid[s], d), s == 0 ? 1 : 2);
    auto gp = nn::avg_pool2d("gpool", *y, y->extent(2));  // the mean over the whole plane
    auto fl = nn::flatten("flat", gp.out());
    auto fc = nn::linear("fc", fl.out(), narrow(size.classes, d));
    auto ce = nn::softmax_cross_entropy("loss", fc.out(), label);
    fwd.add(wp::program(gp.program, fl.program, fc.program, ce.program));
    params.add(nn::parameters(fc));
    wp::program step(fwd, params.backward(fwd, ce.out()), params.sgd(lr));
    return make_step(std::move(step), ce.out(), std::move(params));
  }
};

/// ResNet101's step from the description of the step with three blocks per stage
/// (wp::describe(resnet<T>({..., .blocks = {3, 3, 3, 3}}).step(lr).program)): the second
/// stage's middle block repeated to four blocks, the third's to 23 (wp::repeat_blocks), 4990
/// maps -- the description of the step built with {3, 4, 23, 3}, made from a third of its
/// maps.
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
