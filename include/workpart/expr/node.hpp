#pragma once
/// \file node.hpp
/// What every expression node shares: the node tag, the compile-time facts about a node
/// (`node_info`), and the binding interface that the executors use.
///
/// A node is the algorithm (structure in the type, offsets and scalars as values). `bind(env)`
/// resolves each array to a buffer and gives a *bound* node with
///   - `eval(pt)`: the value at a point (pt[d] = global coordinate of dimension d);
///   - `row<M>(pt)`: an evaluator `r(t)` of the value at pt + t along dimension M, which for
///     contiguous accesses is a plain `p[t]` the compiler vectorises;
///   - `check_row<M>(pt, len, sink)`: whether every access stays in its buffer along that row
///     (used where bounds were not proven when the map was built).

#include <atomic>
#include <mutex>
#include <string>
#include <type_traits>

#include "../config.hpp"

namespace workpart::detail {

/// Base of every expression node (found by ADL for the operators in ops.hpp).
struct expr_base {};

template <class T>
inline constexpr bool is_expr_v = std::is_base_of_v<expr_base, std::remove_cvref_t<T>>;
template <class T>
concept expr_node = is_expr_v<T>;

/// Compile-time facts about a node type.
struct node_info {
  dim_mask free = 0;      ///< index dimensions read and not bound by a range inside the node
  bool has_all = false;   ///< contains a `wp::all` subscript not yet bound by a reduction
  bool simple = true;     ///< rows are direct (no inner reductions, no indirect subscripts)
  bool reduces = false;   ///< contains an inner reduction
  dim_mask bound = 0;     ///< inner dimensions bound by ranges inside the node
};

/// One array's buffer as the executor sees it: global coordinates in
/// `[origin, origin + extent)` per axis, strides in elements, the last stride 1.
struct raw_view {
  void* data = nullptr;
  index_t origin[max_rank] = {};
  index_t extent[max_rank] = {};
  index_t stride[max_rank] = {};
};

/// Collects the first out-of-bounds access seen while running (possibly in threads), so that
/// the executor can raise one `wp::shape_error` after the loop instead of throwing inside it.
class error_sink {
 public:
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }
  void report(const std::string& what) {
    std::lock_guard<std::mutex> lock(m_);
    if (!failed_.load()) {
      msg_ = what;
      failed_.store(true);
    }
  }
  const std::string& message() const noexcept { return msg_; }

 private:
  std::atomic<bool> failed_{false};
  std::mutex m_;
  std::string msg_;
};

/// Row evaluators shared by several nodes.
template <class V>
struct const_row {
  V v;
  WORKPART_ALWAYS_INLINE V operator()(index_t) const { return v; }
};

/// Fallback row: evaluates the bound node at pt + t along M.
template <int M, class Bound>
struct generic_row {
  const Bound* node;
  mutable index_t pt[max_dims];
  index_t start;
  WORKPART_ALWAYS_INLINE auto operator()(index_t t) const {
    pt[M] = start + t;
    return node->eval(pt);
  }
};
template <int M, class Bound>
generic_row<M, Bound> make_generic_row(const Bound& b, const index_t* pt) {
  generic_row<M, Bound> r{&b, {}, pt[M]};
  for (int d = 0; d < max_dims; ++d) r.pt[d] = pt[d];
  return r;
}

}  // namespace workpart::detail

namespace workpart::detail {

/// A runtime scalar captured by value (`2.0 * x(i)`, `out(i) = 0`).
template <class V>
struct scalar_node : expr_base {
  using value_type = V;
  static constexpr node_info info{};
  V v;
  constexpr explicit scalar_node(V x) : v(x) {}

  struct bound {
    using value_type = V;
    V v;
    WORKPART_ALWAYS_INLINE V eval(const index_t*) const { return v; }
    template <int M>
    WORKPART_ALWAYS_INLINE const_row<V> row(const index_t*) const { return {v}; }
    template <int M>
    bool check_row(const index_t*, index_t, error_sink&) const { return true; }
  };
  template <class Env>
  bound bind(const Env&, dim_mask) const { return {v}; }
  template <class Visitor>
  void visit(Visitor&) const {}
  std::string str() const {
    if constexpr (std::is_floating_point_v<V>) {
      std::string s = std::to_string(v);
      while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
      return s;
    } else {
      return std::to_string(v);
    }
  }
};

template <class T>
concept arithmetic_scalar = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

/// Lifts an arithmetic scalar into a node; leaves nodes as they are.
template <class E>
constexpr decltype(auto) as_node(const E& e) {
  if constexpr (is_expr_v<E>) return (e);
  else return scalar_node<E>(e);
}
template <class E>
using node_t = std::remove_cvref_t<decltype(as_node(std::declval<const E&>()))>;

}  // namespace workpart::detail
