#pragma once
/// \file error.hpp
/// The one run-time error hierarchy. Every message starts with a stable tag
/// (`[workpart.<kind>]`), names the user's object and the numbers at fault, and
/// says how to fix it where a fix is known.

#include <stdexcept>
#include <string>

namespace workpart {

/// Base of every error workpart raises. Errors found while planning are raised
/// on every rank alike, before any collective starts.
class error : public std::runtime_error {
 public:
  explicit error(const std::string& what) : std::runtime_error(what) {}
};

/// A shape, extent or subscript that does not fit (out-of-bounds accesses, mismatched extents).
class shape_error : public error {
 public:
  explicit shape_error(const std::string& what) : error("[workpart.shape_error] " + what) {}
};

/// A process grid that does not fit the space or the communicator.
class grid_error : public error {
 public:
  explicit grid_error(const std::string& what) : error("[workpart.grid_error] " + what) {}
};

/// A plan that cannot be built or used as asked.
class plan_error : public error {
 public:
  explicit plan_error(const std::string& what) : error("[workpart.plan_error] " + what) {}
};

/// A failed MPI call; keeps the routine and the MPI result code.
class comm_error : public error {
 public:
  comm_error(const std::string& routine, int code, const std::string& what)
      : error("[workpart.comm_error] " + routine + ": " + what), routine_(routine), code_(code) {}
  const std::string& routine() const noexcept { return routine_; }
  int result_code() const noexcept { return code_; }

 private:
  std::string routine_;
  int code_;
};

/// A failed CUDA or cuBLAS call.
class backend_error : public error {
 public:
  explicit backend_error(const std::string& what) : error("[workpart.backend_error] " + what) {}
};

}  // namespace workpart
