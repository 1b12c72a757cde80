// workpart-calibrate: measures the machine model on the ranks it runs on
// (wp::machine_model::calibrate: the loop executor's rate, cost per row and rate of slow
// functions, GEMM and streaming rates, the fixed cost of a map, ranks per core, alpha and beta) and
// writes it as JSON (include/workpart/io/machine_file.hpp), for `workpart-optimize --machine FILE`
// or `wp::read_machine_model(FILE)` in a program.
//
//   mpirun -np P workpart-calibrate [FILE.json]     (no FILE: the JSON on standard output)
//
// Run it at the rank count and placement the programs will run at: alpha, beta, the fixed cost
// of a map and the ranks per core depend on them. Rank 0 writes; the model in words goes to
// standard error.

#include <workpart/workpart.hpp>
#include <workpart/io/machine_file.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace wp = workpart;

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
    if (ctx.rank() == 0)
      std::fprintf(stderr, "usage: mpirun -np P workpart-calibrate [FILE.json]\n");
    return 2;
  }
  const wp::machine_model m = wp::machine_model::calibrate(ctx);
  if (ctx.rank() != 0) return 0;
  const std::string json = wp::to_json(m);
  std::fprintf(stderr, "workpart-calibrate: %d ranks: %s\n", ctx.size(), m.str().c_str());
  if (argc < 2) {
    std::fputs(json.c_str(), stdout);
    return 0;
  }
  std::FILE* f = std::fopen(argv[1], "w");
  if (!f || std::fputs(json.c_str(), f) < 0 || std::fclose(f) != 0) {
    std::fprintf(stderr, "workpart-calibrate: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
