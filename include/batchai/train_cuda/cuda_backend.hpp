// The trainer's CUDA backend (cuDNN convolutions, cuBLAS dense layers, own kernels for the
// rest) behind batchai::train::Backend, and its registration with the trainer. Device discovery
// is in cuda_device.hpp. Nothing here needs CUDA headers, so callers (CLI, tests) compile
// without the toolkit's.
#pragma once
#include <memory>
#include <string>

#include "batchai/train/backend.hpp"

namespace batchai::train_cuda {

// The layout cuDNN convolves in. Activations stay NHWC (the Backend contract); kNchw transposes
// around each convolution, which pays in full fp32: there cuDNN's NHWC kernels are generic ones
// and its NCHW implicit-GEMM, FFT and Winograd kernels much faster (docs/cuda.md has the figures).
enum class ConvLayout { kAuto, kNhwc, kNchw };  // kAuto: NCHW without TF32, NHWC with it

struct CudaBackendOptions {
  int device = -1;          // -1: select_local_device()
  bool allow_tf32 = true;   // TF32 tensor cores for cuDNN convolutions (Ampere+); false = full fp32
  bool find_algorithms = true;  // cudnnFind* (measured) once per shape; false = cudnnGet*_v7 heuristics
  // Only deterministic cuDNN algorithms (reruns give the same bits); false takes the fastest,
  // as PyTorch's cudnn.benchmark does unless told to be deterministic.
  bool deterministic = true;
  ConvLayout conv_layout = ConvLayout::kAuto;
};

// Throws batchai::Error when no device exists (no silent CPU fallback).
std::unique_ptr<train::Backend> make_cuda_backend(const CudaBackendOptions& options = {});

// The factory behind train::make_backend(kCuda / kAuto): null when no device is present.
// BATCHAI_CUDA_TF32=0 turns TF32 off; BATCHAI_CUDNN_FIND=0 picks algorithms by heuristics;
// BATCHAI_CUDNN_DETERMINISTIC=0 allows non-deterministic ones; BATCHAI_CUDNN_LAYOUT=nhwc|nchw|auto.
train::BackendFactory cuda_backend_factory();
// The NCCL (or host-staged) communicator for gradients in device memory.
train::DeviceCommunicatorFactory cuda_communicator_factory();
// Registers both directly, for programs that link this target (tests, benchmarks); the
// executable gets them from the plugin (plugin.cpp) instead.
void register_cuda_backend();

}  // namespace batchai::train_cuda
