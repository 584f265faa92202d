// The one place the gradient communicator is chosen: an ordered list of candidates, as in
// Horovod's OperationManager (NCCL for device buffers, then MPI_Allreduce and the ring for
// host buffers, then the one-rank no-op); the first that is enabled for the run and accepts
// the gradients' buffer kind wins.
#pragma once
#include <memory>
#include <vector>

#include "batchai/train/communicator.hpp"

namespace batchai::train {

enum class CollectiveKind { kNccl, kMpi, kRing, kLocal };

// What a run offers the chooser.
struct CollectiveRun {
  BufferKind buffers = BufferKind::kHost;  // where the gradients live (the backend's memory)
  int ranks = 1;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kRing;  // --allreduce
  bool device_collectives = false;  // a device communicator is registered (has_device_communicator())
};

struct CollectiveCandidate {
  CollectiveKind kind;
  const char* name;       // as Communicator::name() says it: "nccl", "mpi", "ring", "local"
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
// device collectives.
std::unique_ptr<Communicator> open_communicator(const CollectiveCandidate& candidate, AllreduceAlgorithm algorithm);

}  // namespace batchai::train
