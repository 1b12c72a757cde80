#pragma once
/// \file context.hpp
/// What a plan holds for the device backend (`wp::backend::cuda`): the device buffers that
/// mirror the rank's host blocks (allocated once per plan, reused by every execute()), the
/// out-of-bounds record in device memory, scratch for snapshots, and under CUDA the device
/// chosen for the rank and a cuBLAS handle.
///
/// The same code runs on two Thrust device systems: CUDA when compiled by nvcc, and Thrust's
/// OpenMP system when a g++ program links workpart::device_omp (WORKPART_DEVICE_OMP), which
/// runs the device path on the CPU: users debug device code on a laptop, and the tests run it
/// on every machine. Without either, the backend is refused (wp::backend_error) when a plan
/// asks for it.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../config.hpp"
#include "../../error.hpp"
#include "../../expr/node.hpp"

#if WORKPART_DEVICE_SYSTEM != WORKPART_DEVICE_NONE
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#endif
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_OMP_SYSTEM && defined(_OPENMP)
#include <omp.h>
#endif
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

namespace workpart::detail {

/// Whether this translation unit was built with a device system (see config.hpp).
inline constexpr bool has_device_system = WORKPART_DEVICE_SYSTEM != WORKPART_DEVICE_NONE;

/// Whether the MPI library passes device buffers itself, asked at run time (Open MPI's
/// MPIX_Query_cuda_support where the library has it; otherwise no).
inline bool mpi_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// The device system in words, for explain(): the same on every rank.
inline std::string device_system_text() {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  return "CUDA (Thrust kernels and cuBLAS, one GPU per rank)";
#elif WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_OMP_SYSTEM
  return "Thrust's OpenMP device system (the device path running on the CPU; contractions run "
         "as kernels, cuBLAS only under CUDA)";
#else
  return "none";
#endif
}

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
/// A CUDA runtime failure as wp::backend_error naming the call and the status.
inline void cuda_check(cudaError_t s, const char* call) {
  if (s != cudaSuccess)
    throw backend_error(std::string(call) + " failed: " + cudaGetErrorName(s) + " (" +
                        cudaGetErrorString(s) + ")");
}
inline void cublas_check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw backend_error(std::string(call) + " failed: cuBLAS status " + std::to_string(int(s)));
}
#endif

#if WORKPART_DEVICE_SYSTEM != WORKPART_DEVICE_NONE

/// A Thrust call, with its failure (thrust::system_error, out of memory) as wp::backend_error.
template <class F>
auto device_call(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const error&) {
    throw;
  } catch (const std::exception& e) {
    throw backend_error(std::string(what) + " failed on the device: " + e.what());
  }
}

class device_context {
 public:
  /// Checks that this rank has a device (CUDA: at least one GPU; picks the rank's by its
  /// rank among the ranks of its node). Throws wp::backend_error when it has none.
  device_context(const std::string& map_name, MPI_Comm comm) {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
    int count = 0;
    const cudaError_t s = cudaGetDeviceCount(&count);
    if (s != cudaSuccess || count == 0)
      throw backend_error("wp::distribute: map '" + map_name + "' asks for the CUDA backend, but "
                          "this rank sees no CUDA device (cudaGetDeviceCount: " +
                          (s != cudaSuccess ? std::string(cudaGetErrorName(s)) : std::string("0 devices")) +
                          "); run where each rank has a GPU, or use backend::cpu");
    MPI_Comm node;
    int local = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_rank(node, &local);
      MPI_Comm_free(&node);
    }
    device_ = local % count;
    cuda_check(cudaSetDevice(device_), "cudaSetDevice");
#else
    (void)map_name;
    (void)comm;
#endif
    oob_ = device_call("allocating the out-of-bounds record", [] {
      return thrust::device_vector<oob_record>(1);
    });
  }
  device_context(const device_context&) = delete;
  device_context& operator=(const device_context&) = delete;
  ~device_context() {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
    if (blas_) cublasDestroy(blas_);
#endif
  }

  /// The device mirror of a host buffer of `bytes` bytes (made once, grown if needed).
  void* mirror(const void* host, std::size_t bytes) {
    for (auto& m : mirrors_)
      if (m->host == host) {
        if (m->dev.size() < bytes) device_call("growing a device buffer", [&] { m->dev.resize(bytes); });
        m->bytes = bytes;
        return thrust::raw_pointer_cast(m->dev.data());
      }
    auto m = std::make_unique<mirror_t>();
    m->host = host;
    m->bytes = bytes;
    device_call("allocating a device buffer", [&] { m->dev.resize(bytes); });
    mirrors_.push_back(std::move(m));
    return thrust::raw_pointer_cast(mirrors_.back()->dev.data());
  }
  /// Host to device, device to host (the mirror of `host`, all its bytes).
  void upload(const void* host) {
    mirror_t& m = find(host);
    const auto* p = static_cast<const unsigned char*>(host);
    device_call("copying to the device", [&] { thrust::copy(p, p + m.bytes, m.dev.begin()); });
    bytes_up_ += m.bytes;
  }
  void download(void* host) {
    mirror_t& m = find(host);
    auto* p = static_cast<unsigned char*>(host);
    device_call("copying from the device", [&] {
      thrust::copy(m.dev.begin(), m.dev.begin() + std::ptrdiff_t(m.bytes), p);
    });
    bytes_down_ += m.bytes;
  }
  /// A device copy of `bytes` bytes at device address `src` (snapshots of a statement's
  /// output); valid until the next call.
  void* scratch_copy(const void* src, std::size_t bytes) {
    device_call("copying a snapshot on the device", [&] {
      if (scratch_.size() < bytes) scratch_.resize(bytes);
      const auto s = thrust::device_pointer_cast(static_cast<const unsigned char*>(src));
      thrust::copy(s, s + std::ptrdiff_t(bytes), scratch_.begin());
    });
    return thrust::raw_pointer_cast(scratch_.data());
  }

  /// The out-of-bounds record kernels write (device memory), its reset and its host copy.
  oob_record* oob() { return thrust::raw_pointer_cast(oob_.data()); }
  void reset_oob() {
    device_call("resetting the out-of-bounds record", [&] { oob_[0] = oob_record{}; });
  }
  oob_record fetch_oob() {
    return device_call("reading the out-of-bounds record", [&] { return oob_record(oob_[0]); });
  }

  /// Bytes copied host to device and back since the plan was made (for stats and tests).
  std::size_t bytes_up() const { return bytes_up_; }
  std::size_t bytes_down() const { return bytes_down_; }

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  cublasHandle_t blas() {
    if (!blas_) cublas_check(cublasCreate(&blas_), "cublasCreate");
    return blas_;
  }
#endif

 private:
  struct mirror_t {
    const void* host = nullptr;
    std::size_t bytes = 0;
    thrust::device_vector<unsigned char> dev;
  };
  mirror_t& find(const void* host) {
    for (auto& m : mirrors_)
      if (m->host == host) return *m;
    throw backend_error("internal: a host buffer has no device mirror");
  }
  std::vector<std::unique_ptr<mirror_t>> mirrors_;
  thrust::device_vector<oob_record> oob_;
  thrust::device_vector<unsigned char> scratch_;
  std::size_t bytes_up_ = 0, bytes_down_ = 0;
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  int device_ = 0;
  cublasHandle_t blas_ = nullptr;
#endif
};

#else  // no device system in this build

class device_context {
 public:
  device_context(const std::string& map_name, MPI_Comm) {
    throw backend_error("wp::distribute: map '" + map_name + "' asks for the device backend "
                        "(backend::cuda), which this program was built without: compile it "
                        "with nvcc and link workpart::cuda, or link workpart::device_omp (the "
                        "device path on the CPU through Thrust's OpenMP system); or use "
                        "backend::cpu");
  }
  std::size_t bytes_up() const { return 0; }
  std::size_t bytes_down() const { return 0; }
};

#endif

}  // namespace workpart::detail
