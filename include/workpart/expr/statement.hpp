#pragma once
/// \file statement.hpp
/// Statements: `out(i, j) = e`, `out(i, j) += e`, `wp::max_into(out(i), e)`, `wp::min_into(...)`,
/// and the scatter-add `h(idx(i)) += e` (an indirect left-hand subscript takes '+=' only).

#include <string>

#include "access.hpp"
#include "ops.hpp"

namespace workpart::detail {

template <class Kind, class Lhs, class Rhs>
struct statement {
  static_assert(is_access_v<Lhs>, "workpart: the left side of a statement must be an array access");
  static_assert(!Lhs::info.has_all,
                "workpart: wp::all on the left side writes no single element; it can only be "
                "read (inside wp::sum / wp::max_of / wp::min_of)");
  // A write through a data-dependent subscript is a scatter: several points may land on one
  // element, so only '+=' (whose order does not matter) is defined.
  static_assert(Lhs::all_affine || Kind::kind == combine::add,
                "workpart: a left side with an indirect subscript (a scatter, h(idx(i))) takes "
                "'+=' only (several points may write one element); '=', wp::max_into and "
                "wp::min_into need affine left-hand subscripts");
  static constexpr combine kind = Kind::kind;
  using lhs_type = Lhs;
  using rhs_type = Rhs;
  using value_type = typename Lhs::value_type;
  static constexpr node_info info = merge_info(Lhs::info, Rhs::info);

  Lhs lhs;
  Rhs rhs;

  std::string str() const {
    switch (kind) {
      case combine::assign:
        return lhs.str() + " = " + rhs.str();
      case combine::add:
        return lhs.str() + " += " + rhs.str();
      case combine::max:
        return "max_into(" + lhs.str() + ", " + rhs.str() + ")";
      case combine::min:
        return "min_into(" + lhs.str() + ", " + rhs.str() + ")";
    }
    return {};
  }
};

template <class T>
inline constexpr bool is_statement_v = false;
template <class K, class L, class R>
inline constexpr bool is_statement_v<statement<K, L, R>> = true;

template <class Kind, class Lhs, class R>
constexpr auto make_statement(const Lhs& lhs, const R& rhs) {
  static_assert(is_expr_v<R> || arithmetic_scalar<R>,
                "workpart: the right side of a statement must be an expression or a scalar");
  return statement<Kind, Lhs, node_t<R>>{lhs, as_node(rhs)};
}

template <class T, int N, class... Subs>
template <class R>
constexpr auto access_node<T, N, Subs...>::operator=(const R& rhs) const {
  return make_statement<assign_tag>(*this, rhs);
}
template <class T, int N, class... Subs>
constexpr auto access_node<T, N, Subs...>::operator=(const access_node& rhs) const {
  return make_statement<assign_tag>(*this, rhs);
}
template <class T, int N, class... Subs>
template <class R>
constexpr auto access_node<T, N, Subs...>::operator+=(const R& rhs) const {
  return make_statement<add_tag>(*this, rhs);
}

}  // namespace workpart::detail

namespace workpart {

/// `wp::max_into(out(i), e)`: out(i) = max(out(i), e) for every point, whatever the schedule.
template <class Lhs, class R>
requires detail::is_access_v<Lhs>
constexpr auto max_into(const Lhs& lhs, const R& rhs) {
  return detail::make_statement<detail::max_tag>(lhs, rhs);
}
/// `wp::min_into(out(i), e)`.
template <class Lhs, class R>
requires detail::is_access_v<Lhs>
constexpr auto min_into(const Lhs& lhs, const R& rhs) {
  return detail::make_statement<detail::min_tag>(lhs, rhs);
}

}  // namespace workpart
