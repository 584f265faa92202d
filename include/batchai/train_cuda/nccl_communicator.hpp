// Collectives for ranks whose gradients live on GPUs: NCCL bootstrapped through MPI (rank 0's
// ncclUniqueId sent by MPI_Bcast), or, when ranks share a GPU (NCCL refuses that), a host-staged
// path: download, ring-allreduce over MPI, upload. Pointers may be device or host memory: each
// call looks at the pointer (cudaPointerGetAttributes) and host data goes through MPI as usual.
#pragma once
#include <memory>
#include <string>

#include "batchai/train/communicator.hpp"

namespace batchai::train_cuda {

enum class DeviceCollectives {
  kAuto,        // NCCL when every rank has its own GPU, else host-staged
  kNccl,        // NCCL or an error
  kHostStaged,  // always download -> MPI allreduce -> upload
};

// "auto" | "nccl" | "host-staged"; throws batchai::InvalidArgument otherwise.
DeviceCollectives parse_device_collectives(const std::string& text);

struct NcclOptions {
  DeviceCollectives mode = DeviceCollectives::kAuto;  // BATCHAI_NCCL (same words) overrides kAuto
  train::AllreduceAlgorithm host_algorithm = train::AllreduceAlgorithm::kRing;  // host and staged data
};

// MPI must be initialised (train::MpiSession) and every rank must call this together. Selects
// this rank's device (select_local_device()). name() is "nccl" or "host-staged".
std::unique_ptr<train::Communicator> make_nccl_communicator(const NcclOptions& options = {});

}  // namespace batchai::train_cuda
