#pragma once
/// \file map_interface.hpp
/// What a run-time program (program.hpp) knows of one of its maps: a small interface,
/// implemented once per map type (entries/map_model.hpp). Everything a map's type decides -- its
/// accesses, its constraints on a grid, its kernels, its derivative maps -- is reached through
/// it, so that everything above one map (program planning, redistributions, pricing,
/// descriptions, explain) is code compiled once, not once per program.

#include <memory>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../core/local_work.hpp"

namespace boost::mpi {
class communicator;
}

namespace workpart {
class program;
struct grid_shape;
struct options;
}  // namespace workpart

namespace workpart::detail {

struct access_event;
struct array_use;
struct map_constraints;
class map_runtime;
class plan_batch;
class gradient_table;

class map_interface {
 public:
  map_interface() = default;
  map_interface(const map_interface&) = delete;
  map_interface& operator=(const map_interface&) = delete;
  virtual ~map_interface() = default;

  // ---- what the map is ----
  virtual const std::string& name() const noexcept = 0;
  /// What made the map where the library did ("wp::backward of the loss 'L'"); empty for a
  /// map the user wrote.
  virtual const std::string& origin() const noexcept = 0;
  /// The rank of its space.
  virtual int rank() const noexcept = 0;
  /// Its space: [lo[d], hi[d]) per dimension.
  virtual std::vector<index_t> lo() const = 0;
  virtual std::vector<index_t> hi() const = 0;
  std::vector<index_t> extents() const {
    std::vector<index_t> e = hi(), l = lo();
    for (std::size_t d = 0; d < e.size(); ++d) e[d] -= l[d];
    return e;
  }
  virtual std::string space_text() const = 0;
  /// The map in words: its name, space and the statements that run.
  virtual std::string str() const = 0;
  /// Every access of the statements that run, as data (expr/access_list.hpp).
  virtual std::vector<access_event> access_events() const = 0;
  /// Throws the error found when the map was built, if it was kept for wp::distribute.
  virtual void require_valid() const = 0;
  /// Arithmetic operations per point of its space (the cost model's count).
  virtual double ops_per_point() const = 0;
  /// Whether its statements run as GEMMs (exec/local_kind.hpp): the cost model's rate for it.
  virtual bool runs_as_gemm() const = 0;
  /// Operations, slow functions, GEMM or loop and the loop's row dimension, per point
  /// (exec/local_kind.hpp): what the cost model prices its blocks by.
  virtual local_work work_per_point() const = 0;
  /// Its arrays and how its statements use them (schedule/constraints.hpp).
  virtual std::vector<array_use> array_uses(const std::vector<access_event>& events) const = 0;
  /// The boxes each rank's block touches on grid `g` over `nranks` ranks.
  virtual map_constraints constraints(const grid_shape& g, int nranks) const = 0;
  /// How each statement runs on one process (GEMM or loop; wp::explain_local).
  virtual std::string explain_local() const = 0;

  // ---- running ----
  /// The map's plan on grid `g` (collective over `comm`): its runtime, which a program's plan
  /// drives phase by phase. `inspect`: root may evaluate data-dependent range bounds. `batch`:
  /// only the local planning here, the agreements for all maps at once (plan_batch::finish).
  virtual std::unique_ptr<map_runtime> plan(const grid_shape& g,
                                            const boost::mpi::communicator& comm,
                                            const options& opt, bool inspect,
                                            plan_batch* batch = nullptr) const = 0;
  /// Runs the map on root's global arrays (wp::run).
  virtual void run_on_root() const = 0;

  // ---- differentiation (autodiff/) ----
  /// Whether wp::backward may differentiate it: every map a user writes; not those
  /// wp::backward made (a second derivative is not derived).
  virtual bool differentiable() const noexcept = 0;
  /// nullptr where its statements have derivatives, else why not (autodiff/differentiability.hpp).
  virtual const char* derivative_refusal() const noexcept = 0;
  /// Appends the map's derivative maps to `out` (autodiff/map_derivative.hpp).
  virtual void derivative(gradient_table& grads, program& out) const = 0;
  /// Appends the zeroing maps of the gradients of what the map writes.
  virtual void zero_maps_of_written(gradient_table& grads, program& out) const = 0;
  /// A backward map: appends the zeroing maps of the buffers it accumulates into.
  virtual void zero_maps_of(gradient_table& grads, program& out) const = 0;
  /// A backward map: prunes its statements that write a gradient no named one needs.
  virtual void prune_unneeded(const gradient_table& grads,
                              const std::vector<const void*>& needed) = 0;
  virtual void set_origin(std::string origin) = 0;
};

}  // namespace workpart::detail
