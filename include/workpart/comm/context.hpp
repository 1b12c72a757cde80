#pragma once
/// \file context.hpp
/// The MPI context: initialises MPI when needed and names the communicator in use.

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <algorithm>
#include <memory>
#include <vector>
#include <mpi.h>

#include "../error.hpp"
#include "../fwd.hpp"
#include "uncaught.hpp"

namespace workpart {

namespace detail {
/// The live contexts in creation order; the newest is current. A context leaves the list
/// when destroyed, in whatever order that happens, so the current one is always alive.
inline std::vector<const boost::mpi::communicator*>& live_contexts() {
  static std::vector<const boost::mpi::communicator*> v;
  return v;
}
inline const boost::mpi::communicator* current_comm() {
  const auto& v = live_contexts();
  return v.empty() ? nullptr : v.back();
}
inline int rank_of_current_context() {
  const auto* c = current_comm();
  return c ? c->rank() : 0;
}
inline int size_of_current_context() {
  const auto* c = current_comm();
  return c ? c->size() : 1;
}
}  // namespace detail

/// \code
///   wp::context ctx(argc, argv);            // world communicator; initialises MPI if needed
///   wp::context sub(argc, argv, sub_comm);  // any boost::mpi::communicator
/// \endcode
/// Arrays created after a context take their root (rank 0 of its communicator) from it.
/// Without mpirun a program runs as one rank.
class context {
 public:
  context(int& argc, char**& argv) : context(argc, argv, boost::mpi::communicator()) {}
  context(int& argc, char**& argv, const boost::mpi::communicator& comm) {
    if (!comm)  // MPI is initialised if a (null) communicator exists: nothing to finalise
      throw plan_error(
          "wp::context: this rank is not in the communicator given (a null "
          "communicator, e.g. from a split with MPI_UNDEFINED); build contexts, "
          "arrays and plans only on the communicator's ranks");
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) env_ = std::make_unique<boost::mpi::environment>(argc, argv);
    detail::install_uncaught_handler();  // an exception escaping main: one message, MPI_Abort
    comm_ = std::make_unique<boost::mpi::communicator>(comm);
    detail::live_contexts().push_back(comm_.get());
    detail::current_rank_hook = &detail::rank_of_current_context;
    detail::current_size_hook = &detail::size_of_current_context;
  }
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  ~context() {
    auto& v = detail::live_contexts();
    v.erase(std::remove(v.begin(), v.end(), comm_.get()), v.end());
  }

  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  bool is_root() const { return rank() == 0; }
  const boost::mpi::communicator& comm() const { return *comm_; }

 private:
  std::unique_ptr<boost::mpi::environment> env_;
  std::unique_ptr<boost::mpi::communicator> comm_;
};

}  // namespace workpart
