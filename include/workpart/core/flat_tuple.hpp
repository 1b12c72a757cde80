#pragma once
/// \file flat_tuple.hpp
/// A tuple laid out flat -- one base `leaf<I, T>` per element -- for the lists a program keeps
/// of its maps and its maps' plans (a hundred elements and more for a network's training
/// step). libstdc++'s std::tuple nests one `_Tuple_impl` per element, each naming every
/// element after it, and GCC's time and memory grow with the square of that: a training
/// step of AlexNet (198 maps) spent minutes of its compile in tuple machinery. Here every
/// element is reached by one pack expansion (`unpack`) and no operation makes a tuple per
/// prefix: `concat` builds its result once, from all its parts' elements at once.

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace workpart::detail {

template <std::size_t I, class T>
struct flat_leaf {
  T value;
};

/// Element J of a flat_tuple (or of anything deriving from its leaves), found among the leaves
/// by deduction: no recursion, and a function named after the element's type alone -- a
/// member of the tuple would carry every element's type in its name, and a program's
/// hundreds of elements would make hundreds of such names, each as long as the program.
template <std::size_t J, class U>
U& leaf_ref(flat_leaf<J, U>& l) {
  return l.value;
}
template <std::size_t J, class U>
const U& leaf_ref(const flat_leaf<J, U>& l) {
  return l.value;
}
/// The type of element J (unevaluated only).
template <std::size_t J, class U>
U leaf_type(const flat_leaf<J, U>&);

template <class Seq, class... T>
class flat_tuple_base;
template <std::size_t... I, class... T>
class flat_tuple_base<std::index_sequence<I...>, T...> : public flat_leaf<I, T>... {
 public:
  flat_tuple_base() = default;
  explicit flat_tuple_base(T... v) requires(sizeof...(T) > 0) : flat_leaf<I, T>{std::move(v)}... {}

  /// f(element0, element1, ...): every element in one call, in order.
  template <class F>
  decltype(auto) unpack(F&& f) & {
    return std::forward<F>(f)(static_cast<flat_leaf<I, T>&>(*this).value...);
  }
  template <class F>
  decltype(auto) unpack(F&& f) const& {
    return std::forward<F>(f)(static_cast<const flat_leaf<I, T>&>(*this).value...);
  }
  template <class F>
  decltype(auto) unpack(F&& f) && {
    return std::forward<F>(f)(std::move(static_cast<flat_leaf<I, T>&>(*this).value)...);
  }

  /// Element J.
  template <std::size_t J>
  auto& get() & {
    return leaf_ref<J>(*this);
  }
  template <std::size_t J>
  const auto& get() const& {
    return leaf_ref<J>(*this);
  }
};

template <class... T>
class flat_tuple : public flat_tuple_base<std::index_sequence_for<T...>, T...> {
  using base = flat_tuple_base<std::index_sequence_for<T...>, T...>;

 public:
  static constexpr std::size_t size = sizeof...(T);
  using base::base;
};

template <class T>
inline constexpr bool is_flat_tuple_v = false;
template <class... T>
inline constexpr bool is_flat_tuple_v<flat_tuple<T...>> = true;

/// f(elements of t...), for a flat_tuple or a std::tuple (small ones: a map's statements).
template <class Tuple, class F>
decltype(auto) unpack(Tuple&& t, F&& f) {
  if constexpr (is_flat_tuple_v<std::remove_cvref_t<Tuple>>)
    return std::forward<Tuple>(t).unpack(std::forward<F>(f));
  else
    return std::apply(std::forward<F>(f), std::forward<Tuple>(t));
}

/// How many elements a part (a flat_tuple or a std::tuple) holds.
template <class P>
struct part_size;
template <class... T>
struct part_size<flat_tuple<T...>> : std::integral_constant<std::size_t, sizeof...(T)> {};
template <class... T>
struct part_size<std::tuple<T...>> : std::integral_constant<std::size_t, sizeof...(T)> {};

/// Part I of concat's arguments, reached by deduction as flat_tuple's leaves are (a
/// std::tuple of the parts would cost its constructor's constraints and a std::get per part,
/// each recursing over every part: a backward program concatenates one part per map).
template <std::size_t I, class P>
struct part_ref {
  std::remove_reference_t<P>* p;
};
template <class Seq, class... P>
struct part_refs;
template <std::size_t... I, class... P>
struct part_refs<std::index_sequence<I...>, P...> : part_ref<I, P>... {};
/// Part I (deduced from its base: one function per part).
template <std::size_t I, class P>
std::remove_reference_t<P>& part_of(const part_ref<I, P>& r) {
  return *r.p;
}

/// Element J of a part: a flat_tuple's by leaf_ref, a (small) std::tuple's by std::get --
/// functions named after the element, not after the part holding it.
template <std::size_t J, class... T>
auto& leaf_ref(std::tuple<T...>& t) {
  return std::get<J>(t);
}
template <std::size_t J, class... T>
const auto& leaf_ref(const std::tuple<T...>& t) {
  return std::get<J>(t);
}
/// x, moved when its part was passed as an rvalue.
template <bool Move, class U>
decltype(auto) move_if(U& x) {
  if constexpr (Move)
    return std::move(x);
  else
    return (x);
}

/// Element j of the concatenation of parts of sizes S...: (its part, its index in the part),
/// computed once, so that concat is one pack expansion over the elements (unpacking the parts
/// one inside another nests a lambda per part, each naming every element before it: a
/// program of k parts compiled in time growing with k squared and more, a training step of
/// 32 residual blocks in minutes).
template <std::size_t... S>
struct concat_table {
  static constexpr std::size_t total = (std::size_t(0) + ... + S);
  struct entry {
    std::size_t part, index;
  };
  static constexpr auto at = [] {
    constexpr std::size_t sizes[] = {S..., 0};
    std::array<entry, total> t{};
    std::size_t j = 0;
    for (std::size_t p = 0; p < sizeof...(S); ++p)
      for (std::size_t i = 0; i < sizes[p]; ++i) t[j++] = {p, i};
    return t;
  }();
};

/// The elements of every part (flat_tuples or std::tuples), in order, as one flat_tuple.
template <class... P>
auto concat(P&&... parts) {
  using table = concat_table<part_size<std::remove_cvref_t<P>>::value...>;
  static constexpr bool moved[] = {!std::is_lvalue_reference_v<P>..., false};
  const part_refs<std::index_sequence_for<P...>, P...> all{{&parts}...};
  return [&]<std::size_t... J>(std::index_sequence<J...>) {
    return flat_tuple<std::remove_cvref_t<decltype(leaf_ref<table::at[J].index>(
        part_of<table::at[J].part>(all)))>...>(
        move_if<moved[table::at[J].part]>(
            leaf_ref<table::at[J].index>(part_of<table::at[J].part>(all)))...);
  }
  (std::make_index_sequence<table::total>{});
}

/// A flat_tuple of the elements of the parts held in `parts` (a tuple of tuples).
template <class Parts>
auto concat_parts(Parts&& parts) {
  return detail::unpack(std::forward<Parts>(parts), [](auto&&... p) {
    return detail::concat(std::forward<decltype(p)>(p)...);
  });
}

/// The elements in reverse order.
template <class... T>
auto reversed(const flat_tuple<T...>& t) {
  constexpr std::size_t n = sizeof...(T);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return flat_tuple<decltype(leaf_type<n - 1 - I>(t))...>(leaf_ref<n - 1 - I>(t)...);
  }
  (std::make_index_sequence<n>{});
}

}  // namespace workpart::detail
