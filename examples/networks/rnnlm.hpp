#pragma once
/// \file rnnlm.hpp
/// RNNLM as PaSE trains it (../shared/anchors/pase-graphs/rnnlm.json): an embedding of a
/// 100000-word vocabulary into 2048 features, two LSTM layers of 2048 units over 256 positions,
/// a fully connected layer back to the vocabulary and the mean next-token cross-entropy. Batch
/// 64. (PaSE's graph multiplies a one-hot matrix by the table, 2 B V E FLOPs per position;
/// here the embedding is the lookup a framework runs, B S E reads.)
///
/// The sequence's length is the LSTMs' step count, a run-time value (`rnnlm_size::length`,
/// PaSE's 256 by default; each step's maps are values of the same few types, so the length
/// costs no compile time): tests train it with three and four positions and type PaSE's 256.
/// rnnlm_description() lengthens the description of a short step instead (wp::repeat_blocks for
/// the steps, then every axis that runs along the sequence); tests check that it is the
/// description of the step typed at that length.

#include "network.hpp"

#include <workpart/optimize/repeat_blocks.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace wpnet {

struct rnnlm_size {
  index_t batch = 64;
  index_t vocabulary = 100000;
  index_t embed = 2048;
  index_t hidden = 2048;  ///< each LSTM layer's units
  index_t length = 256;   ///< positions in the sequence (the LSTMs' steps)
};

/// The network's inputs (tokens, next-token labels, both (batch, length)) and its step. The
/// length is size.length, or Length where it is given (`rnnlm<T, 3>`: three positions).
template <class T, index_t Length = 0>
struct rnnlm {
  rnnlm_size size;
  wp::array<std::int32_t, 2> tokens, label;

  explicit rnnlm(rnnlm_size s)
      : size(with_length(s)),
        tokens("tokens", {s.batch, size.length}),
        label("label", {s.batch, size.length}) {}

  /// Forward, backward and SGD with learning rate lr, as one program (keep this object alive
  /// and in place while the program is used: the program reads tokens and label).
  auto step(T lr) {
    namespace nn = wp::nn;
    auto emb = nn::embedding<T>("emb", tokens, size.vocabulary, size.embed);
    auto l1 = nn::lstm("lstm1", emb.out(), size.hidden);
    auto l2 = nn::lstm("lstm2", l1.out(), size.hidden);
    auto proj = nn::linear("proj", l2.out(), size.vocabulary);
    auto ce = nn::softmax_cross_entropy("loss", proj.out(), label);
    auto fwd = wp::program(emb.program, l1.program, l2.program, proj.program, ce.program);
    return make_step(wp::program(fwd, nn::backward(fwd, ce.out(), emb, l1, l2, proj),
                                 nn::sgd(lr, emb, l1, l2, proj)),
                     ce.out(), nn::parameters(emb, l1, l2, proj));
  }

 private:
  static rnnlm_size with_length(rnnlm_size s) {
    if (Length > 0) s.length = Length;
    if (s.length < 1) throw wp::shape_error("wpnet::rnnlm: the sequence needs a position");
    return s;
  }
};

/// The description of an RNNLM step written with three positions (wp::describe of
/// rnnlm<T, 3>::step), lengthened to `length` positions: each LSTM layer's step 2 repeated
/// (wp::repeat_blocks over "lstm1.t" and "lstm2.t"), the slice each copy reads and writes
/// moved to its own position, and every axis that runs along the sequence given `length`
/// elements. Those axes are found from the tokens' second axis and the axes a step subscripts
/// with a constant (its position) through the maps' indices: an index that subscripts a
/// sequence axis runs along the sequence, and so does every axis it subscripts.
/// The result is checked (program_description::check); tests compare it with the description
/// of the step typed at that length.
inline wp::program_description rnnlm_description(wp::program_description d, index_t length) {
  const std::vector<std::string> stems = {"lstm1.t", "lstm2.t"};
  auto step_of = [&](const std::string& map) {  // the step token's number, 0 outside the steps
    for (const auto& s : stems)
      for (const auto& t : wp::detail::block_tokens(map, s)) return t.number;
    return 0L;
  };
  // the axes steps 1, 2 and 3 subscript with their position (0, 1, 2), in more than one step
  // and never with another constant (a gate's number is one too)
  std::map<std::pair<std::string, std::size_t>, std::set<long>> positions;
  std::set<std::pair<std::string, std::size_t>> not_positions;
  for (const auto& mp : d.maps)
    if (const long k = step_of(mp.name); k != 0)
      for (const auto& ac : mp.accesses)
        for (std::size_t a = 0; a < ac.index.size(); ++a)
          if (ac.index[a].constant()) {
            if (ac.index[a].offset == k - 1)
              positions[{ac.array, a}].insert(k);
            else
              not_positions.insert({ac.array, a});
          }
  // (array, axis) along the sequence, and (map, dimension)
  std::set<std::pair<std::string, std::size_t>> seq{{"tokens", 1}};
  for (const auto& [axis, steps] : positions)
    if (steps.size() > 1 && !not_positions.count(axis)) seq.insert(axis);
  for (const auto& s : stems) d = wp::repeat_blocks(d, s, long(length));
  std::set<std::pair<std::size_t, std::size_t>> dims;
  auto only_index = [](const wp::subscript& s) {  // the one index with coefficient 1, or -1
    int found = -1;
    for (std::size_t x = 0; x < s.coef.size(); ++x)
      if (s.coef[x] != 0) {
        if (found >= 0 || s.coef[x] != 1) return -1;
        found = int(x);
      }
    return s.whole_axis || s.offset != 0 ? -1 : found;
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t m = 0; m < d.maps.size(); ++m)
      for (int pass = 0; pass < 2; ++pass)  // axes to indices, then indices to axes
        for (const auto& ac : d.maps[m].accesses)
          for (std::size_t a = 0; a < ac.index.size(); ++a) {
            const int x = only_index(ac.index[a]);
            if (x < 0 || std::size_t(x) >= d.maps[m].extents.size()) continue;
            if (pass == 0 && seq.count({ac.array, a}))
              grew |= dims.insert({m, std::size_t(x)}).second;
            if (pass == 1 && dims.count({m, std::size_t(x)}))
              grew |= seq.insert({ac.array, a}).second;
          }
  }
  for (auto& arr : d.arrays)
    for (std::size_t a = 0; a < arr.shape.size(); ++a)
      if (seq.count({arr.name, a})) arr.shape[a] = length;
  for (auto [m, x] : dims) d.maps[m].extents[x] = length;
  // a step's constant subscripts along the sequence: its own position (the copies of step 2
  // read and write step 2's slice, the last block step 3's)
  for (auto& mp : d.maps)
    if (const long j = step_of(mp.name); j != 0) {
      const long written = j == 1 ? 1 : j == long(length) ? 3 : 2;
      for (auto& ac : mp.accesses)
        for (std::size_t a = 0; a < ac.index.size(); ++a)
          if (ac.index[a].constant() && seq.count({ac.array, a})) ac.index[a].offset += j - written;
    }
  d.check();
  return d;
}

/// The map (or array) a name of the RNNLM's step is about, without the prefixes wp::backward
/// and the updates add ("zero.dlstm1.t2.z" and "sgd.lstm1.Wh" are about "lstm1.t2.z" and
/// "lstm1.Wh"), split at its dots.
inline std::vector<std::string> rnnlm_subject(std::string n) {
  for (const std::string p : {"zero.", "seed.", "sgd."})
    if (n.rfind(p, 0) == 0) {
      n.erase(0, p.size());
      break;
    }
  for (const std::string root : {"emb", "lstm", "proj", "loss"})
    if (n.size() > root.size() && n[0] == 'd' && n.compare(1, root.size(), root) == 0) {
      n.erase(0, 1);
      break;
    }
  std::vector<std::string> part;
  for (std::size_t a = 0, b; a <= n.size(); a = b + 1) {
    b = std::min(n.find('.', a), n.size());
    part.push_back(n.substr(a, b - a));
  }
  return part;
}

/// Megatron-style tensor parallelism for the RNNLM: the embedding's features, each LSTM
/// layer's hidden units (the gates' units k in its input GEMM, every step's recurrent GEMM
/// and cell: each rank holds Wx, Wh and b's columns for its units, the whole h_{t-1} fetched
/// once per step) and the output layer's vocabulary over the P ranks; the loss over the batch
/// (its inner reductions read whole rows of the logits, as for the Transformer). Updates and
/// zeroing maps split their array as the map that uses it does.
template <class Program>
wp::schedule rnnlm_megatron(const Program& prog, int P) {
  return split_one_dimension(prog, P, [](const std::string& name, const std::vector<index_t>&) {
    const std::vector<std::string> part = rnnlm_subject(name);
    const std::string& layer = part[0];
    auto has = [&](const char* w) {
      for (std::size_t k = 1; k < part.size(); ++k)
        if (part[k] == w) return true;
      return false;
    };
    if (layer == "emb") return has("E") ? 1 : 2;  // (batch, positions, features); E (V, D)
    if (layer.rfind("lstm", 0) == 0) {
      if (has("zx")) return 3;               // (batch, positions, gate, unit[, input])
      if (has("y0") || has("y")) return 2;   // (batch, positions, unit)
      if (has("Wx") || has("Wh")) return 2;  // (input, gate, unit)
      if (has("b")) return 1;                // (gate, unit)
      if (has("gates") || has("recur") || has("z")) return 2;  // (batch, gate, unit[, input])
      return 1;                                                // cell, c, h: (batch, unit)
    }
    if (layer == "proj") return has("W") ? 1 : has("b") ? 0 : 2;
    return 0;  // the loss: over the batch
  });
}

}  // namespace wpnet
