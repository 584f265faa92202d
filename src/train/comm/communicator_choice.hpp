// The one place the gradient communicator is chosen: an ordered list of candidates, as in
// Horovod's OperationManager (NCCL for device buffers; for host buffers the shared-memory
// hierarchical allreduce when ranks share a host, then MPI_Allreduce and the MPI ring; then the
// one-rank no-op); the first that is enabled for the run and accepts the gradients' buffer kind
// wins.
#pragma once
#include <memory>
#include <vector>

#include "batchai/train/communicator.hpp"

namespace batchai::train {

enum class CollectiveKind { kNccl, kShm, kMpi, kRing, kLocal };

// What a run offers the chooser.
struct CollectiveRun {
  BufferKind buffers = BufferKind::kHost;  // where the gradients live (the backend's memory)
  int ranks = 1;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kRing;  // --allreduce
  bool device_collectives = false;  // a device communicator is registered (has_device_communicator())
  int ranks_per_host = 1;           // the most ranks on one host (describe_run() asks MPI)
  bool shared_memory = true;        // false: BATCHAI_SHM_ALLREDUCE=0 keeps --allreduce ring on MPI
};

// A run of `ranks` ranks under MPI, with the host layout filled in: collective over
// MPI_COMM_WORLD when ranks > 1 (every rank must call it together).
CollectiveRun describe_run(BufferKind buffers, int ranks, AllreduceAlgorithm algorithm, bool device_collectives);

struct CollectiveCandidate {
  CollectiveKind kind;
  const char* name;       // as Communicator::name() says it: "nccl", "shm", "mpi", "ring", "local"
  bool host_buffers;      // accepts host memory
  bool device_buffers;    // accepts device memory
  bool (*enabled)(const CollectiveRun& run);
  bool accepts(BufferKind buffer) const { return buffer == BufferKind::kHost ? host_buffers : device_buffers; }
};

// The candidates in the order they are tried.
const std::vector<CollectiveCandidate>& collective_candidates();

// The first candidate enabled for `run` that accepts its buffers. Throws batchai::Error when
// none does (device gradients on several ranks with no device communicator registered).
const CollectiveCandidate& choose_communicator(const CollectiveRun& run);

// Opens the chosen candidate's communicator; MPI must be initialised (MpiSession) for all but
// kLocal, and every rank must call this together. `algorithm` is also the host path of the
// device collectives. kShm falls back to the MPI ring (saying so on stderr) when a host cannot
// create its shared-memory segment.
std::unique_ptr<Communicator> open_communicator(const CollectiveCandidate& candidate, AllreduceAlgorithm algorithm);

}  // namespace batchai::train
