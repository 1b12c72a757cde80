#pragma once
/// \file executor.hpp
/// The device backend's executor (`executor<device_backend>`, see ../backend.hpp): it binds
/// the statements to the device mirrors of the rank's host blocks, brings up the blocks whose
/// host copy is newer (context.hpp keeps that per block), runs each statement (cuBLAS for
/// contractions under CUDA, else the one kernel form of kernel.hpp) and raises an
/// out-of-bounds access as wp::shape_error after the statement. Written blocks stay on the
/// device until a collective or a gather needs them on the host.

#include <cstddef>
#include <string>
#include <vector>

#include "../../config.hpp"
#include "../backend.hpp"
#include "../combine.hpp"
#include "../contraction.hpp"
#include "../own_output.hpp"
#include "context.hpp"

namespace workpart::detail {

/// How one statement runs on the device, for explain(): the same text on every system.
template <int N, class Stmt>
std::string device_strategy(const Stmt& st) {
  auto dims = [](dim_mask m) {
    std::string s;
    for (int d = 0; d < N; ++d)
      if (m & dim_bit(d)) s += (s.empty() ? "i" : ", i") + std::to_string(d);
    return s;
  };
  if constexpr (is_contraction_v<N, Stmt>) {
    if (!reads_own_output(st))
      return "device " + contraction_text<N, Stmt>() +
             " (cuBLAS under CUDA; as the kernel in the Thrust-OpenMP build)";
  }
  constexpr dim_mask par = lhs_owned_dims<typename Stmt::lhs_type>() & dims_below(N);
  constexpr dim_mask seq = dims_below(N) & ~par;
  std::string s =
      "device kernel: a thread per point of " + (par ? dims(par) : std::string("one point"));
  if (seq) {
    s += ", in order over " + dims(seq);
    if ((Stmt::lhs_type::info.free & seq) == 0 && Stmt::kind != combine::assign)
      s += " (a reduction per thread, written once)";
  }
  if (reads_own_output(st)) s += ", reads a snapshot of its output";
  return s;
}

}  // namespace workpart::detail

#if WORKPART_DEVICE_SYSTEM != WORKPART_DEVICE_NONE

#include "../counters.hpp"
#include "../env.hpp"
#include "copy.hpp"
#include "cublas.hpp"
#include "kernel.hpp"

namespace workpart::detail {

/// The env device kernels bind to: views of device memory, the device's out-of-bounds record.
struct device_env {
  buffer_env views;
  oob_record* rec = nullptr;
  template <class T, int R>
  const raw_view& view(const array<T, R>& a) const {
    return views.view(a);
  }
  error_sink& sink() const { return views.sink(); }
  oob_record* oob() const { return rec; }
};

template <>
class executor<device_backend> {
 public:
  /// Blocks cross between host and device only where the side about to use them is behind
  /// (device_context's coherence): a repeated execute() copies nothing.
  explicit executor(device_context& dev) : dev_(dev) { renv_.rec = wenv_.rec = dev_.oob(); }
  /// A block the statements read (`id`: the array) or write, `bytes` long at `host`.
  void add_read(const void* id, raw_view v, std::size_t bytes) { add(renv_, id, v, bytes, false); }
  void add_write(const void* id, raw_view v, std::size_t bytes) { add(wenv_, id, v, bytes, true); }
  void begin() {
    for (const void* h : host_) dev_.to_device(h);
    for (const void* h : written_) dev_.device_writes(h);
  }
  void end() {
    if (dev_.eager())  // local() views are out: the host blocks follow every run
      for (const void* h : written_) dev_.to_host(h);
  }

  template <int N, class Stmt>
  void run(const std::string& map_name, const Stmt& st, const index_t* lo, const index_t* hi,
           bool reads_are_separate) {
    using T = typename Stmt::lhs_type::value_type;
    constexpr bool may_fail = !Stmt::info.simple;  // indirect subscripts, ranges
    const bool alias = !reads_are_separate && reads_own_output(st);
    if constexpr (is_contraction_v<N, Stmt>) {
      if (!alias) {
        counters().device_contractions.fetch_add(1, std::memory_order_relaxed);
#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA
        if (run_contraction_cublas<N>(st, wenv_, renv_, lo, hi, dev_)) return;
#endif
      }
    }
    counters().device_kernels.fetch_add(1, std::memory_order_relaxed);
    if constexpr (may_fail) dev_.reset_oob();
    const auto bl = st.lhs.bind(wenv_, 0, &renv_);
    if (alias) {
      // The statement reads its own output: it reads a snapshot of the values before it.
      const raw_view& whole = renv_.view(*st.lhs.arr);
      std::size_t n = 1;
      for (int a = 0; a < Stmt::lhs_type::array_type::rank; ++a) n *= std::size_t(whole.extent[a]);
      raw_view snap = whole;
      snap.data = dev_.scratch_copy(whole.data, n * sizeof(T));
      counters().snapshot_elements.fetch_add(long(n), std::memory_order_relaxed);
      // A copy of the env, not a wrapper type: the statement's kernel is compiled once.
      device_env snap_env = renv_;
      snap_env.views.add(st.lhs.arr, snap);
      launch_statement<N, Stmt>(bl, st.rhs.bind(snap_env, 0), lo, hi);
    } else {
      launch_statement<N, Stmt>(bl, st.rhs.bind(renv_, 0), lo, hi);
    }
    if constexpr (may_fail) {
      const oob_record r = dev_.fetch_oob();
      if (r.hit) {
        error_sink s;
        s.set(r);
        throw shape_error("map '" + map_name + "': " + s.message() +
                          " (a data-dependent subscript or range left the array)");
      }
    }
  }

  /// Every statement of a map, in order, each its own kernel over [lo, hi).
  template <int N, class Map, class Separate>
  void run_map(const std::string& map_name, const Map& m, const index_t* lo, const index_t* hi,
               Separate&& separate) {
    m.for_each_statement(
        [&](const auto& st) { run<N>(map_name, st, lo, hi, separate(st.lhs.arr)); });
  }

 private:
  void add(device_env& env, const void* id, raw_view v, std::size_t bytes, bool written) {
    const void* host = v.data;
    v.data = dev_.mirror(host, bytes);
    env.views.add(id, v);
    bool seen = false;
    for (const void* h : host_) seen = seen || h == host;
    if (!seen) host_.push_back(host);
    if (written) {
      bool w = false;
      for (const void* h : written_) w = w || h == host;
      if (!w) written_.push_back(host);
    }
  }
  device_context& dev_;
  device_env renv_, wenv_;
  std::vector<const void*> host_;
  std::vector<const void*> written_;
};

}  // namespace workpart::detail

#else

namespace workpart::detail {
/// Without a device system no plan gets a device_context (its constructor refuses), so this
/// is never made; it lets the plan's dispatch compile the same in every build.
template <>
class executor<device_backend> {
 public:
  explicit executor(device_context&) {}
  void add_read(const void*, const raw_view&, std::size_t) {}
  void add_write(const void*, const raw_view&, std::size_t) {}
  void begin() {}
  void end() {}
  template <int N, class Stmt>
  void run(const std::string&, const Stmt&, const index_t*, const index_t*, bool) {}
  template <int N, class Map, class Separate>
  void run_map(const std::string&, const Map&, const index_t*, const index_t*, Separate&&) {}
};
inline void device_copy_box(int, std::size_t, void*, const index_t*, const index_t*, const void*,
                            const index_t*, const index_t*, const index_t*, const index_t*) {}
}  // namespace workpart::detail

#endif
