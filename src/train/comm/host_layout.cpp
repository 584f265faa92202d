// Splitting the ranks by host (see host_layout.hpp).
#include "host_layout.hpp"

#include "comm_env.hpp"
#include "mpi_error.hpp"

namespace batchai::train::detail {

HostLayout::HostLayout(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (const int per_host = test_ranks_per_host(); per_host > 0) {
    check_mpi(MPI_Comm_split(comm, rank / per_host, rank, &local_), "MPI_Comm_split (test hosts)");
  } else {
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local_),
              "MPI_Comm_split_type (ranks by host)");
  }
  check_mpi(MPI_Comm_set_errhandler(local_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(local_, &local_rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(local_, &local_size_), "MPI_Comm_size");
  check_mpi(MPI_Comm_split(comm, local_rank_ == 0 ? 0 : MPI_UNDEFINED, rank, &leaders_), "MPI_Comm_split (leaders)");
  if (leaders_ != MPI_COMM_NULL) check_mpi(MPI_Comm_set_errhandler(leaders_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  const int leader = local_rank_ == 0 ? 1 : 0;
  check_mpi(MPI_Allreduce(&leader, &hosts_, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce (host count)");
  check_mpi(MPI_Allreduce(&local_size_, &most_per_host_, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (ranks per host)");
  local_world_ranks_.resize(static_cast<std::size_t>(local_size_));
  int world_rank = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
  check_mpi(MPI_Allgather(&world_rank, 1, MPI_INT, local_world_ranks_.data(), 1, MPI_INT, local_),
            "MPI_Allgather (host ranks)");
}

HostLayout::~HostLayout() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (leaders_ != MPI_COMM_NULL) MPI_Comm_free(&leaders_);
  if (local_ != MPI_COMM_NULL) MPI_Comm_free(&local_);
}

int most_ranks_per_host() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 1;
  return HostLayout(MPI_COMM_WORLD).most_per_host();
}

}  // namespace batchai::train::detail
