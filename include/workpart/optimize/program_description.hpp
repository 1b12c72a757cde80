#pragma once
/// \file program_description.hpp
/// A program given as data rather than as C++ types: its arrays, and per map the iteration
/// extents, the operations per point and the accesses (affine subscripts over the map's
/// indices, or a whole axis), in statement order. The optimizer prices it through the same
/// constraints, solver and redistribution planning as a typed program (cost_model.hpp), so
/// `optimize(description, P, model)` picks the schedule `optimize(prog, P, model)` would for
/// the program it describes. `workpart-optimize --program FILE.json` reads one
/// (io/program_reader.hpp).
///
/// What a description cannot say: inner ranges (`wp::sum(range(...))`) — give the axis they
/// sweep as a whole axis (`*`), which is what the plans hold for a data-dependent range.

#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

#include "../plan/solve_array.hpp"
#include "../plan/validate.hpp"
#include "../error.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "../schedule/tiling.hpp"
#include "cost_model.hpp"

namespace workpart {

struct array_description {
  std::string name;
  std::vector<index_t> shape;
  std::size_t elem_size = 8;  ///< bytes per element
};

/// What an access does: reads, or writes with `=`, `+=`, `max_into`, `min_into`.
enum class access_mode { read, assign, add, max, min };

/// One subscript of an access: sum of coef[d] * index d, plus offset; or the whole axis.
struct subscript {
  bool whole_axis = false;
  std::vector<index_t> coef;  ///< per index of the map (missing entries are 0)
  index_t offset = 0;
};

struct access_description {
  std::string array;
  std::vector<subscript> index;  ///< one per axis of the array
  access_mode mode = access_mode::read;
  std::string text;  ///< as written, for explanations ("x(i, k+1)")
};

struct map_description {
  std::string name;
  std::vector<std::string> indices;  ///< one name per space dimension
  std::vector<index_t> extents;      ///< the space: [0, extent) per dimension
  double ops_per_point = 1;          ///< arithmetic operations per point of the space
  /// In evaluation order: each statement's reads, then its write.
  std::vector<access_description> accesses;
};

struct program_description {
  std::vector<array_description> arrays;
  std::vector<map_description> maps;

  const array_description* find_array(const std::string& name) const {
    for (const auto& a : arrays)
      if (a.name == name) return &a;
    return nullptr;
  }

  /// Every rule a description must keep; a wp::error (shape_error) naming the map, access and
  /// value otherwise: its structure (check_structure), then every access as the typed path
  /// checks it (check_access: bounds over the map's space, a plain '=' one-to-one), with the
  /// same sentences.
  void check() const {
    check_structure();
    for (const auto& mp : maps)
      for (std::size_t k = 0; k < mp.accesses.size(); ++k) check_access(mp, k);
  }

  /// Access k of map `mp` against its array's bounds over the map's space, and, for a plain
  /// '=', one-to-one (no two points write one element): the checks wp::map runs, with its
  /// sentences. Needs check_structure() to have passed.
  void check_access(const map_description& mp, std::size_t k) const;

  /// Names, shapes, extents, index names and subscript counts.
  void check_structure() const {
    auto fail = [](const std::string& s) { throw shape_error("program description: " + s); };
    if (maps.empty()) fail("it has no maps");
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      const auto& arr = arrays[a];
      if (arr.name.empty()) fail("array " + std::to_string(a) + " has no name");
      for (std::size_t b = 0; b < a; ++b)
        if (arrays[b].name == arr.name) fail("two arrays are called '" + arr.name + "'");
      if (arr.shape.empty() || int(arr.shape.size()) > detail::max_rank)
        fail("array '" + arr.name + "' has " + std::to_string(arr.shape.size()) +
             " axes; give 1 to " + std::to_string(detail::max_rank));
      if (arr.elem_size == 0) fail("array '" + arr.name + "' has elements of 0 bytes");
      index_t bytes = index_t(arr.elem_size);
      for (index_t e : arr.shape) {
        if (e < 0) fail("array '" + arr.name + "' has a negative extent " + std::to_string(e));
        if (e > 0 && bytes > (index_t(1) << 62) / e)
          fail("array '" + arr.name + "' has more than 2^62 bytes; the extents are too large");
        bytes *= e;
      }
    }
    for (std::size_t m = 0; m < maps.size(); ++m) {
      const auto& mp = maps[m];
      const std::string who = "map '" + mp.name + "'";
      if (mp.name.empty()) fail("map " + std::to_string(m) + " has no name");
      for (std::size_t b = 0; b < m; ++b)
        if (maps[b].name == mp.name) fail("two maps are called '" + mp.name + "'");
      if (mp.extents.empty() || int(mp.extents.size()) > detail::max_user_dims)
        fail(who + " has " + std::to_string(mp.extents.size()) + " dimensions; give 1 to " +
             std::to_string(detail::max_user_dims));
      if (mp.indices.size() != mp.extents.size())
        fail(who + " names " + std::to_string(mp.indices.size()) + " indices for " +
             std::to_string(mp.extents.size()) + " extents");
      index_t points = 1;
      for (index_t e : mp.extents) {
        if (e < 0) fail(who + " has a negative extent " + std::to_string(e));
        if (e > 0 && points > (index_t(1) << 62) / e)
          fail(who + " has more than 2^62 points; the extents are too large");
        points *= e;
      }
      for (std::size_t d = 0; d < mp.indices.size(); ++d) {  // names a subscript can refer to
        const std::string& n = mp.indices[d];
        bool ident = !n.empty() &&
                     (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_') && n != "all";
        for (char ch : n)
          ident = ident && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
        if (!ident)
          fail(who + ": index name '" + n +
               "'; give a name of letters, digits and '_' (not 'all')");
        for (std::size_t e = 0; e < d; ++e)
          if (mp.indices[e] == n) fail(who + " names two indices '" + n + "'");
      }
      if (!(mp.ops_per_point >= 0)) fail(who + ": operations per point must be >= 0");
      bool writes = false;
      for (const auto& ac : mp.accesses) {
        const array_description* arr = find_array(ac.array);
        if (!arr) fail(who + ", access " + ac.text + ": no array is called '" + ac.array + "'");
        if (ac.index.size() != arr->shape.size())
          fail(who + ", access " + ac.text + ": " + std::to_string(ac.index.size()) +
               " subscripts for an array of " + std::to_string(arr->shape.size()) + " axes");
        for (const auto& f : ac.index)
          for (std::size_t d = mp.extents.size(); d < f.coef.size(); ++d)
            if (f.coef[d] != 0)
              fail(who + ", access " + ac.text + ": uses an index the map does not have");
        writes = writes || ac.mode != access_mode::read;
      }
      if (!writes) fail(who + " writes no array");
    }
  }
};

namespace detail {
inline axis_form form_of(const subscript& x);
inline combine combine_of(access_mode m);
}  // namespace detail

inline void program_description::check_access(const map_description& mp, std::size_t k) const {
  const access_description& ac = mp.accesses[k];
  const array_description* arr = find_array(ac.array);
  detail::access_event e;
  e.statement = int(k);
  e.write = ac.mode != access_mode::read;
  e.statement_kind = detail::combine_of(ac.mode);
  e.arr = arr;
  e.rank = int(arr->shape.size());
  for (std::size_t x = 0; x < ac.index.size(); ++x) {
    e.extent[x] = arr->shape[x];
    e.forms[x] = detail::form_of(ac.index[x]);
    for (int d = 0; d < detail::max_dims; ++d)
      if (e.forms[x].coef[d] != 0) e.free |= detail::dim_bit(d);
  }
  e.text = ac.text;
  e.name = arr->name;
  const std::vector<detail::access_event> ev{e};
  const int N = int(mp.extents.size());
  index_t lo[detail::max_dims] = {}, hi[detail::max_dims] = {};
  std::string space_text = "[";
  for (int d = 0; d < N; ++d) {
    hi[d] = mp.extents[std::size_t(d)];
    space_text += (d ? ", 0:" : "0:") + std::to_string(hi[d]);
  }
  space_text += "]";
  detail::check_bounds_of(mp.name, ev, lo, hi, N, space_text);
  detail::check_one_to_one_of(mp.name, ev, N, lo, hi, space_text);
}

namespace detail {

inline axis_form form_of(const subscript& x) {
  axis_form f;
  if (x.whole_axis) {
    f.kind = axis_kind::all;
    return f;
  }
  for (std::size_t d = 0; d < x.coef.size() && d < std::size_t(max_dims); ++d)
    f.coef[d] = x.coef[d];
  f.offset = x.offset;
  return f;
}

inline combine combine_of(access_mode m) {
  switch (m) {
    case access_mode::add:
      return combine::add;
    case access_mode::max:
      return combine::max;
    case access_mode::min:
      return combine::min;
    default:
      return combine::assign;
  }
}

/// The array uses of a described map, as array_uses() derives them from statement types.
inline std::vector<array_use> described_uses(const program_description& p,
                                             const map_description& m) {
  std::vector<array_use> uses;
  std::vector<const void*> written_before;
  for (const auto& ac : m.accesses) {
    const array_description* arr = p.find_array(ac.array);
    const void* id = arr;
    array_use* u = nullptr;
    for (auto& x : uses)
      if (x.id == id) u = &x;
    if (!u) {
      array_use n;
      n.id = id;
      n.name = arr->name;
      n.rank = int(arr->shape.size());
      for (int x = 0; x < n.rank; ++x) n.shape[x] = arr->shape[std::size_t(x)];
      n.elem_size = arr->elem_size;
      n.elem = arr->elem_size == 4 ? 'f' : 'd';
      uses.push_back(std::move(n));
      u = &uses.back();
    }
    std::array<axis_form, max_rank> fm{};
    dim_mask dims = 0;
    for (std::size_t x = 0; x < ac.index.size(); ++x) {
      fm[x] = form_of(ac.index[x]);
      for (int d = 0; d < max_dims; ++d)
        if (fm[x].kind == axis_kind::affine && fm[x].coef[d] != 0) dims |= dim_bit(d);
    }
    if (ac.mode == access_mode::read) {
      u->read = true;
      u->read_dims |= dims;
      u->read_texts.push_back(ac.text);
      u->read_forms.push_back(fm);
      bool after = false;
      for (const void* w : written_before) after = after || w == id;
      (after ? u->read_after_write : u->read_before_write) = true;
      continue;
    }
    const combine kind = combine_of(ac.mode);
    if (u->written && u->write_kind != kind) u->mixed_writes = true;
    if (u->written) u->dense_writes = false;
    u->written = true;
    u->write_kind = kind;
    u->write_dims |= dims;
    u->write_texts.push_back(ac.text);
    dim_mask seen = 0;
    for (std::size_t x = 0; x < ac.index.size(); ++x) {
      const axis_form& f = fm[x];
      if (f.kind != axis_kind::affine) continue;
      int terms = 0;
      for (int d = 0; d < max_dims; ++d)
        if (f.coef[d] != 0) {
          ++terms;
          if ((f.coef[d] != 1 && f.coef[d] != -1) || (seen & dim_bit(d))) u->dense_writes = false;
          seen |= dim_bit(d);
        }
      if (terms > 1) u->dense_writes = false;
    }
    u->write_forms.push_back(fm);
    written_before.push_back(id);
  }
  return uses;
}

/// A described map's boxes on grid g for every rank, as extract_constraints() computes them.
inline map_constraints extract_constraints(const program_description& p, const map_description& m,
                                           const grid_shape& g, int nranks) {
  const int N = int(m.extents.size());
  map_constraints c;
  c.arrays = described_uses(p, m);
  c.read.assign(c.arrays.size(), std::vector<box>(std::size_t(nranks)));
  c.write.assign(c.arrays.size(), std::vector<box>(std::size_t(nranks)));
  for (std::size_t u = 0; u < c.arrays.size(); ++u)
    for (int r = 0; r < nranks; ++r)
      c.read[u][std::size_t(r)].rank = c.write[u][std::size_t(r)].rank = c.arrays[u].rank;
  const std::vector<range_form> no_ranges;
  for (int r = 0; r < nranks; ++r) {
    rank_block blk;
    const auto co = grid_coords(g, r);
    if (r < g.product()) {
      blk.active = true;
      for (int d = 0; d < N; ++d) {
        const auto br = balanced_block(0, m.extents[std::size_t(d)], g.dims[std::size_t(d)],
                                       co[std::size_t(d)]);
        blk.lo[d] = br.start;
        blk.hi[d] = br.end;
      }
    }
    c.blocks.push_back(blk);
    if (blk.empty(N)) continue;
    for (const auto& ac : m.accesses) {
      const void* id = p.find_array(ac.array);
      std::size_t u = 0;
      while (c.arrays[u].id != id) ++u;
      box b;
      b.rank = c.arrays[u].rank;
      b.valid = true;
      for (int x = 0; x < b.rank; ++x) {
        b.lo[x] = 0;
        b.hi[x] = c.arrays[u].shape[x];
        const axis_form f = form_of(ac.index[std::size_t(x)]);
        if (f.kind != axis_kind::affine) continue;
        const auto iv = form_interval(to_linear(f), no_ranges, blk.lo, blk.hi);
        if (!iv) continue;
        b.lo[x] = index_t(std::max<wide>(0, iv->lo));
        b.hi[x] = index_t(std::min<wide>(c.arrays[u].shape[x], iv->hi + 1));
      }
      (ac.mode == access_mode::read ? c.read : c.write)[u][std::size_t(r)].hull_with(b);
    }
  }
  return c;
}

inline std::vector<priced_map> priced_views(const program_description& p) {
  p.check();
  std::vector<priced_map> v;
  for (const auto& m : p.maps) {
    priced_map pm;
    pm.name = m.name;
    pm.extents = m.extents;
    pm.ops = std::max(1.0, m.ops_per_point);
    pm.constraints = [&p, &m](const grid_shape& g, int nranks) {
      return extract_constraints(p, m, g, nranks);
    };
    v.push_back(std::move(pm));
  }
  return v;
}

}  // namespace detail

/// The cost tables of a described program on `nranks` ranks.
inline program_cost_tables program_costs(const program_description& p, int nranks,
                                         const machine_model& mm = {},
                                         const config_options& opt = {}) {
  return program_costs(detail::priced_views(p), nranks, mm, opt);
}

/// The arrays passed between the described maps under schedule `s`, as the model prices them.
inline std::vector<modelled_transfer> modelled_transfers(const program_description& p,
                                                         const schedule& s, int nranks,
                                                         const machine_model& mm = {}) {
  return modelled_transfers(detail::priced_views(p), s, nranks, mm);
}

}  // namespace workpart
