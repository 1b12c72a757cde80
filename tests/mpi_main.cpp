// main() for workpart's MPI tests, compiled once into the static library
// workpart_mpi_main and linked by every workpart_add_mpi_test executable.
//
// MPI is initialised before Catch runs (boost::mpi::environment, thread level
// funneled so OpenMP regions may run between MPI calls of the main thread).
// Every rank runs the same test cases; the failure counts are summed over the
// world communicator so that every rank exits nonzero when any rank failed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <exception>
#include <functional>
#include <iostream>

int main(int argc, char* argv[]) {
  boost::mpi::environment env(argc, argv, boost::mpi::threading::funneled);
  boost::mpi::communicator world;

  int failed = 0;
  try {
    Catch::Session session;
    // mpiexec forwards output through a pty, which Catch takes for a colour
    // terminal; plain text unless --use-colour says otherwise.
    session.configData().useColour = Catch::UseColour::No;
    failed = session.run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "[rank " << world.rank() << "] exception outside a test case: " << e.what()
              << '\n';
    failed = 1;
  } catch (...) {
    std::cerr << "[rank " << world.rank() << "] unknown exception outside a test case\n";
    failed = 1;
  }

  int total = 0;
  boost::mpi::all_reduce(world, failed != 0 ? 1 : 0, total, std::plus<int>());
  if (total != 0 && failed == 0)
    std::cerr << "[rank " << world.rank() << "] passed here, but " << total << " of "
              << world.size() << " ranks failed\n";
  return total == 0 ? 0 : 1;
}
