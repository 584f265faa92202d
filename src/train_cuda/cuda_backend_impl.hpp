// The CUDA backend: every Backend operation on one non-blocking stream of one device.
// Convolutions run on cuDNN with NHWC tensors; Keras' (k,k,c,out) kernels are transposed into a
// device-side (out,k,k,c) mirror before each use and filter gradients transposed back (a few
// microseconds: the largest kernel has 36,864 floats). Dense layers are cuBLAS sgemm on the
// row-major data; bias, ReLU, pooling, dropout, loss and RMSprop are our own kernels.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <map>
#include <memory>
#include <tuple>

#include "batchai/train/backend.hpp"
#include "batchai/train_cuda/cuda_backend.hpp"
#include "cuda_kernels.hpp"
#include "cudnn_conv.hpp"

namespace batchai::train_cuda {

// A grow-only device scratch area, reused by every layer in stream order.
class DeviceScratch {
 public:
  DeviceScratch() = default;
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  void* ensure(std::size_t bytes);
  float* floats(std::size_t count) { return static_cast<float*>(ensure(count * sizeof(float))); }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Use a CudaBackend from the thread that created it (the CUDA current device is per thread).
class CudaBackend final : public train::Backend {
 public:
  explicit CudaBackend(const CudaBackendOptions& options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  std::string name() const override { return "cuda"; }
  bool computes_on_host() const override { return false; }

  train::Buffer allocate(std::size_t count) override;
  void release(train::Buffer& buffer) override;
  void upload(train::Buffer& dst, const float* host, std::size_t count, std::size_t offset) override;
  void upload_images(train::Buffer& dst, const float* host_nhwc, int n, int h, int w, int c,
                     train::Layout layout) override;
  void download(float* host, const train::Buffer& src, std::size_t count, std::size_t offset) override;
  void fill(train::Buffer& dst, float value) override;

  void conv2d_forward(const train::ConvShape& s, const train::Buffer& x, const train::Buffer& w, std::size_t w_off,
                      std::size_t b_off, train::Buffer& y, bool relu) override;
  void conv2d_backward(const train::ConvShape& s, const train::Buffer& x, const train::Buffer& w, std::size_t w_off,
                       const train::Buffer& y, train::Buffer& dy, train::Buffer* dx, train::Buffer& dw,
                       std::size_t b_off, bool relu) override;
  void dense_forward(const train::DenseShape& s, const train::Buffer& x, const train::Buffer& w, std::size_t w_off,
                     std::size_t b_off, train::Buffer& y, bool relu) override;
  void dense_backward(const train::DenseShape& s, const train::Buffer& x, const train::Buffer& w, std::size_t w_off,
                      const train::Buffer& y, train::Buffer& dy, train::Buffer* dx, train::Buffer& dw,
                      std::size_t b_off, bool relu) override;
  void maxpool2_forward(int n, int h, int w, int c, const train::Buffer& x, train::PoolLayouts layouts,
                        train::Buffer& y) override;
  void maxpool2_backward(int n, int h, int w, int c, const train::Buffer& x, train::PoolLayouts layouts,
                         const train::Buffer& y, const train::Buffer& dy, const train::PoolBackwardFusion& fused,
                         train::Buffer& dx) override;
  void dropout_forward(const train::Buffer& x, train::Buffer& y, train::Buffer& mask, float rate,
                       std::uint64_t layer_stream, std::uint64_t first_image_key, std::size_t per_image) override;
  void dropout_backward(const train::Buffer& dy, const train::Buffer& mask, train::Buffer& dx) override;
  void softmax_cross_entropy(int n, int classes, const train::Buffer& logits, const train::Buffer& labels,
                             train::Buffer* dlogits, double* loss_sum, int* correct) override;
  void rmsprop_update(train::Buffer& params, const train::Buffer& grads, train::Buffer& ms, float lr, float rho,
                      float eps) override;
  void scale(train::Buffer& x, float factor) override;
  void set_threads(int threads) override;

  int device() const { return device_; }

 private:
  // Pinned host memory for one upload in flight; `done` fires when its copy has finished.
  struct Staging {
    float* host = nullptr;
    std::size_t capacity = 0;  // floats
    cudaEvent_t done = nullptr;
    bool pending = false;
  };
  CudnnConv& conv(const train::ConvShape& s);
  const float* plan_filter(const CudnnConv& plan, const train::ConvShape& s, const float* keras);
  float* pinned(Staging& staging, std::size_t count);

  CudaBackendOptions options_;
  cudnnTensorFormat_t conv_layout_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::map<std::tuple<int, int, int, int, int, int, int>, std::unique_ptr<CudnnConv>> convs_;
  DeviceScratch workspace_, column_scratch_, filter_, filter_grad_;
  DeviceScratch nchw_in_, nchw_out_;  // activations transposed for NCHW plans
  std::array<Staging, 2> uploads_{};  // alternated, so input and labels uploads overlap
  std::size_t next_upload_ = 0;
  Staging download_{};
  kernels::XentResult* xent_device_ = nullptr;
  kernels::XentResult* xent_host_ = nullptr;  // pinned
};

}  // namespace batchai::train_cuda
