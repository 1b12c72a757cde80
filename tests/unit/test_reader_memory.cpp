// The readers' memory (io/file_bytes.hpp, io/json_scanner.hpp) under an address-space limit
// (RLIMIT_AS, set in a forked child per case, so that nothing else runs under it): a gzip'd
// table padded with hundreds of MB of whitespace reads in the scanner's window, equal to the
// table unpadded; a file whose parsed values alone exceed the limit is a table_error naming the
// file, never a bare std::bad_alloc. Built without sanitizers only (NOT_SANITIZED):
// AddressSanitizer reserves its shadow memory up front, which RLIMIT_AS cannot bound.

#include <catch2/catch.hpp>

#include <workpart/io/program_reader.hpp>
#include <workpart/io/table_reader.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
#include <zlib.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define WORKPART_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WORKPART_TEST_ASAN 1
#endif
#endif

namespace wp = workpart;
using Catch::Contains;

namespace {

constexpr std::size_t MiB = std::size_t(1) << 20;
// what a case may allocate beyond what the process has mapped when it starts: well below the
// inflated sizes below, well above the scanner's window and zlib's state
constexpr std::size_t extra = 64 * MiB;

/// This process's address space (VmSize), bytes.
std::size_t address_space() {
  std::ifstream f("/proc/self/statm");
  std::size_t pages = 0;
  f >> pages;
  return pages * std::size_t(::sysconf(_SC_PAGESIZE));
}

/// What f() returns in a child process whose address space may grow by `extra` bytes at most:
/// "ok: " and f's result, or the exception it throws as "wp::error: ..." / "exception: ...".
std::string under_limit(const std::function<std::string()>& f) {
  int fd[2];
  REQUIRE(::pipe(fd) == 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fd[0]);
    std::string out;
    try {
      rlimit r{};
      r.rlim_cur = r.rlim_max = address_space() + extra;
      out = ::setrlimit(RLIMIT_AS, &r) == 0 ? "ok: " + f() : "setrlimit failed";
    } catch (const wp::error& e) {
      out = std::string("wp::error: ") + e.what();
    } catch (const std::exception& e) {
      out = std::string("exception: ") + e.what();
    }
    for (std::size_t at = 0; at < out.size();) {
      const ssize_t n = ::write(fd[1], out.data() + at, out.size() - at);
      if (n <= 0) break;
      at += std::size_t(n);
    }
    ::_exit(0);
  }
  ::close(fd[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd[0], buf, sizeof buf)) > 0) out.append(buf, std::size_t(n));
  ::close(fd[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("the child's status " << status);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  return out;
}

#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
/// Writes pieces to a gzip file: text, or `n` copies of a short pattern (`mode`: gzopen's,
/// "wb1R" for runs of one byte, which deflate fastest).
struct gz_writer {
  gzFile f;
  gz_writer(const std::string& path, const char* mode) : f(gzopen(path.c_str(), mode)) {
    REQUIRE(f);
  }
  ~gz_writer() { gzclose(f); }
  void text(const std::string& t) { REQUIRE(gzwrite(f, t.data(), unsigned(t.size())) > 0); }
  void repeat(const std::string& pattern, std::size_t n) {
    std::string block;
    for (std::size_t k = 0; k < (1 << 20) / pattern.size(); ++k) block += pattern;
    const std::size_t per = block.size() / pattern.size();
    for (; n >= per; n -= per) text(block);
    if (n > 0) text(block.substr(0, n * pattern.size()));
  }
};
#endif

}  // namespace

#if defined(WORKPART_TEST_ASAN)
TEST_CASE("reader memory: not under AddressSanitizer", "[optimize][tables][memory]") {
  WARN("skipped: RLIMIT_AS cannot bound AddressSanitizer's shadow memory");
}
#else

#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
TEST_CASE("reader memory: a table padded with whitespace past the limit reads (gzip)",
          "[optimize][tables][memory]") {
  // Inflated whole before, this file needed its 192 MiB of text in one buffer: a bare
  // std::bad_alloc under the limit. Streamed, whitespace passes through the window.
  wp::cost_graph g;
  g.add_vertex("a", {1, 2}, {{1, 1}, {2, 1}});
  g.add_vertex("b", {0.5, 0.25, 4});
  g.add_vertex("c", {3});
  g.add_edge(0, 1, {1, 2, 3, 4, 5, 6});
  g.add_edge(1, 2, {7, 8, 9});
  const std::string text = wp::write_cost_tables(g);
  const std::string gz = "test_reader_memory_padded.json.gz";
  const std::size_t run = 64 * MiB;
  {  // runs of blanks after the opening brace, between two vertices, and after the end
    gz_writer w(gz, "wb1R");
    const std::size_t mid = text.find("},\n") + 3;
    w.text(text.substr(0, 1));
    w.repeat(" ", run);
    w.text(text.substr(1, mid - 1));
    w.repeat("\n", run);
    w.text(text.substr(mid));
    w.repeat(" \t\r\n", run / 4);
  }
  INFO("address space " << address_space() << " bytes");
  REQUIRE(address_space() + extra < 3 * run);  // the limit is below the inflated size
  const std::string got =
      under_limit([&] { return wp::write_cost_tables(wp::read_cost_tables(gz)); });
  std::remove(gz.c_str());
  REQUIRE(got == "ok: " + text);
}

TEST_CASE("reader memory: a table's values past the limit: a sentence naming the file (gzip)",
          "[optimize][tables][memory]") {
  // A cost list of millions of zeros (8 bytes of values per two of text): the vector's growth
  // runs out of memory after about 4 million of them, at a byte offset the message gives.
  // (Inflated whole before, its 80 MB of text alone was a bare std::bad_alloc.)
  const std::string gz = "test_reader_memory_values.json.gz";
  {
    gz_writer w(gz, "wb1");
    w.text("{\"vertices\": [{\"name\": \"big\", \"cost\": [");
    w.repeat("0,", 40'000'000);
    w.text("0]}]}");
  }
  const std::string got = under_limit([&] {
    wp::read_cost_tables(gz);
    return std::string();
  });
  std::remove(gz.c_str());
  REQUIRE_THAT(got, Contains("wp::error: [workpart.table_error] " + gz + ": byte ") &&
                        Contains("out of memory while reading the cost tables"));
}
#endif

TEST_CASE("reader memory: a program's values past the limit: a sentence naming the file",
          "[optimize][tables][memory]") {
  // An array's shape of 8 million zeros: its text (16 MB) fits, what it holds does not.
  const std::string path = "test_reader_memory_program.json";
  {
    std::ofstream f(path, std::ios::binary);
    f << "{\"arrays\": [{\"name\": \"x\", \"shape\": [";
    std::string block;
    for (int k = 0; k < (1 << 19); ++k) block += "0,";
    for (int k = 0; k < 16; ++k) f << block;
    f << "0]}], \"maps\": []}";
  }
  const std::string got = under_limit([&] {
    wp::read_program_description(path);
    return std::string();
  });
  std::remove(path.c_str());
  REQUIRE_THAT(got, Contains("wp::error: [workpart.table_error] " + path + ": byte ") &&
                        Contains("out of memory while reading the program description"));
}
#endif
