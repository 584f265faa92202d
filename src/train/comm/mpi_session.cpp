// MpiSession: MPI_Init/MPI_Finalize around the trainer, with MPI errors returned (and turned
// into exceptions by the communicators) rather than aborting inside the library.
#include "batchai/train/mpi_session.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "batchai/common/errors.hpp"
#include "mpi_c.hpp"
#include "mpi_error.hpp"

namespace batchai::train {
namespace {
// The session that called MPI_Init; only it finalizes (nested sessions are harmless).
const MpiSession* g_owner = nullptr;
}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // Only the training thread calls MPI; data workers never do.
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      throw Error("MPI_Init failed: check the Open MPI installation (mpiexec --version) and "
                  "that the trainer was started by mpiexec or on its own");
    }
    g_owner = this;
  }
  detail::check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                    "MPI_Comm_set_errhandler");
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (g_owner == this && !finalized) MPI_Finalize();
  if (g_owner == this) g_owner = nullptr;
}

int MpiSession::rank() const {
  int rank = 0;
  detail::check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  return rank;
}

int MpiSession::size() const {
  int size = 1;
  detail::check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  return size;
}

void MpiSession::abort_all(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this covers the no-MPI case
}

}  // namespace batchai::train
