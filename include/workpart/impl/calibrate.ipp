#pragma once
/// \file calibrate.ipp
/// machine_model::calibrate (calibrate.hpp): included by calibrate.hpp (header-only, the
/// default), or instantiated once into workpart::compiled (WORKPART_SEPARATE_COMPILATION; the
/// header then declares the instance extern). The measuring maps' and kernels' types depend on
/// the template parameter (`measured_t`), so that nothing here is instantiated in a translation
/// unit that does not call calibrate: the umbrella header's compile time stays as it was.

#include <mpi.h>

#include <algorithm>
#include <boost/mpi/collectives/broadcast.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "../exec/cpu/gemm.hpp"

namespace workpart {

namespace detail {

/// double and float, as types that depend on Ctx (what the calibration measures in).
template <class Ctx>
using measured_t = std::conditional_t<sizeof(Ctx) != 0, double, float>;
template <class Ctx>
using measured_float_t = std::conditional_t<sizeof(Ctx) != 0, float, double>;

inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Seconds of f(), the median of `reps` runs.
template <class F>
double timed(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = MPI_Wtime();
    f();
    t.push_back(MPI_Wtime() - t0);
  }
  return std::max(1e-9, median_of(std::move(t)));
}

/// Seconds of one execute() of map `mp` on one rank (ctx: a one-rank context), the median
/// of 5, and what the model prices it by: its block's points, operations, slow functions and
/// rows (exp/local_kind.hpp, as the pricer counts them).
struct measured_map {
  double seconds = 0, points = 0, ops = 0, slow = 0, rows = 0, packed = 0;
};
template <class Ctx, class Map>
measured_map time_map_alone(const Ctx& one, const Map& mp) {
  schedule s;
  const grid_shape ones(std::vector<index_t>(std::size_t(Map::rank), 1));
  s.set(mp, ones);
  program p;  // forward only: nothing here is differentiated
  p.add(forward_only, mp);
  auto plan = distribute(p, s, one);
  plan.scatter();
  // warm: buffers, pages, and the core's clock (after the other ranks' idle wait, the first
  // milliseconds of a run measured the loop rate 2-3x low): 50 ms of executes, then the median
  const double warm_from = MPI_Wtime();
  do plan.execute();
  while (MPI_Wtime() - warm_from < 0.05);
  measured_map r;
  r.seconds = timed(7, [&] { plan.execute(); });
  std::vector<index_t> extents;
  r.points = 1;
  for (int d = 0; d < Map::rank; ++d) {
    extents.push_back(mp.iteration_space().extent(d));
    r.points *= double(extents.back());
  }
  const local_work w = local_work_of(mp);
  r.ops = r.points * w.ops;
  r.slow = r.points * w.slow;
  r.rows = block_rows(r.points, extents, ones, w.row_dim);
  r.packed = block_packed(w, extents, ones);
  return r;
}

/// The loop executor's rates for elements of type T, on maps it runs on this rank alone
/// (`one`: a one-rank context) over long rows (4096 to a row): + and * (y = a x + z), then exp,
/// its other operations and rows priced at `flops` and `row_seconds`.
template <class T>
struct long_rows {
  static constexpr index_t R = 256, L = 4096;
  array<T, 2> x{"x", {R, L}}, z{"z", {R, L}}, y{"y", {R, L}};
  long_rows() {
    for (auto* a : {&x, &z, &y})
      a->init([](const std::array<index_t, 2>& g) { return T(0.001) * T(g[1] % 1000); });
  }
};
template <class T, class Ctx>
double measure_loop_flops(const Ctx& one) {
  long_rows<T> a;
  auto [i, j] = indices<2>();
  const measured_map axpy =
      time_map_alone(one, map("axpy", space(a.R, a.L), a.y(i, j) = a.x(i, j) * T(0.5) + a.z(i, j)));
  return axpy.ops / axpy.seconds;
}
/// The rate of loops whose rows have no vector form: y = a x + z with x a padded read (checked
/// point by point), over the same rows.
template <class T, class Ctx>
double measure_scalar_flops(const Ctx& one) {
  long_rows<T> a;
  auto [i, j] = indices<2>();
  const measured_map m = time_map_alone(
      one,
      map("scalar", space(a.R, a.L), a.y(i, j) = padded(a.x, T(0))(i, j + 1) * T(0.5) + a.z(i, j)));
  return m.ops / m.seconds;
}
template <class T, class Ctx>
double measure_slow_flops(const Ctx& one, double flops, double row_seconds) {
  long_rows<T> a;
  auto [i, j] = indices<2>();
  const measured_map ex =
      time_map_alone(one, map("exp", space(a.R, a.L), a.y(i, j) = exp(a.x(i, j))));
  const double fast = (ex.ops - ex.slow) / flops + ex.rows * row_seconds;
  return ex.slow / std::max(ex.seconds - fast, 1e-3 * ex.seconds);
}

/// Seconds per row the loop executor spends beyond its points' operations at `flops`, in
/// elements of type T: pooling windows' rows (a 3 x 3 max over a padded image, a 2 x 2 mean:
/// rows of 3 and 2 points; the median of the two).
template <class T, class Ctx>
double measure_row_seconds(const Ctx& one, double flops) {
  const index_t N = 4, C = 16, H = 64;
  array<T, 4> img("img", {N, C, H, H}), pool("pool", {N, C, H / 2, H / 2});
  for (auto* a : {&img, &pool})
    a->init([](const std::array<index_t, 4>& g) { return T(0.01) * T((g[2] * 7 + g[3]) % 100); });
  auto [n, c, h, w, r, q] = indices<6>();
  const measured_map windows[] = {
      time_map_alone(one, map("max3x3", space(N, C, H / 2, H / 2, 3, 3),
                              max_into(pool(n, c, h, w),
                                       padded(img, T(-1e30))(n, c, 2 * h + r - 1, 2 * w + q - 1)))),
      time_map_alone(one, map("mean2x2", space(N, C, H / 2, H / 2, 2, 2),
                              pool(n, c, h, w) += img(n, c, 2 * h + r, 2 * w + q) * T(0.25)))};
  std::vector<double> per_row;
  for (const auto& mm : windows)
    if (mm.rows > 0) per_row.push_back(std::max(0.0, mm.seconds - mm.ops / flops) / mm.rows);
  return per_row.empty() ? 0 : median_of(per_row);
}

/// The executor's own GEMM (gemm_strided) for elements of type T: C += A B, n x n at
/// n = 16, 64, 256, 2 n^3 operations per call (what ops_per_point counts).
template <class T>
std::vector<machine_model::rate_point> measure_gemm() {
  std::vector<machine_model::rate_point> table;
  for (index_t n : {16, 64, 256}) {
    std::vector<T> a(std::size_t(n * n), T(0.5)), b(a), c(a.size(), T(0));
    const int calls = int(std::max<index_t>(1, (index_t(1) << 24) / (n * n * n)));
    const double s = timed(5, [&] {
      for (int k = 0; k < calls; ++k)
        gemm_strided<T>(n, n, n, T(1), a.data(), n, 1, b.data(), n, 1, c.data(), n, 1);
    });
    const double ops = 2.0 * double(n) * double(n) * double(n);
    table.push_back({ops, ops * calls / s});
  }
  return table;
}

/// Bytes per second an affine contraction copies besides its GEMMs: a convolution (8 images of
/// 12 channels, 15 x 15, padded by 2, 32 filters of 5 x 5: its input packed, im2col, 2 MB),
/// its seconds beyond its GEMM's at the model's rate for them.
template <class T, class Ctx>
double measure_packing(const Ctx& one, const machine_model& m) {
  const index_t N = 8, C = 12, H = 15, K = 32, R = 5, pad = 2;
  array<T, 4> x("x", {N, C, H, H}), f("f", {K, C, R, R}), y("y", {N, K, H, H});
  for (auto* a : {&x, &f, &y})
    a->init([](const std::array<index_t, 4>& g) { return T(0.01) * T((g[2] * 7 + g[3]) % 100); });
  auto [n, k, i, j, c, r, s] = indices<7>();
  const measured_map conv = time_map_alone(
      one, map("conv", space(N, K, H, H, C, R, R),
               y(n, k, i, j) += padded(x, T(0))(n, c, i + r - pad, j + s - pad) * f(k, c, r, s)));
  const double gemm = conv.ops / m.gemm_rate(conv.ops, double(sizeof(T)));
  const double bytes = conv.packed * double(sizeof(T));
  return bytes > 0 ? bytes / std::max(conv.seconds - gemm, 1e-3 * conv.seconds) : 0;
}

/// The local rates, measured on this rank: the loop executor's (flops, row_seconds,
/// slow_flops) and the GEMM table, for 8-byte and for 4-byte elements, and stream.
template <class Ctx>
void measure_local(machine_model& m) {
  using D = measured_t<Ctx>;
  using F = measured_float_t<Ctx>;
  boost::mpi::communicator self(MPI_COMM_SELF, boost::mpi::comm_duplicate);
  int argc = 0;
  char** argv = nullptr;
  const Ctx one(argc, argv, self);
  m.flops = measure_loop_flops<D>(one);
  m.row_seconds = measure_row_seconds<D>(one, m.flops);
  m.slow_flops = measure_slow_flops<D>(one, m.flops, m.row_seconds);
  m.float_flops = measure_loop_flops<F>(one);
  m.float_slow_flops = measure_slow_flops<F>(one, m.float_flops, m.row_seconds);
  m.scalar_flops = measure_scalar_flops<D>(one);
  m.gemm = measure_gemm<D>();
  m.float_gemm = measure_gemm<F>();
  m.packing = measure_packing<D>(one, m);
  {  // streaming: z = x + y over 64 MiB arrays (past the caches), 24 bytes per element
    const std::size_t n = std::size_t(1) << 23;
    std::vector<double> x(n, 1.0), y(n, 2.0), z(n, 0.0);
    const double s = timed(5, [&] {
      for (std::size_t e = 0; e < n; ++e) z[e] = x[e] + y[e];
    });
    volatile double sink = z[n / 2];
    (void)sink;
    m.stream = 24.0 * double(n) / s;
  }
}

/// Waits at a barrier without spinning (a rank sharing a core with the one measuring).
inline void quiet_barrier(const boost::mpi::communicator& comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  int done = 0;
  while (MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

/// Seconds per map of a program of one-point maps per rank (collective).
template <class Ctx>
double measure_map_seconds(const Ctx& ctx) {
  using T = measured_t<Ctx>;
  constexpr int maps = 8;
  const index_t n = ctx.size();
  array<T, 1> x("x", {n});
  x.init([](std::array<index_t, 1>) { return T(1); });  // generated in place: no scatter
  std::vector<std::unique_ptr<array<T, 1>>> ys;         // (arrays do not move)
  for (int k = 0; k < maps; ++k)
    ys.push_back(std::make_unique<array<T, 1>>("y" + std::to_string(k),
                                               typename array<T, 1>::shape_type{n}));
  auto [i] = indices<1>();
  program p;  // forward only: nothing here is differentiated
  schedule s;
  for (int k = 0; k < maps; ++k) {
    auto m = map("calibrate" + std::to_string(k), space(n), (*ys[std::size_t(k)])(i) = x(i) + T(1));
    s.set(m, grid_shape{ctx.size()});
    p.add(forward_only, m);
  }
  auto plan = distribute(p, s, ctx);
  plan.scatter();
  plan.execute();  // (the first moves nothing more, but warms the buffers)
  std::vector<double> t;
  for (int r = 0; r < 21; ++r) {
    ctx.comm().barrier();
    const double t0 = MPI_Wtime();
    plan.execute();
    t.push_back(MPI_Wtime() - t0);
  }
  return median_of(std::move(t)) / maps;
}

/// Ranks on this node over its hardware threads, at least 1.
inline double measure_core_share(const context& ctx) {
  MPI_Comm node;
  MPI_Comm_split_type(ctx.comm(), MPI_COMM_TYPE_SHARED, ctx.rank(), MPI_INFO_NULL, &node);
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  MPI_Comm_free(&node);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1.0, double(ranks) / double(threads));
}

}  // namespace detail

template <class Context>
machine_model machine_model::calibrate(const Context& ctx) {
  static_assert(std::is_same_v<Context, context>,
                "wp::machine_model::calibrate(ctx) takes the wp::context of the ranks to measure");
  const auto& comm = ctx.comm();
  machine_model m;
  // rank 0 alone measures the local rates; the others wait without taking its core
  if (comm.rank() == 0) detail::measure_local<Context>(m);
  detail::quiet_barrier(comm);
  m.map_seconds = detail::measure_map_seconds(ctx);
  m.core_share = detail::measure_core_share(ctx);
  if (comm.size() >= 2) {
    auto pingpong = [&](std::size_t bytes) {
      std::vector<char> buf(bytes, 1);
      std::vector<double> t;
      for (int rep = 0; rep < 7; ++rep) {
        comm.barrier();
        const double t0 = MPI_Wtime();
        if (comm.rank() == 0) {
          MPI_Send(buf.data(), int(bytes), MPI_BYTE, 1, 77, comm);
          MPI_Recv(buf.data(), int(bytes), MPI_BYTE, 1, 77, comm, MPI_STATUS_IGNORE);
        } else if (comm.rank() == 1) {
          MPI_Recv(buf.data(), int(bytes), MPI_BYTE, 0, 77, comm, MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), int(bytes), MPI_BYTE, 0, 77, comm);
        }
        t.push_back((MPI_Wtime() - t0) / 2);
      }
      return detail::median_of(std::move(t));
    };
    const double small = pingpong(1), big_bytes = double(4 << 20), big = pingpong(4 << 20);
    m.alpha = std::max(1e-8, small);
    m.beta = std::max(1e-13, (big - small) / big_bytes);
  }
  // rank 0's figures everywhere
  // (the scalars, then the GEMM tables' points: double's, float's)
  std::vector<double> v = {m.flops, m.alpha, m.beta, m.stream, m.map_seconds, m.core_share};
  for (double x :
       {m.row_seconds, m.slow_flops, m.float_flops, m.float_slow_flops, m.packing, m.scalar_flops})
    v.push_back(x);
  v.push_back(double(m.gemm.size()));
  for (const auto* table : {&m.gemm, &m.float_gemm})
    for (const auto& p : *table) v.push_back(p.ops), v.push_back(p.rate);
  int count = int(v.size());
  boost::mpi::broadcast(comm, count, 0);
  v.resize(std::size_t(count));
  boost::mpi::broadcast(comm, v.data(), count, 0);
  m.flops = v[0], m.alpha = v[1], m.beta = v[2], m.stream = v[3], m.map_seconds = v[4];
  m.core_share = v[5], m.row_seconds = v[6], m.slow_flops = v[7];
  m.float_flops = v[8], m.float_slow_flops = v[9], m.packing = v[10], m.scalar_flops = v[11];
  const std::size_t wide = std::size_t(v[12]), first = 13;
  m.gemm.clear();
  m.float_gemm.clear();
  for (std::size_t k = first; k + 1 < v.size(); k += 2)
    ((k - first) / 2 < wide ? m.gemm : m.float_gemm).push_back({v[k], v[k + 1]});
  return m;
}

}  // namespace workpart
