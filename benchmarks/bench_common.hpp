// Helpers the benchmarks share: medians, the order variants run in, argument parsing, the
// set-up lines they print first. Not part of the library (never installed).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace workpart_bench {

/// Prints the threads OpenMP will use and what OMP_NUM_THREADS asked for.
inline void print_threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
#if defined(_OPENMP)
  std::printf("  OMP_NUM_THREADS=%s -> omp_get_max_threads() = %d\n", env ? env : "(unset)",
              omp_get_max_threads());
#else
  std::printf("  built without OpenMP (OMP_NUM_THREADS=%s ignored)\n", env ? env : "(unset)");
#endif
}

/// Prints the load average at start (the machine may be shared: say how busy) and returns
/// its one-minute figure (-1 where /proc/loadavg cannot be read).
inline double print_load_average() {
  double load = -1;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    char buf[128] = {};
    if (std::fgets(buf, sizeof buf, f)) {
      std::printf("  load average at start: %s", buf);
      load = std::atof(buf);
    }
    std::fclose(f);
  }
  return load;
}

/// Seconds since t0 on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The median of v (0 when empty): figures are medians, never means, on a noisy machine.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// The order of the variants in timed round r: a balanced Latin square (Williams design), so
/// that over the rounds every variant runs right after every other one equally often and no
/// variant always follows the same one. (A plain rotation ABCD, BCDA, ... keeps the cyclic
/// neighbours: D would always precede A.)
inline std::vector<std::size_t> round_order(int r, std::size_t v) {
  std::vector<std::size_t> base(v);
  for (std::size_t x = 0, lo = 1, hi = v - 1; x < v; ++x)
    base[x] = x == 0 ? 0 : (x % 2 ? lo++ : hi--);
  const std::size_t k = std::size_t(r) % (2 * v);
  std::vector<std::size_t> order(v);
  for (std::size_t x = 0; x < v; ++x) order[x] = (base[x] + k) % v;
  if (k >= v) std::reverse(order.begin(), order.end());  // the mirror square (odd v needs it)
  return order;
}

/// The text after `key` when `arg` starts with it ("--reps=" of "--reps=5" gives "5"), else null.
inline const char* option_value(const std::string& arg, const char* key) {
  const std::size_t len = std::strlen(key);
  return arg.compare(0, len, key) == 0 ? arg.c_str() + len : nullptr;
}

/// A comma-separated list of positive sizes ("512,1024"); empty when any item is not positive
/// or the list holds none, so that the caller prints its usage.
inline std::vector<std::int64_t> parse_sizes(const std::string& list) {
  std::vector<std::int64_t> sizes;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t end = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, end - pos);
    if (!item.empty()) {
      const long long n = std::atoll(item.c_str());
      if (n <= 0) return {};
      sizes.push_back(n);
    }
    pos = end + 1;
  }
  return sizes;
}

/// The rows a benchmark prints, also written as CSV (`--csv FILE`): a header line of column
/// names, then one line per row. Cells are written as given; a cell holding a comma, a quote or
/// a line break is quoted (RFC 4180). Closed (and flushed) by the destructor; a writer made
/// with an empty path writes nothing, so callers need not test whether --csv was given.
class csv_writer {
 public:
  csv_writer() = default;
  csv_writer(const std::string& path, std::initializer_list<const char*> columns)
      : columns_(columns.size()) {
    if (path.empty()) return;
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) throw std::runtime_error("cannot write the CSV file '" + path + "'");
    std::vector<std::string> head(columns.begin(), columns.end());
    write_line(head);
  }
  csv_writer(const csv_writer&) = delete;
  csv_writer& operator=(const csv_writer&) = delete;
  csv_writer(csv_writer&& o) noexcept : file_(o.file_), columns_(o.columns_) { o.file_ = nullptr; }
  csv_writer& operator=(csv_writer&& o) noexcept {
    std::swap(file_, o.file_);
    columns_ = o.columns_;
    return *this;
  }
  ~csv_writer() {
    if (file_) std::fclose(file_);
  }

  bool active() const { return file_ != nullptr; }

  /// One row; it must have one cell per column.
  void row(const std::vector<std::string>& cells) {
    if (!file_) return;
    if (cells.size() != columns_) throw std::logic_error("csv_writer: a row of the wrong width");
    write_line(cells);
  }

  /// A number as a cell: integers exactly, others with 6 significant digits.
  template <class T>
  requires std::is_arithmetic_v<T>
  static std::string cell(T v) {
    if constexpr (std::is_integral_v<T>) {
      return std::to_string(v);
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", double(v));
      return buf;
    }
  }
  static std::string cell(std::string v) { return v; }
  static std::string cell(const char* v) { return v; }

 private:
  void write_line(const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string& v = cells[c];
      if (v.find_first_of(",\"\n\r") == std::string::npos) {
        std::fputs(v.c_str(), file_);
      } else {
        std::fputc('"', file_);
        for (char ch : v) {
          if (ch == '"') std::fputc('"', file_);
          std::fputc(ch, file_);
        }
        std::fputc('"', file_);
      }
      std::fputc(c + 1 < cells.size() ? ',' : '\n', file_);
    }
    std::fflush(file_);
  }

  std::FILE* file_ = nullptr;
  std::size_t columns_ = 0;
};

/// The value of a "--csv FILE" or "--csv=FILE" option at argv[a] (advancing a past FILE);
/// null when argv[a] is not that option.
inline const char* csv_option(int argc, char** argv, int& a) {
  const std::string s = argv[a];
  if (s == "--csv" && a + 1 < argc) return argv[++a];
  if (s.compare(0, 6, "--csv=") == 0) return argv[a] + 6;
  return nullptr;
}

}  // namespace workpart_bench
