// The throwing half of cuda_check.hpp: formats "<call> failed at file:line: <library message>".
#include "cuda_check.hpp"

#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::train_cuda::detail {
namespace {

[[noreturn]] void raise(const char* library, const char* call, const char* file, int line, int code,
                        const char* message, const char* hint) {
  std::string text = std::string(library) + " call " + call + " failed at " + file + ":" + std::to_string(line) +
                     ": " + (message != nullptr ? message : "unknown error") + " (code " + std::to_string(code) + ")";
  if (hint != nullptr && *hint != '\0') text += "; " + std::string(hint);
  throw Error(text, "CudaError");
}

}  // namespace

void throw_cuda(cudaError_t rc, const char* call, const char* file, int line) {
  const char* hint = "";
  if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver) {
    hint = "no usable CUDA device/driver: run with --backend cpu";
  } else if (rc == cudaErrorMemoryAllocation) {
    hint = "the GPU is out of memory: use a smaller batch or fewer ranks per GPU";
  }
  raise("CUDA", call, file, line, static_cast<int>(rc), cudaGetErrorString(rc), hint);
}

void throw_cudnn(cudnnStatus_t rc, const char* call, const char* file, int line) {
  raise("cuDNN", call, file, line, static_cast<int>(rc), cudnnGetErrorString(rc), "");
}

void throw_cublas(cublasStatus_t rc, const char* call, const char* file, int line) {
  raise("cuBLAS", call, file, line, static_cast<int>(rc), cublasGetStatusName(rc), cublasGetStatusString(rc));
}

void throw_nccl(ncclResult_t rc, const char* call, const char* file, int line) {
  const char* hint = rc == ncclInvalidUsage ? "NCCL refuses e.g. two ranks on one GPU; set "
                                              "BATCHAI_NCCL=host-staged or give each rank its own GPU"
                                            : "set NCCL_DEBUG=WARN for NCCL's own diagnostics";
  raise("NCCL", call, file, line, static_cast<int>(rc), ncclGetErrorString(rc), hint);
}

}  // namespace batchai::train_cuda::detail
