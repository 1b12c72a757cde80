#pragma once
/// \file log.hpp
/// The opt-in progress log: with WORKPART_LOG=info in the environment, rank 0 writes one line
/// to stderr per plan built (how long planning took) and, per execute(), one per map run and
/// per redistribution (the seconds rank 0 spent in it), and at each gather() after executes
/// the plan's measured profile (runtime/profile.hpp; root's variable, agreed with the plan,
/// decides for every rank, since the profile is collective). Off by default: nothing printed.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace workpart::detail {

/// Whether WORKPART_LOG asks for the log ("info", "1" or "on"; read once).
inline bool log_on() {
  static const bool on = [] {
    const char* v = std::getenv("WORKPART_LOG");
    return v != nullptr &&
           (std::strcmp(v, "info") == 0 || std::strcmp(v, "1") == 0 || std::strcmp(v, "on") == 0);
  }();
  return on;
}

/// One line of the log, on rank 0 only.
inline void log_line(int rank, const std::string& text) {
  if (rank != 0) return;
  std::fprintf(stderr, "[workpart] %s\n", text.c_str());
  std::fflush(stderr);
}

/// Seconds since it was made.
struct log_clock {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

/// "0.0123 s" (four significant digits).
inline std::string log_seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g s", s);
  return b;
}

/// Logs `what` and the seconds until it is destroyed (made only when the log is on:
/// `std::optional<log_scope> l; if (log_on()) l.emplace(rank, "...");`).
struct log_scope {
  int rank;
  std::string what;
  log_clock clock;
  log_scope(int r, std::string w) : rank(r), what(std::move(w)) {}
  log_scope(const log_scope&) = delete;
  log_scope& operator=(const log_scope&) = delete;
  ~log_scope() { log_line(rank, what + ": " + log_seconds(clock.seconds())); }
};

}  // namespace workpart::detail
