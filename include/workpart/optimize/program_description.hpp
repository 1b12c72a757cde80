#pragma once
/// \file program_description.hpp
/// A program given as data rather than as C++ types: its arrays, and per map the iteration
/// extents, the operations per point and the accesses (affine subscripts over the map's
/// indices and the inner ranges around the access, or a whole axis), in statement order. The
/// optimizer prices it through the same access events, constraints, solver and redistribution
/// planning as a typed program (pricer.hpp), so `optimize(description, P, model)` picks
/// the schedule `optimize(prog, P, model)` would for the program it describes.
/// `workpart-optimize --program FILE.json` reads one (io/program_reader.hpp);
/// `wp::describe(prog)` writes one from a typed program (optimize/describe.hpp).

#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/local_work.hpp"
#include "../plan/solve_array.hpp"
#include "../plan/validate.hpp"
#include "../error.hpp"
#include "../schedule/constraints.hpp"
#include "../schedule/grid.hpp"
#include "../schedule/tiling.hpp"
#include "pricer.hpp"

namespace workpart {

struct array_description {
  std::string name;
  std::vector<index_t> shape;  ///< empty: a rank-0 array (one element)
  std::size_t elem_size = 8;   ///< bytes per element
  std::string type{};          ///< "float32", "float64", "int32", "int64"; empty: elem_size only
  /// Generated in place by init() on every rank: never scattered from root (and, like any
  /// array, gathered only where a map writes it).
  bool init = false;
};

/// What an access does: reads, or writes with `=`, `+=`, `max_into`, `min_into`.
enum class access_mode { read, assign, add, max, min };

/// One subscript of an access: sum of coef[d] * index d, plus offset; or the whole axis.
/// Index d < N is the map's index d; index N + r is the index of the access's r-th inner range.
struct subscript {
  bool whole_axis = false;
  std::vector<index_t> coef;  ///< per index (missing entries are 0)
  index_t offset = 0;

  /// Whether it is one fixed position (`offset`): no index in it, not the whole axis.
  bool constant() const {
    for (index_t c : coef)
      if (c != 0) return false;
    return !whole_axis;
  }
};

/// An inner range around a read (`wp::sum(wp::range(k, from, to), ...)`): its index runs over
/// [from, to), affine bounds over the map's indices and the ranges outside it; or bounds read
/// from data (`wp::range(jj, row(i), row(i + 1))`), which the cost model takes as the whole
/// axis of every subscript that uses the index (wp::distribute inspects them on root).
struct range_description {
  std::string index;  ///< its name in subscripts
  subscript from, to;
  bool data_dependent = false;  ///< from and to are read from arrays (not given)
};

struct access_description {
  std::string array;
  std::vector<subscript> index;  ///< one per axis of the array
  access_mode mode = access_mode::read;
  std::string text;                         ///< as written, for explanations ("x(i, k+1)")
  std::vector<range_description> ranges{};  ///< the inner ranges around a read, outermost first
  bool padded =
      false;  ///< a read that is a fill outside the array (wp::padded): never out of bounds
};

struct map_description {
  std::string name;
  std::vector<std::string> indices;  ///< one name per space dimension
  std::vector<index_t> extents;      ///< the space: [0, extent) per dimension
  double ops_per_point = 1;          ///< arithmetic operations per point of the space
  /// In evaluation order: each statement's reads, then its write.
  std::vector<access_description> accesses;
  /// Its statements run as GEMMs (JSON "kernel": "gemm"; wp::describe sets it from the map's
  /// type): the cost model prices it at the machine model's GEMM rate, else at its loop rate.
  /// (Last, so that a description written as {name, indices, extents, ops, accesses} stays one.)
  bool gemm = false;
  /// Of its operations per point, calls of slow functions (exp, tanh, ...; JSON
  /// "slow_per_point"): priced at the machine model's slow_flops.
  double slow_ops_per_point = 0;
  /// The dimension its loop's rows run along (JSON "row_index", an index name; -1: not
  /// known, its rows not priced): the machine model's row_seconds per row.
  int row_dim = -1;
  /// The copies its GEMMs make (JSON "packed": [{"index": [names], "times": t}, ...]; an
  /// affine contraction's packed operands, core/local_work.hpp's packed_copy): priced at the
  /// machine model's packing rate.
  std::vector<detail::packed_copy> packed{};
  /// Its loop's rows have no vector form (JSON "scalar_rows": true): priced at the machine
  /// model's scalar_flops.
  bool scalar_rows = false;
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

 private:
  static void check_index_name(const std::string& who, const std::string& n);

 public:
  /// Names, shapes, extents, index names, subscript counts and inner ranges.
  void check_structure() const {
    auto fail = [](const std::string& s) { throw shape_error("program description: " + s); };
    if (maps.empty()) fail("it has no maps");
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      const auto& arr = arrays[a];
      if (arr.name.empty()) fail("array " + std::to_string(a) + " has no name");
      for (std::size_t b = 0; b < a; ++b)
        if (arrays[b].name == arr.name) fail("two arrays are called '" + arr.name + "'");
      if (int(arr.shape.size()) > detail::max_rank)  // 0: one element
        fail("array '" + arr.name + "' has " + std::to_string(arr.shape.size()) +
             " axes; give 0 to " + std::to_string(detail::max_rank));
      if (arr.elem_size == 0) fail("array '" + arr.name + "' has elements of 0 bytes");
      if (!arr.type.empty()) {
        const std::size_t size = arr.type == "float32" || arr.type == "int32"   ? 4
                                 : arr.type == "float64" || arr.type == "int64" ? 8
                                                                                : 0;
        if (size == 0)
          fail("array '" + arr.name + "' has type '" + arr.type +
               "'; give float32, float64, int32 or int64 (or no type and its bytes)");
        if (size != arr.elem_size)
          fail("array '" + arr.name + "' has type " + arr.type + " but elements of " +
               std::to_string(arr.elem_size) + " bytes");
      }
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
      if (int(mp.extents.size()) > detail::max_user_dims)  // 0: one point (wp::space())
        fail(who + " has " + std::to_string(mp.extents.size()) + " dimensions; give 0 to " +
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
        check_index_name(who, mp.indices[d]);
        for (std::size_t e = 0; e < d; ++e)
          if (mp.indices[e] == mp.indices[d])
            fail(who + " names two indices '" + mp.indices[d] + "'");
      }
      if (!(mp.ops_per_point >= 0) || !std::isfinite(mp.ops_per_point))
        fail(who + ": operations per point must be finite and >= 0");
      if (!(mp.slow_ops_per_point >= 0) || !std::isfinite(mp.slow_ops_per_point))
        fail(who + ": slow functions per point must be finite and >= 0");
      if (mp.row_dim < -1 || mp.row_dim >= int(mp.extents.size()))
        fail(who + ": row dimension " + std::to_string(mp.row_dim) + " is not one of its " +
             std::to_string(mp.extents.size()) + " dimensions");
      if (mp.packed.size() > 3) fail(who + ": more than 3 packed copies");
      for (const auto& c : mp.packed) {
        if (mp.extents.size() < 32 && (c.dims >> mp.extents.size()) != 0)
          fail(who + ": a packed copy names a dimension beyond its " +
               std::to_string(mp.extents.size()));
        if (!(c.times > 0) || !std::isfinite(c.times))
          fail(who + ": a packed copy's times must be finite and > 0");
      }
      bool writes = false;
      for (const auto& ac : mp.accesses) {
        const std::string at = who + ", access " + ac.text;
        const array_description* arr = find_array(ac.array);
        if (!arr) fail(at + ": no array is called '" + ac.array + "'");
        if (ac.index.size() != arr->shape.size())
          fail(at + ": " + std::to_string(ac.index.size()) + " subscripts for an array of " +
               std::to_string(arr->shape.size()) + " axes");
        const std::size_t N = mp.extents.size(), R = ac.ranges.size();
        if (R > 0 && ac.mode != access_mode::read)
          fail(at + ": a write has no inner ranges (they are around reads only)");
        if (ac.padded && ac.mode != access_mode::read)
          fail(at + ": a write cannot be padded (only a read gives a fill outside its array)");
        if (N + R > std::size_t(detail::max_dims))
          fail(at + ": " + std::to_string(N) + " indices and " + std::to_string(R) +
               " inner ranges; at most " + std::to_string(detail::max_dims) + " in all");
        auto in_scope = [](const subscript& f, std::size_t n) {  // uses indices below n only
          for (std::size_t d = n; d < f.coef.size(); ++d)
            if (f.coef[d] != 0) return false;
          return true;
        };
        for (std::size_t r = 0; r < R; ++r) {
          const range_description& rg = ac.ranges[r];
          check_index_name(at, rg.index);
          for (const auto& n : mp.indices)
            if (n == rg.index)
              fail(at + ": the inner range's index '" + n + "' is an index of the map");
          for (std::size_t q = 0; q < r; ++q)
            if (ac.ranges[q].index == rg.index)
              fail(at + ": two nested ranges of index '" + rg.index + "'");
          if (!rg.data_dependent && (rg.from.whole_axis || rg.to.whole_axis ||
                                     !in_scope(rg.from, N + r) || !in_scope(rg.to, N + r)))
            fail(at + ": the bounds of range '" + rg.index +
                 "' use its own index, an inner one, or '*' (mark bounds read from data so)");
        }
        for (const auto& f : ac.index)
          if (!in_scope(f, N + R)) fail(at + ": uses an index the map does not have");
        writes = writes || ac.mode != access_mode::read;
      }
      // (a map with no accesses at all does nothing: a typed map whose statements
      // wp::backward pruned, priced by its points alone)
      if (!writes && !mp.accesses.empty()) fail(who + " reads but writes no array");
    }
  }
};

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

/// "2*i - k + 1" over `names` (coefficient d names index d); "*" for the whole axis: how
/// descriptions write subscripts (io/program_writer.hpp, describe.hpp).
inline std::string subscript_text(const subscript& f, const std::vector<std::string>& names) {
  if (f.whole_axis) return "*";
  auto magnitude = [](index_t v) {  // |v| without overflow at the most negative value
    return std::to_string(v < 0 ? 0 - static_cast<std::uint64_t>(v)
                                : static_cast<std::uint64_t>(v));
  };
  std::string s;
  for (std::size_t d = 0; d < f.coef.size(); ++d) {
    const index_t c = f.coef[d];
    if (c == 0) continue;
    if (d >= names.size())
      throw shape_error("program description: a subscript uses index " + std::to_string(d) +
                        " of " + std::to_string(names.size()) + " named");
    s += s.empty() ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ");
    if (c != 1 && c != -1) s += magnitude(c) + "*";
    s += names[d];
  }
  if (s.empty()) return std::to_string(f.offset);
  if (f.offset != 0) s += (f.offset < 0 ? " - " : " + ") + magnitude(f.offset);
  return s;
}

/// The access events of access k of a described map (its inner ranges around it), as
/// access_events() records a typed map's; each access is a statement of its own.
inline void append_described_events(const program_description& p, const map_description& m,
                                    std::size_t k, std::vector<access_event>& ev) {
  const access_description& ac = m.accesses[k];
  const array_description* arr = p.find_array(ac.array);
  auto next = [&](access_event::kind what) -> access_event& {
    access_event& e = ev.emplace_back();
    e.what = what;
    e.statement = int(k);
    e.write = ac.mode != access_mode::read;
    e.statement_kind = combine_of(ac.mode);
    return e;
  };
  const int N = int(m.extents.size());
  for (std::size_t r = 0; r < ac.ranges.size(); ++r) {
    range_form& f = next(access_event::kind::enter_range).range;
    f.dim = N + int(r);
    f.data_dependent = ac.ranges[r].data_dependent;
    if (f.data_dependent) {
      f.lo.kind = f.hi.kind = axis_kind::indirect;
    } else {
      f.lo = form_of(ac.ranges[r].from);
      f.hi = form_of(ac.ranges[r].to);
    }
  }
  access_event& e = next(access_event::kind::access);
  e.arr = arr;
  e.rank = int(arr->shape.size());
  for (std::size_t x = 0; x < ac.index.size(); ++x) {
    e.extent[x] = arr->shape[x];
    e.forms[x] = form_of(ac.index[x]);
    for (int d = 0; d < N; ++d)  // the space dimensions it uses (not the inner ranges')
      if (e.forms[x].kind == axis_kind::affine && e.forms[x].coef[d] != 0) e.free |= dim_bit(d);
  }
  e.text = ac.text;
  e.name = arr->name;
  e.padded = ac.padded;
  for (std::size_t r = 0; r < ac.ranges.size(); ++r) next(access_event::kind::leave_range);
}

inline std::vector<access_event> described_events(const program_description& p,
                                                  const map_description& m) {
  std::vector<access_event> ev;
  for (std::size_t k = 0; k < m.accesses.size(); ++k) append_described_events(p, m, k, ev);
  return ev;
}

/// The array uses of a described map, as array_uses() derives them from statement types: one
/// per array in the order first met, then what the events do with each (describe_uses).
inline std::vector<array_use> described_uses(const program_description& p, const map_description& m,
                                             const std::vector<access_event>& ev) {
  std::vector<array_use> uses;
  for (const auto& ac : m.accesses) {
    const array_description* arr = p.find_array(ac.array);
    bool seen = false;
    for (const auto& u : uses) seen = seen || u.id == arr;
    if (seen) continue;
    array_use n;
    n.id = arr;
    n.name = arr->name;
    n.rank = int(arr->shape.size());
    for (int x = 0; x < n.rank; ++x) n.shape[x] = arr->shape[std::size_t(x)];
    n.elem_size = arr->elem_size;
    n.elem = arr->type == "int32"   ? 'i'
             : arr->type == "int64" ? 'l'
             : arr->elem_size == 4  ? 'f'
                                    : 'd';
    if (arr->init) n.generated_in_place = [] { return true; };
    uses.push_back(std::move(n));
  }
  describe_uses(uses, ev);
  return uses;
}
inline std::vector<array_use> described_uses(const program_description& p,
                                             const map_description& m) {
  return described_uses(p, m, described_events(p, m));
}

/// A described map's boxes on grid g for every rank, as extract_constraints() computes a typed
/// map's: from the same events, over the balanced blocks of [0, extent).
inline map_constraints extract_constraints(const map_description& m,
                                           const std::vector<access_event>& ev,
                                           const std::vector<array_use>& uses, const grid_shape& g,
                                           int nranks) {
  const int N = int(m.extents.size());
  map_constraints c;
  c.arrays = uses;
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
  }
  constraints_from_events(c, ev, N, nullptr);
  return c;
}
inline map_constraints extract_constraints(const program_description& p, const map_description& m,
                                           const grid_shape& g, int nranks) {
  const std::vector<access_event> ev = described_events(p, m);
  return extract_constraints(m, ev, described_uses(p, m, ev), g, nranks);
}

/// priced_map::shape_key of a described map: everything but the names of the map, its
/// indices and its arrays (arrays numbered by first access, with their shapes and types), and
/// the positions it reads and writes its arrays at along axes that every access of the map
/// subscripts with a constant, where no access is padded: those go to `positions`
/// (priced_map::positions; the first access's constant, and the others' relative to it).
inline std::string described_shape_key(const program_description& p, const map_description& m,
                                       std::vector<std::vector<index_t>>* positions = nullptr) {
  // the arrays by first access, and along which of their axes the map is placed by constants
  std::map<std::string, int> seen;
  std::vector<std::vector<index_t>> at;  // [array][axis]
  std::vector<std::vector<char>> placed;
  for (const auto& a : m.accesses) {
    const auto [it, first] = seen.emplace(a.array, int(seen.size()));
    if (first) {
      at.emplace_back(a.index.size(), 0);
      placed.emplace_back(a.index.size(), 1);
      for (std::size_t x = 0; x < a.index.size(); ++x) at.back()[x] = a.index[x].offset;
    }
    auto& ok = placed[std::size_t(it->second)];
    for (std::size_t x = 0; x < a.index.size() && x < ok.size(); ++x)
      ok[x] = ok[x] && !a.padded && a.index[x].constant();
  }
  for (std::size_t a = 0; a < at.size(); ++a)
    for (std::size_t x = 0; x < at[a].size(); ++x)
      if (!placed[a][x]) at[a][x] = 0;
  seen.clear();
  std::string k = "e";
  auto num = [&k](index_t x) { k += std::to_string(x) + ','; };
  auto sub = [&](const subscript& s, index_t from) {
    if (s.whole_axis) {
      k += 'w';
      return;
    }
    k += '(';
    for (index_t c : s.coef) num(c);
    k += ')';
    num(s.offset - from);
  };
  for (index_t e : m.extents) num(e);
  char ops[32];
  std::snprintf(ops, sizeof ops, "o%.17g;", m.ops_per_point);
  k += ops;
  if (m.gemm) k += "gemm;";
  std::snprintf(ops, sizeof ops, "s%.17g;r%d;", m.slow_ops_per_point, m.row_dim);
  k += ops;
  for (const auto& c : m.packed) {
    std::snprintf(ops, sizeof ops, "p%u*%.17g;", unsigned(c.dims), c.times);
    k += ops;
  }
  if (m.scalar_rows) k += "scalar;";
  for (const auto& a : m.accesses) {
    const auto [it, first] = seen.emplace(a.array, int(seen.size()));
    const std::vector<index_t>& from = at[std::size_t(it->second)];
    k += 'a' + std::to_string(it->second);
    if (first) {
      const array_description* arr = p.find_array(a.array);
      k += '[';
      if (arr) {
        for (index_t x : arr->shape) num(x);
        k += std::to_string(arr->elem_size) + arr->type + (arr->init ? "i" : "");
      }
      k += ']';
    }
    k += 'm' + std::to_string(int(a.mode)) + (a.padded ? "p" : "");
    for (std::size_t x = 0; x < a.index.size(); ++x) sub(a.index[x], x < from.size() ? from[x] : 0);
    for (const auto& r : a.ranges) {
      k += r.data_dependent ? "r?" : "r";
      sub(r.from, 0);
      sub(r.to, 0);
    }
    k += ';';
  }
  if (positions) *positions = std::move(at);
  return k;
}

/// d.arrays from `arrays` (their names distinct): in the order d's maps first use them, as
/// wp::describe lists them, then those no map uses, in their own order. Descriptions built
/// from others (wp::repeat_blocks, wp::join_descriptions) list their arrays so.
inline void place_arrays_by_first_use(program_description& d,
                                      std::vector<array_description> arrays) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t a = 0; a < arrays.size(); ++a) index.emplace(arrays[a].name, a);
  std::vector<bool> placed(arrays.size(), false);
  d.arrays.clear();
  for (const auto& m : d.maps)
    for (const auto& ac : m.accesses) {
      const auto it = index.find(ac.array);
      if (it == index.end() || placed[it->second]) continue;  // unknown: check() says
      placed[it->second] = true;
      d.arrays.push_back(arrays[it->second]);
    }
  for (std::size_t a = 0; a < arrays.size(); ++a)
    if (!placed[a]) d.arrays.push_back(std::move(arrays[a]));
}

inline std::vector<priced_map> priced_views(const program_description& p) {
  p.check();
  std::vector<priced_map> v;
  for (const auto& m : p.maps) {
    priced_map pm;
    pm.name = m.name;
    pm.extents = m.extents;
    // a map that accesses nothing (wp::backward's pruned zeroing) runs nowhere: no work
    pm.ops = m.accesses.empty() ? 0.0 : std::max(1.0, m.ops_per_point);
    pm.gemm = m.gemm;
    pm.slow_ops = m.slow_ops_per_point;
    pm.row_dim = m.row_dim;
    pm.packed = m.packed;
    pm.vector_rows = !m.scalar_rows;
    for (const auto& ac : m.accesses)  // the first statement's write: its elements' size
      if (ac.mode != access_mode::read) {
        if (const array_description* arr = p.find_array(ac.array))
          pm.elem_bytes = int(arr->elem_size);
        break;
      }
    // the map's events and uses, found on the first call (the pricer asks for the
    // constraints on every candidate grid, one thread per map)
    struct found {
      std::once_flag once;
      std::vector<access_event> ev;
      std::vector<array_use> uses;
    };
    pm.constraints = [&p, &m, f = std::make_shared<found>()](const grid_shape& g, int nranks) {
      std::call_once(f->once, [&] {
        f->ev = described_events(p, m);
        f->uses = described_uses(p, m, f->ev);
      });
      return extract_constraints(m, f->ev, f->uses, g, nranks);
    };
    pm.shape_key = described_shape_key(p, m, &pm.positions);
    v.push_back(std::move(pm));
  }
  return v;
}

}  // namespace detail

inline void program_description::check_index_name(const std::string& who, const std::string& n) {
  bool ident =
      !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_') && n != "all";
  for (char ch : n) ident = ident && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!ident)
    throw shape_error("program description: " + who + ": index name '" + n +
                      "'; give a name of letters, digits and '_' (not 'all')");
}

inline void program_description::check_access(const map_description& mp, std::size_t k) const {
  std::vector<detail::access_event> ev;
  detail::append_described_events(*this, mp, k, ev);
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

/// What schedule `s` of the described program costs under the model (as wp::optimize prices it).
inline double modelled_cost(const program_description& p, const schedule& s, int nranks,
                            const machine_model& mm = {}, const config_options& opt = {}) {
  return modelled_cost(detail::priced_views(p), s, nranks, mm, opt);
}

/// wp::optimize of a program given as data (workpart-optimize --program).
template <class = void>
optimized optimize(const program_description& p, index_t nprocs, const machine_model& model = {},
                   const optimize_options& opt = {}) {
  detail::check_nprocs(nprocs);  // (before the description's own checks, as before)
  return detail::optimize_priced(detail::priced_views(p), nprocs, model, opt);
}

}  // namespace workpart
