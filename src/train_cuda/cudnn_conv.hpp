// One convolution shape on cuDNN's (legacy, still supported in cuDNN 9) convolution API: NHWC
// tensor descriptors, an NHWC filter (out, k, k, c) = KRSC, and the forward, backward-data and
// backward-filter algorithms chosen once when the shape is first seen (see docs/adr/0003).
#pragma once
#include <cudnn.h>

#include <cstddef>

#include "batchai/train/backend.hpp"

namespace batchai::train_cuda {

class CudnnConv {
 public:
  // Picks the algorithms: measured (cudnnFind*) when `find`, else cudnnGet*_v7 heuristics.
  // `allow_tf32` lets cuDNN use TF32 tensor cores; false keeps full fp32 FMA arithmetic.
  CudnnConv(cudnnHandle_t handle, const train::ConvShape& shape, bool allow_tf32, bool find);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  // Largest workspace the three chosen algorithms need, in bytes.
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  // y = conv(x, w) (no bias); dx = conv^T(dy, w); dw = corr(x, dy) (overwritten, beta 0).
  // `w` and `dw` are KRSC. The handle's stream orders everything.
  void forward(cudnnHandle_t handle, const float* x, const float* w, float* y, void* workspace) const;
  void backward_data(cudnnHandle_t handle, const float* w, const float* dy, float* dx, void* workspace) const;
  void backward_filter(cudnnHandle_t handle, const float* x, const float* dy, float* dw, void* workspace) const;

 private:
  void choose_forward(cudnnHandle_t handle, cudnnMathType_t math, bool find);
  void choose_backward_data(cudnnHandle_t handle, cudnnMathType_t math, bool find);
  void choose_backward_filter(cudnnHandle_t handle, cudnnMathType_t math, bool find);

  train::ConvShape shape_;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  // One convolution descriptor per direction: each carries the math type its algorithm wants.
  cudnnConvolutionDescriptor_t fwd_desc_ = nullptr, bwd_data_desc_ = nullptr, bwd_filter_desc_ = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_algo_{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_algo_{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_algo_{};
  std::size_t workspace_bytes_ = 0;
};

}  // namespace batchai::train_cuda
