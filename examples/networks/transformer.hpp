#pragma once
/// \file transformer.hpp
/// The Transformer as PaSE trains it (../shared/anchors/pase-graphs/transformer.json; Vaswani
/// et al. 2017, post-norm): a source and a target embedding (vocabulary 50000, E = 512), an
/// encoder of blocks (self-attention with 8 heads, residual, layer norm, feed-forward 2048 with
/// ReLU, residual, layer norm), a decoder of blocks (causal self-attention, attention over the
/// encoder's output, feed-forward, each with its residual and layer norm), a linear head to the
/// vocabulary and the mean next-token cross-entropy. Batch 64, 256 positions at full size.
/// (No positional encoding: PaSE's graph adds a constant, which prices as nothing here.)
///
/// `size.blocks` encoder and as many decoder blocks (a run-time value, added to the program in
/// a loop), named enc1 .. encN and dec1 .. decN; a step of three of each is also lengthened to
/// PaSE's six by wp::repeat_blocks (its description; optimize/repeat_blocks.hpp).

#include "network.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>
#include <utility>

namespace wpnet {

struct transformer_size {
  index_t batch = 64;
  index_t length = 256;  ///< positions of the source and the target
  index_t vocabulary = 50000;
  index_t embed = 512;
  index_t heads = 8;
  index_t ff = 2048;       ///< the feed-forward layers' hidden width
  std::size_t blocks = 6;  ///< encoder blocks, and as many decoder blocks
};

namespace detail {

/// The feed-forward sub-layer of a block over x, with its residual and layer norm, appended
/// to `prog` (its parameters to `params`); its output.
template <class T>
wp::array<T, 3>& feed_forward(wp::program& prog, parameter_list<T>& params, const std::string& name,
                              wp::array<T, 3>& x, const transformer_size& z, const std::string& res,
                              const std::string& ln) {
  namespace nn = wp::nn;
  auto f1 = nn::linear(name + ".ff1", x, z.ff);
  auto g = nn::relu(name + ".relu", f1.out());
  auto f2 = nn::linear(name + ".ff2", g.out(), z.embed);
  auto r = nn::add(name + res, x, f2.out());
  auto n = nn::layer_norm(name + ln, r.out());
  prog.add(wp::program(f1.program, g.program, f2.program, r.program, n.program));
  params.add(nn::parameters(f1, f2, n));
  return n.out();
}

/// Encoder block `name` over x: self-attention, residual, norm, feed-forward.
template <class T>
wp::array<T, 3>& encoder_block(wp::program& prog, parameter_list<T>& params,
                               const std::string& name, wp::array<T, 3>& x,
                               const transformer_size& z) {
  namespace nn = wp::nn;
  auto at = nn::multi_head_attention(name + ".attn", x, z.heads);
  auto r = nn::add(name + ".res1", x, at.out());
  auto n = nn::layer_norm(name + ".ln1", r.out());
  prog.add(wp::program(at.program, r.program, n.program));
  params.add(nn::parameters(at, n));
  return feed_forward(prog, params, name, n.out(), z, ".res2", ".ln2");
}

/// Decoder block `name` over y, attending over the encoder's output `memory`.
template <class T>
wp::array<T, 3>& decoder_block(wp::program& prog, parameter_list<T>& params,
                               const std::string& name, wp::array<T, 3>& y, wp::array<T, 3>& memory,
                               const transformer_size& z) {
  namespace nn = wp::nn;
  auto sa = nn::multi_head_attention(name + ".self", y, z.heads, {.causal = true});
  auto r1 = nn::add(name + ".res1", y, sa.out());
  auto n1 = nn::layer_norm(name + ".ln1", r1.out());
  auto ca = nn::multi_head_attention(name + ".cross", n1.out(), memory, z.heads);
  auto r2 = nn::add(name + ".res2", n1.out(), ca.out());
  auto n2 = nn::layer_norm(name + ".ln2", r2.out());
  prog.add(wp::program(sa.program, r1.program, n1.program, ca.program, r2.program, n2.program));
  params.add(nn::parameters(sa, n1, ca, n2));
  return feed_forward(prog, params, name, n2.out(), z, ".res3", ".ln3");
}

}  // namespace detail

/// The network's inputs (source and target tokens, the next-token labels) and its training
/// step over them.
template <class T>
struct transformer {
  transformer_size size;
  wp::array<std::int32_t, 2> source, target, label;

  explicit transformer(transformer_size s)
      : size(s),
        source("source", {s.batch, s.length}),
        target("target", {s.batch, s.length}),
        label("label", {s.batch, s.length}) {
    if (s.blocks < 1) throw wp::shape_error("wpnet::transformer: at least one block");
  }

  /// Forward, backward and SGD with learning rate lr, as one program (keep this object alive
  /// and in place while the program is used).
  training_step<wp::program, wp::array<T, 0>, parameter_list<T>> step(T lr) {
    namespace nn = wp::nn;
    const transformer_size& z = size;
    parameter_list<T> params;
    auto src = nn::embedding<T>("src", source, z.vocabulary, z.embed);
    auto tgt = nn::embedding<T>("tgt", target, z.vocabulary, z.embed);
    wp::program fwd(src.program, tgt.program);
    params.add(nn::parameters(src, tgt));
    wp::array<T, 3>* x = &src.out();
    for (std::size_t k = 1; k <= z.blocks; ++k)
      x = &detail::encoder_block(fwd, params, "enc" + std::to_string(k), *x, z);
    wp::array<T, 3>& memory = *x;
    wp::array<T, 3>* y = &tgt.out();
    for (std::size_t k = 1; k <= z.blocks; ++k)
      y = &detail::decoder_block(fwd, params, "dec" + std::to_string(k), *y, memory, z);
    auto head = nn::linear("head", *y, z.vocabulary);
    auto ce = nn::softmax_cross_entropy("loss", head.out(), label);
    fwd.add(wp::program(head.program, ce.program));
    params.add(nn::parameters(head));
    wp::program step(fwd, params.backward(fwd, ce.out()), params.sgd(lr));
    return make_step(std::move(step), ce.out(), std::move(params));
  }
};

/// The map (or array) a name of the Transformer's step is about, without the prefixes
/// wp::backward and the updates add: "zero.denc2.attn.Q.2" and "sgd.enc2.attn.Wq" are about
/// "enc2.attn.Q" and "enc2.attn.Wq", "ddec1.ff1" about "dec1.ff1" (a derivative's 'd' is
/// dropped only before the network's own names: "dec1" is a decoder block's).
inline std::string transformer_subject(std::string n) {
  for (const std::string p : {"zero.", "seed.", "sgd."})
    if (n.rfind(p, 0) == 0) {
      n.erase(0, p.size());
      break;
    }
  for (const std::string root : {"src", "tgt", "enc", "dec", "head", "loss"})
    if (n.size() > root.size() && n[0] == 'd' && n.compare(1, root.size(), root) == 0) {
      n.erase(0, 1);
      break;
    }
  return n;
}

/// Megatron-LM's tensor parallelism (Shoeybi et al. 2019) as a schedule over the step (typed
/// or described): every attention's heads over the P ranks (its projections, scores, softmax
/// and heads' outputs; the output projection's partial sums combined -- Megatron's forward
/// Allreduce), the first feed-forward layer's hidden units and the second's input (row
/// parallel: its partial sums combined), the head's vocabulary; every other map -- the
/// embeddings, residuals, layer norms and biases after a row-parallel layer, which Megatron
/// repeats on every rank -- replicated on every rank (wp::grid_shape::replicated),
/// so that the partial sums of a block's attention and feed-forward are combined by one
/// Allreduce each, forward and backward, and nothing else moves within a block. The loss
/// runs over the batch (see below). Updates and zeroing maps split (or replicate) their array
/// as the map that uses it does.
template <class Program>
wp::schedule transformer_megatron(const Program& prog, int P) {
  return split_one_dimension(prog, P, [](const std::string& name, const std::vector<index_t>&) {
    const std::string n = transformer_subject(name);
    std::vector<std::string> part;  // block, layer, what (a map's suffix or an array's name)
    for (std::size_t a = 0, b; a <= n.size(); a = b + 1) {
      b = std::min(n.find('.', a), n.size());
      part.push_back(n.substr(a, b - a));
    }
    const bool in_block = part[0].rfind("enc", 0) == 0 || part[0].rfind("dec", 0) == 0;
    const std::string layer = in_block && part.size() > 1 ? part[1] : part[0];
    const std::string what = part.size() > (in_block ? 2u : 1u) ? part[in_block ? 2 : 1] : "";
    auto is = [&](std::initializer_list<const char*> names) {
      for (const char* x : names)
        if (what == x) return true;
      return false;
    };
    if (layer == "attn" || layer == "self" || layer == "cross") {
      if (is({"", "qkv0", "q0", "kv0", "qkv", "q", "kv", "heads", "Q", "K", "V", "O"})) return 2;
      if (is({"scores", "max", "exp", "sum", "A", "P", "M", "Z", "Wq", "Wk", "Wv"})) return 1;
      return is({"Wo"}) ? 0 : -1;  // Wo's heads; y0, y: the output, replicated
    }
    if (layer == "ff1" || layer == "relu") return is({"W"}) ? 1 : is({"b"}) ? 0 : 2;
    // its input's hidden units; W's first axis; the bias and the output replicated
    if (layer == "ff2") return is({""}) ? 3 : is({"W"}) ? 0 : -1;
    if (layer == "head") return is({"W"}) ? 1 : is({"b"}) ? 0 : 2;
    // the loss reads whole rows of the logits (inner reductions over the vocabulary, which
    // Megatron splits instead: a vocabulary-parallel cross-entropy): over the batch, so that
    // each rank fetches 1/P of them rather than all
    if (layer == "loss") return 0;
    return -1;
  });
}

}  // namespace wpnet
