// Error checks for every CUDA runtime, cuDNN, cuBLAS and NCCL call of the CUDA backend: a
// failure throws batchai::Error with the call, file:line and the library's own message, so a
// GPU problem is reported where it happens and never silently falls back to the CPU.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

namespace batchai::train_cuda::detail {

[[noreturn]] void throw_cuda(cudaError_t rc, const char* call, const char* file, int line);
[[noreturn]] void throw_cudnn(cudnnStatus_t rc, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t rc, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl(ncclResult_t rc, const char* call, const char* file, int line);

}  // namespace batchai::train_cuda::detail

#define BATCHAI_CUDA_CHECK(call)                                                                   \
  do {                                                                                             \
    const cudaError_t batchai_rc_ = (call);                                                        \
    if (batchai_rc_ != cudaSuccess)                                                                \
      ::batchai::train_cuda::detail::throw_cuda(batchai_rc_, #call, __FILE__, __LINE__);           \
  } while (0)

#define BATCHAI_CUDNN_CHECK(call)                                                                  \
  do {                                                                                             \
    const cudnnStatus_t batchai_rc_ = (call);                                                      \
    if (batchai_rc_ != CUDNN_STATUS_SUCCESS)                                                       \
      ::batchai::train_cuda::detail::throw_cudnn(batchai_rc_, #call, __FILE__, __LINE__);          \
  } while (0)

#define BATCHAI_CUBLAS_CHECK(call)                                                                 \
  do {                                                                                             \
    const cublasStatus_t batchai_rc_ = (call);                                                     \
    if (batchai_rc_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::batchai::train_cuda::detail::throw_cublas(batchai_rc_, #call, __FILE__, __LINE__);         \
  } while (0)

#define BATCHAI_NCCL_CHECK(call)                                                                   \
  do {                                                                                             \
    const ncclResult_t batchai_rc_ = (call);                                                       \
    if (batchai_rc_ != ncclSuccess)                                                                \
      ::batchai::train_cuda::detail::throw_nccl(batchai_rc_, #call, __FILE__, __LINE__);           \
  } while (0)

// Kernel launches report configuration errors through cudaGetLastError.
#define BATCHAI_CUDA_CHECK_LAUNCH(what)                                                            \
  do {                                                                                             \
    const cudaError_t batchai_rc_ = cudaGetLastError();                                            \
    if (batchai_rc_ != cudaSuccess)                                                                \
      ::batchai::train_cuda::detail::throw_cuda(batchai_rc_, "<<<" what ">>>", __FILE__, __LINE__); \
  } while (0)
