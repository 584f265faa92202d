// The entry point of libbatchai_cuda.so (kCudaPluginFile in batchai/train/trainer_plugin.hpp, the ABI in backend.hpp): the
// executable dlopens this plugin only when a training asks for CUDA and takes its factories.
#include "batchai/train/backend.hpp"
#include "batchai/train_cuda/cuda_backend.hpp"

extern "C" __attribute__((visibility("default"))) int batchai_cuda_plugin(
    int abi, batchai::train::BackendFactory* backend, batchai::train::DeviceCommunicatorFactory* communicator) {
  if (abi != batchai::train::kCudaPluginAbi || backend == nullptr || communicator == nullptr) return 1;
  *backend = batchai::train_cuda::cuda_backend_factory();
  *communicator = batchai::train_cuda::cuda_communicator_factory();
  return 0;
}
