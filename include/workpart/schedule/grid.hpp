#pragma once
/// \file grid.hpp
/// Process grids (one extent per space dimension), schedules (a grid per map) and the
/// partition / broadcast mapping of grid-mapped accesses.

#include <array>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../expr/access.hpp"

namespace workpart {

/// A compile-time process grid; use the variable template `wp::grid<2, 2, 1>`.
template <index_t... G>
struct grid_t {
  static_assert(((G >= 1) && ...), "workpart::grid<...>: every grid extent must be >= 1");
  static constexpr int rank = sizeof...(G);
  static constexpr std::array<index_t, sizeof...(G)> dims{G...};
  static constexpr index_t product() { return (index_t(1) * ... * G); }
};
/// \code
///   auto plan = wp::distribute(mm, wp::grid<2, 2, 1>);
/// \endcode
template <index_t... G>
inline constexpr grid_t<G...> grid{};

/// The same at run time: `wp::grid_shape{2, 2, 1}`.
///
/// A replicated grid (`wp::grid_shape{1, 4, 1}.replicated(2)`, an extension of the API's
/// grids) runs every block on as many ranks as it has replicas: each replica reads its block's
/// inputs and computes the whole block on its own copy, so that every replica holds the
/// block's results afterwards (Megatron's replicated layer norms and residuals between two
/// split GEMMs: the split GEMM's partial sums are combined by one Allreduce, and nothing else
/// moves). The replica count is kept as one more grid dimension after the space's (`dims`
/// ends with it, `replica_axis` says so): a rank's coordinates, groups and leaders then need
/// nothing new, and the replica axis reads like a BROADCAST dimension (every replica needs
/// the same boxes). What differs is the writes: the replicas of a block are not a group of
/// partial results (each computes the whole value), and root gathers replica 0's copy.
struct grid_shape {
  std::vector<index_t> dims;
  bool replica_axis = false;  ///< dims.back() is the replica count, not a space dimension's
  grid_shape() = default;
  grid_shape(std::initializer_list<index_t> d) : dims(d) {}
  explicit grid_shape(std::vector<index_t> d) : dims(std::move(d)) {}
  template <index_t... G>
  grid_shape(grid_t<G...>) : dims{G...} {}
  /// This grid with every block run by `r` replicas (r >= 1; replicated(1) is this grid).
  grid_shape replicated(index_t r) const {
    if (r < 1)
      throw grid_error("grid " + str() + ".replicated(" + std::to_string(r) +
                       "): the replica count is >= 1");
    grid_shape g = *this;
    if (g.replica_axis) {
      g.dims.back() *= r;
    } else if (r > 1) {
      g.dims.push_back(r);
      g.replica_axis = true;
    }
    return g;
  }
  /// Grid dimensions, the replica axis included (what rank coordinates run over).
  int rank() const { return int(dims.size()); }
  /// Space dimensions the grid splits: one extent each.
  int space_rank() const { return rank() - (replica_axis ? 1 : 0); }
  /// Ranks that compute each block (1 unless replicated).
  index_t replicas() const { return replica_axis ? dims.back() : 1; }
  /// The replica axis's grid dimension, or -1.
  int replica_dim() const { return replica_axis ? rank() - 1 : -1; }
  /// Which replica of its block a rank runs (0 unless replicated; the replica axis is the
  /// last grid dimension, the fastest in a rank's row-major coordinates).
  index_t replica_of(int rank) const { return replica_axis ? index_t(rank) % dims.back() : 0; }
  /// The number of ranks the grid needs; saturates at the largest index_t rather than wrap
  /// (a product that large exceeds any communicator, and is reported as such).
  index_t product() const {
    index_t p = 1;
    for (index_t g : dims)
      if (!detail::mul_fits(p, g, p)) return std::numeric_limits<index_t>::max();
    return p;
  }
  /// "(2,2,1)"; a replicated grid "(1,4,1)x2".
  std::string str() const {
    std::string s = "(";
    for (int d = 0; d < space_rank(); ++d)
      s += (d ? "," : "") + std::to_string(dims[std::size_t(d)]);
    s += ")";
    if (replica_axis) s += "x" + std::to_string(dims.back());
    return s;
  }
  bool operator==(const grid_shape&) const = default;
};

/// What one grid dimension does to an access.
enum class mapping_kind {
  partition,  ///< the dimension's index is the plain subscript of one array axis
  broadcast,  ///< the index does not appear: every coordinate along it needs the same data
  general     ///< the index appears otherwise (offset, coefficient, sum, indirect)
};

struct grid_dim_mapping {
  mapping_kind kind = mapping_kind::broadcast;
  int axis = -1;  ///< the partitioned array axis
  constexpr bool operator==(const grid_dim_mapping&) const = default;
};
constexpr grid_dim_mapping partition(int axis) { return {mapping_kind::partition, axis}; }
inline constexpr grid_dim_mapping broadcast{mapping_kind::broadcast, -1};
inline constexpr grid_dim_mapping general{mapping_kind::general, -1};

/// The mapping of an access under a grid: one entry per grid dimension.
/// `wp::axis_map{wp::partition(0), wp::broadcast, wp::partition(1)}`.
template <int G>
struct axis_map {
  std::array<grid_dim_mapping, G> dims{};
  constexpr bool operator==(const axis_map&) const = default;
  constexpr const grid_dim_mapping& operator[](int d) const { return dims[d]; }
  /// Every grid dimension partitions or broadcasts (no general subscript).
  constexpr bool grid_mapped() const {
    for (const auto& m : dims)
      if (m.kind == mapping_kind::general) return false;
    return true;
  }
};
template <class... E>
axis_map(E...) -> axis_map<int(sizeof...(E))>;

namespace detail {
/// The mapping of an access type for a grid of rank G (compile time).
template <int G, class Acc>
constexpr axis_map<G> mapping_of() {
  axis_map<G> m;
  constexpr int N = Acc::array_type::rank;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    constexpr affine_sig sigs[] = {Acc::template axis_sig<int(A)>()..., affine_sig{}};
    for (int d = 0; d < G; ++d) {
      if (!(Acc::info.free & dim_bit(d))) {
        m.dims[d] = broadcast;
        continue;
      }
      m.dims[d] = general;
      for (int a = 0; a < N; ++a)
        if (sigs[a].is_plain() && sigs[a].plain_dim() == d) m.dims[d] = partition(a);
      // an index that also appears in another axis, or in an indirect subscript, is general
      // (a wp::all or constant axis does not use it: the access stays grid-mapped)
      int uses = 0;
      for (int a = 0; a < N; ++a) uses += sigs[a].uses(d) ? 1 : 0;
      if (uses != 1 || (Acc::indirect_free & dim_bit(d))) m.dims[d] = general;
    }
  }
  (std::make_index_sequence<N>{});
  return m;
}
}  // namespace detail

/// `wp::mapping(A(i, k), wp::grid<2, 2, 1>)`: a constant expression for compile-time grids.
template <class Acc, index_t... G>
requires detail::is_access_v<Acc>
constexpr axis_map<int(sizeof...(G))> mapping(const Acc&, grid_t<G...>) {
  return detail::mapping_of<int(sizeof...(G)), Acc>();
}

}  // namespace workpart
