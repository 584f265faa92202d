// MPI's lifetime in a trainer process (comm/mpi_session.cpp); every MPI communicator needs one
// open.
#pragma once

namespace batchai::train {

// RAII MPI_Init/MPI_Finalize; safe to create when the process was not started by mpirun
// (then size() == 1). Errors are returned (MPI_ERRORS_RETURN) and turned into exceptions.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const;
  int size() const;
  // Ends every rank promptly after a fatal error on this one (MPI_Abort with `code`).
  [[noreturn]] static void abort_all(int code);
};

}  // namespace batchai::train
