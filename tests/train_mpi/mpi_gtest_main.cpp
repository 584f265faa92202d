// The main of the gtest suites that run under mpiexec: one rank prints progress, every rank runs
// the tests, and every rank learns whether any rank failed, so mpiexec's exit status is non-zero.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "batchai/train/mpi_session.hpp"

int main(int argc, char** argv) {
  batchai::train::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (mpi.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = failed;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) std::fprintf(stderr, "%s: failures on rank %d\n", argv[0], mpi.rank());
  return any_failed ? 1 : 0;
}
