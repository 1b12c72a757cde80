#pragma once
/// \file mpi_check.hpp
/// MPI return codes to wp::comm_error, as Boost.MPI's BOOST_MPI_CHECK_RESULT turns them into
/// boost::mpi::exception. Codes come back (rather than aborting) where the communicator's
/// error handler returns them: boost::mpi::environment sets MPI_ERRORS_RETURN on
/// MPI_COMM_WORLD, and communicators split from it inherit it.

#include <mpi.h>

#include <boost/mpi/exception.hpp>
#include <string>

#include "../error.hpp"

namespace workpart::detail {

inline void check_mpi(int code, const char* routine) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw comm_error(routine, code, std::string(text, std::size_t(len)));
}

/// Runs f(); a boost::mpi::exception from it becomes wp::comm_error (routine and code kept).
[[noreturn]] inline void throw_as_comm_error(const boost::mpi::exception& e) {
  throw comm_error(e.routine(), e.result_code(), e.what());
}
template <class F>
decltype(auto) with_comm_errors(F&& f) {
  try {
    return f();
  } catch (const boost::mpi::exception& e) {
    throw_as_comm_error(e);
  }
}

}  // namespace workpart::detail

/// `WORKPART_MPI_CHECK(MPI_Reduce, (a, b, ...))` calls MPI_Reduce(a, b, ...) and throws
/// wp::comm_error naming MPI_Reduce when it does not return MPI_SUCCESS.
#define WORKPART_MPI_CHECK(routine, args) ::workpart::detail::check_mpi(routine args, #routine)
