#pragma once
/// \file nn.hpp
/// The layer library: functions that make a layer's arrays and forward maps and return them
/// as a program with its output and parameters (nn/layer.hpp). Layers are plain maps: every
/// schedule, the optimizer, explain() and wp::backward work on them unchanged.
/// \code
///   auto c1   = wp::nn::conv2d("c1", x, 8, 3, {.stride = 1, .padding = 1});
///   auto r1   = wp::nn::relu("r1", c1.out());
///   auto p1   = wp::nn::max_pool2d("p1", r1.out(), 2);
///   ...
///   auto fwd  = wp::program(c1.program, r1.program, p1.program, ...);
///   auto step = wp::program(fwd, wp::nn::backward(fwd, loss.out(), c1, fc),
///                           wp::nn::sgd(0.1f, c1, fc));
/// \endcode

#include "workpart.hpp"

#include "nn/activation.hpp"
#include "nn/attention.hpp"
#include "nn/concat.hpp"
#include "nn/conv.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/layer.hpp"
#include "nn/linear.hpp"
#include "nn/lstm.hpp"
#include "nn/loss.hpp"
#include "nn/norm.hpp"
#include "nn/pool.hpp"
#include "nn/reshape.hpp"
#include "nn/residual.hpp"
#include "nn/train.hpp"
