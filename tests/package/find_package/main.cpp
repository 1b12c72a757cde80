// Built by tests/package/run_find_package.cmake against an installed workpart.
#include <workpart/workpart.hpp>

#include <iostream>

int main(int argc, char** argv) {
  workpart::context ctx(argc, argv);
  if (ctx.is_root()) std::cout << "workpart package ok, ranks=" << ctx.size() << std::endl;
  return 0;
}
