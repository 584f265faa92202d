// oneDNN convolution for the CPU backend: activations in the layouts ConvShape gives (NHWC, or
// nChw16c in a blocked chain), weights taken from the arena in Keras (kh, kw, in, out) = oneDNN
// "hwio" and reordered each step into the blocked format the JIT kernels want; bias + ReLU fused
// as a post-op. Primitives are created once per shape and layouts, and reused. In float32 on
// AVX-512, convolutions of whole 16-channel blocks run oneDNN's Winograd kernels (F(4x4, 3x3)),
// 1.25 to 2 times as fast as its direct ones (Zen 4, alone); in mixed precision (bf16) the direct
// kernels compute on bfloat16 copies of x, dy and the kernel.
#pragma once
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "batchai/train/backend.hpp"

namespace batchai::train::cpu {

// Whether a convolution of shape s runs in bfloat16 when the run asks for mixed precision: from 16
// input channels on (see DnnlConv's constructor).
inline bool conv_runs_bf16(const ConvShape& s, bool mixed_precision) { return mixed_precision && s.c >= 16; }

// Whether a stride-1 convolution's data gradient runs as a forward convolution of dy (the .cpp says
// why), given the implementations oneDNN chose for the data-gradient primitive and for that one.
bool data_gradient_as_forward(bool avx512, bool bf16, const std::string& direct, const std::string& as_forward);

class DnnlConv {
 public:
  // bf16 (Precision::kMixedBfloat16; the caller checks onednn_runs_bf16()): a convolution of 16 or
  // more input channels (conv_runs_bf16) runs oneDNN's bfloat16 kernels on x, dy and the kernel rounded to
  // bfloat16 (to nearest even), and sums and writes float32. A first layer's (few channels) stays
  // float32: its weight gradient is a few-channel kernel, and the image enters unrounded.
  DnnlConv(const dnnl::engine& engine, const ConvShape& shape, bool relu, bool bf16 = false, bool winograd = false);
  bool bf16() const { return bf16_; }
  // Whether it runs oneDNN's Winograd kernels (float32 only; where asked, on AVX-512, for whole
  // 16-channel blocks in and out), which read and write nChw16c only: activations in another
  // layout go through copies of their own.
  bool winograd() const { return winograd_; }
  // y = act(conv(x, w) + b); all pointers are host memory of the backend.
  void forward(dnnl::stream& stream, const float* x, const float* w, const float* b, float* y);
  // dL/dw and dL/db into the primitive's own buffers. dy must already be masked by the ReLU, and
  // when dy_to_blocked() be in oneDNN's nChw16c (relu_mask_to_blocked16). x must hold what the
  // forward read (backprop's contract): the forward's copy of x (bf16's rounded one, Winograd's
  // blocked one) serves when x is the array the last forward read, once; any other x is copied again.
  void backward_weights(dnnl::stream& stream, const float* x, const float* dy);
  // For a convolution of few input channels (the first layer) with NHWC x and y: its weight
  // gradient runs the JIT kernel on an NCHW copy of x and on dy in nChw16c, which the caller
  // writes: 0.24-0.32 instead of 0.37-0.55 ms for 3 -> 32 channels at 32x32 in the step
  // (train_bench --roofline, under load), where NHWC gets oneDNN's slower kernels.
  bool dy_to_blocked() const { return dy_to_blocked_; }
  // Whether oneDNN chose JIT kernels (not its reference ones, a hundred times slower) for the
  // forward and weight gradient, and for the data gradient when `with_data_gradient`.
  bool jit(bool with_data_gradient) const;
  // Then dw += dL/dw (hwio), db += dL/db: accumulating, via a sum post-op on the reorder.
  void accumulate_weights(dnnl::stream& stream, float* dw, float* db);
  // dx = dL/dx, on direct kernels as a forward convolution of dy where data_gradient_as_forward
  // says so. The copy of dy that backward_weights made (bf16's rounded one, Winograd's blocked one)
  // serves when dy is the same array (conv2d_backward calls the two back to back on one dy); any
  // other call copies dy again.
  void backward_data(dnnl::stream& stream, const float* w, const float* dy, float* dx);
  // The kernels oneDNN chose for the three primitives ("brgconv:avx512_core ..."), for the roofline.
  std::string kernels() const;

 private:
  ConvShape shape_;
  dnnl::engine engine_;
  dnnl::convolution_forward::primitive_desc fwd_pd_;
  dnnl::convolution_backward_data::primitive_desc bwd_data_pd_;
  dnnl::convolution_backward_weights::primitive_desc bwd_weights_pd_;
  dnnl::convolution_forward fwd_;
  dnnl::convolution_backward_data bwd_data_;
  dnnl::convolution_backward_weights bwd_weights_;
  // The data gradient as a forward convolution of dy (data_gradient_as_forward): the
  // kernel mirrored with its channels swapped, w_swapped_ in hwio (k, k, out, c), padding k-1-pad.
  bool data_as_forward_ = false;
  dnnl::convolution_forward::primitive_desc data_fwd_pd_;
  dnnl::convolution_forward data_fwd_;
  std::vector<float> w_swapped_;
  dnnl::memory::desc swapped_md_;
  bool dy_to_blocked_ = false;
  // An operand (x or dy) copied into an array of its own in the layout and type its kernels read:
  // rounded to bfloat16 (bf16), or blocked (Winograd's nChw16c). make() copies and remembers which
  // array the copy is of; reuse() serves that copy once, when given the same array (backprop's
  // contract: unchanged since), else copies; either way it then forgets it. Without a copy to make
  // (default-constructed), both wrap the array itself as `desc`.
  class OperandCopy {
   public:
    OperandCopy() = default;
    OperandCopy(const dnnl::engine& engine, const dnnl::memory::desc& from, const dnnl::memory::desc& to);
    dnnl::memory make(dnnl::stream& stream, const float* p, const dnnl::memory::desc& desc);
    dnnl::memory reuse(dnnl::stream& stream, const float* p, const dnnl::memory::desc& desc);

   private:
    dnnl::memory::desc from_;
    dnnl::memory copy_;
    dnnl::reorder to_;
    const float* of_ = nullptr;
  };
  // A result (y or dx) that the kernels write in a layout of their own (Winograd's nChw16c):
  // target() gives them a buffer, finish() copies it into the caller's array. Default-constructed,
  // target() wraps the caller's array as `desc` and finish() does nothing.
  class OperandOut {
   public:
    OperandOut() = default;
    OperandOut(const dnnl::engine& engine, const dnnl::memory::desc& from, const dnnl::memory::desc& to);
    dnnl::memory target(dnnl::stream& stream, const dnnl::memory::desc& desc, float* p);
    void finish(dnnl::stream& stream);

   private:
    dnnl::memory::desc to_md_;
    dnnl::memory buffer_;
    dnnl::reorder back_;
    float* target_ = nullptr;
  };
  bool bf16_ = false;
  bool winograd_ = false;  // winograd()
  dnnl::memory::desc y_md_;  // dy as the caller gives it (float32)
  OperandCopy x_copy_, dy_copy_;  // the forward's x for the weight gradient, its dy for the data gradient
  OperandOut y_out_, dx_out_;
  dnnl::memory::desc user_w_md_;  // hwio
  dnnl::memory x_nchw_;  // dy_to_blocked() only: the weight gradient's copy of x
  dnnl::reorder x_to_nchw_;
  // Forward and backward-data kernels may want different blocked weight formats.
  dnnl::memory w_fwd_, w_bwd_, dw_blocked_, db_;
  dnnl::reorder w_to_fwd_, w_to_bwd_, dw_accumulate_;
};

}  // namespace batchai::train::cpu
