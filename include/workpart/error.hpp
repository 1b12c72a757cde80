#pragma once
/// \file error.hpp
/// The one run-time error hierarchy. Every message starts with a stable tag
/// (`[workpart.<kind>]`, made here and nowhere else), names the user's object and the numbers
/// at fault, and says how to fix it where a fix is known.

#include <stdexcept>
#include <string>
#include <string_view>

namespace workpart {

namespace detail {
/// "[workpart.<kind>] what": the one place a message's tag is made.
/// (appended into one reserved string: the chain of operator+ temporaries made GCC 12 report a
/// false -Warray-bounds in precompiled-header builds)
inline std::string tagged(const char* kind, const std::string& what) {
  const std::string_view k(kind);
  std::string s;
  s.reserve(12 + k.size() + what.size());
  s.append("[workpart.").append(k).append("] ").append(what);
  return s;
}
/// what without a leading "[workpart.<kind>] " tag (failure agreement adds it again).
inline std::string untagged(const std::string& what) {
  if (what.rfind("[workpart.", 0) == 0) {
    const auto end = what.find("] ");
    if (end != std::string::npos) return what.substr(end + 2);
  }
  return what;
}
}  // namespace detail

/// Base of every error workpart raises. Errors found while planning are raised
/// on every rank alike, before any collective starts. Its own message is tagged
/// `[workpart.error]`; the kinds below tag theirs with their names.
class error : public std::runtime_error {
 public:
  explicit error(const std::string& what) : std::runtime_error(detail::tagged("error", what)) {}

 protected:
  /// A derived kind's message, tagged with its name.
  error(const char* kind, const std::string& what)
      : std::runtime_error(detail::tagged(kind, what)) {}
};

/// A shape, extent or subscript that does not fit (out-of-bounds accesses, mismatched extents).
class shape_error : public error {
 public:
  explicit shape_error(const std::string& what) : error("shape_error", what) {}
};

/// A process grid that does not fit the space or the communicator.
class grid_error : public error {
 public:
  explicit grid_error(const std::string& what) : error("grid_error", what) {}
};

/// A plan that cannot be built or used as asked.
class plan_error : public error {
 public:
  explicit plan_error(const std::string& what) : error("plan_error", what) {}
};

/// A failed MPI call; keeps the routine and the MPI result code.
class comm_error : public error {
 public:
  comm_error(const std::string& routine, int code, const std::string& what)
      : error("comm_error", routine + ": " + what), routine_(routine), code_(code) {}
  const std::string& routine() const noexcept { return routine_; }
  int result_code() const noexcept { return code_; }

 private:
  std::string routine_;
  int code_;
};

/// A failed CUDA or cuBLAS call.
class backend_error : public error {
 public:
  explicit backend_error(const std::string& what) : error("backend_error", what) {}
};

/// A cost-table file or graph that is malformed (syntax, unknown vertices, duplicate edges).
/// Wrong table shapes are `workpart::shape_error`.
class table_error : public error {
 public:
  explicit table_error(const std::string& what) : error("table_error", what) {}
};

}  // namespace workpart
