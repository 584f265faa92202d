// The communicators' environment settings, read where a communicator is opened; malformed values
// throw batchai::InvalidArgument naming the variable.
#pragma once
#include <cstddef>

#include "shm_slot_writes.hpp"

namespace batchai::train::detail {

// BATCHAI_RING_CHUNK_KB: the MPI ring's pipelined message size (default 1 MiB, 0 = unchunked).
std::size_t ring_chunk_bytes();
// BATCHAI_COMM_TIMEOUT_S: seconds a rank waits on a silent peer before reporting a stall
// (default 600, 0 = no limit, larger than a week = a week; inf, nan and negatives are refused).
double comm_timeout_seconds();
// BATCHAI_SHM_CHUNK_KB: bytes per rank of one pipelined step of the shared-memory allreduce on a
// host of `ranks` ranks (the segment holds two steps per rank). Default 1 MiB, less on hosts of
// more than 8 ranks so that the segment stays within 16 MiB (Docker's /dev/shm is 64 MiB).
std::size_t shm_chunk_bytes(int ranks);
// BATCHAI_SHM_WRITES=auto|cached|streaming: how the shared-memory allreduce writes the slots the
// other ranks read (shm_slot_writes.hpp); default auto, measured per size class.
SlotWrites shm_slot_writes();
// BATCHAI_SHM_ALLREDUCE=0 turns the shared-memory path off (the MPI ring is used instead).
bool shm_allreduce_allowed();
// BATCHAI_TEST_RANKS_PER_HOST=n (tests only): pretend ranks [0,n), [n,2n), ... are separate hosts.
// 0 or unset: hosts are what MPI_COMM_TYPE_SHARED says.
int test_ranks_per_host();

}  // namespace batchai::train::detail
