// The CPU backend: NHWC activations throughout; convolutions on oneDNN's JIT kernels (bias and
// ReLU fused, primitives cached per shape); dense layers on OpenBLAS sgemm split by output
// columns; everything else element-wise. One OpenMP team (the one oneDNN uses) runs all of it,
// so no two thread pools fight over the cores. Buffers are allocated once and reused.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <dnnl.hpp>

#include "batchai/train/backend.hpp"
#include "cpu/dnnl_conv.hpp"

namespace batchai::train::cpu {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads);
  ~CpuBackend() override;
  std::string name() const override { return "cpu"; }

  Buffer allocate(std::size_t count) override;
  void release(Buffer& buffer) override;
  void upload(Buffer& dst, const float* host, std::size_t count, std::size_t offset) override;
  void download(float* host, const Buffer& src, std::size_t count, std::size_t offset) override;
  void fill(Buffer& dst, float value) override;

  void conv2d_forward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                      std::size_t b_off, Buffer& y, bool relu) override;
  void conv2d_backward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                       const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                       bool relu) override;
  void dense_forward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                     std::size_t b_off, Buffer& y, bool relu) override;
  void dense_backward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                      const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                      bool relu) override;
  void maxpool2_forward(int n, int h, int w, int c, const Buffer& x, Buffer& y) override;
  void maxpool2_backward(int n, int h, int w, int c, const Buffer& x, const Buffer& y,
                         const Buffer& dy, Buffer& dx) override;
  void dropout_forward(const Buffer& x, Buffer& y, Buffer& mask, float rate, std::uint64_t layer_stream,
                       std::uint64_t first_image_key, std::size_t per_image) override;
  void dropout_backward(const Buffer& dy, const Buffer& mask, Buffer& dx) override;
  void softmax_cross_entropy(int n, int classes, const Buffer& logits, const Buffer& labels,
                             Buffer* dlogits, double* loss_sum, int* correct) override;
  void rmsprop_update(Buffer& params, const Buffer& grads, Buffer& ms, float lr, float rho,
                      float eps) override;
  void scale(Buffer& x, float factor) override;
  void set_threads(int threads) override;

 private:
  // Runs fn(part) for part in [0, parts) on the OpenMP team.
  void run(int parts, const std::function<void(int)>& fn) const;
  // Splits [0, total) into `parts` near-equal ranges.
  static void split(int total, int parts, int part, int& begin, int& end);
  DnnlConv& conv(const ConvShape& s, bool relu);
  int threads_ = 1;
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::map<std::tuple<int, int, int, int, int, int, bool>, std::unique_ptr<DnnlConv>> convs_;
};

}  // namespace batchai::train::cpu
