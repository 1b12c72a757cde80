/// \file omp_threads.hpp
/// A test helper: OpenMP has at least n threads while an at_least_threads lives (the loop
/// executor splits large statements, and fused blocks, over omp_get_max_threads() threads),
/// even on a one-core machine.
#pragma once

#if defined(_OPENMP)
#include <omp.h>
#endif

struct at_least_threads {
#if defined(_OPENMP)
  int saved = omp_get_max_threads();
  explicit at_least_threads(int n) {
    if (saved < n) omp_set_num_threads(n);
  }
  ~at_least_threads() { omp_set_num_threads(saved); }
  at_least_threads(const at_least_threads&) = delete;
  at_least_threads& operator=(const at_least_threads&) = delete;
#else
  explicit at_least_threads(int) {}
#endif
};
