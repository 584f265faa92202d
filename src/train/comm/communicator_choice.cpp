// The ordered candidate list and the chooser (see communicator_choice.hpp).
#include "comm/communicator_choice.hpp"

#include <string>

#include "batchai/common/errors.hpp"
#include "batchai/train/backend.hpp"
#include "batchai/train/local_communicator.hpp"
#include "batchai/train/mpi_communicator.hpp"

namespace batchai::train {

const std::vector<CollectiveCandidate>& collective_candidates() {
  static const std::vector<CollectiveCandidate> candidates = {
      // NCCL, or host staging when ranks share a GPU: the CUDA plugin's device communicator decides.
      {CollectiveKind::kNccl, "nccl", false, true,
       [](const CollectiveRun& r) { return r.ranks > 1 && r.device_collectives; }},
      {CollectiveKind::kMpi, "mpi", true, false,
       [](const CollectiveRun& r) { return r.ranks > 1 && r.algorithm == AllreduceAlgorithm::kMpi; }},
      {CollectiveKind::kRing, "ring", true, false,
       [](const CollectiveRun& r) { return r.ranks > 1 && r.algorithm == AllreduceAlgorithm::kRing; }},
      // One rank: the sum is the buffer itself, wherever it lives.
      {CollectiveKind::kLocal, "local", true, true, [](const CollectiveRun& r) { return r.ranks == 1; }},
  };
  return candidates;
}

const CollectiveCandidate& choose_communicator(const CollectiveRun& run) {
  for (const CollectiveCandidate& c : collective_candidates()) {
    if (c.enabled(run) && c.accepts(run.buffers)) return c;
  }
  if (run.buffers == BufferKind::kDevice) {
    throw Error("the gradients live in device memory on " + std::to_string(run.ranks) +
                " ranks, but no device communicator (NCCL or host-staged) is registered; "
                "use --backend cpu, or a batchai built with NCCL");
  }
  throw Error("no communicator for " + std::to_string(run.ranks) + " ranks (internal error)");
}

std::unique_ptr<Communicator> open_communicator(const CollectiveCandidate& candidate, AllreduceAlgorithm algorithm) {
  switch (candidate.kind) {
    case CollectiveKind::kNccl:
      if (auto device = make_device_communicator(algorithm)) return device;
      throw Error("no device communicator is registered for the NCCL candidate (internal error)");
    case CollectiveKind::kMpi:
      return make_mpi_communicator(AllreduceAlgorithm::kMpi);
    case CollectiveKind::kRing:
      return make_mpi_communicator(AllreduceAlgorithm::kRing);
    case CollectiveKind::kLocal:
      return make_local_communicator();
  }
  throw Error("unknown collective candidate (internal error)");
}

}  // namespace batchai::train
