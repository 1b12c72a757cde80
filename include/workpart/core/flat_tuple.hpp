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

template <class Seq, class... T>
class flat_tuple_base;
template <std::size_t... I, class... T>
class flat_tuple_base<std::index_sequence<I...>, T...> : private flat_leaf<I, T>... {
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

  /// Element J (its type found among the leaves by deduction, no recursion).
  template <std::size_t J>
  auto& get() & {
    return leaf_value<J>(*this);
  }
  template <std::size_t J>
  const auto& get() const& {
    return leaf_value<J>(*this);
  }

 private:
  template <std::size_t J, class U>
  static U& leaf_value(flat_leaf<J, U>& l) {
    return l.value;
  }
  template <std::size_t J, class U>
  static const U& leaf_value(const flat_leaf<J, U>& l) {
    return l.value;
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

/// Element J of a part, moved out of an rvalue part.
template <std::size_t J, class P>
decltype(auto) part_element(P&& p) {
  if constexpr (!is_flat_tuple_v<std::remove_cvref_t<P>>)
    return std::get<J>(std::forward<P>(p));
  else if constexpr (std::is_lvalue_reference_v<P>)
    return (p.template get<J>());
  else
    return std::move(p.template get<J>());
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
  auto all = std::forward_as_tuple(std::forward<P>(parts)...);
  return [&]<std::size_t... J>(std::index_sequence<J...>) {
    return flat_tuple<std::remove_cvref_t<decltype(part_element<table::at[J].index>(
        std::get<table::at[J].part>(std::move(all))))>...>(
        part_element<table::at[J].index>(std::get<table::at[J].part>(std::move(all)))...);
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
    return flat_tuple<std::remove_cvref_t<decltype(t.template get<n - 1 - I>())>...>(
        t.template get<n - 1 - I>()...);
  }
  (std::make_index_sequence<n>{});
}

}  // namespace workpart::detail
