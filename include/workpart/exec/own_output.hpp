#pragma once
/// \file own_output.hpp
/// Whether a statement reads the array it writes other than at the element it writes: every
/// backend then runs it on a snapshot of the values before it (exec/local.hpp on the CPU,
/// exec/device/executor.hpp on a device), so results do not depend on the order points run
/// in. Backend-neutral: no Eigen, no loops, no device code.

#include <array>
#include <cstddef>
#include <cstring>

#include "../expr/access.hpp"
#include "../expr/reduce.hpp"

namespace workpart::detail {

/// Whether the right side reads the left side's array other than at the very element being
/// written by a plain '='. Such statements read a snapshot (the values before the statement),
/// so the result does not depend on the order points run in.
template <int R>
struct own_output_finder {
  const void* id;
  std::array<axis_form, R> lhs_forms;
  bool same_element_only = true;
  bool found = false;
  void enter_range(const range_form&) {}
  void leave_range() {}
  template <class A>
  void on_access(const A& a) {
    if (static_cast<const void*>(a.arr) != id) return;
    found = true;
    if constexpr (A::array_type::rank == R) {
      const auto f = a.axis_forms();
      for (std::size_t x = 0; x < f.size(); ++x)
        if (f[x].kind != lhs_forms[x].kind || f[x].offset != lhs_forms[x].offset ||
            std::memcmp(f[x].coef, lhs_forms[x].coef, sizeof f[x].coef) != 0)
          same_element_only = false;
    } else {
      same_element_only = false;
    }
  }
};

/// Whether the right side reads the left side's array other than at the very element being
/// written by a plain '='. Such statements read a snapshot (the values before the statement),
/// so the result does not depend on the order points run in.
template <class Stmt>
bool reads_own_output(const Stmt& st) {
  own_output_finder<Stmt::lhs_type::array_type::rank> v{st.lhs.arr, st.lhs.axis_forms()};
  st.rhs.visit(v);
  return v.found && (Stmt::kind != combine::assign || !v.same_element_only);
}

}  // namespace workpart::detail
