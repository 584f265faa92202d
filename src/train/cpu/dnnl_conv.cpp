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

}  // namespace

DnnlConv::DnnlConv(const dnnl::engine& engine, const ConvShape& s, bool relu) : shape_(s), engine_(engine) {
  const memory::dims src{s.n, s.c, s.h, s.w}, wei{s.out, s.c, s.k, s.k}, bias{s.out};
  const memory::dims dst{s.n, s.out, s.oh(), s.ow()}, strides{1, 1}, pad{s.pad, s.pad};
  const memory::desc x_md(src, dt::f32, tag_of(s.x_layout)), y_md(dst, dt::f32, tag_of(s.y_layout));
  const memory::desc nchw_md(src, dt::f32, tag::nchw);
  const memory::desc any_w(wei, dt::f32, tag::any), bias_md(bias, dt::f32, tag::x);
  user_w_md_ = memory::desc(wei, dt::f32, tag::hwio);
  dnnl::primitive_attr attr;
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  fwd_pd_ = dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                      x_md, any_w, bias_md, y_md, strides, pad, pad),
      attr, engine);
  bwd_data_pd_ = dnnl::convolution_backward_data::primitive_desc(
      dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, x_md, any_w, y_md, strides,
                                            pad, pad),
      engine, fwd_pd_);
  bwd_weights_pd_ = dnnl::convolution_backward_weights::primitive_desc(
      dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, x_md, any_w, bias_md, y_md,
                                               strides, pad, pad),
      engine, fwd_pd_);
  if (wants_blocked_weight_gradient(s)) {
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
  w_fwd_ = memory(fwd_pd_.weights_desc(), engine);
  w_bwd_ = memory(bwd_data_pd_.weights_desc(), engine);
  dw_blocked_ = memory(bwd_weights_pd_.diff_weights_desc(), engine);
  db_ = memory(bwd_weights_pd_.diff_bias_desc(), engine);
  w_to_fwd_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_w_md_, engine, fwd_pd_.weights_desc()));
  w_to_bwd_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_w_md_, engine, bwd_data_pd_.weights_desc()));
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
         (!with_data_gradient || is_jit(bwd_data_pd_.impl_info_str()));
}

void DnnlConv::forward(dnnl::stream& stream, const float* x, const float* w, const float* b, float* y) {
  memory user_w = wrap(user_w_md_, engine_, w);
  w_to_fwd_.execute(stream, user_w, w_fwd_);
  fwd_.execute(stream, {{DNNL_ARG_SRC, wrap(fwd_pd_.src_desc(), engine_, x)},
                        {DNNL_ARG_WEIGHTS, w_fwd_},
                        {DNNL_ARG_BIAS, wrap(fwd_pd_.bias_desc(), engine_, b)},
                        {DNNL_ARG_DST, wrap(fwd_pd_.dst_desc(), engine_, y)}});
  stream.wait();
}

void DnnlConv::backward_weights(dnnl::stream& stream, const float* x, const float* dy) {
  if (dy_to_blocked_) {
    memory user_x = wrap(fwd_pd_.src_desc(), engine_, x);
    x_to_nchw_.execute(stream, user_x, x_nchw_);
    x = static_cast<const float*>(x_nchw_.get_data_handle());
  }
  bwd_weights_.execute(stream, {{DNNL_ARG_SRC, wrap(bwd_weights_pd_.src_desc(), engine_, x)},
                                {DNNL_ARG_DIFF_DST, wrap(bwd_weights_pd_.diff_dst_desc(), engine_, dy)},
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
  memory user_w = wrap(user_w_md_, engine_, w);
  w_to_bwd_.execute(stream, user_w, w_bwd_);
  bwd_data_.execute(stream, {{DNNL_ARG_DIFF_DST, wrap(bwd_data_pd_.diff_dst_desc(), engine_, dy)},
                             {DNNL_ARG_WEIGHTS, w_bwd_},
                             {DNNL_ARG_DIFF_SRC, wrap(bwd_data_pd_.diff_src_desc(), engine_, dx)}});
  stream.wait();
}

std::string DnnlConv::kernels() const {
  return std::string("fwd ") + fwd_pd_.impl_info_str() + ", bwd-data " + bwd_data_pd_.impl_info_str() + ", bwd-weights " +
         bwd_weights_pd_.impl_info_str();
}

}  // namespace batchai::train::cpu
