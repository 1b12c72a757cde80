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
#include <new>
#include <string>
#include <vector>

#include "../../config.hpp"
#include "../../error.hpp"
#include "../../expr/node.hpp"
#include "../host_memory.hpp"

#if WORKPART_DEVICE_SYSTEM != WORKPART_DEVICE_NONE
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/execution_policy.h>
#endif
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_OMP_SYSTEM && defined(_OPENMP)
#include <omp.h>
#endif

namespace workpart::detail {

/// Whether this translation unit was built with a device system (see config.hpp).
inline constexpr bool has_device_system = WORKPART_DEVICE_SYSTEM != WORKPART_DEVICE_NONE;

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

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
/// Page-locked host memory for a plan's blocks (what MPI sends from and the device copies
/// to and from). An allocation failure is std::bad_alloc, as for any host buffer.
inline void* pinned_allocate(std::size_t bytes) {
  void* p = nullptr;
  if (cudaMallocHost(&p, bytes) != cudaSuccess || p == nullptr) throw std::bad_alloc();
  return p;
}
inline void pinned_release(void* p) { cudaFreeHost(p); }
#endif

/// Which copy of a block holds its current values.
enum class newest : unsigned char {
  host,    ///< the host block (the device mirror is stale or was never written)
  device,  ///< the device mirror (a kernel wrote it since the host last had it)
  both,    ///< they agree
};

class device_context {
 public:
  /// Checks that this rank has a device (CUDA: at least one GPU; picks the rank's by its
  /// rank among the ranks of its node, `node_rank`). Throws wp::backend_error when it has none.
  device_context(const std::string& map_name, int node_rank) {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
    int count = 0;
    const cudaError_t s = cudaGetDeviceCount(&count);
    if (s != cudaSuccess || count == 0)
      throw backend_error(
          "wp::distribute: map '" + map_name +
          "' asks for the CUDA backend, but "
          "this rank sees no CUDA device (cudaGetDeviceCount: " +
          (s != cudaSuccess ? std::string(cudaGetErrorName(s)) : std::string("0 devices")) +
          "); run where each rank has a GPU, or use backend::cpu");
    device_ = node_rank % count;
    cuda_check(cudaSetDevice(device_), "cudaSetDevice");
#else
    (void)map_name;
    (void)node_rank;
#endif
    oob_ = device_call("allocating the out-of-bounds record",
                       [] { return thrust::device_vector<oob_record>(1); });
  }
  device_context(const device_context&) = delete;
  device_context& operator=(const device_context&) = delete;
  ~device_context() {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
    if (blas_) cublasDestroy(blas_);
#endif
  }

  /// How the plans using this context allocate their host blocks: page-locked under CUDA.
  host_memory host_allocator() const {
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
    return {&pinned_allocate, &pinned_release};
#else
    return {};
#endif
  }

  /// The device mirror of a host block of `bytes` bytes (made once, grown if needed; a new
  /// or grown mirror holds nothing yet: the host block is the newest).
  void* mirror(const void* host, std::size_t bytes) {
    if (mirror_t* m = find(host)) {
      if (m->dev.size() < bytes) {
        device_call("growing a device buffer", [&] { m->dev.resize(bytes); });
        m->state = newest::host;
      }
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

  /// The device address of the mirror of `host`, or null where it has none.
  void* device_data(const void* host) {
    mirror_t* m = find(host);
    return m ? thrust::raw_pointer_cast(m->dev.data()) : nullptr;
  }

  // The blocks' coherence: every copy between a host block and its mirror goes through these,
  // so a block crosses only when the side about to use it is behind.
  /// Before a kernel reads or writes the mirror of `host`: copies it up if the host is newer.
  void to_device(const void* host) {
    mirror_t& m = require(host);
    if (eager_) m.state = newest::host;  // local() views are out: the host may have changed
    if (m.state != newest::host) return;
    const auto* p = static_cast<const unsigned char*>(host);
    device_call("copying to the device", [&] { thrust::copy(p, p + m.bytes, m.dev.begin()); });
    bytes_up_ += m.bytes;
    m.state = newest::both;
  }
  /// Before a kernel writes the mirror of `host` (from then on the mirror is the newest,
  /// even if the kernel fails part way: as on the CPU, what it wrote stays written).
  void device_writes(const void* host) { require(host).state = newest::device; }
  /// Before the host reads `host` (a collective sends from it, a gather, a local() view):
  /// copies it down if the device is newer. A block with no mirror is the host's already.
  void to_host(const void* host) {
    mirror_t* m = find(host);
    if (!m || m->state != newest::device) return;
    auto* p = static_cast<unsigned char*>(const_cast<void*>(host));
    device_call("copying from the device", [&] {
      thrust::copy(m->dev.begin(), m->dev.begin() + std::ptrdiff_t(m->bytes), p);
    });
    bytes_down_ += m->bytes;
    m->state = newest::both;
  }
  /// After the host wrote `host` (a collective received into it, the identity refilled): the
  /// mirror is stale. The caller made the host current first where it writes only part.
  void host_wrote(const void* host) {
    if (mirror_t* m = find(host)) m->state = newest::host;
  }
  /// Every block to the host / every mirror stale: around the phases that touch all blocks
  /// (scatter, gather, a map reading what other ranks wrote through root).
  void all_to_host() {
    for (auto& m : mirrors_) to_host(m->host);
  }
  void host_wrote_all() {
    for (auto& m : mirrors_) m->state = newest::host;
  }
  /// From the first local() view on: every block goes up before each run and the written
  /// ones come back after it, since the caller may read or write through a view at any time.
  void make_eager() {
    all_to_host();
    eager_ = true;
  }
  bool eager() const { return eager_; }

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
  // (Algorithms, not oob_[0]: a device_reference's element access trips UBSan inside Thrust.)
  void reset_oob() {
    device_call("resetting the out-of-bounds record",
                [&] { thrust::fill_n(oob_.begin(), 1, oob_record{}); });
  }
  oob_record fetch_oob() {
    oob_record r;
    device_call("reading the out-of-bounds record", [&] { thrust::copy_n(oob_.begin(), 1, &r); });
    return r;
  }

  /// Bytes copied host to device and back since the context was made (phases take deltas).
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
    newest state = newest::host;
  };
  mirror_t* find(const void* host) {
    for (auto& m : mirrors_)
      if (m->host == host) return m.get();
    return nullptr;
  }
  mirror_t& require(const void* host) {
    if (mirror_t* m = find(host)) return *m;
    throw backend_error("internal: a host buffer has no device mirror");
  }
  std::vector<std::unique_ptr<mirror_t>> mirrors_;
  thrust::device_vector<oob_record> oob_;
  thrust::device_vector<unsigned char> scratch_;
  std::size_t bytes_up_ = 0, bytes_down_ = 0;
  bool eager_ = false;
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
  int device_ = 0;
  cublasHandle_t blas_ = nullptr;
#endif
};

#else  // no device system in this build

class device_context {
 public:
  device_context(const std::string& map_name, int) {
    throw backend_error("wp::distribute: map '" + map_name +
                        "' asks for the device backend "
                        "(backend::cuda), which this program was built without: compile it "
                        "with nvcc and link workpart::cuda, or link workpart::device_omp (the "
                        "device path on the CPU through Thrust's OpenMP system); or use "
                        "backend::cpu");
  }
  host_memory host_allocator() const { return {}; }
  void* device_data(const void*) { return nullptr; }
  void to_device(const void*) {}
  void device_writes(const void*) {}
  void to_host(const void*) {}
  void host_wrote(const void*) {}
  void all_to_host() {}
  void host_wrote_all() {}
  void make_eager() {}
  std::size_t bytes_up() const { return 0; }
  std::size_t bytes_down() const { return 0; }
};

#endif

}  // namespace workpart::detail
