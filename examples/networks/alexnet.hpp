#pragma once
/// \file alexnet.hpp
/// AlexNet as PaSE trains it (../shared/anchors/pase-graphs/alexnet.json): five convolutions
/// (11x11 stride 4, 5x5 pad 2, three 3x3 pad 1), three 3x3 stride-2 max poolings, three fully
/// connected layers (4096, 4096, 1024 classes), softmax cross-entropy; ReLU after every
/// convolution and the first two fully connected layers (PaSE's fused pointwise op). Batch 128,
/// 3 x 227 x 227 images at full size. `width` divides every channel and feature count and
/// `image` sets the input's side, so tests train it small (image 67 leaves 1 x 1 after pool3).

#include "network.hpp"

#include <cstdint>

namespace wpnet {

struct alexnet_size {
  index_t batch = 128;
  index_t image = 227;     ///< input height and width
  index_t width = 1;       ///< divides every channel and feature count
  index_t classes = 1024;  ///< PaSE's (divided by width too)
};

/// The network's inputs (images, labels) and its training step, built over them.
template <class T>
struct alexnet {
  alexnet_size size;
  wp::array<T, 4> x;
  wp::array<std::int32_t, 1> label;

  explicit alexnet(alexnet_size s)
      : size(s), x("x", {s.batch, 3, s.image, s.image}), label("label", {s.batch}) {}

  /// Forward, backward and SGD with learning rate lr, as one program (keep this object alive
  /// and in place while the program is used: the program reads x and label).
  auto step(T lr) {
    namespace nn = wp::nn;
    const index_t d = size.width;
    auto c1 = nn::conv2d("conv1", x, narrow(96, d), 11, {.stride = 4});
    auto r1 = nn::relu("relu1", c1.out());
    auto p1 = nn::max_pool2d("pool1", r1.out(), 3, {.stride = 2});
    auto c2 = nn::conv2d("conv2", p1.out(), narrow(256, d), 5, {.padding = 2});
    auto r2 = nn::relu("relu2", c2.out());
    auto p2 = nn::max_pool2d("pool2", r2.out(), 3, {.stride = 2});
    auto c3 = nn::conv2d("conv3", p2.out(), narrow(384, d), 3, {.padding = 1});
    auto r3 = nn::relu("relu3", c3.out());
    auto c4 = nn::conv2d("conv4", r3.out(), narrow(384, d), 3, {.padding = 1});
    auto r4 = nn::relu("relu4", c4.out());
    auto c5 = nn::conv2d("conv5", r4.out(), narrow(256, d), 3, {.padding = 1});
    auto r5 = nn::relu("relu5", c5.out());
    auto p3 = nn::max_pool2d("pool3", r5.out(), 3, {.stride = 2});
    auto flat = nn::flatten("flat", p3.out());
    auto f1 = nn::linear("fc1", flat.out(), narrow(4096, d));
    auto r6 = nn::relu("relu6", f1.out());
    auto f2 = nn::linear("fc2", r6.out(), narrow(4096, d));
    auto r7 = nn::relu("relu7", f2.out());
    auto f3 = nn::linear("fc3", r7.out(), narrow(size.classes, d));
    auto ce = nn::softmax_cross_entropy("loss", f3.out(), label);
    auto fwd = wp::program(c1.program, r1.program, p1.program, c2.program, r2.program, p2.program,
                           c3.program, r3.program, c4.program, r4.program, c5.program, r5.program,
                           p3.program, flat.program, f1.program, r6.program, f2.program, r7.program,
                           f3.program, ce.program);
    return make_step(wp::program(fwd, nn::backward(fwd, ce.out(), c1, c2, c3, c4, c5, f1, f2, f3),
                                 nn::sgd(lr, c1, c2, c3, c4, c5, f1, f2, f3)),
                     ce.out(), nn::parameters(c1, c2, c3, c4, c5, f1, f2, f3));
  }
};

/// The experts' strategy for AlexNet: data-parallel convolutions, model-parallel fully
/// connected layers ("one weird trick", Krizhevsky 2014).
template <class Program>
wp::schedule alexnet_expert(const Program& prog, int P) {
  return expert(prog, P, {"fc1", "relu6", "fc2", "relu7", "fc3"});
}

}  // namespace wpnet
