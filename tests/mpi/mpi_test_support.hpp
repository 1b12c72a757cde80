#pragma once
/// \file mpi_test_support.hpp
/// Helpers shared by the MPI tests of wp::distribute.
///
/// Every rank of a test must reach the same assertions in the same order: a REQUIRE that
/// fails on one rank only would leave the others waiting in the next collective. So results
/// are judged where they live (root's global arrays on root, a rank's own figures on that
/// rank), the verdicts are collected on every rank (broadcast from root, or gathered from
/// all), and only then asserted, identically everywhere.
///
/// The expected tilings and byte counts are derived here independently of the library:
/// block sizes are counted by dealing the extent out one element at a time.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>

#include "../error_text.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace mpitest {

/// MPI is initialised by tests/mpi_main.cpp; a context then only wraps the world communicator.
inline int g_argc = 0;
inline char** g_argv = nullptr;

/// Block b of g over [lo, hi) under the documented rule (g balanced blocks, the first
/// n % g one larger), counted the slow way: deal the elements out one at a time to the
/// blocks that still have room, so no formula is shared with the library.
struct block {
  index_t start = 0, size = 0;
  index_t end() const { return start + size; }
};
inline block block_of(index_t lo, index_t hi, index_t g, index_t b) {
  const index_t n = std::max<index_t>(0, hi - lo);
  std::vector<index_t> sizes(static_cast<std::size_t>(g), 0);
  // the first n % g blocks get one more: deal n elements round-robin
  for (index_t e = 0; e < n; ++e) ++sizes[static_cast<std::size_t>(e % g)];
  block r;
  r.start = lo;
  for (index_t c = 0; c < b; ++c) r.start += sizes[static_cast<std::size_t>(c)];
  r.size = sizes[static_cast<std::size_t>(b)];
  return r;
}
inline block block_of(index_t n, index_t g, index_t b) { return block_of(0, n, g, b); }

/// Grid coordinates of rank r (row-major, last dimension fastest); empty if r idles.
inline std::vector<index_t> coords_of(const std::vector<index_t>& g, int r) {
  index_t prod = 1;
  for (index_t x : g) prod *= x;
  if (r >= prod) return {};
  std::vector<index_t> c(g.size());
  index_t rest = r;
  for (int d = int(g.size()) - 1; d >= 0; --d) {
    c[d] = rest % g[d];
    rest /= g[d];
  }
  return c;
}

/// Expected bytes per rank and phase (indexed by rank).
struct bytes_by_rank {
  std::vector<index_t> scatter_sent, scatter_recv, gather_sent, gather_recv;
  explicit bytes_by_rank(int p)
      : scatter_sent(p, 0), scatter_recv(p, 0), gather_sent(p, 0), gather_recv(p, 0) {}
  /// n bytes move from rank `from` to rank `to` in the scatter phase (nothing if from == to).
  void scatter(int from, int to, index_t n) {
    if (from == to || n == 0) return;
    scatter_sent[from] += n;
    scatter_recv[to] += n;
  }
  void gather(int from, int to, index_t n) {
    if (from == to || n == 0) return;
    gather_sent[from] += n;
    gather_recv[to] += n;
  }
  index_t total_scatter() const {
    index_t t = 0;
    for (index_t b : scatter_recv) t += b;
    return t;
  }
  index_t total_gather() const {
    index_t t = 0;
    for (index_t b : gather_recv) t += b;
    return t;
  }
};

/// Every rank's text (empty: no problem), joined in rank order; the same on every rank.
inline std::string all_problems(const boost::mpi::communicator& c, const std::string& mine) {
  std::vector<std::string> all;
  boost::mpi::all_gather(c, mine, all);
  std::string s;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty()) s += "rank " + std::to_string(r) + ": " + all[r] + "\n";
  return s;
}

/// Root's value of v, on every rank.
template <class T>
T from_root(const boost::mpi::communicator& c, T v) {
  boost::mpi::broadcast(c, v, 0);
  return v;
}

/// The plan's predicted bytes (for every rank, computed alike on every rank), and this rank's
/// measured bytes, against the expected figures; problems of this rank as text.
template <class Plan>
std::string bytes_problems(const Plan& plan, const bytes_by_rank& want, int me) {
  std::ostringstream os;
  const int P = int(want.scatter_recv.size());
  for (int r = 0; r < P; ++r) {
    auto chk = [&](const char* what, index_t got, index_t exp) {
      if (got != exp)
        os << "predicted " << what << " of rank " << r << " is " << got << ", expected " << exp
           << "; ";
    };
    chk("scatter sent", plan.predicted_bytes(r, true, true), want.scatter_sent[r]);
    chk("scatter received", plan.predicted_bytes(r, true, false), want.scatter_recv[r]);
    chk("gather sent", plan.predicted_bytes(r, false, true), want.gather_sent[r]);
    chk("gather received", plan.predicted_bytes(r, false, false), want.gather_recv[r]);
  }
  if (plan.predicted_total(true) != want.total_scatter())
    os << "predicted_total(scatter) " << plan.predicted_total(true)
       << " != " << want.total_scatter() << "; ";
  if (plan.predicted_total(false) != want.total_gather())
    os << "predicted_total(gather) " << plan.predicted_total(false) << " != " << want.total_gather()
       << "; ";
  const auto& s = plan.stats();
  auto chk2 = [&](const char* what, index_t got, index_t exp) {
    if (got != exp) os << what << " " << got << " != expected " << exp << "; ";
  };
  chk2("stats().predicted_scatter_sent", s.predicted_scatter_sent, want.scatter_sent[me]);
  chk2("stats().predicted_scatter_received", s.predicted_scatter_received, want.scatter_recv[me]);
  chk2("stats().predicted_gather_sent", s.predicted_gather_sent, want.gather_sent[me]);
  chk2("stats().predicted_gather_received", s.predicted_gather_received, want.gather_recv[me]);
  return os.str();
}

/// This rank's measured bytes against its predicted ones, after `runs` scatter and gather
/// phases (the prediction is per phase).
template <class Plan>
std::string measured_problems(const Plan& plan, index_t scatters = 1, index_t gathers = 1) {
  std::ostringstream os;
  const auto& s = plan.stats();
  auto chk = [&](const char* what, index_t got, index_t exp) {
    if (got != exp) os << "measured " << what << " " << got << " != predicted " << exp << "; ";
  };
  chk("scatter sent", s.scatter.bytes_sent, scatters * s.predicted_scatter_sent);
  chk("scatter received", s.scatter.bytes_received, scatters * s.predicted_scatter_received);
  chk("gather sent", s.gather.bytes_sent, gathers * s.predicted_gather_sent);
  chk("gather received", s.gather.bytes_received, gathers * s.predicted_gather_received);
  return os.str();
}

/// Whether a list of collective names holds `name`.
inline bool has(const std::vector<std::string>& v, const std::string& name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}
inline std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

/// Fills root's buffer of a rank-1 or rank-2 array from f(global coordinates).
template <class T, class F>
void fill1(wp::array<T, 1>& a, F f) {
  if (T* p = a.data())
    for (index_t x = 0; x < a.extent(0); ++x) p[x] = static_cast<T>(f(x));
}
template <class T, class F>
void fill2(wp::array<T, 2>& a, F f) {
  if (T* p = a.data())
    for (index_t x = 0; x < a.extent(0); ++x)
      for (index_t y = 0; y < a.extent(1); ++y) p[x * a.extent(1) + y] = static_cast<T>(f(x, y));
}
template <class T, class F>
void fill3(wp::array<T, 3>& a, F f) {
  if (T* p = a.data())
    for (index_t x = 0; x < a.extent(0); ++x)
      for (index_t y = 0; y < a.extent(1); ++y)
        for (index_t z = 0; z < a.extent(2); ++z)
          p[(x * a.extent(1) + y) * a.extent(2) + z] = static_cast<T>(f(x, y, z));
}

/// Root compares its global data of `a` (flattened, row-major) with `want`; every rank gets
/// root's verdict (empty: equal within tol, relative to max(1, |want|)).
template <class T, int N>
std::string compare_on_root(const boost::mpi::communicator& c, wp::array<T, N>& a,
                            const std::vector<double>& want, double tol = 0.0) {
  std::string msg;
  if (c.rank() == 0) {
    const T* p = a.data();
    if (static_cast<index_t>(want.size()) != a.size()) {
      msg = "size " + std::to_string(a.size()) + " != expected " + std::to_string(want.size());
    } else {
      index_t bad = 0;
      std::ostringstream os;
      for (index_t e = 0; e < a.size(); ++e) {
        const double g = static_cast<double>(p[e]);
        const double err = std::abs(g - want[e]) / std::max(1.0, std::abs(want[e]));
        if (!(err <= tol)) {
          if (bad < 3) os << "[" << e << "] = " << g << " expected " << want[e] << "; ";
          ++bad;
        }
      }
      if (bad) msg = "'" + a.name() + "': " + std::to_string(bad) + " wrong elements: " + os.str();
    }
  }
  return from_root(c, msg);
}

/// Every redistribution's measured bytes (the gather's aside) equal its prediction after
/// `executes` executes: the first one's, then the later ones'. Problems as text.
template <class Plan>
std::string measured_vs_predicted(const Plan& plan, int executes) {
  std::ostringstream os;
  for (const auto& r : plan.stats().redistributions) {
    if (r.to == "root") continue;
    const index_t ws = r.predicted_first_sent + (executes - 1) * r.predicted_sent;
    const index_t wr = r.predicted_first_received + (executes - 1) * r.predicted_received;
    if (r.measured.bytes_sent != ws || r.measured.bytes_received != wr)
      os << r.array << " -> " << r.to << " (" << r.kind << "): measured " << r.measured.bytes_sent
         << "/" << r.measured.bytes_received << " predicted " << ws << "/" << wr << "; ";
  }
  return os.str();
}

/// Root's explain() text against every rank's: problems as text, the same on every rank.
template <class Plan>
std::string explain_differs(const boost::mpi::communicator& c, const Plan& plan) {
  const std::string root = from_root(c, plan.explain());
  return all_problems(c, root == plan.explain() ? "" : "explain() differs from root's");
}

using ::what_of;  // tests/error_text.hpp

/// Every rank's message equals root's: problems as text, the same on every rank.
inline std::string same_everywhere(const boost::mpi::communicator& c, const std::string& msg) {
  const std::string root = from_root(c, msg);
  return all_problems(c, msg == root ? "" : "message differs from root's: " + msg);
}

/// A small working plan, out(i) = x(i) + 1 over all ranks: "" if its result and its measured
/// bytes are right. Run after errors, it shows that no rank was left inside a collective (a
/// rank left behind would hang it, and the test would time out rather than pass).
inline std::string a_plan_still_works(const wp::context& ctx) {
  auto [i] = wp::indices<1>();
  constexpr index_t n = 11;
  wp::array<double, 1> x("x", {n}), out("out", {n});
  fill1(x, [](index_t a) { return double(a) * 2.0; });
  auto plan = wp::distribute(wp::map("after", wp::space(n), out(i) = x(i) + 1.0),
                             wp::grid_shape{index_t(ctx.size())}, ctx);
  plan.run();
  std::vector<double> want(n);
  for (index_t a = 0; a < n; ++a) want[a] = double(a) * 2.0 + 1.0;
  return compare_on_root(ctx.comm(), out, want) + all_problems(ctx.comm(), measured_problems(plan));
}

/// This process's virtual memory size in bytes (/proc/self/statm), 0 where unknown.
inline std::size_t vm_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0;
  const int got = std::fscanf(f, "%lu", &pages);
  std::fclose(f);
  return got == 1 ? std::size_t(pages) * std::size_t(::sysconf(_SC_PAGESIZE)) : 0;
}
/// Limits this process's address space to its current size plus `margin` (0: no limit), for
/// the out-of-memory tests (meaningless under AddressSanitizer, which reserves its shadow
/// memory up front).
inline void limit_memory(std::size_t margin) {
  rlimit r{};
  ::getrlimit(RLIMIT_AS, &r);
  r.rlim_cur = margin ? rlim_t(vm_bytes() + margin) : r.rlim_max;
  ::setrlimit(RLIMIT_AS, &r);
}

/// Whether the out-of-memory tests can run here (not under AddressSanitizer, whose shadow
/// memory RLIMIT_AS cannot bound; /proc/self/statm readable; at least 2 ranks); where not,
/// root prints why and every rank gets true alike.
inline bool skip_memory_limit_test(const wp::context& ctx) {
  const char* why = nullptr;
#if defined(__SANITIZE_ADDRESS__)
  why =
      "RLIMIT_AS cannot bound a process under AddressSanitizer, whose shadow memory is "
      "reserved up front";
#else
  if (vm_bytes() == 0 || ctx.size() < 2) why = "needs /proc/self/statm and 2 ranks";
#endif
  if (why && ctx.rank() == 0) std::printf("SKIPPED (this case): %s\n", why);
  return why != nullptr;
}

}  // namespace mpitest
