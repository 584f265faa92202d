// Device discovery for data-parallel ranks (cuda_device.cpp): rank -> local rank ->
// cudaSetDevice(local_rank % device_count), as Horovod's visible_device_list. No CUDA headers.
#pragma once
#include <string>

namespace batchai::train_cuda {

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

// True when `p` is device (or managed) memory of the CUDA runtime.
bool is_device_pointer(const void* p);

}  // namespace batchai::train_cuda
