// Lesson 10: sparse matrix times vector (CSR), rows split over the ranks, with data-dependent
// inner ranges.
//
//   mpirun -np 4 ./10_spmv [rows cols seed]        (default 200000 200000 1, float64)
//
//   y(i) = sum(range(jj, row(i), row(i + 1)), val(jj) * x(col(jj)))
// The matrix is generated with power-law row lengths (most rows short or empty, a few long:
// the rows' work is uneven). On grid (P): each rank runs a block of rows; it reads row(i) and
// row(i + 1), so its block of `row` overlaps its neighbour's by one element; the inner range
// reads val and col between row pointers that no type can bound, so root inspects them when
// the plan is made (explain() lists what it found) and each rank receives exactly its rows'
// entries of val and col — not the whole arrays; x is read through col (indirect) and is sent
// whole. Every rank prints its bytes beside the prediction and beside the count made here
// from the row pointers; root checks y against a plain loop.
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/operations.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <vector>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const std::int64_t rows = argc > 3 ? std::atoll(argv[1]) : 200000;
  const std::int64_t cols = argc > 3 ? std::atoll(argv[2]) : 200000;
  const unsigned seed = argc > 3 ? unsigned(std::atoi(argv[3])) : 1u;
  const std::int64_t P = ctx.size();

  // The matrix, generated on every rank alike (the ranks need only the row pointers, to print
  // what they expect; the arrays hold data on root only).
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int32_t> cidx;
  std::vector<double> v;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::int64_t a = 0; a < rows; ++a) {
    const double len =
        std::floor(2.0 / std::pow(std::max(u(rng), 1e-4), 0.8)) - 2.0;  // Pareto, 0 or more
    const std::int64_t n = std::min<std::int64_t>(cols, std::int64_t(len));
    for (std::int64_t q = 0; q < n; ++q) {
      cidx.push_back(std::int32_t(rng() % std::uint64_t(cols)));
      v.push_back(double(std::int64_t(rng() % 17) - 8) / 8.0);
    }
    ptr.push_back(std::int64_t(cidx.size()));
  }
  const std::int64_t nnz = std::max<std::int64_t>(1, std::int64_t(cidx.size()));

  wp::array<std::int64_t, 1> row("row", {rows + 1});
  wp::array<std::int32_t, 1> col("col", {nnz});
  wp::array<double, 1> val("val", {nnz}), x("x", {cols}), y("y", {rows});
  auto xf = [](std::int64_t c) { return double(c % 13) * 0.25 - 1.0; };
  if (ctx.is_root()) {
    std::copy(ptr.begin(), ptr.end(), row.data());
    std::copy(cidx.begin(), cidx.end(), col.data());
    std::copy(v.begin(), v.end(), val.data());
    for (std::int64_t c = 0; c < cols; ++c) x.data()[c] = xf(c);
    std::printf(
        "CSR %lld x %lld, %lld entries; longest row %lld, empty rows %lld\n", (long long)rows,
        (long long)cols, (long long)cidx.size(),
        [&] {
          std::int64_t m = 0;
          for (std::int64_t a = 0; a < rows; ++a) m = std::max(m, ptr[a + 1] - ptr[a]);
          return (long long)m;
        }(),
        [&] {
          long long e = 0;
          for (std::int64_t a = 0; a < rows; ++a) e += ptr[a + 1] == ptr[a];
          return e;
        }());
  }

  auto [i, jj] = wp::indices<2>();
  auto spmv = wp::map("spmv", wp::space(rows),
                      y(i) = wp::sum(wp::range(jj, row(i), row(i + 1)), val(jj) * x(col(jj))));
  auto plan = wp::distribute(spmv, wp::grid_shape{P}, ctx);
  if (ctx.is_root()) std::cout << plan.explain() << std::flush;
  plan.run();

  // Per rank: the bytes received in the scatter against the prediction, and against the count
  // made here: rows + 1 row pointers, the entries of its rows (4 + 8 bytes each), x whole.
  const auto st = plan.stats();
  int differs = 0;
  for (int r = 0; r < ctx.size(); ++r) {
    if (r == ctx.rank()) {
      const std::int64_t base = rows / P, extra = rows % P;
      const std::int64_t start = r * base + std::min<std::int64_t>(r, extra);
      const std::int64_t size = base + (r < extra ? 1 : 0);
      const std::int64_t entries = ptr[std::size_t(start + size)] - ptr[std::size_t(start)];
      const std::int64_t by_hand =
          r == 0 || size == 0 ? 0 : (size + 1) * 8 + entries * (4 + 8) + cols * 8;
      const bool ok = std::int64_t(st.scatter.bytes_received) == st.predicted_scatter_received &&
                      (P == 1 || std::int64_t(st.scatter.bytes_received) == by_hand);
      differs |= ok ? 0 : 1;
      std::printf(
          "rank %d: rows [%lld, %lld), entries [%lld, %lld) of %lld; received %lld B, predicted "
          "%lld B, "
          "counted from the row pointers %lld B%s\n",
          r, (long long)start, (long long)(start + size), (long long)ptr[std::size_t(start)],
          (long long)ptr[std::size_t(start + size)], (long long)cidx.size(),
          (long long)st.scatter.bytes_received, (long long)st.predicted_scatter_received,
          (long long)by_hand, ok ? "" : "  DIFFERS");
    }
    std::fflush(stdout);
    ctx.comm().barrier();
  }
  int status = boost::mpi::all_reduce(ctx.comm(), differs, boost::mpi::maximum<int>());

  if (ctx.is_root()) {
    double worst = 0;
    for (std::int64_t a = 0; a < rows; ++a) {
      double s = 0;
      for (std::int64_t q = ptr[std::size_t(a)]; q < ptr[std::size_t(a + 1)]; ++q)
        s += v[std::size_t(q)] * xf(cidx[std::size_t(q)]);
      worst = std::max(worst, std::abs(s - y.data()[a]));
    }
    const bool ok = worst < 1e-9;
    std::printf("y on grid (%lld) against a plain loop: largest difference %.3g -> %s\n",
                (long long)P, worst, ok ? "ok" : "FAILED");
    status |= ok ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
