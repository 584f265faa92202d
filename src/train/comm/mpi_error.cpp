// MPI return codes as batchai::Error: the message names the call, this rank and MPI's own text.
#include "mpi_error.hpp"

#include <cstddef>
#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::train::detail {

void throw_mpi_error(int rc, const char* operation) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  int rank = -1;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  throw Error(std::string(operation) + " failed on rank " + std::to_string(rank) + ": " +
              std::string(text, static_cast<std::size_t>(len)) +
              ". Another rank has probably exited or the interconnect failed; check the "
              "other ranks' output for the first error.");
}

}  // namespace batchai::train::detail
