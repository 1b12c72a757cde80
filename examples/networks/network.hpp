#pragma once
/// \file network.hpp
/// What the networks of examples/networks/ share: a training step as one program with its
/// loss and parameters, and the three strategies the issue compares a found one against --
/// data parallelism and the experts' splits -- as schedules over any training step's maps.

#include <workpart/nn.hpp>
#include <workpart/optimize/program_description.hpp>

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace wpnet {

namespace wp = workpart;
using wp::index_t;

/// One training step (forward, wp::backward, SGD) as one program; the program owns every
/// array its layers made, so `loss` and `params` live as long as it does.
template <class Program, class Loss, class Params>
struct training_step {
  Program program;
  Loss* loss;     ///< the rank-0 loss array
  Params params;  ///< every parameter's wp::wrt(W, dW): a std::tuple in layer order (a
                  ///< network typed whole) or a parameter_list (one built at run time);
                  ///< for_each_parameter(params, f) takes both
};
template <class Program, class Loss, class Params>
training_step<Program, Loss, Params> make_step(Program p, Loss& loss, Params params) {
  return {std::move(p), &loss, std::move(params)};
}

/// The parameters of a network built at run time (a depth or a block count read at run time):
/// one std::vector of wp::wrt per rank of parameter -- biases and norms' scales (1), fully
/// connected weights and embedding tables (2), attention projections (3), convolution
/// filters (4) -- so that wp::backward takes them as run-time lists and the program's length
/// costs no compile time; for_each visits them in the order they were added (layer order).
template <class T>
struct parameter_list {
  std::vector<wp::wrt_t<T, 1>> rank1;
  std::vector<wp::wrt_t<T, 2>> rank2;
  std::vector<wp::wrt_t<T, 3>> rank3;
  std::vector<wp::wrt_t<T, 4>> rank4;

  void add(const wp::wrt_t<T, 1>& w) { push(rank1, 1, w); }
  void add(const wp::wrt_t<T, 2>& w) { push(rank2, 2, w); }
  void add(const wp::wrt_t<T, 3>& w) { push(rank3, 3, w); }
  void add(const wp::wrt_t<T, 4>& w) { push(rank4, 4, w); }
  /// A layer's parameters (wp::nn::parameters(layers...)).
  template <class... W>
  void add(const std::tuple<W...>& ws) {
    std::apply([&](const auto&... w) { (add(w), ...); }, ws);
  }
  /// Another list's parameters, after these.
  void add(const parameter_list& o) {
    o.for_each([&](const auto& w) { add(w); });
  }
  std::size_t size() const noexcept { return order_.size(); }
  /// f(wrt) for every parameter, in the order they were added.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [rank, k] : order_) {
      if (rank == 1)
        f(rank1[k]);
      else if (rank == 2)
        f(rank2[k]);
      else if (rank == 3)
        f(rank3[k]);
      else
        f(rank4[k]);
    }
  }
  /// The backward program of `fwd` for every parameter.
  wp::program backward(const wp::program& fwd, const wp::array<T, 0>& loss) const {
    return wp::backward(fwd, loss, rank1, rank2, rank3, rank4);
  }
  /// Every parameter's update W = W - lr dW (maps sgd.<W>).
  wp::program sgd(T lr) const {
    wp::program p;
    for_each([&](const auto& w) { p.add(wp::forward_only, wp::nn::detail::sgd_map(lr, w)); });
    return p;
  }

 private:
  template <int N>
  void push(std::vector<wp::wrt_t<T, N>>& v, int rank, const wp::wrt_t<T, N>& w) {
    order_.emplace_back(rank, v.size());
    v.push_back(w);
  }
  std::vector<std::pair<int, std::size_t>> order_;  ///< (rank, index in its list) per parameter
};

/// f(wrt) for every parameter of a training step: a std::tuple or flat tuple of wp::wrt (a
/// network typed whole), or a parameter_list (one built at run time).
template <class Params, class F>
void for_each_parameter(const Params& params, F&& f) {
  if constexpr (requires { params.for_each(f); })
    params.for_each(f);
  else
    wp::detail::unpack(params, [&](const auto&... w) { (f(w), ...); });
}

namespace detail {

/// Layers joined into one: their program, output array and parameters (a std::tuple of
/// wp::wrt).
template <class Program, class Out, class Params>
struct joined {
  Program program;
  Out* out;
  Params params;
};
template <class Program, class Out, class Params>
joined<Program, Out, Params> join(Program p, Out& out, Params params) {
  return {std::move(p), &out, std::move(params)};
}

/// Blocks K+1 .. N of a stack after `first` (block K), each made by make(k, previous output)
/// over the one before (k from K + 2, one-based), joined into one.
template <std::size_t K, std::size_t N, class Block, class Make>
auto stack(Block first, Make make) {
  if constexpr (K + 1 == N) {
    return first;
  } else {
    auto rest = stack<K + 1, N>(make(K + 2, *first.out), make);
    return join(wp::program(first.program, rest.program), *rest.out,
                std::tuple_cat(first.params, rest.params));
  }
}

}  // namespace detail

/// A channel or feature count divided by the network's width divisor (at least 1).
inline index_t narrow(index_t n, index_t divisor) { return std::max<index_t>(1, n / divisor); }

/// f(name, extents) for every map of a typed program or of its description (wp::describe,
/// wp::repeat_blocks): the strategies below are schedules over either.
template <class Program, class F>
void for_each_map_extents(const Program& prog, F f) {
  prog.for_each_map([&](const auto& m) {
    std::vector<index_t> ext;
    for (int d = 0; d < m.rank(); ++d) ext.push_back(m.extents()[std::size_t(d)]);
    f(m.name(), ext);
  });
}
template <class F>
void for_each_map_extents(const wp::program_description& d, F f) {
  for (const auto& m : d.maps) f(m.name, m.extents);
}

/// The schedule that splits, in each map, the dimension split_dim(name, extents) returns over
/// the P ranks (at most its extent), the rest whole; a map over wp::space() runs on one rank.
/// Where split_dim returns -1 the map is replicated instead: its whole space on each of the P
/// ranks (wp::grid_shape::replicated), every rank holding what it writes.
template <class Program, class SplitDim>
wp::schedule split_one_dimension(const Program& prog, int P, SplitDim split_dim) {
  wp::schedule s;
  for_each_map_extents(prog, [&](const std::string& name, const std::vector<index_t>& ext) {
    std::vector<index_t> g(ext.size(), 1);
    const int split = int(split_dim(name, ext));
    if (split < 0) {
      s.set(name, wp::grid_shape(g).replicated(P));
      return;
    }
    if (!ext.empty()) {
      const std::size_t d = std::min(ext.size() - 1, std::size_t(split));
      g[d] = std::min<index_t>(P, std::max<index_t>(1, ext[d]));
    }
    s.set(name, wp::grid_shape(g));
  });
  return s;
}

/// Whether a map of a training step is a parameter's update (wp::sgd's "sgd." maps).
inline bool is_update(const std::string& map_name) { return map_name.rfind("sgd.", 0) == 0; }

/// The parameters a training step updates: "fc1.W" for its map "sgd.fc1.W".
template <class Program>
std::set<std::string> updated_parameters(const Program& prog) {
  std::set<std::string> params;
  for_each_map_extents(prog, [&](const std::string& name, const std::vector<index_t>&) {
    if (is_update(name)) params.insert(name.substr(4));
  });
  return params;
}

/// Whether a map zeroes a parameter's gradient (wp::backward's "zero.dfc1.W" for "fc1.W").
inline bool zeroes_parameter_gradient(const std::string& map_name,
                                      const std::set<std::string>& params) {
  return map_name.rfind("zero.d", 0) == 0 && params.count(map_name.substr(6)) > 0;
}

/// Data parallelism as its users run it: every forward and backward map's first dimension over
/// the P ranks -- the batch (the weight gradients summed on every rank: one Allreduce) -- the
/// rest whole, and every update replicated: each rank updates the whole of every parameter, so
/// that every rank holds the weights the next step reads. (The update split too -- a weight's
/// first axis over the ranks, as ZeRO shards it -- makes every reader gather the weights back:
/// RNNLM's recurrence reads its weights 1020 times a step.) A weight gradient's zeroing is
/// replicated too: each rank zeroes its whole copy, where split over the weight's first axis
/// every rank would then receive the others' zeros before summing into it. Maps over
/// wp::space() run on one rank.
template <class Program>
wp::schedule data_parallel(const Program& prog, int P) {
  const std::set<std::string> params = updated_parameters(prog);
  return split_one_dimension(prog, P, [&](const std::string& name, const std::vector<index_t>&) {
    return is_update(name) || zeroes_parameter_gradient(name, params) ? -1 : 0;
  });
}

/// The layer a training step's map belongs to, from the names the layers and wp::backward
/// give: without a "zero.", "seed.", "unpad." or "sgd." prefix, a derivative's "d" and
/// everything from the first '.': "sgd.fc1.W", "dfc1.bias" and "zero.dfc1.W" are fc1's,
/// "unpad.drelu5.y.padded" relu5's. (Layer names must not begin with 'd'.)
inline std::string layer_of(std::string n) {
  for (const std::string p : {"zero.", "seed.", "unpad.", "sgd."})
    if (n.rfind(p, 0) == 0) {
      n.erase(0, p.size());
      break;
    }
  if (!n.empty() && n[0] == 'd') n.erase(0, 1);
  return n.substr(0, n.find('.'));
}

/// The experts' strategy: the layers named in `model_parallel` split their features over the
/// P ranks (a map's second dimension -- fully connected (batch, out, in), activations (batch,
/// features), a weight's update (in, out) -- or the first of a bias's), every other layer is
/// data-parallel as data_parallel runs it (its updates replicated). With the fully connected
/// layers named this is Krizhevsky's "one weird trick" for CNNs (data-parallel convolutions,
/// model-parallel classifier).
template <class Program>
wp::schedule expert(const Program& prog, int P, const std::vector<std::string>& model_parallel) {
  const std::set<std::string> params = updated_parameters(prog);
  return split_one_dimension(
      prog, P, [&](const std::string& name, const std::vector<index_t>& ext) {
        const bool mp = std::find(model_parallel.begin(), model_parallel.end(), layer_of(name)) !=
                        model_parallel.end();
        if (!mp && (is_update(name) || zeroes_parameter_gradient(name, params))) return -1;
        return mp && ext.size() > 1 ? 1 : 0;
      });
}

}  // namespace wpnet
