// The hierarchical communicator (Horovod's hierarchical allreduce, NCCL's intra-node rings):
// the ranks of a host sum through one shared segment (ShmReducer); when there are several hosts,
// local rank 0 of each runs the MPI ring over the hosts' sums and hands the result back through
// the segment. Broadcast, double sums, barrier and the agreement check go through MPI.
#pragma once
#include <memory>
#include <string>

#include "batchai/train/communicator.hpp"

namespace batchai::train {

// Collective over MPI_COMM_WORLD (MPI initialised). nullptr on every rank when some host could not
// create or map its segment; *why then says why on the ranks that know.
std::unique_ptr<Communicator> make_shm_communicator(std::string* why);

}  // namespace batchai::train
