// CTest tools.optimize_memory: workpart-optimize --tables under an address-space limit.
//
//   test_optimize_memory <path of workpart-optimize> <scratch folder>
//
// The tool runs with RLIMIT_AS at 128 MiB (set between fork and exec): a .json.gz whose text is
// padded with 256 MiB of whitespace (well under 1 MB compressed) must read and solve as the
// table unpadded does, with nothing about bad_alloc on stderr; a .json.gz whose values alone
// pass the limit must end with a sentence naming the file. Needs zlib (to write the files)
// and no sanitizer (RLIMIT_AS cannot bound AddressSanitizer's shadow memory): tools/
// CMakeLists.txt registers it only then.

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tool_test_support.hpp"

namespace {

using tooltest::check;
using tooltest::failures;
using tooltest::last_line;
using tooltest::slurp;

struct run_result {
  int status = -1;
  std::string out, err;
};

/// `tool --tables file --no-runner-ups` with its address space limited to `limit` bytes (0: no
/// limit), stdout and stderr captured in files under `dir`.
run_result run(const std::string& tool, const std::string& file, const std::string& dir,
               rlim_t limit) {
  const std::string out = dir + "/memory_stdout.txt", err = dir + "/memory_stderr.txt";
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
    if (limit) {
      const rlimit r{limit, limit};
      if (::setrlimit(RLIMIT_AS, &r) != 0) ::_exit(125);
    }
    ::execl(tool.c_str(), tool.c_str(), "--tables", file.c_str(), "--no-runner-ups",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  run_result r;
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status))
    r.status = WEXITSTATUS(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// Writes `head`, `n` copies of `pattern`, then `tail` as a gzip file (`mode`: gzopen's).
void write_gz(const std::string& path, const char* mode, const std::string& head,
              const std::string& pattern, std::size_t n, const std::string& tail) {
  gzFile f = gzopen(path.c_str(), mode);
  if (!f) {
    check(false, "cannot write " + path);
    return;
  }
  gzwrite(f, head.data(), unsigned(head.size()));
  std::string block;
  while (block.size() < (std::size_t(1) << 20)) block += pattern;
  const std::size_t per = block.size() / pattern.size();
  for (; n >= per; n -= per) gzwrite(f, block.data(), unsigned(block.size()));
  gzwrite(f, block.data(), unsigned(n * pattern.size()));
  gzwrite(f, tail.data(), unsigned(tail.size()));
  gzclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: test_optimize_memory <workpart-optimize> <scratch folder>\n");
    return 2;
  }
  const std::string tool = argv[1], dir = argv[2];
  const rlim_t limit = rlim_t(128) << 20;
  const std::string table =
      R"({"vertices": [{"name": "a", "configs": [[1],[2]], "cost": [1, 2]},
 {"name": "b", "configs": [[1],[2],[4]], "cost": [3, 1, 0.5]}],
 "edges": [{"u": 0, "v": 1, "cost": [[0, 5, 6], [5, 0, 7]]}]})";

  const std::string plain = dir + "/memory_table.json";
  {
    std::ofstream f(plain, std::ios::binary);
    f << table;
  }
  const run_result want = run(tool, plain, dir, 0);
  check(
      want.status == 0 && last_line(want.out).rfind("optimal cost: ", 0) == 0,
      "the unpadded table: status " + std::to_string(want.status) + ", stderr '" + want.err + "'");

  {  // 256 MiB of whitespace after the opening brace: streamed through the reader's window
    const std::string gz = dir + "/memory_padded.json.gz";
    write_gz(gz, "wb1R", "{", " ", std::size_t(256) << 20, table.substr(1));
    const run_result r = run(tool, gz, dir, limit);
    check(r.status == 0 && last_line(r.out) == last_line(want.out) &&
              r.err.find("bad_alloc") == std::string::npos,
          "256 MiB of whitespace under a 128 MiB limit: status " + std::to_string(r.status) +
              ", last line '" + last_line(r.out) + "' (want '" + last_line(want.out) +
              "'), stderr '" + r.err + "'");
    std::remove(gz.c_str());
  }
  {  // 80 million costs (640 MB of values from 160 MB of text; streamed, the reader stops after
     // about 8 million): a sentence naming the file
    const std::string gz = dir + "/memory_values.json.gz";
    write_gz(gz, "wb1", R"({"vertices": [{"name": "big", "cost": [)", "0,", 80'000'000, "0]}]}");
    const run_result r = run(tool, gz, dir, limit);
    check(r.status == 1 &&
              r.err.find("[workpart.table_error] " + gz + ": byte ") != std::string::npos &&
              r.err.find("out of memory while reading the cost tables") != std::string::npos &&
              r.err.find("bad_alloc") == std::string::npos,
          "values past a 128 MiB limit: status " + std::to_string(r.status) + ", stderr '" + r.err +
              "'");
    std::remove(gz.c_str());
  }
  std::remove(plain.c_str());
  std::remove((dir + "/memory_stdout.txt").c_str());
  std::remove((dir + "/memory_stderr.txt").c_str());
  if (failures) std::fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
