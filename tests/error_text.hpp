#pragma once
/// \file error_text.hpp
/// The text of the wp::error a callable throws: shared by the one-process and the MPI tests.

#include <workpart/workpart.hpp>

#include <string>

/// The text of the wp::error that f throws (empty if it throws none).
template <class F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const workpart::error& e) {
    return e.what();
  }
  return {};
}
