// The trainer's CUDA backend (cuDNN convolutions, cuBLAS dense layers, own kernels for the
// rest) behind batchai::train::Backend, plus device discovery for data-parallel ranks: rank
// -> local rank -> cudaSetDevice(local_rank % device_count), as Horovod's visible_device_list.
// Nothing here needs CUDA headers, so callers (CLI, tests) compile without the toolkit's.
#pragma once
#include <memory>
#include <string>

#include "batchai/train/backend.hpp"

namespace batchai::train_cuda {

struct CudaBackendOptions {
  int device = -1;          // -1: select_local_device()
  bool allow_tf32 = true;   // TF32 tensor cores for cuDNN convolutions (Ampere+); false = full fp32
  bool find_algorithms = true;  // cudnnFind* (measured) once per shape; false = cudnnGet*_v7 heuristics
};

// Number of usable CUDA devices; 0 (never throws) when there is no device or no driver.
int device_count();
// Why device_count() is 0 (the CUDA runtime's message), empty when devices exist.
std::string device_unavailable_reason();
// "NVIDIA H200 (sm_90, 139.8 GiB)" for logs and benchmarks; throws when the device is absent.
std::string device_description(int device);
// This process's rank on its node: OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
// or PMI_LOCAL_RANK, else 0.
int local_rank();
// cudaSetDevice(local_rank() % device_count()) and returns that device; throws batchai::Error
// when no device exists.
int select_local_device();

// Throws batchai::Error when no device exists (no silent CPU fallback).
std::unique_ptr<train::Backend> make_cuda_backend(const CudaBackendOptions& options = {});

// The factory behind train::make_backend(kCuda / kAuto): null when no device is present.
// BATCHAI_CUDA_TF32=0 turns TF32 off.
train::BackendFactory cuda_backend_factory();
// The NCCL (or host-staged) communicator for gradients in device memory.
train::DeviceCommunicatorFactory cuda_communicator_factory();
// Registers both directly, for programs that link this target (tests, benchmarks); the
// executable gets them from the plugin (plugin.cpp) instead.
void register_cuda_backend();

}  // namespace batchai::train_cuda
