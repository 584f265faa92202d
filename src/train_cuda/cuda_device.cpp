// Device discovery and selection for the CUDA backend.
#include "batchai/train_cuda/cuda_device.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "batchai/common/errors.hpp"
#include "cuda_check.hpp"

namespace batchai::train_cuda {
namespace {

// cudaGetDeviceCount's result; errors (no driver, no device) count as zero devices.
int probe(std::string* reason) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    if (reason != nullptr) *reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(rc);
    return 0;
  }
  if (count == 0 && reason != nullptr) *reason = "cudaGetDeviceCount returned 0 devices";
  return count;
}

}  // namespace

int device_count() { return probe(nullptr); }

std::string device_unavailable_reason() {
  std::string reason;
  probe(&reason);
  return reason;
}

std::string device_description(int device) {
  cudaDeviceProp prop{};
  BATCHAI_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  char memory[32];
  std::snprintf(memory, sizeof(memory), "%.1f", static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024));
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " + memory +
         " GiB)";
}

int local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"}) {
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      const long value = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && value >= 0) return static_cast<int>(value);
    }
  }
  return 0;
}

int select_local_device() {
  std::string reason;
  const int count = probe(&reason);
  if (count == 0) {
    throw Error("no CUDA device is available (" + reason + "); use --backend cpu", "CudaError");
  }
  const int device = local_rank() % count;
  int current = -1;
  BATCHAI_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) BATCHAI_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

bool is_device_pointer(const void* p) {
  if (p == nullptr) return false;
  cudaPointerAttributes attributes{};
  const cudaError_t rc = cudaPointerGetAttributes(&attributes, p);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

}  // namespace batchai::train_cuda
