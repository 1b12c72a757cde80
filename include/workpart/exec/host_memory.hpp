#pragma once
/// \file host_memory.hpp
/// How a plan's host buffers (the blocks MPI sends and receives) are allocated: plain heap
/// memory on the CPU backend; page-locked memory under CUDA (exec/device/context.hpp), so
/// that the copies between a block and its device mirror run at full speed.

#include <cstddef>

namespace workpart::detail {

/// How a plan's host buffers are allocated and freed: plain heap memory, or (the device
/// backend under CUDA) page-locked memory, so that copies to and from the device and MPI
/// calls on the staged blocks run at full speed.
struct host_memory {
  void* (*allocate)(std::size_t bytes) = nullptr;  ///< null: new[] of max_align_t
  void (*release)(void* p) = nullptr;
};
/// Frees a buffer the way it was allocated (the deleter travels with the buffer, so a buffer
/// may outlive whatever chose its allocator).
struct buffer_free {
  void (*release)(void*) = nullptr;
  void operator()(std::max_align_t* p) const {
    if (release)
      release(p);
    else
      delete[] p;
  }
};

}  // namespace workpart::detail
