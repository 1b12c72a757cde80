#pragma once
/// \file program.hpp
/// A program: maps in program order, connected by the arrays they share. A run-time list,
/// not a type: each map keeps its compile-time type behind a small interface
/// (map_interface.hpp, implemented once per map type in entries/map_model.hpp), so a program's
/// length and order may depend on run-time values and a network of N blocks is built by a loop:
/// \code
///   auto prog = wp::program(m1, m2, m3);
///   wp::program net;
///   for (int b = 0; b < blocks; ++b) net.add(block(b));   // maps or programs, in order
/// \endcode
/// Copies are cheap and share their maps (a map is never changed once it is in a program).
///
/// Every map added is ready for wp::backward: its derivative maps and their kernels are
/// compiled with it. A program that is never differentiated (a solver, an optimizer's update,
/// an inference step) says so with `wp::forward_only`, and its maps compile without them:
/// \code
///   auto prog = wp::program(wp::forward_only, m1, m2, m3);
///   net.add(wp::forward_only, update);
/// \endcode
/// wp::backward over such a map is a wp::plan_error that names it.

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../expr/map.hpp"
#include "map_interface.hpp"

namespace workpart {

namespace detail {
/// The program entries of a map type: defined in entries/map_model.hpp, which needs the whole
/// library (kernels, plans, derivatives). The optimizer, which only reads programs, includes this
/// header alone; a translation unit that adds maps includes workpart.hpp (or
/// entries/map_model.hpp).
template <class Map>
struct map_entry;
struct program_access;

/// How a map's entry is made (entries/map_model.hpp): a user's map, ready to be differentiated; a
/// user's map added with wp::forward_only (no derivative maps compiled); a map wp::backward made.
enum class entry_kind { differentiable, forward_only, derivative };

template <class T>
inline constexpr bool is_program_part_v = is_map_v<T>;
template <>
inline constexpr bool is_program_part_v<program> = true;
}  // namespace detail

/// The tag of maps that are never differentiated: `wp::program(wp::forward_only, m1, m2)`,
/// `prog.add(wp::forward_only, m)`. Their derivative maps and kernels are not compiled (the
/// larger part of a map's compile time); wp::backward over them is an error naming the map.
struct forward_only_t {
  explicit constexpr forward_only_t() = default;
};
inline constexpr forward_only_t forward_only{};

/// Maps in program order; arrays shared between maps carry data from one to the next.
class program {
 public:
  /// An empty program, grown with add().
  program() = default;
  /// `wp::program(m1, m2, m3)`: maps in program order. Programs given as arguments contribute
  /// their maps in place: `wp::program(fwd, bwd, update)` is one program.
  template <class... Parts>
  requires(sizeof...(Parts) > 0 &&
           !(sizeof...(Parts) == 1 &&
             (std::is_same_v<Parts, program> && ...))) explicit program(const Parts&... parts) {
    static_assert((detail::is_program_part_v<Parts> && ...),
                  "workpart::program: every argument must be a wp::map or a wp::program");
    (add(parts), ...);
  }
  /// `wp::program(wp::forward_only, m1, m2)`: the maps are not made ready for wp::backward
  /// (programs given as arguments keep their maps as they are).
  template <class... Parts>
  requires(sizeof...(Parts) > 0) explicit program(forward_only_t tag, const Parts&... parts) {
    static_assert((detail::is_program_part_v<Parts> && ...),
                  "workpart::program: every argument after wp::forward_only must be a wp::map "
                  "or a wp::program");
    (add(tag, parts), ...);
  }

  /// Appends a map.
  template <int N, class... S>
  program& add(const map_t<N, S...>& m) {
    // an incomplete type here: include <workpart/workpart.hpp> to add maps to a program
    maps_.push_back(detail::map_entry<map_t<N, S...>>::user_map(m));
    return *this;
  }
  /// Appends a map that is never differentiated (no derivative maps compiled).
  template <int N, class... S>
  program& add(forward_only_t, const map_t<N, S...>& m) {
    // an incomplete type here: include <workpart/workpart.hpp> to add maps to a program
    maps_.push_back(detail::map_entry<map_t<N, S...>>::forward_only_map(m));
    return *this;
  }
  /// A program's maps are added as they are, whatever the tag.
  program& add(forward_only_t, const program& p) { return add(p); }
  /// Appends another program's maps (sharing them), and keeps its arrays alive.
  program& add(const program& p) {
    if (&p == this) return add(program(p));
    maps_.insert(maps_.end(), p.maps_.begin(), p.maps_.end());
    owned_.insert(owned_.end(), p.owned_.begin(), p.owned_.end());
    return *this;
  }

  std::size_t size() const noexcept { return maps_.size(); }
  bool empty() const noexcept { return maps_.empty(); }
  /// Map m (program order).
  const detail::map_interface& map(std::size_t m) const { return *maps_.at(m); }
  /// f(map) for every map in program order (each a detail::map_interface).
  template <class F>
  void for_each_map(F&& f) const {
    for (const auto& m : maps_) f(std::as_const(*m));
  }
  /// The maps' names in program order.
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& m : maps_) v.push_back(m->name());
    return v;
  }

  /// The arrays this program owns (gradients of intermediates made by wp::backward, a
  /// layer's weights): they live as long as the program or any program or plan made from it.
  const std::vector<std::shared_ptr<const void>>& owned_arrays() const noexcept { return owned_; }
  /// Keeps `arrays` alive with the program.
  program& keep(const std::vector<std::shared_ptr<const void>>& arrays) {
    owned_.insert(owned_.end(), arrays.begin(), arrays.end());
    return *this;
  }

 private:
  friend struct detail::program_access;
  std::vector<std::shared_ptr<detail::map_interface>> maps_;
  std::vector<std::shared_ptr<const void>> owned_;
};

namespace detail {
template <class T>
inline constexpr bool is_program_v = std::is_same_v<T, program>;

/// The library's own access to a program's maps: to append maps it made (wp::backward's,
/// as entries that are not differentiated again) and to finish them before anyone else
/// holds them (pruning, their origin).
struct program_access {
  static void push(program& p, std::shared_ptr<map_interface> m) {
    p.maps_.push_back(std::move(m));
  }
  static map_interface& map(program& p, std::size_t m) { return *p.maps_.at(m); }
  /// The program of p's maps in reverse order.
  static program reversed(const program& p) {
    program r;
    r.maps_.assign(p.maps_.rbegin(), p.maps_.rend());
    r.owned_ = p.owned_;
    return r;
  }
};

/// Plan errors for an empty program, named by `who` ("wp::distribute").
inline void require_maps(const program& p, const char* who) {
  if (p.empty())
    throw plan_error(std::string(who) +
                     ": the program has no maps; add maps with wp::program(m1, m2, ...) or "
                     "prog.add(map)");
}
}  // namespace detail

/// Runs a program's maps in order on the calling process over root's arrays (wp::run).
inline void run(const program& p) {
  if (detail::current_rank() != 0) return;
  p.for_each_map([](const detail::map_interface& m) { m.run_on_root(); });
}

}  // namespace workpart
