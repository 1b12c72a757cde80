#pragma once
/// \file map_model.hpp
/// The program entry of a map type: map_interface (map_interface.hpp) implemented once per
/// map type, from what the type decides -- its access events and constraints
/// (schedule/constraints.hpp), its plan and kernels (runtime/map_plan.hpp), its operations per
/// point (expr/operation_count.hpp) and its derivative maps (autodiff/map_derivative.hpp). The
/// virtual calls are per map and per phase, never per point.
///
/// `Kind` (program.hpp): a map the user wrote, which wp::backward differentiates; one added
/// with wp::forward_only, whose derivative maps are never instantiated (compile time); and the
/// maps wp::backward makes (their zeroing and pruning instead), so that no chain of derivative
/// types is instantiated.

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../autodiff/differentiability.hpp"
#include "../autodiff/map_derivative.hpp"
#include "../runtime/map_plan.hpp"
#include "../exec/local_kind.hpp"
#include "../exec/run.hpp"
#include "../expr/operation_count.hpp"
#include "../schedule/constraints.hpp"
#include "../program/map_interface.hpp"
#include "../program/program.hpp"

namespace workpart::detail {

template <class Map>
std::shared_ptr<map_interface> make_backward_entry(Map&& m);

inline constexpr const char* forward_only_refusal =
    "it was added with wp::forward_only, which compiles no derivative maps; add it to the "
    "program without wp::forward_only to differentiate it";

/// Why wp::backward cannot differentiate an entry (nullptr: it can). Only a map to
/// differentiate instantiates the rules' check (a map without derivatives never instantiates
/// the rules: they stop the build).
template <class Map, entry_kind Kind>
constexpr const char* entry_refusal() {
  if constexpr (Kind == entry_kind::differentiable)
    return map_refusal<Map>::value;
  else if constexpr (Kind == entry_kind::forward_only)
    return forward_only_refusal;
  else
    return nullptr;
}

template <class Map, entry_kind Kind>
class map_model final : public map_interface {
  static constexpr int N = Map::rank;
  static constexpr bool Forward = Kind != entry_kind::derivative;
  static constexpr bool Derived = Kind == entry_kind::differentiable;
  static constexpr const char* refusal = entry_refusal<Map, Kind>();

 public:
  explicit map_model(const Map& m) : map_(m) {}
  explicit map_model(Map&& m) : map_(std::move(m)) {}

  const std::string& name() const noexcept override { return map_.name(); }
  const std::string& origin() const noexcept override { return map_.origin(); }
  int rank() const noexcept override { return N; }
  std::vector<index_t> lo() const override {
    const auto& sp = map_.iteration_space();
    return std::vector<index_t>(sp.lo.begin(), sp.lo.begin() + N);
  }
  std::vector<index_t> hi() const override {
    const auto& sp = map_.iteration_space();
    return std::vector<index_t>(sp.hi.begin(), sp.hi.begin() + N);
  }
  std::string space_text() const override { return map_.iteration_space().str(); }
  std::string str() const override { return map_.str(); }
  std::vector<access_event> access_events() const override { return map_.access_events(); }
  void require_valid() const override { map_.require_valid(); }
  double ops_per_point() const override { return detail::ops_per_point(map_); }
  bool runs_as_gemm() const override { return detail::runs_as_gemm(map_); }
  local_work work_per_point() const override { return detail::local_work_of(map_); }
  std::vector<array_use> array_uses(const std::vector<access_event>& ev) const override {
    return detail::array_uses(map_, ev);
  }
  map_constraints constraints(const grid_shape& g, int nranks) const override {
    return extract_constraints(map_, g, nranks);
  }
  std::string explain_local() const override { return workpart::explain_local(map_); }

  std::unique_ptr<map_runtime> plan(const grid_shape& g, const boost::mpi::communicator& comm,
                                    const options& opt, bool inspect,
                                    plan_batch* batch) const override {
    return map_plan<Map>::make_runtime(map_, g, comm, opt, inspect, batch);
  }
  void run_on_root() const override { detail::run_on_root(map_); }

  bool differentiable() const noexcept override { return Forward; }
  const char* derivative_refusal() const noexcept override { return refusal; }
  void derivative(gradient_table& grads, program& out) const override {
    if constexpr (Derived && refusal == nullptr)
      add_all(out, backward_map(map_, grads));
    else
      not_here("derivative");
  }
  void zero_maps_of_written(gradient_table& grads, program& out) const override {
    if constexpr (Derived && refusal == nullptr)
      add_all(out, detail::zero_maps_of_written(map_, grads));
    else
      not_here("zero_maps_of_written");
  }
  void zero_maps_of(gradient_table& grads, program& out) const override {
    if constexpr (!Forward)
      add_all(out, detail::zero_maps_of(map_, grads));
    else
      not_here("zero_maps_of");
  }
  void prune_unneeded(const gradient_table& grads,
                      const std::vector<const void*>& needed) override {
    if constexpr (!Forward) detail::prune_unneeded(map_, grads, needed);
  }
  void set_origin(std::string o) override { map_.set_origin(std::move(o)); }

 private:
  template <class... M>
  static void add_all(program& out, std::tuple<M...>&& maps) {
    std::apply(
        [&](auto&... m) { (program_access::push(out, make_backward_entry(std::move(m))), ...); },
        maps);
  }
  [[noreturn]] void not_here(const char* what) const {
    throw plan_error("workpart: internal error: " + std::string(what) + " asked of map '" +
                     map_.name() + "'");
  }

  Map map_;
};

template <class Map>
struct map_entry {
  static std::shared_ptr<map_interface> user_map(const Map& m) {
    return std::make_shared<map_model<Map, entry_kind::differentiable>>(m);
  }
  static std::shared_ptr<map_interface> forward_only_map(const Map& m) {
    return std::make_shared<map_model<Map, entry_kind::forward_only>>(m);
  }
};
template <class Map>
std::shared_ptr<map_interface> make_backward_entry(Map&& m) {
  using M = std::remove_cvref_t<Map>;
  return std::make_shared<map_model<M, entry_kind::derivative>>(std::forward<Map>(m));
}

}  // namespace workpart::detail
