#pragma once
/// \file access.hpp
/// Array accesses: `A(i, k)`, `x(i + 1, j - 1)`, `z(N - 1 - i)`, `A(i, wp::all)`, `x(col(jj))`.
/// The subscript kinds and their affine structure are in the access's type.

#include <array>
#include <string>
#include <tuple>
#include <utility>

#include "../core/affine.hpp"
#include "../core/array.hpp"
#include "node.hpp"

namespace workpart::detail {

/// `wp::all` in an access (bound to an implicit inner index by wp::sum / max_of / min_of).
struct all_sub {};
/// A data-dependent subscript: an integer-valued expression such as `col(jj)`.
template <class E>
struct indirect_sub {
  E e;
};

template <class S>
struct sub_traits;
template <class S>
requires is_affine_v<S>
struct sub_traits<S> {
  static constexpr bool is_affine = true;
  static constexpr bool is_indirect = false;
  static constexpr node_info info{S::sig.present, false, true, false};
};
template <>
struct sub_traits<all_sub> {
  static constexpr bool is_affine = false;
  static constexpr bool is_indirect = false;
  static constexpr node_info info{0, true, true, false};
};
template <class E>
struct sub_traits<indirect_sub<E>> {
  static constexpr bool is_affine = false;
  static constexpr bool is_indirect = true;
  static constexpr node_info info{E::info.free, E::info.has_all, false, E::info.reduces,
                                  E::info.bound};
};

template <class Arg>
constexpr auto to_sub(const Arg& a) {
  if constexpr (is_index_v<Arg> || is_affine_v<Arg> || integer_like<Arg>) {
    return to_affine(a);
  } else if constexpr (std::is_same_v<Arg, all_t>) {
    return all_sub{};
  } else if constexpr (is_expr_v<Arg>) {
    static_assert(std::is_integral_v<typename Arg::value_type>,
                  "workpart: an indirect subscript must be integer-valued, e.g. x(col(jj)) with "
                  "col an array of std::int32_t or std::int64_t");
    return indirect_sub<Arg>{a};
  } else {
    static_assert(always_false<Arg>,
                  "workpart: a subscript must be an index (i), an affine form of indices "
                  "(i + 1, 2 * i, N - 1 - i, i + r), an integer, wp::all, or an integer-valued "
                  "array access (col(jj))");
    return all_sub{};
  }
}

/// Kind of one axis of an access, as the analyses see it (runtime, type-erased).
enum class axis_kind { affine, all, indirect };
struct axis_form {
  axis_kind kind = axis_kind::affine;
  index_t coef[max_dims] = {};
  index_t offset = 0;
};

/// Statement kinds. `assign` is `=`; the others combine into existing values.
enum class combine { assign, add, max, min };

template <class Kind, class Lhs, class Rhs>
struct statement;
struct assign_tag {
  static constexpr combine kind = combine::assign;
};
struct add_tag {
  static constexpr combine kind = combine::add;
};
struct max_tag {
  static constexpr combine kind = combine::max;
};
struct min_tag {
  static constexpr combine kind = combine::min;
};

// Row evaluators of an access along the moving dimension.
template <class T>
struct unit_row {
  const T* WORKPART_RESTRICT p;
  WORKPART_HD WORKPART_ALWAYS_INLINE T operator()(index_t t) const { return p[t]; }
};
template <class T>
struct strided_row {
  const T* p;
  index_t step;
  WORKPART_HD WORKPART_ALWAYS_INLINE T operator()(index_t t) const { return p[t * step]; }
};

enum class step_kind { zero, unit, strided, generic };

/// An access of array<T, N> with subscripts Subs.
template <class T, int N, class... Subs>
struct access_node : expr_base {
  static_assert(sizeof...(Subs) == N);
  using value_type = T;
  using array_type = array<T, N>;
  using subs_type = std::tuple<Subs...>;

  static constexpr node_info info = [] {
    node_info r;
    ((r.free |= sub_traits<Subs>::info.free), ...);
    r.has_all = (sub_traits<Subs>::info.has_all || ...);
    r.simple = (sub_traits<Subs>::is_affine && ...);
    r.reduces = (sub_traits<Subs>::info.reduces || ...);
    ((r.bound |= sub_traits<Subs>::info.bound), ...);
    return r;
  }();
  static constexpr bool all_affine = (sub_traits<Subs>::is_affine && ... && true);
  /// The dimensions used inside indirect subscripts (data-dependent positions).
  static constexpr dim_mask indirect_free =
      (dim_mask(0) | ... |
       (sub_traits<Subs>::is_indirect ? sub_traits<Subs>::info.free : dim_mask(0)));

  array_type* arr;
  subs_type subs;

  constexpr access_node(array_type& a, Subs... s) : arr(&a), subs(s...) {}
  constexpr access_node(const access_node&) = default;

  // Statements (defined in statement.hpp). The copy-assignment form matters: `a(i) = b(i)`
  // with both sides of one type must build a statement, not copy the access.
  template <class R>
  constexpr auto operator=(const R& rhs) const;
  constexpr auto operator=(const access_node& rhs) const;
  template <class R>
  constexpr auto operator+=(const R& rhs) const;

  /// The affine structure of axis A (compile time).
  template <int A>
  static constexpr affine_sig axis_sig() {
    using S = std::tuple_element_t<A, subs_type>;
    if constexpr (is_affine_v<S>)
      return S::sig;
    else
      return affine_sig{};
  }

  /// How the address moves along dimension M (compile time).
  template <int M>
  static constexpr step_kind step_along() {
    if constexpr (!all_affine) {
      return (info.free & dim_bit(M)) ? step_kind::generic : step_kind::zero;
    } else {
      if (!(info.free & dim_bit(M))) return step_kind::zero;
      bool unit = false;
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        constexpr affine_sig sigs[] = {axis_sig<int(A)>()..., affine_sig{}};
        unit = true;
        for (int a = 0; a < N; ++a) {
          const bool last = a == N - 1;
          if (!sigs[a].uses(M)) continue;
          if (!last || !sigs[a].static_coef(M) || sigs[a].coef[M] != 1) unit = false;
        }
      }
      (std::make_index_sequence<N>{});
      return unit ? step_kind::unit : step_kind::strided;
    }
  }

  /// The runtime form of each axis, for bounds analysis, constraints and messages.
  std::array<axis_form, N> axis_forms() const {
    std::array<axis_form, N> f{};
    [&]<std::size_t... A>(std::index_sequence<A...>) { (fill_form(std::get<A>(subs), f[A]), ...); }
    (std::make_index_sequence<N>{});
    return f;
  }

  std::string str() const {
    std::string s = arr->name() + "(";
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      ((s += (A ? ", " : "") + sub_str(std::get<A>(subs))), ...);
    }
    (std::make_index_sequence<N>{});
    return s + ")";
  }

  template <class Visitor>
  void visit(Visitor& v) const {
    v.on_access(*this);
    visit_subscripts(v);
  }
  /// The accesses inside its indirect subscripts (reads, even on a left side).
  template <class Visitor>
  void visit_subscripts(Visitor& v) const {
    std::apply([&](const auto&... s) { (visit_sub(s, v), ...); }, subs);
  }

  // ---- binding ----
  template <class Sub, class Env>
  static auto bind_sub(const Sub& s, const Env& env, dim_mask dd) {
    if constexpr (is_indirect<Sub>)
      return s.e.bind(env, dd);
    else
      return s;
  }
  template <class Env>
  using bound_subs_t = std::tuple<decltype(bind_sub(std::declval<const Subs&>(),
                                                    std::declval<const Env&>(), dim_mask{}))...>;

  template <class Env>
  struct bound {
    using value_type = T;
    T* data;
    index_t base;  // -sum(origin * stride): global coordinates index the buffer directly
    index_t stride[N > 0 ? N : 1];
    index_t lo[N > 0 ? N : 1];
    index_t hi[N > 0 ? N : 1];
    bound_subs_t<Env> subs;
    const access_node* src;  // for the message (a host address, never read in device code)
    oob_record* oob;         // where an out-of-bounds access is recorded (host or device memory)
    std::string (*describe)(const oob_record&);  // set on the host: device code only copies it
    bool checked;  // subscripts not proven in bounds when the map was built

    template <std::size_t A>
    WORKPART_HD WORKPART_ALWAYS_INLINE index_t sub_value(const index_t* pt) const {
      const auto& s = std::get<A>(subs);
      if constexpr (is_affine_v<std::remove_cvref_t<decltype(s)>>)
        return s(pt);
      else
        return static_cast<index_t>(s.eval(pt));
    }
    WORKPART_HD WORKPART_ALWAYS_INLINE bool offset_at(const index_t* pt, index_t& off) const {
      off = base;
      bool ok = true;
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        (([&] {
           const index_t v = sub_value<A>(pt);
           if (checked && (v < lo[A] || v >= hi[A])) {
             if (ok) out_of_bounds(int(A), v);
             ok = false;
           }
           off += v * stride[A];
         }()),
         ...);
      }
      (std::make_index_sequence<N>{});
      return ok;
    }
    WORKPART_HD void out_of_bounds(int axis, index_t v) const {
      record_oob(oob, axis, v, lo[axis], hi[axis], src, describe);
    }
    WORKPART_HD WORKPART_ALWAYS_INLINE T eval(const index_t* pt) const {
      index_t off;
      if (!offset_at(pt, off)) return T{};
      return data[off];
    }
    /// Writable element of an affine left side (checked when the map was built).
    WORKPART_HD WORKPART_ALWAYS_INLINE T* ptr(const index_t* pt) const {
      index_t off;
      offset_at(pt, off);
      return data + off;
    }
    /// Writable element of a left side with indirect subscripts (a scatter), or nullptr where
    /// a subscript's value leaves the buffer (recorded, never written).
    WORKPART_HD WORKPART_ALWAYS_INLINE T* ptr_if_inside(const index_t* pt) const {
      index_t off;
      return offset_at(pt, off) ? data + off : nullptr;
    }
    /// The address step along dimension m of the affine axes (an indirect axis has none: a
    /// caller steps only along dimensions its subscripts do not use).
    WORKPART_HD index_t step(int m) const {
      index_t s = 0;
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        (([&] {
           using S = std::tuple_element_t<A, bound_subs_t<Env>>;
           if constexpr (is_affine_v<S>) s += std::get<A>(subs).coef_of(m) * stride[A];
         }()),
         ...);
      }
      (std::make_index_sequence<N>{});
      return s;
    }
    template <int M>
    WORKPART_HD WORKPART_ALWAYS_INLINE auto row(const index_t* pt) const {
      constexpr step_kind k = step_along<M>();
      if constexpr (k == step_kind::generic) {
        return make_generic_row<M>(*this, pt);
      } else {
        index_t off;
        const bool ok = offset_at(pt, off);  // false only for checked subscripts (reported)
        if constexpr (k == step_kind::zero)
          return const_row<T>{ok ? data[off] : T{}};
        else if constexpr (k == step_kind::unit)
          return unit_row<T>{data + off};
        else
          return strided_row<T>{data + off, step(M)};
      }
    }
    /// Every element of the row [pt, pt + len) along M lies in the buffer (affine
    /// subscripts are monotone along a row, so the two ends decide).
    template <int M>
    WORKPART_HD bool check_row(const index_t* pt, index_t len) const {
      if (!checked || len <= 0) return true;
      if constexpr (!all_affine) {
        return true;  // indirect subscripts are checked element by element in eval()
      } else {
        index_t q[max_dims];
        for (int d = 0; d < max_dims; ++d) q[d] = pt[d];
        bool ok = true;
        const index_t ends[2] = {0, len - 1};
        for (index_t end : ends) {
          q[M] = pt[M] + end;
          [&]<std::size_t... A>(std::index_sequence<A...>) {
            (([&] {
               const index_t v = std::get<A>(subs)(q);
               if (ok && (v < lo[A] || v >= hi[A])) {
                 out_of_bounds(int(A), v);
                 ok = false;
               }
             }()),
             ...);
          }
          (std::make_index_sequence<N>{});
        }
        return ok;
      }
    }
  };

  /// The message of an out-of-bounds access recorded by a bound access of this type.
  static std::string oob_text(const oob_record& r) {
    const auto* a = static_cast<const access_node*>(r.node);
    return out_of_bounds_text(a->str(), a->arr->name(), r);
  }

  /// Resolves the array through env (`env.view(array)` gives a raw_view, `env.oob()` where
  /// out-of-bounds accesses are recorded) for execution.
  /// dd: dimensions whose ranges depend on data; accesses that use them are checked.
  /// `subs_env`: where the arrays inside indirect subscripts are read, when not `env` (a
  /// scatter's left side binds its array to the write buffers and idx to the read buffers).
  template <class Env>
  bound<Env> bind(const Env& env, dim_mask dd, const Env* subs_env = nullptr) const {
    const raw_view& v = env.view(*arr);
    bound<Env> b{static_cast<T*>(v.data),
                 0,
                 {},
                 {},
                 {},
                 bind_subs(subs_env ? *subs_env : env, dd),
                 this,
                 env.oob(),
                 &access_node::oob_text,
                 (info.free & dd) != 0 || !all_affine};
    for (int a = 0; a < N; ++a) {
      b.stride[a] = v.stride[a];
      b.lo[a] = v.origin[a];
      b.hi[a] = v.origin[a] + v.extent[a];
      b.base -= v.origin[a] * v.stride[a];
    }
    return b;
  }

 private:
  template <class S>
  static constexpr bool is_indirect = !sub_traits<S>::is_affine && !std::is_same_v<S, all_sub>;

  template <class Env>
  bound_subs_t<Env> bind_subs(const Env& env, dim_mask dd) const {
    return std::apply([&](const auto&... s) { return bound_subs_t<Env>{bind_sub(s, env, dd)...}; },
                      subs);
  }
  template <class S>
  static void fill_form(const S& s, axis_form& f) {
    if constexpr (is_affine_v<S>) {
      f.kind = axis_kind::affine;
      f.offset = s.offset;
      for (int d = 0; d < max_dims; ++d) f.coef[d] = s.coef_of(d);
    } else if constexpr (std::is_same_v<S, all_sub>) {
      f.kind = axis_kind::all;
    } else {
      f.kind = axis_kind::indirect;
    }
  }
  template <class S>
  static std::string sub_str(const S& s) {
    if constexpr (is_affine_v<S>)
      return s.str();
    else if constexpr (std::is_same_v<S, all_sub>)
      return ":";
    else
      return s.e.str();
  }
  template <class S, class Visitor>
  static void visit_sub(const S& s, Visitor& v) {
    if constexpr (is_indirect<S>) s.e.visit(v);
  }
};

template <class T>
inline constexpr bool is_access_v = false;
template <class T, int N, class... S>
inline constexpr bool is_access_v<access_node<T, N, S...>> = true;

template <class T, int N, class... Args>
struct access_builder<array<T, N>, Args...> {
  static constexpr auto make(array<T, N>& a, const Args&... args) {
    return access_node<T, N, decltype(to_sub(args))...>(a, to_sub(args)...);
  }
};

}  // namespace workpart::detail
