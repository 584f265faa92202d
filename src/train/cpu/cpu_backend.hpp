// The CPU backend: NHWC activations but in a blocked chain (blocked_chain_pays, conv_wants_blocked);
// convolutions on oneDNN's JIT kernels, Winograd's where they run (bias and ReLU fused, primitives
// cached per shape and layouts); dense layers on oneDNN's kernels where oneDNN runs AVX-512 or
// OpenBLAS runs kernels older than AVX2, else on OpenBLAS sgemm split by output columns
// (cpu_dense.cpp); everything else on element-wise kernels chosen per ISA at run time
// (cpu_elementwise.hpp). One OpenMP team (the one oneDNN uses) runs all of it, so no two thread
// pools fight over the cores. Buffers are allocated once, 64-byte aligned, and reused.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "batchai/train/backend.hpp"
#include "cpu/cpu_profile.hpp"
#include "cpu/dnnl_conv.hpp"
#include "cpu/dnnl_dense.hpp"

namespace batchai::train::cpu {

// Whether OpenBLAS's core (openblas_get_corename()) is one of its targets with AVX2 kernels.
bool openblas_core_runs_avx2(const std::string& core);

class CpuBackend final : public Backend {
 public:
  // Precision::kMixedBfloat16 throws InvalidArgument where oneDNN has no bfloat16 kernels.
  explicit CpuBackend(int threads, Precision precision = Precision::kFloat32);
  ~CpuBackend() override;
  std::string name() const override { return "cpu"; }
  bool computes_on_host() const override { return true; }

  Buffer allocate(std::size_t count) override;
  void release(Buffer& buffer) override;
  void upload(Buffer& dst, const float* host, std::size_t count, std::size_t offset) override;
  void download(float* host, const Buffer& src, std::size_t count, std::size_t offset) override;
  void upload_images(Buffer& dst, const float* host_nhwc, int n, int h, int w, int c, Layout layout) override;
  void fill(Buffer& dst, float value) override;
  void zero_gradients(Buffer& grads) override;
  void settle_gradients(Buffer& grads) override;

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
  // Where oneDNN runs AVX-512 (dense_rmsprop.hpp).
  bool dense_rmsprop_folds(const DenseShape& s) override;
  void dense_backward_data(const DenseShape& s, const Buffer& w, std::size_t w_off, const Buffer& y, Buffer& dy,
                           Buffer* dx, Buffer& dw, std::size_t b_off, bool relu) override;
  void rmsprop_dense_from_factors(const DenseShape& s, const Buffer& x, const Buffer& dy, Buffer& params,
                                  Buffer& ms, std::size_t w_off, std::size_t b_off, float lr, float rho,
                                  float eps) override;
  void maxpool2_forward(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts, Buffer& y) override;
  void maxpool2_backward(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts, const Buffer& y,
                         const Buffer& dy, const PoolBackwardFusion& fused, Buffer& dx) override;
  // On every ISA (unless allow_pool_routes(false)): 5.5 MB fewer read by the tutorial's first
  // pooling's backward, and no pass of the dropout after it.
  bool pools_by_routes() const override { return pool_routes_; }
  void maxpool2_forward_routed(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts,
                               const PoolRouting& routing, Buffer& y, Buffer& routes) override;
  void maxpool2_backward_routed(int n, int h, int w, int c, const Buffer& routes, const Buffer& dy,
                                const PoolRouting& routing, PoolLayouts layouts, Buffer& dx) override;
  // On AVX-512 with oneDNN's JIT kernels for the chain's layouts (cpu_backend.cpp says why).
  bool blocked_chain_pays(const ConvShape& first, const ConvShape& second) override;
  // Where it runs oneDNN's Winograd kernels (DnnlConv), with routed poolings and blocked chains allowed.
  bool conv_wants_blocked(const ConvShape& s) override;
  void dropout_forward(const Buffer& x, Buffer& y, Buffer& mask, float rate, std::uint64_t layer_stream,
                       std::uint64_t first_image_key, std::size_t per_image) override;
  void dropout_backward(const Buffer& dy, const Buffer& mask, Buffer& dx) override;
  void softmax_cross_entropy(int n, int classes, const Buffer& logits, const Buffer& labels,
                             Buffer* dlogits, double* loss_sum, int* correct) override;
  void rmsprop_update(Buffer& params, const Buffer& grads, Buffer& ms, float lr, float rho,
                      float eps) override;
  void scale(Buffer& x, float factor) override;
  void set_threads(int threads) override;
  // For benchmarks and tests: whether blocked_chain_pays may answer yes (the default).
  void allow_blocked_chains(bool allow) { blocked_chains_ = allow; }
  // For benchmarks and tests: whether pools_by_routes answers yes (the default).
  void allow_pool_routes(bool allow) { pool_routes_ = allow; }
  // For benchmarks and tests: whether convolutions may run Winograd's kernels (the default).
  void allow_winograd(bool allow) { winograd_ = allow; }
  // Per-operation timing for the benchmark's roofline; null (the default) times nothing.
  void set_profile(CpuProfile* profile) { profile_ = profile; }
  // "shape: kernels" for every convolution created so far, and what the dense layers run on.
  std::vector<std::string> kernels() const;

 private:
  // Runs fn(part) for part in [0, parts) on the OpenMP team.
  void run(int parts, const std::function<void(int)>& fn) const;
  // Splits [0, total) into `parts` near-equal ranges.
  static void split(int total, int parts, int part, int& begin, int& end);
  // Runs fn(begin, end) over near-equal ranges of [0, total) on up to threads_ parts, at least
  // min_per_part items each, boundaries on multiples of `align`.
  void for_ranges(std::size_t total, std::size_t min_per_part, std::size_t align,
                  const std::function<void(std::size_t, std::size_t)>& fn) const;
  // Images (or rows) of `floats_per_image` that make a part worth its thread.
  static std::size_t images_per_part(std::size_t floats_per_image);
  void mask_relu(Buffer& dy, const Buffer& y, std::size_t count) const;
  // A convolution's dy (DnnlConv::dy_to_blocked), NHWC, into nChw16c in place, masked by y when
  // `relu`: image by image through a copy in this thread's scratch (one image, in L2), so no
  // buffer the size of dy is needed. It costs about 0.13 ms more than the NHWC mask for conv2d_1.
  void to_blocked_in_place(const ConvShape& s, Buffer& dy, const Buffer& y, bool relu);
  // dw and db += a few-channel convolution's weight gradient (few_channel_weight_gradient.hpp),
  // dy masked by y where y is given.
  void few_channel_weights(const ConvShape& s, const Buffer& x, const Buffer& dy, const Buffer* y, Buffer& dw,
                           std::size_t w_off, std::size_t b_off);
  // Whether [off, off + count) of `dw` is the arena zero_gradients() left unzeroed, no backward
  // pass having written it since; records the write. A weight gradient's first write then
  // overwrites instead of adding (dense_1: a GEMM with beta 0, which also skips reading 4.7 MB of
  // zeros), or zeroes its slot first (zero_if_first_write: the small slots, bit for bit as before).
  bool first_write(const Buffer& dw, std::size_t off, std::size_t count);
  void zero_if_first_write(Buffer& dw, std::size_t off, std::size_t count);
  // Settles the deferred zeroing when [data, data + count) overlaps the arena: anything that
  // reads or writes it other than through first_write (upload, download, the optimizer...).
  void settle_overlapping(const float* data, std::size_t count);
  // Whether the dense layers run on oneDNN: where it runs AVX-512, or AVX2 where OpenBLAS's
  // kernels are older (openblas_core_runs_avx2).
  static bool dense_on_onednn();
  int blas_parts(const DenseShape& s) const;
  // dense_backward's parts: the ReLU's mask on dy, and dx.
  void dense_relu_mask(const DenseShape& s, Buffer& dy, const Buffer& y);
  void dense_input_gradient(const DenseShape& s, const Buffer& w, std::size_t w_off, const Buffer& dy, Buffer& dx);
  DnnlDenseData& dense_data(const DenseShape& s);
  static constexpr std::size_t kMinFloatsPerPart = 32768;
  // Convolutions by shape, layouts and the forward's fused ReLU; the backward takes the forward's.
  using ConvKey = std::tuple<int, int, int, int, int, int, bool, Layout, Layout>;
  static ConvKey conv_key(const ConvShape& s, bool relu);
  DnnlConv& conv(const ConvShape& s, bool relu);
  DnnlConv& conv_for_backward(const ConvShape& s, bool relu);
  int threads_ = 1;
  CpuProfile* profile_ = nullptr;
  dnnl::engine engine_;
  dnnl::stream stream_;
  bool dense_onednn_ = false;
  bool blocked_chains_ = true;
  bool bf16_convs_ = false;  // Precision::kMixedBfloat16 (DnnlConv's bf16)
  bool pool_routes_ = true;
  bool winograd_ = true;
  std::map<ConvKey, std::unique_ptr<DnnlConv>> convs_;
  std::map<std::tuple<int, int, int>, std::unique_ptr<DnnlDenseData>> denses_;
  // The arena whose zeroing zero_gradients() deferred and the ranges of it written since
  // (first_write); null when none is pending.
  Buffer unzeroed_;
  std::vector<std::pair<std::size_t, std::size_t>> written_;
  std::vector<float> image_scratch_;  // one image a thread, for to_blocked_in_place
  std::vector<float> part_scratch_;   // a thread's sums and padded image, for few_channel_weights
  std::vector<float> factor_scratch_;  // x transposed and the bias gradient, for rmsprop_dense_from_factors
};

}  // namespace batchai::train::cpu
