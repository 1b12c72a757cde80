#pragma once
/// \file context.hpp
/// The MPI context: initialises MPI when needed and names the communicator in use.

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <memory>
#include <mpi.h>

#include "../error.hpp"
#include "../fwd.hpp"

namespace workpart {

namespace detail {
inline const boost::mpi::communicator*& current_comm() {
  static const boost::mpi::communicator* c = nullptr;
  return c;
}
inline int rank_of_current_context() {
  const auto* c = current_comm();
  return c ? c->rank() : 0;
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
      throw plan_error("wp::context: this rank is not in the communicator given (a null "
                       "communicator, e.g. from a split with MPI_UNDEFINED); build contexts, "
                       "arrays and plans only on the communicator's ranks");
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) env_ = std::make_unique<boost::mpi::environment>(argc, argv);
    comm_ = std::make_unique<boost::mpi::communicator>(comm);
    prev_ = detail::current_comm();
    detail::current_comm() = comm_.get();
    detail::current_rank_hook = &detail::rank_of_current_context;
  }
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  ~context() {
    if (detail::current_comm() == comm_.get()) detail::current_comm() = prev_;
  }

  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  bool is_root() const { return rank() == 0; }
  const boost::mpi::communicator& comm() const { return *comm_; }

 private:
  std::unique_ptr<boost::mpi::environment> env_;
  std::unique_ptr<boost::mpi::communicator> comm_;
  const boost::mpi::communicator* prev_ = nullptr;
};

}  // namespace workpart
