// What the drivers of the workpart-optimize tests (test_workpart_optimize.cpp,
// test_optimize_memory.cpp) share: checks counted rather than thrown, and the files the tool
// writes read back. No workpart header: test_optimize_memory includes none.
#pragma once

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace tooltest {

/// Failed checks so far; main() returns nonzero where any.
inline int failures = 0;

inline void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  }
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// The last line of a text, its trailing newlines aside.
inline std::string last_line(std::string t) {
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace tooltest
