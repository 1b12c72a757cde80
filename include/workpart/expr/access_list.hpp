#pragma once
/// \file access_list.hpp
/// A map's accesses as data: one walk over its statements' types records every access (the
/// array, its subscripts' forms, its text) and every inner range entered and left, in the
/// order the traversal meets them. The analyses that need no types (the bounds check in
/// map.hpp, the array uses and the boxes per rank in schedule/constraints.hpp) run on this
/// list: compiled once, not once per access type of every map.

#include <array>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "interval.hpp"
#include "reduce.hpp"
#include "statement.hpp"

namespace workpart::detail {

/// One event of the walk.
struct access_event {
  enum class kind : unsigned char { access, enter_range, leave_range };
  kind what = kind::access;
  int statement = 0;           ///< the statement's number in the map
  bool write = false;          ///< the statement's left side (what it writes)
  bool lhs_subscript = false;  ///< a read inside an indirect left-hand subscript (h(idx(i)))
  combine statement_kind = combine::assign;  ///< `=`, `+=`, max_into or min_into
  // kind::access
  const void* arr = nullptr;  ///< the array (its address: the array's identity)
  int rank = 0;               ///< the array's rank
  std::array<index_t, max_rank> extent{};
  std::array<axis_form, max_rank> forms{};
  dim_mask free = 0;    ///< the space dimensions its subscripts use
  std::string text;     ///< "A(i, k)"
  std::string name;     ///< "A"
  bool padded = false;  ///< wp::padded: outside the array it reads a fill (never out of bounds)
  // kind::enter_range
  range_form range;
};

/// The visitor that records the events (expr/node.hpp's traversal protocol).
class access_recorder {
 public:
  explicit access_recorder(std::vector<access_event>& out) : out_(out) {}
  void start(int statement, bool write, combine kind, bool lhs_subscript = false) {
    statement_ = statement;
    write_ = write;
    kind_ = kind;
    lhs_subscript_ = lhs_subscript;
  }
  template <class A>
  void on_access(const A& a) {
    access_event& e = next(access_event::kind::access);
    e.arr = a.arr;
    e.rank = A::array_type::rank;
    const auto f = a.axis_forms();
    for (int x = 0; x < e.rank; ++x) {
      e.extent[std::size_t(x)] = a.arr->extent(x);
      e.forms[std::size_t(x)] = f[std::size_t(x)];
    }
    e.free = A::info.free;
    e.text = a.str();
    e.name = a.arr->name();
  }
  template <class A>
  void on_padded_access(const A& a) {
    on_access(a);
    out_.back().padded = true;
  }
  void enter_range(const range_form& r) { next(access_event::kind::enter_range).range = r; }
  void leave_range() { next(access_event::kind::leave_range); }

 private:
  access_event& next(access_event::kind k) {
    access_event& e = out_.emplace_back();
    e.what = k;
    e.statement = statement_;
    e.write = write_;
    e.lhs_subscript = lhs_subscript_;
    e.statement_kind = kind_;
    return e;
  }
  std::vector<access_event>& out_;
  int statement_ = 0;
  bool write_ = false;
  bool lhs_subscript_ = false;
  combine kind_ = combine::assign;
};

/// The inner ranges around the current access of a walk over access events, and whether one
/// of them runs nowhere on the box [lo, hi) (then its accesses touch nothing).
class range_stack {
 public:
  void enter(const range_form& r, const index_t* lo, const index_t* hi) {
    ranges_.push_back(r);
    if (skip_ > 0 || !range_may_run(ranges_, lo, hi)) ++skip_;
  }
  void leave() {
    if (skip_ > 0) --skip_;
    ranges_.pop_back();
  }
  bool skipping() const { return skip_ > 0; }
  const std::vector<range_form>& ranges() const { return ranges_; }

 private:
  std::vector<range_form> ranges_;
  int skip_ = 0;
};

/// The events of statements run in order: per statement its left side, then its right side.
template <class... S>
std::vector<access_event> access_events(const std::tuple<S...>& statements) {
  std::vector<access_event> ev;
  ev.reserve(4 * sizeof...(S) +
             4);  // a few accesses per statement: no regrowth (a plan asks often)
  access_recorder rec(ev);
  int s = 0;
  std::apply(
      [&](const auto&... st) {
        // the left side's own access is the write; the accesses inside its indirect
        // subscripts (a scatter's h(idx(i))) are reads
        ((rec.start(s, true, std::remove_cvref_t<decltype(st)>::kind), rec.on_access(st.lhs),
          rec.start(s, false, std::remove_cvref_t<decltype(st)>::kind, true),
          st.lhs.visit_subscripts(rec),
          rec.start(s, false, std::remove_cvref_t<decltype(st)>::kind), st.rhs.visit(rec), ++s),
         ...);
      },
      statements);
  return ev;
}

}  // namespace workpart::detail
