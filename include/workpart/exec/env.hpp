#pragma once
/// \file env.hpp
/// The buffers a map runs on: one raw_view per array (global or local blocks alike).

#include <string>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../error.hpp"
#include "../expr/node.hpp"

namespace workpart::detail {

class buffer_env {
 public:
  void add(const void* id, const raw_view& v) {
    for (auto& [k, x] : views_)
      if (k == id) {
        x = v;
        return;
      }
    views_.emplace_back(id, v);
  }
  bool has(const void* id) const {
    for (const auto& kv : views_)
      if (kv.first == id) return true;
    return false;
  }
  const raw_view& view_by_id(const void* id, const std::string& name) const {
    for (const auto& kv : views_)
      if (kv.first == id) return kv.second;
    throw plan_error("array '" + name +
                     "' has no buffer on this rank; it was not part of the plan");
  }
  template <class T, int N>
  const raw_view& view(const array<T, N>& a) const {
    return view_by_id(&a, a.name());
  }
  error_sink& sink() const { return sink_; }
  oob_record* oob() const { return sink_.record(); }

 private:
  std::vector<std::pair<const void*, raw_view>> views_;
  mutable error_sink sink_;
};

/// The whole array as root holds it.
template <class T, int N>
raw_view global_view(array<T, N>& a) {
  raw_view v;
  v.data = a.data();
  const auto st = a.strides();
  for (int d = 0; d < N; ++d) {
    v.origin[d] = 0;
    v.extent[d] = a.extent(d);
    v.stride[d] = st[d];
  }
  return v;
}

/// Calls f(array&) once for every array an expression or statement touches.
template <class F>
struct array_collector {
  F f;
  template <class A>
  void on_access(const A& a) {
    f(*a.arr);
  }
  template <class R>
  void enter_range(const R&) {}
  void leave_range() {}
};
template <class Node, class F>
void for_each_array(const Node& n, F f) {
  array_collector<F> c{f};
  n.visit(c);
}

}  // namespace workpart::detail
