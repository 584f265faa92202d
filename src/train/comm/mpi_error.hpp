// Turns MPI return codes into batchai::Error so the trainer sees exceptions, not hangs or
// silent aborts (MpiSession sets MPI_ERRORS_RETURN on MPI_COMM_WORLD for this).
#pragma once
#include "mpi_c.hpp"

namespace batchai::train::detail {

// Throws batchai::Error naming the operation, this rank and MPI's own message.
void throw_mpi_error(int rc, const char* operation);

inline void check_mpi(int rc, const char* operation) {
  if (rc != MPI_SUCCESS) throw_mpi_error(rc, operation);
}

}  // namespace batchai::train::detail
