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
///   - `check_row<M>(pt, len)`: whether every access stays in its buffer along that row (used
///     where bounds were not proven when the map was built; a failure is written to the
///     env's oob_record).
/// Evaluation paths are `WORKPART_HD`: the device backend runs them in its kernels.

#include <string>
#include <tuple>
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
  dim_mask free = 0;     ///< index dimensions read and not bound by a range inside the node
  bool has_all = false;  ///< contains a `wp::all` subscript not yet bound by a reduction
  bool simple = true;    ///< rows are direct (no inner reductions, no indirect subscripts)
  bool reduces = false;  ///< contains an inner reduction
  dim_mask bound = 0;    ///< inner dimensions bound by ranges inside the node
};

/// The one traversal protocol of expression nodes: what a pass needs to know of a node type
/// without guessing from member names. A leaf (scalars, `val`, accesses: passes that look
/// into accesses treat them first) has no children; an interior node lists its children's
/// types, says whether they are evaluated at the node's own point (`elementwise`: arithmetic,
/// functions, select) or over an inner range (reductions), and rebuilds itself from
/// transformed children (`map`). A new node type is one specialisation, next to the node.
template <class N>
struct node_traits {
  using children = std::tuple<>;
  static constexpr bool elementwise = false;
  template <class F>
  static constexpr N map(const N& n, F&&) {
    return n;
  }
};

/// One array's buffer as the executor sees it: global coordinates in
/// `[origin, origin + extent)` per axis, strides in elements, the last stride 1.
struct raw_view {
  void* data = nullptr;
  index_t origin[max_rank] = {};
  index_t extent[max_rank] = {};
  index_t stride[max_rank] = {};
};

/// The first out-of-bounds access seen while running, as plain data: kernels on a device
/// write it as well as host loops (possibly in threads); the executor builds the message on
/// the host after the loop and raises one `wp::shape_error`.
struct oob_record {
  int hit = 0;
  int axis = 0;
  index_t value = 0, lo = 0, hi = 0;
  const void* node = nullptr;  ///< the access (a host address, never read in device code)
  std::string (*describe)(const oob_record&) = nullptr;  ///< its message, called on the host
};

/// The message of a recorded out-of-bounds access by `access` (its text) of array `name`.
inline std::string out_of_bounds_text(const std::string& access, const std::string& name,
                                      const oob_record& r) {
  return "access " + access + " reads axis " + std::to_string(r.axis) + " of '" + name + "' at " +
         std::to_string(r.value) + ", outside [" + std::to_string(r.lo) + ", " +
         std::to_string(r.hi) + ")";
}

/// Records an out-of-bounds access; the first one wins (atomically, threads or device).
WORKPART_HD inline void record_oob(oob_record* r, int axis, index_t value, index_t lo, index_t hi,
                                   const void* node, std::string (*describe)(const oob_record&)) {
#if defined(__CUDA_ARCH__)
  if (atomicCAS(&r->hit, 0, 1) != 0) return;
#else
  int expected = 0;
  if (!__atomic_compare_exchange_n(&r->hit, &expected, 1, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    return;
#endif
  r->axis = axis;
  r->value = value;
  r->lo = lo;
  r->hi = hi;
  r->node = node;
  r->describe = describe;
}

/// The host side of an oob_record: whether an access failed, and its message.
class error_sink {
 public:
  bool failed() const noexcept { return __atomic_load_n(&rec_.hit, __ATOMIC_ACQUIRE) != 0; }
  std::string message() const { return rec_.describe ? rec_.describe(rec_) : std::string(); }
  oob_record* record() noexcept { return &rec_; }
  /// Takes over a record copied back from a device.
  void set(const oob_record& r) { rec_ = r; }

 private:
  oob_record rec_;
};

/// Row evaluators shared by several nodes.
template <class V>
struct const_row {
  V v;
  WORKPART_HD WORKPART_ALWAYS_INLINE V operator()(index_t) const { return v; }
};

/// Fallback row: evaluates the bound node at pt + t along M.
template <int M, class Bound>
struct generic_row {
  const Bound* node;
  mutable index_t pt[max_dims];
  index_t start;
  WORKPART_HD WORKPART_ALWAYS_INLINE auto operator()(index_t t) const {
    pt[M] = start + t;
    return node->eval(pt);
  }
};
template <int M, class Bound>
WORKPART_HD generic_row<M, Bound> make_generic_row(const Bound& b, const index_t* pt) {
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
    WORKPART_HD WORKPART_ALWAYS_INLINE V eval(const index_t*) const { return v; }
    template <int M>
    WORKPART_HD WORKPART_ALWAYS_INLINE const_row<V> row(const index_t*) const {
      return {v};
    }
    template <int M>
    WORKPART_HD bool check_row(const index_t*, index_t) const {
      return true;
    }
  };
  template <class Env>
  bound bind(const Env&, dim_mask) const {
    return {v};
  }
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
  if constexpr (is_expr_v<E>)
    return (e);
  else
    return scalar_node<E>(e);
}
template <class E>
using node_t = std::remove_cvref_t<decltype(as_node(std::declval<const E&>()))>;

}  // namespace workpart::detail
