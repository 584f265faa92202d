// One convolution shape on cuDNN's (legacy, still supported in cuDNN 9) convolution API, in one
// layout: NHWC tensors with an (out, k, k, c) = KRSC filter, or NCHW tensors with an
// (out, c, k, k) = KCRS filter; the forward, backward-data and backward-filter algorithms are
// chosen once when the shape is first seen (see docs/adr/0003).
#pragma once
#include <cudnn.h>

#include <cstddef>

#include "batchai/train/backend.hpp"

namespace batchai::train_cuda {

class SearchArea;  // cudnn_conv.cpp: device memory for measuring algorithms

// How a plan's algorithms are chosen.
struct ConvChoice {
  bool allow_tf32 = true;     // TF32 tensor cores; false keeps full fp32 FMA arithmetic
  bool find = true;           // measured (cudnnFind*); false: cudnnGet*_v7 heuristics
  bool deterministic = true;  // only algorithms that give the same bits on every run
  cudnnTensorFormat_t layout = CUDNN_TENSOR_NHWC;  // or CUDNN_TENSOR_NCHW
};

class CudnnConv {
 public:
  CudnnConv(cudnnHandle_t handle, const train::ConvShape& shape, const ConvChoice& choice);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  cudnnTensorFormat_t layout() const { return choice_.layout; }
  // Largest workspace the three chosen algorithms need, in bytes.
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  // y = conv(x, w) (no bias); dx = conv^T(dy, w); dw = corr(x, dy) (overwritten, beta 0).
  // Tensors and filters in the plan's layout. The handle's stream orders everything.
  void forward(cudnnHandle_t handle, const float* x, const float* w, float* y, void* workspace) const;
  void backward_data(cudnnHandle_t handle, const float* w, const float* dy, float* dx, void* workspace) const;
  void backward_filter(cudnnHandle_t handle, const float* x, const float* dy, float* dw, void* workspace) const;

 private:
  // `area`: measure on it (cudnnFind*Ex); null: cudnnGet*_v7 heuristics.
  void choose_forward(cudnnHandle_t handle, cudnnMathType_t math, const SearchArea* area);
  void choose_backward_data(cudnnHandle_t handle, cudnnMathType_t math, const SearchArea* area);
  void choose_backward_filter(cudnnHandle_t handle, cudnnMathType_t math, const SearchArea* area);

  train::ConvShape shape_;
  ConvChoice choice_;
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
