// The communicators over MPI (comm/mpi_communicator.cpp): the ring and MPI_Allreduce. Public:
// train_cuda's NCCL communicator runs its host-side collectives on one.
#pragma once
#include <memory>

#include "batchai/train/communicator.hpp"

namespace batchai::train {

// MPI-backed communicator over MPI_COMM_WORLD (MPI must be initialised by the caller,
// see MpiSession). kRing = own reduce-scatter + allgather; kMpi = MPI_Allreduce.
// Environment (comm/comm_env.hpp): BATCHAI_RING_CHUNK_KB (ring message size, default 1024, 0 = unchunked) and
// BATCHAI_COMM_TIMEOUT_S (seconds the ring waits on a silent neighbour before printing which
// one and ending the rank, so mpiexec stops the job; default 600, 0 = wait forever).
// MPI failures and length mismatches throw batchai::Error.
std::unique_ptr<Communicator> make_mpi_communicator(AllreduceAlgorithm algorithm);

}  // namespace batchai::train
