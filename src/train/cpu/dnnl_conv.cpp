// oneDNN convolution primitives of the CPU backend (see dnnl_conv.hpp).
#include "cpu/dnnl_conv.hpp"

#include <string>

#include "cpu/dnnl_memory.hpp"

namespace batchai::train::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

memory::format_tag tag_of(Layout layout) {
  switch (layout) {
    case Layout::kNchw16c: return tag::nChw16c;
    case Layout::kNchw: return tag::nchw;
    case Layout::kNhwc: break;
  }
  return tag::nhwc;
}

// The blocked weight gradient pays where oneDNN's NHWC weight-gradient kernels are slow: few
// input channels, whole 16-channel blocks of output, AVX-512.
bool wants_blocked_weight_gradient(const ConvShape& s) {
  return s.x_layout == Layout::kNhwc && s.y_layout == Layout::kNhwc && s.c < 16 && s.out % 16 == 0 &&
         onednn_runs_avx512();
}

// oneDNN's JIT kernels ("jit:...", "brgconv:..."), not its reference ones, a hundred times slower.
bool is_jit(const std::string& impl) { return impl.rfind("jit", 0) == 0 || impl.rfind("brg", 0) == 0; }

bool runs_amx(const std::string& impl) { return impl.find("amx") != std::string::npos; }

// w (kh, kw, c, out) in hwio to the kernel of that convolution, (kh, kw, out, c): each tap from
// its mirror tap, transposed.
void mirror_and_swap(const float* w, int k, int c, int out, float* swapped) {
  for (int kh = 0; kh < k; ++kh) {
    for (int kw = 0; kw < k; ++kw) {
      const float* from = w + (static_cast<std::size_t>(k - 1 - kh) * k + (k - 1 - kw)) * c * out;
      float* to = swapped + (static_cast<std::size_t>(kh) * k + kw) * out * c;
      for (int ci = 0; ci < c; ++ci) {
        for (int co = 0; co < out; ++co) {
          to[static_cast<std::size_t>(co) * c + ci] = from[static_cast<std::size_t>(ci) * out + co];
        }
      }
    }
  }
}

}  // namespace

// The data gradient of a stride-1 convolution is itself a convolution: dy, padded by k - 1 - pad,
// with the kernel mirrored and its input and output channels swapped. Where oneDNN runs AVX-512
// its forward kernels do that faster than its data-gradient kernels (a 2-vCPU Emerald Rapids
// Xeon, 8 alternating pairs of train_bench: conv2d_2's backward 5.36 against 5.75 ms, conv2d_3's
// and conv2d_4's 3% less; on an AMD Zen 4, 8 pairs: img/s x1.02 against the data-gradient
// kernels, faster in 5); held to AVX2 they are slower (7-12% more), so AVX2 keeps its own. In
// bfloat16 it is the other way round (Zen 4, the roofline in the step: conv2d_3's and conv2d_4's
// data gradients 0.57 and 1.00 ms against 0.64 and 1.16 as forward convolutions), unless only the
// forward kernels run AMX, whose tiles multiply bfloat16 several times faster (not measured: no
// AMX CPU since mixed precision exists).
bool data_gradient_as_forward(bool avx512, bool bf16, const std::string& direct, const std::string& as_forward) {
  if (!avx512 || !is_jit(as_forward)) return false;
  return !bf16 || (runs_amx(as_forward) && !runs_amx(direct));
}

DnnlConv::DnnlConv(const dnnl::engine& engine, const ConvShape& s, bool relu, bool bf16, bool winograd)
    : shape_(s), engine_(engine), bf16_(conv_runs_bf16(s, bf16)) {
  const memory::dims src{s.n, s.c, s.h, s.w}, wei{s.out, s.c, s.k, s.k}, bias{s.out};
  const memory::dims dst{s.n, s.out, s.oh(), s.ow()}, strides{1, 1}, pad{s.pad, s.pad};
  const memory::desc x_md(src, dt::f32, tag_of(s.x_layout)), y_md(dst, dt::f32, tag_of(s.y_layout));
  // What the kernels read: x, dy and the kernel in float32, or rounded to bfloat16.
  const dt low = bf16_ ? dt::bf16 : dt::f32;
  const memory::desc x_read(src, low, tag_of(s.x_layout)), dy_read(dst, low, tag_of(s.y_layout));
  const memory::desc nchw_md(src, dt::f32, tag::nchw);
  const memory::desc any_w(wei, low, tag::any), bias_md(bias, dt::f32, tag::x);
  const memory::desc any_dw(wei, dt::f32, tag::any);
  y_md_ = y_md;
  user_w_md_ = memory::desc(wei, dt::f32, tag::hwio);
  dnnl::primitive_attr attr;
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  // The three primitives of one algorithm, with the layouts and types of x and dy as they read
  // them, and of y and dx as they write them.
  auto make = [&](dnnl::algorithm alg, const memory::desc& reads_x, const memory::desc& reads_dy,
                  const memory::desc& writes_y, const memory::desc& writes_dx) {
    fwd_pd_ = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, reads_x, any_w, bias_md, writes_y,
                                        strides, pad, pad),
        attr, engine);
    bwd_data_pd_ = dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(alg, writes_dx, any_w, reads_dy, strides, pad, pad), engine, fwd_pd_);
    bwd_weights_pd_ = dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(alg, reads_x, any_dw, bias_md, reads_dy, strides, pad, pad),
        engine, fwd_pd_);
  };
  if (winograd && !bf16_ && s.c % 16 == 0 && s.out % 16 == 0 && onednn_runs_avx512()) {
    // oneDNN's Winograd kernels read and write nChw16c only: activations in another layout go
    // through copies of their own.
    const memory::desc x_blocked(src, dt::f32, tag::nChw16c), y_blocked(dst, dt::f32, tag::nChw16c);
    try {
      make(dnnl::algorithm::convolution_winograd, x_blocked, y_blocked, y_blocked, x_blocked);
      winograd_ = is_jit(fwd_pd_.impl_info_str());
    } catch (const dnnl::error&) {
    }
    if (winograd_ && s.x_layout != Layout::kNchw16c) {
      x_copy_ = OperandCopy(engine, x_md, x_blocked);
      dx_out_ = OperandOut(engine, x_blocked, x_md);
    }
    if (winograd_ && s.y_layout != Layout::kNchw16c) {
      dy_copy_ = OperandCopy(engine, y_md, y_blocked);
      y_out_ = OperandOut(engine, y_blocked, y_md);
    }
  }
  if (!winograd_) make(dnnl::algorithm::convolution_direct, x_read, dy_read, y_md, x_md);
  if (bf16_) {
    x_copy_ = OperandCopy(engine, x_md, x_read);
    dy_copy_ = OperandCopy(engine, y_md, dy_read);
  }
  if (!bf16_ && wants_blocked_weight_gradient(s)) {
    const memory::desc dy_md(dst, dt::f32, tag::nChw16c);
    const auto hint = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                        nchw_md, any_w, bias_md, dy_md, strides, pad, pad),
        engine);
    const auto pd = dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, nchw_md, any_w, bias_md,
                                                 dy_md, strides, pad, pad),
        engine, hint);
    if (is_jit(pd.impl_info_str())) {
      dy_to_blocked_ = true;
      bwd_weights_pd_ = pd;
      x_nchw_ = memory(nchw_md, engine);
      x_to_nchw_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, x_md, engine, nchw_md));
    }
  }
  fwd_ = dnnl::convolution_forward(fwd_pd_);
  bwd_data_ = dnnl::convolution_backward_data(bwd_data_pd_);
  bwd_weights_ = dnnl::convolution_backward_weights(bwd_weights_pd_);
  if (onednn_runs_avx512() && !winograd_) {
    const memory::dims swapped{s.c, s.out, s.k, s.k}, full_pad{s.k - 1 - s.pad, s.k - 1 - s.pad};
    const auto pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        dy_read, memory::desc(swapped, low, tag::any), x_md, strides, full_pad,
                                        full_pad),
        engine);
    if (data_gradient_as_forward(true, bf16_, bwd_data_pd_.impl_info_str(), pd.impl_info_str())) {
      data_as_forward_ = true;
      data_fwd_pd_ = pd;
      data_fwd_ = dnnl::convolution_forward(pd);
      swapped_md_ = memory::desc(swapped, dt::f32, tag::hwio);
      w_swapped_.resize(static_cast<std::size_t>(s.k) * s.k * s.c * s.out);
    }
  }
  w_fwd_ = memory(fwd_pd_.weights_desc(), engine);
  w_bwd_ = memory(data_as_forward_ ? data_fwd_pd_.weights_desc() : bwd_data_pd_.weights_desc(), engine);
  dw_blocked_ = memory(bwd_weights_pd_.diff_weights_desc(), engine);
  db_ = memory(bwd_weights_pd_.diff_bias_desc(), engine);
  w_to_fwd_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_w_md_, engine, fwd_pd_.weights_desc()));
  w_to_bwd_ = data_as_forward_
                  ? dnnl::reorder(dnnl::reorder::primitive_desc(engine, swapped_md_, engine, w_bwd_.get_desc()))
                  : dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_w_md_, engine, w_bwd_.get_desc()));
  // Gradients accumulate (dw += ...): the reorder back to hwio adds onto its destination.
  dnnl::primitive_attr sum_attr;
  dnnl::post_ops sum;
  sum.append_sum(1.0f);
  sum_attr.set_post_ops(sum);
  dw_accumulate_ = dnnl::reorder(
      dnnl::reorder::primitive_desc(engine, bwd_weights_pd_.diff_weights_desc(), engine, user_w_md_, sum_attr));
}

bool DnnlConv::jit(bool with_data_gradient) const {
  return is_jit(fwd_pd_.impl_info_str()) && is_jit(bwd_weights_pd_.impl_info_str()) &&
         (!with_data_gradient || data_as_forward_ || is_jit(bwd_data_pd_.impl_info_str()));
}

DnnlConv::OperandCopy::OperandCopy(const dnnl::engine& engine, const memory::desc& from, const memory::desc& to)
    : from_(from), copy_(to, engine), to_(dnnl::reorder::primitive_desc(engine, from, engine, to)) {}

memory DnnlConv::OperandCopy::make(dnnl::stream& stream, const float* p, const memory::desc& desc) {
  if (!to_.get(true)) return wrap(desc, stream.get_engine(), p);
  memory user = wrap(from_, stream.get_engine(), p);
  to_.execute(stream, user, copy_);
  of_ = p;
  return copy_;
}

memory DnnlConv::OperandCopy::reuse(dnnl::stream& stream, const float* p, const memory::desc& desc) {
  const memory copy = p == of_ ? copy_ : make(stream, p, desc);
  of_ = nullptr;
  return copy;
}

DnnlConv::OperandOut::OperandOut(const dnnl::engine& engine, const memory::desc& from, const memory::desc& to)
    : to_md_(to), buffer_(from, engine), back_(dnnl::reorder::primitive_desc(engine, from, engine, to)) {}

memory DnnlConv::OperandOut::target(dnnl::stream& stream, const memory::desc& desc, float* p) {
  target_ = p;
  return back_.get(true) ? buffer_ : wrap(desc, stream.get_engine(), p);
}

void DnnlConv::OperandOut::finish(dnnl::stream& stream) {
  if (!back_.get(true)) return;
  memory user = wrap(to_md_, stream.get_engine(), target_);
  back_.execute(stream, buffer_, user);
}

void DnnlConv::forward(dnnl::stream& stream, const float* x, const float* w, const float* b, float* y) {
  memory user_w = wrap(user_w_md_, engine_, w);
  w_to_fwd_.execute(stream, user_w, w_fwd_);
  fwd_.execute(stream, {{DNNL_ARG_SRC, x_copy_.make(stream, x, fwd_pd_.src_desc())},
                        {DNNL_ARG_WEIGHTS, w_fwd_},
                        {DNNL_ARG_BIAS, wrap(fwd_pd_.bias_desc(), engine_, b)},
                        {DNNL_ARG_DST, y_out_.target(stream, fwd_pd_.dst_desc(), y)}});
  y_out_.finish(stream);
  stream.wait();
}

void DnnlConv::backward_weights(dnnl::stream& stream, const float* x, const float* dy) {
  if (dy_to_blocked_) {
    memory user_x = wrap(fwd_pd_.src_desc(), engine_, x);
    x_to_nchw_.execute(stream, user_x, x_nchw_);
    x = static_cast<const float*>(x_nchw_.get_data_handle());
  }
  const memory src = x_copy_.reuse(stream, x, bwd_weights_pd_.src_desc());
  const memory diff = dy_copy_.make(stream, dy, bwd_weights_pd_.diff_dst_desc());
  bwd_weights_.execute(stream, {{DNNL_ARG_SRC, src},
                                {DNNL_ARG_DIFF_DST, diff},
                                {DNNL_ARG_DIFF_WEIGHTS, dw_blocked_},
                                {DNNL_ARG_DIFF_BIAS, db_}});
  stream.wait();
}

void DnnlConv::accumulate_weights(dnnl::stream& stream, float* dw, float* db) {
  memory user_dw = wrap(user_w_md_, engine_, dw);
  dw_accumulate_.execute(stream, dw_blocked_, user_dw);
  stream.wait();
  const float* g = static_cast<const float*>(db_.get_data_handle());
  for (int j = 0; j < shape_.out; ++j) db[j] += g[j];
}

void DnnlConv::backward_data(dnnl::stream& stream, const float* w, const float* dy, float* dx) {
  const memory diff = dy_copy_.reuse(stream, dy, y_md_);
  if (data_as_forward_) {
    mirror_and_swap(w, shape_.k, shape_.c, shape_.out, w_swapped_.data());
    memory swapped = wrap(swapped_md_, engine_, w_swapped_.data());
    w_to_bwd_.execute(stream, swapped, w_bwd_);
    data_fwd_.execute(stream, {{DNNL_ARG_SRC, diff},
                               {DNNL_ARG_WEIGHTS, w_bwd_},
                               {DNNL_ARG_DST, wrap(data_fwd_pd_.dst_desc(), engine_, dx)}});
    stream.wait();
    return;
  }
  memory user_w = wrap(user_w_md_, engine_, w);
  w_to_bwd_.execute(stream, user_w, w_bwd_);
  bwd_data_.execute(stream, {{DNNL_ARG_DIFF_DST, diff},
                             {DNNL_ARG_WEIGHTS, w_bwd_},
                             {DNNL_ARG_DIFF_SRC, dx_out_.target(stream, bwd_data_pd_.diff_src_desc(), dx)}});
  dx_out_.finish(stream);
  stream.wait();
}

std::string DnnlConv::kernels() const {
  const std::string data =
      data_as_forward_ ? "as forward " + std::string(data_fwd_pd_.impl_info_str()) : bwd_data_pd_.impl_info_str();
  return std::string("fwd ") + fwd_pd_.impl_info_str() + ", bwd-data " + data + ", bwd-weights " +
         bwd_weights_pd_.impl_info_str();
}

}  // namespace batchai::train::cpu
