// The ordered candidate list and the chooser (see communicator_choice.hpp).
#include "comm/communicator_choice.hpp"

#include <cstdio>
#include <string>

#include "batchai/common/errors.hpp"
#include "batchai/train/backend.hpp"
#include "batchai/train/local_communicator.hpp"
#include "batchai/train/mpi_communicator.hpp"
#include "comm/comm_env.hpp"
#include "comm/host_layout.hpp"
#include "comm/shm_communicator.hpp"

namespace batchai::train {

const std::vector<CollectiveCandidate>& collective_candidates() {
  static const std::vector<CollectiveCandidate> candidates = {
      // NCCL, or host staging when ranks share a GPU: the CUDA plugin's device communicator decides.
      {CollectiveKind::kNccl, "nccl", false, true,
       [](const CollectiveRun& r) { return r.ranks > 1 && r.device_collectives; }},
      // Our own allreduce, through shared memory within a host (ring across hosts): only when
      // ranks share a host, which is where it beats MPI's transport.
      {CollectiveKind::kShm, "shm", true, false,
       [](const CollectiveRun& r) {
         return r.ranks > 1 && r.algorithm == AllreduceAlgorithm::kRing && r.shared_memory && r.ranks_per_host > 1;
       }},
      {CollectiveKind::kMpi, "mpi", true, false,
       [](const CollectiveRun& r) { return r.ranks > 1 && r.algorithm == AllreduceAlgorithm::kMpi; }},
      {CollectiveKind::kRing, "ring", true, false,
       [](const CollectiveRun& r) { return r.ranks > 1 && r.algorithm == AllreduceAlgorithm::kRing; }},
      // One rank: the sum is the buffer itself, wherever it lives.
      {CollectiveKind::kLocal, "local", true, true, [](const CollectiveRun& r) { return r.ranks == 1; }},
  };
  return candidates;
}

CollectiveRun describe_run(BufferKind buffers, int ranks, AllreduceAlgorithm algorithm, bool device_collectives) {
  CollectiveRun run{buffers, ranks, algorithm, device_collectives};
  run.shared_memory = detail::shm_allreduce_allowed();
  if (ranks > 1) run.ranks_per_host = detail::most_ranks_per_host();
  return run;
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
    case CollectiveKind::kShm: {
      std::string why;
      if (auto shm = make_shm_communicator(&why)) return shm;
      std::fprintf(stderr, "batchai: shared-memory allreduce unavailable (%s); using the MPI ring\n", why.c_str());
      return make_mpi_communicator(AllreduceAlgorithm::kRing);
    }
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
