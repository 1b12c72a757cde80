#pragma once
/// \file describe.hpp
/// wp::describe: a typed program (or map) as a program description — its arrays (element
/// type, shape, whether init() generates them in place), per map the extents, the counted
/// operations per point, and every access with the inner ranges around it — which the
/// optimizer prices exactly as the typed program (same events, same boxes), so a program
/// written once in C++ can be priced for any machine by `workpart-optimize --program`:
/// \code
///   std::ofstream("layer.json") << wp::to_json(wp::describe(prog));
/// \endcode
/// What a description cannot say is said as the cost model treats it: an indirect subscript
/// (x(col(jj))) is its whole axis ("*"), a range whose bounds are read from data is marked
/// data-dependent. A space that does not start at 0 is shifted to start there (its subscripts
/// and inner range bounds shifted alike: the same elements, the same blocks). Maps keep their
/// names, arrays theirs (so names must differ: wp::plan_error otherwise); indices are named
/// i0, i1, ... in space order, the inner ranges' after them.

#include <string>
#include <vector>

#include "../error.hpp"
#include "../expr/map.hpp"
#include "../program/program.hpp"
#include "cost_model.hpp"
#include "program_description.hpp"

namespace workpart {

namespace detail {

/// A subscript of a description from a typed form: space dimension d < N shifted by lo[d] (the
/// description's space starts at 0), range dimension dims[r] renamed N + r.
inline subscript described_subscript(const axis_form& f, const std::vector<index_t>& lo,
                                     const std::vector<int>& dims) {
  subscript s;
  if (f.kind != axis_kind::affine) {  // wp::all, or indirect: the plans hold the whole axis
    s.whole_axis = true;
    return s;
  }
  const std::size_t N = lo.size();
  s.coef.assign(N + dims.size(), 0);
  s.offset = f.offset;
  for (std::size_t d = 0; d < N; ++d) {
    s.coef[d] = f.coef[d];
    s.offset += f.coef[d] * lo[d];
  }
  for (std::size_t r = 0; r < dims.size(); ++r) s.coef[N + r] = f.coef[dims[r]];
  return s;
}

inline std::string described_type(char elem, std::size_t size) {
  switch (elem) {
    case 'f':
      return "float32";
    case 'd':
      return "float64";
    case 'i':
      return size == 4 ? "int32" : "";
    default:
      return size == 8 ? "int64" : "";
  }
}

/// One map of a description from its access events and array uses (no types left): the
/// arrays it meets first are added to d.arrays (ids: their identities, in d.arrays' order).
inline void describe_map(const std::string& name, const std::vector<index_t>& lo,
                         const std::vector<index_t>& hi, const local_work& work,
                         const std::vector<access_event>& ev, const std::vector<array_use>& uses,
                         program_description& d, std::vector<const void*>& ids) {
  const std::size_t N = lo.size();
  for (const array_use& u : uses) {
    std::size_t a = 0;
    while (a < ids.size() && ids[a] != u.id) ++a;
    if (a < ids.size()) continue;
    if (u.name.empty())
      throw plan_error("wp::describe: map '" + name +
                       "' uses an array with no name; a description names arrays, so give it one");
    for (const auto& other : d.arrays)
      if (other.name == u.name)
        throw plan_error("wp::describe: two arrays are called '" + u.name +
                         "' (wp::backward names the gradient of x 'dx'); a description names "
                         "arrays, so give them different names");
    array_description arr;
    arr.name = u.name;
    arr.shape.assign(u.shape, u.shape + u.rank);
    arr.elem_size = u.elem_size;
    arr.type = described_type(u.elem, u.elem_size);
    arr.init = u.generated_in_place && u.generated_in_place();
    d.arrays.push_back(std::move(arr));
    ids.push_back(u.id);
  }
  map_description m;
  m.name = name;
  for (std::size_t x = 0; x < N; ++x) {
    m.indices.push_back("i" + std::to_string(x));
    m.extents.push_back(std::max<index_t>(0, hi[x] - lo[x]));
  }
  m.ops_per_point = work.ops;
  m.gemm = work.gemm;
  m.slow_ops_per_point = work.slow;
  m.row_dim = work.row_dim;
  m.packed.assign(work.packed, work.packed + work.npacked);
  m.scalar_rows = !work.gemm && !work.vector_rows;
  // per statement: its right side's reads (with the ranges around each), the reads inside
  // its left side's subscripts, then its write — the order array_uses() meets the arrays in
  std::vector<range_form> stack;
  std::vector<access_description> rhs, lhs_reads;
  access_description write;
  auto flush = [&] {
    for (auto* part : {&rhs, &lhs_reads})
      for (auto& a : *part) m.accesses.push_back(std::move(a));
    m.accesses.push_back(std::move(write));
    rhs.clear();
    lhs_reads.clear();
  };
  for (std::size_t k = 0; k < ev.size(); ++k) {
    const access_event& e = ev[k];
    if (k > 0 && e.statement != ev[k - 1].statement) flush();
    if (e.what == access_event::kind::enter_range) {
      stack.push_back(e.range);
      continue;
    }
    if (e.what == access_event::kind::leave_range) {
      stack.pop_back();
      continue;
    }
    access_description a;
    a.array = e.name;
    a.mode = !e.write                           ? access_mode::read
             : e.statement_kind == combine::add ? access_mode::add
             : e.statement_kind == combine::max ? access_mode::max
             : e.statement_kind == combine::min ? access_mode::min
                                                : access_mode::assign;
    std::vector<int> dims;  // the enclosing ranges' dimensions, outermost first
    std::vector<std::string> names = m.indices;
    for (const range_form& r : stack) {
      range_description g;
      g.index = "i" + std::to_string(N + dims.size());
      g.data_dependent = r.data_dependent;
      if (!r.data_dependent) {
        g.from = described_subscript(r.lo, lo, dims);
        g.to = described_subscript(r.hi, lo, dims);
      }
      dims.push_back(r.dim);
      names.push_back(g.index);
      a.ranges.push_back(std::move(g));
    }
    a.text = a.array + "(";
    for (int x = 0; x < e.rank; ++x) {
      a.index.push_back(described_subscript(e.forms[std::size_t(x)], lo, dims));
      a.text += (x ? ", " : "") + subscript_text(a.index.back(), names);
    }
    a.text += ")";
    a.padded = e.padded;
    if (e.write)
      write = std::move(a);
    else
      (e.lhs_subscript ? lhs_reads : rhs).push_back(std::move(a));
  }
  if (!ev.empty()) flush();
  d.maps.push_back(std::move(m));
}

}  // namespace detail

/// The description of a program: what `workpart-optimize --program` reads (write it with
/// wp::to_json). Raises what a map's require_valid() raises, and plan_error where two maps or
/// two arrays share a name (or have none).
inline program_description describe(const program& p) {
  program_description d;
  std::vector<const void*> ids;
  p.for_each_map([&](const detail::map_interface& m) {
    m.require_valid();  // its own sentences, in the user's terms, before the description's
    if (m.name().empty())
      throw plan_error("wp::describe: map " + std::to_string(d.maps.size()) +
                       " has no name; a description names maps, so give it one");
    for (const auto& other : d.maps)
      if (other.name == m.name())
        throw plan_error("wp::describe: two maps are called '" + m.name() +
                         "' (one map used twice in the program, or two maps of one name); a "
                         "description names maps, so name them apart");
    const auto ev = m.access_events();
    detail::describe_map(m.name(), m.lo(), m.hi(), m.work_per_point(), ev, m.array_uses(ev), d,
                         ids);
  });
  d.check();
  return d;
}
/// The description of a single map (a program of one map).
template <int N, class... S>
program_description describe(const map_t<N, S...>& m) {
  return describe(workpart::program(forward_only, m));
}

}  // namespace workpart
