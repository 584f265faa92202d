// The communicator boundary shared by every implementation: the buffer-kind check and the
// --allreduce words.
#include "batchai/train/communicator.hpp"

#include "batchai/common/errors.hpp"

namespace batchai::train {

void Communicator::allreduce_buffer(Buffer& buffer) {
  if (!accepts(buffer.kind)) {
    throw InvalidArgument(std::string("the '") + name() + "' communicator cannot reduce " +
                          (buffer.kind == BufferKind::kDevice ? "device" : "host") +
                          " memory; gradients on a device need the device collectives (NCCL or host-staged)");
  }
  allreduce_sum(buffer.data, buffer.size);
}

AllreduceAlgorithm parse_allreduce_algorithm(const std::string& text) {
  if (text == "ring") return AllreduceAlgorithm::kRing;
  if (text == "mpi") return AllreduceAlgorithm::kMpi;
  throw InvalidArgument("unknown --allreduce '" + text + "'; use ring or mpi");
}

}  // namespace batchai::train
