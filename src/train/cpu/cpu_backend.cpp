// CPU backend: the Backend operations over host memory (see cpu_backend.hpp for the plan).
#include "cpu/cpu_backend.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "batchai/common/errors.hpp"
#include "batchai/train/counter_rng.hpp"
#include "batchai/train/softmax_xent_row.hpp"
#include "cpu/cpu_elementwise.hpp"
#include "cpu/dnnl_memory.hpp"
#include "cpu/few_channel_weight_gradient.hpp"
#include "cpu/narrow_dense.hpp"

extern "C" void openblas_set_num_threads(int num_threads);

namespace batchai::train::cpu {
namespace {

constexpr std::align_val_t kAlign{64};

double conv_flops(const ConvShape& s) {
  return 2.0 * s.n * s.oh() * s.ow() * s.out * s.k * s.k * s.c;
}

// The element-wise kernels' name for the layouts, or an internal error where they have none.
PoolKernelLayout kernel_layout(PoolLayouts layouts, int c) {
  const bool x_blocked = layouts.x == Layout::kNchw16c && c % 16 == 0;
  if (layouts.x == Layout::kNhwc && layouts.y == Layout::kNhwc) return PoolKernelLayout::kNhwc;
  if (x_blocked && layouts.y == Layout::kNhwc) return PoolKernelLayout::kBlockedToNhwc;
  if (x_blocked && layouts.y == Layout::kNchw16c) return PoolKernelLayout::kBlocked;
  throw Error("pooling of " + std::to_string(c) + " channels in those layouts (internal error)");
}

}  // namespace

CpuBackend::CpuBackend(int threads, Precision precision)
    : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), dense_onednn_(dense_on_onednn()) {
  if (precision == Precision::kMixedBfloat16) {
    if (!onednn_runs_bf16()) {
      throw InvalidArgument("--precision mixed_bfloat16 needs a CPU on which oneDNN runs its bfloat16 kernels "
                            "(AVX512-BF16 or AMX); here it runs " + onednn_isa_name() + ". Use --precision float32");
    }
    bf16_convs_ = true;
  }
  set_threads(threads);
}
CpuBackend::~CpuBackend() = default;

void CpuBackend::set_threads(int threads) {
  threads_ = std::max(1, threads);
  // One OpenMP team for oneDNN and for our own parts; OpenBLAS runs on its caller's thread.
  omp_set_num_threads(threads_);
  openblas_set_num_threads(1);
}

void CpuBackend::run(int parts, const std::function<void(int)>& fn) const {
  if (parts <= 1) {
    for (int p = 0; p < parts; ++p) fn(p);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) fn(p);
}

void CpuBackend::split(int total, int parts, int part, int& begin, int& end) {
  begin = static_cast<int>(static_cast<long long>(total) * part / parts);
  end = static_cast<int>(static_cast<long long>(total) * (part + 1) / parts);
}

void CpuBackend::for_ranges(std::size_t total, std::size_t min_per_part, std::size_t align,
                            const std::function<void(std::size_t, std::size_t)>& fn) const {
  // Memory-bound passes: below min_per_part items a part, waking the team costs more than it saves.
  const int parts = static_cast<int>(std::clamp<std::size_t>(total / std::max<std::size_t>(min_per_part, 1), 1,
                                                              static_cast<std::size_t>(threads_)));
  run(parts, [&](int part) {
    // Boundaries on multiples of `align` items (16 floats: whole cache lines to each part).
    auto at = [&](int p) {
      return std::min(total, (total * static_cast<std::size_t>(p) / static_cast<std::size_t>(parts) + align - 1) /
                                 align * align);
    };
    const std::size_t b = part == 0 ? 0 : at(part), e = part + 1 == parts ? total : at(part + 1);
    if (b < e) fn(b, e);
  });
}

std::size_t CpuBackend::images_per_part(std::size_t floats_per_image) {
  return std::max<std::size_t>(1, kMinFloatsPerPart / std::max<std::size_t>(floats_per_image, 1));
}

void CpuBackend::mask_relu(Buffer& dy, const Buffer& y, std::size_t count) const {
  for_ranges(count, kMinFloatsPerPart, 16, [&](std::size_t b, std::size_t e) { relu_mask(dy.data, y.data, b, e); });
}

CpuBackend::ConvKey CpuBackend::conv_key(const ConvShape& s, bool relu) {
  return std::make_tuple(s.n, s.h, s.w, s.c, s.out, s.pad, relu, s.x_layout, s.y_layout);
}

DnnlConv& CpuBackend::conv(const ConvShape& s, bool relu) {
  const ConvKey key = conv_key(s, relu);
  auto it = convs_.find(key);
  if (it == convs_.end()) {
    if (s.k != 3) throw InvalidArgument("the CPU backend supports 3x3 convolutions only");
    it = convs_.emplace(key, std::make_unique<DnnlConv>(engine_, s, relu, bf16_convs_, winograd_)).first;
  }
  return *it->second;
}

DnnlConv& CpuBackend::conv_for_backward(const ConvShape& s, bool relu) {
  // The forward's instance, whichever ReLU it fused: `relu` here is only whether the backward
  // masks dy, which the pooling after the layer may have done (PoolBackwardFusion).
  for (const bool fused : {relu, !relu}) {
    auto it = convs_.find(conv_key(s, fused));
    if (it != convs_.end()) return *it->second;
  }
  return conv(s, relu);
}

std::vector<std::string> CpuBackend::kernels() const {
  std::vector<std::string> out;
  for (const auto& entry : convs_) {
    const auto& k = entry.first;
    const ConvShape s{std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k), 3, std::get<5>(k),
                      std::get<7>(k), std::get<8>(k)};
    const bool chained = s.x_layout == Layout::kNchw16c || s.y_layout == Layout::kNchw16c;
    out.push_back("conv " + conv_shape_label(s) + (chained ? " (blocked chain)" : "") + ": " +
                  entry.second->kernels());
  }
  for (const auto& entry : denses_) {
    const auto& k = entry.first;
    out.push_back("dense " + dense_shape_label(DenseShape{std::get<0>(k), std::get<1>(k), std::get<2>(k)}) +
                  ": fwd and bwd-weights oneDNN sgemm, bwd-data " + entry.second->kernel());
  }
  if (!dense_onednn_) out.push_back("dense: OpenBLAS sgemm, one call per thread");
  if (narrow_dense_applies(16)) out.push_back("dense of up to 16 outputs: narrow_dense's AVX-512 kernels");
  out.push_back(std::string("element-wise kernels: ") + elementwise_isa());
  return out;
}

Buffer CpuBackend::allocate(std::size_t count) {
  Buffer b;
  // Cache-line aligned: oneDNN's kernels load whole 64-byte vectors, and a buffer at malloc's
  // 16-byte alignment makes every one of them straddle two lines.
  b.data = static_cast<float*>(::operator new[](std::max<std::size_t>(count, 1) * sizeof(float), kAlign));
  std::fill(b.data, b.data + count, 0.0f);
  b.size = count;
  return b;
}

void CpuBackend::release(Buffer& buffer) {
  settle_overlapping(buffer.data, buffer.size);
  ::operator delete[](buffer.data, kAlign);
  buffer = Buffer{};
}

void CpuBackend::upload(Buffer& dst, const float* host, std::size_t count, std::size_t offset) {
  if (offset + count > dst.size) throw Error("upload past the end of a backend buffer (internal error)");
  settle_overlapping(dst.data + offset, count);
  ProfileScope timed(profile_, "upload", profile_ ? std::to_string(count) : "", "copy");
  std::memcpy(dst.data + offset, host, count * sizeof(float));
}

void CpuBackend::upload_images(Buffer& dst, const float* host_nhwc, int n, int h, int w, int c, Layout layout) {
  const std::size_t hw = static_cast<std::size_t>(h) * w, count = static_cast<std::size_t>(n) * hw * c;
  if (layout == Layout::kNhwc) return upload(dst, host_nhwc, count, 0);
  if (layout != Layout::kNchw) throw Error("upload of images in a blocked layout (internal error)");
  if (count > dst.size) throw Error("upload past the end of a backend buffer (internal error)");
  settle_overlapping(dst.data, count);
  // Transposed in the copy the upload makes anyway: the blocked chain's first convolution then
  // reads the batch as it is, in its forward and its weight gradient.
  ProfileScope timed(profile_, "upload", profile_ ? std::to_string(count) : "", "copy");
  for_ranges(static_cast<std::size_t>(n), images_per_part(hw * c), 1, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) {
      const float* in = host_nhwc + i * hw * c;
      float* out = dst.data + i * hw * c;
      for (int ch = 0; ch < c; ++ch) {
        for (std::size_t p = 0; p < hw; ++p) out[ch * hw + p] = in[p * c + ch];
      }
    }
  });
}

void CpuBackend::download(float* host, const Buffer& src, std::size_t count, std::size_t offset) {
  if (offset + count > src.size) throw Error("download past the end of a backend buffer (internal error)");
  settle_overlapping(src.data + offset, count);
  std::memcpy(host, src.data + offset, count * sizeof(float));
}

void CpuBackend::fill(Buffer& dst, float value) {
  settle_overlapping(dst.data, dst.size);
  ProfileScope timed(profile_, "fill", profile_ ? std::to_string(dst.size) : "", "fill");
  for_ranges(dst.size, kMinFloatsPerPart, 16,
             [&](std::size_t b, std::size_t e) { std::fill(dst.data + b, dst.data + e, value); });
}

void CpuBackend::zero_gradients(Buffer& grads) {
  // Deferred: every weight gradient's first write overwrites its slot (first_write), so the 5 MB
  // arena of the tutorial's network is never zeroed as a whole (a pass over memory each step).
  settle_overlapping(grads.data, grads.size);
  unzeroed_ = grads;
  written_.clear();
}

void CpuBackend::settle_gradients(Buffer& grads) { settle_overlapping(grads.data, grads.size); }

void CpuBackend::settle_overlapping(const float* data, std::size_t count) {
  const float* arena = unzeroed_.data;
  if (arena == nullptr || data == nullptr || data >= arena + unzeroed_.size || data + count <= arena) return;
  // Zero what no backward call wrote (nothing, when every layer wrote its slots).
  std::sort(written_.begin(), written_.end());
  std::size_t at = 0;
  auto zero_to = [&](std::size_t end) {
    if (end > at) {
      ProfileScope timed(profile_, "fill", profile_ ? std::to_string(end - at) : "", "zero");
      std::fill(unzeroed_.data + at, unzeroed_.data + end, 0.0f);
    }
  };
  for (const auto& [b, e] : written_) {
    zero_to(b);
    at = std::max(at, e);
  }
  zero_to(unzeroed_.size);
  unzeroed_ = Buffer{};
  written_.clear();
}

bool CpuBackend::first_write(const Buffer& dw, std::size_t off, std::size_t count) {
  if (unzeroed_.data == nullptr || dw.data != unzeroed_.data || off + count > unzeroed_.size) return false;
  const std::size_t end = off + count;
  for (const auto& [b, e] : written_) {
    if (off < e && b < end) return false;  // written since the zeroing: add to what is there
  }
  written_.emplace_back(off, end);
  return true;
}

void CpuBackend::zero_if_first_write(Buffer& dw, std::size_t off, std::size_t count) {
  if (first_write(dw, off, count)) std::fill(dw.data + off, dw.data + off + count, 0.0f);
}

void CpuBackend::conv2d_forward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                std::size_t b_off, Buffer& y, bool relu) {
  ProfileScope timed(profile_, "conv", profile_ ? conv_shape_label(s) : "", "fwd", conv_flops(s));
  conv(s, relu).forward(stream_, x.data, w.data + w_off, w.data + b_off, y.data);
}

void CpuBackend::conv2d_backward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                 const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                                 bool relu) {
  const std::size_t count = static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out;
  DnnlConv& c = conv_for_backward(s, relu);
  if (few_channel_weight_gradient_applies(s)) {
    // The ReLU's backward inside the weight gradient, unless an input gradient needs dy masked.
    const bool mask_first = relu && dx != nullptr;
    if (mask_first) {
      ProfileScope mask(profile_, "conv", profile_ ? conv_shape_label(s) : "", "relu-mask");
      mask_relu(dy, y, count);
    }
    {
      // Its own phase name where the ReLU's backward is inside, for the roofline's limit.
      const bool folded = relu && !mask_first;
      ProfileScope timed(profile_, "conv", profile_ ? conv_shape_label(s) : "",
                         folded ? "bwd-weights+relu" : "bwd-weights", conv_flops(s));
      few_channel_weights(s, x, dy, folded ? &y : nullptr, dw, w_off, b_off);
    }
    if (dx != nullptr) {
      ProfileScope timed(profile_, "conv", profile_ ? conv_shape_label(s) : "", "bwd-data", conv_flops(s));
      c.backward_data(stream_, w.data + w_off, dy.data, dx->data);
    }
    return;
  }
  std::vector<float> nhwc_dy;  // blocked mode with an input gradient: dy as that reads it
  {
    // The ReLU's backward (Keras' Activation layer, fused here). dy and y share a layout, so
    // the mask is one pass in either. When dy goes to the blocked layout the mask goes with it,
    // in place; dy is masked in NHWC first (and kept) only where an input gradient reads it.
    ProfileScope mask(profile_, "conv", profile_ ? conv_shape_label(s) : "", "relu-mask");
    if (relu && (dx != nullptr || !c.dy_to_blocked())) mask_relu(dy, y, count);
    if (c.dy_to_blocked()) {
      if (dx != nullptr) nhwc_dy.assign(dy.data, dy.data + count);
      to_blocked_in_place(s, dy, y, relu && dx == nullptr);
    }
  }
  {
    // The ReLU belongs to the forward primitive only; backward takes the already-masked dy.
    ProfileScope timed(profile_, "conv", profile_ ? conv_shape_label(s) : "", "bwd-weights", conv_flops(s));
    zero_if_first_write(dw, w_off, static_cast<std::size_t>(s.k) * s.k * s.c * s.out);
    zero_if_first_write(dw, b_off, static_cast<std::size_t>(s.out));
    c.backward_weights(stream_, x.data, dy.data);
    c.accumulate_weights(stream_, dw.data + w_off, dw.data + b_off);
  }
  if (dx != nullptr) {
    ProfileScope timed(profile_, "conv", profile_ ? conv_shape_label(s) : "", "bwd-data", conv_flops(s));
    c.backward_data(stream_, w.data + w_off, nhwc_dy.empty() ? dy.data : nhwc_dy.data(), dx->data);
  }
}

void CpuBackend::few_channel_weights(const ConvShape& s, const Buffer& x, const Buffer& dy, const Buffer* y,
                                     Buffer& dw, std::size_t w_off, std::size_t b_off) {
  // Each thread sums its images into its own kernel and bias; the parts are then added in order.
  const std::size_t kernel = static_cast<std::size_t>(s.k) * s.k * s.c * s.out, sums = kernel + s.out;
  const std::size_t per_part = sums + few_channel_scratch_floats(s);
  const int parts = std::clamp(threads_, 1, s.n);
  part_scratch_.resize(static_cast<std::size_t>(parts) * per_part);
  run(parts, [&](int part) {
    int i0, i1;
    split(s.n, parts, part, i0, i1);
    float* mine = part_scratch_.data() + static_cast<std::size_t>(part) * per_part;
    few_channel_weight_gradient(s, x.data, dy.data, y != nullptr ? y->data : nullptr, i0, i1, mine + sums, mine,
                                mine + kernel);
  });
  zero_if_first_write(dw, w_off, kernel);
  zero_if_first_write(dw, b_off, static_cast<std::size_t>(s.out));
  for (int part = 0; part < parts; ++part) {
    const float* sum = part_scratch_.data() + static_cast<std::size_t>(part) * per_part;
    for (std::size_t j = 0; j < kernel; ++j) dw.data[w_off + j] += sum[j];
    for (int j = 0; j < s.out; ++j) dw.data[b_off + j] += sum[kernel + j];
  }
}

void CpuBackend::to_blocked_in_place(const ConvShape& s, Buffer& dy, const Buffer& y, bool relu) {
  const int hw = s.oh() * s.ow();
  const std::size_t per_image = static_cast<std::size_t>(hw) * s.out;
  image_scratch_.resize(static_cast<std::size_t>(threads_) * per_image);
  for_ranges(static_cast<std::size_t>(s.n), images_per_part(per_image), 1, [&](std::size_t i0, std::size_t i1) {
    // Parts run one a thread (run()), so a thread's scratch image is its own.
    float* mine = image_scratch_.data() + static_cast<std::size_t>(omp_get_thread_num()) * per_image;
    for (std::size_t i = i0; i < i1; ++i) {
      float* image = dy.data + i * per_image;
      std::memcpy(mine, image, per_image * sizeof(float));
      relu_mask_to_blocked16(mine, y.data + i * per_image, image, 0, 1, hw, s.out, relu);
    }
  });
}

bool CpuBackend::blocked_chain_pays(const ConvShape& first, const ConvShape& second) {
  // Measured on AVX-512 for 3 -> 32 -> 32 channels at 32x32 (docs/measurements/
  // 2026-12-trainer-avx512.md): the first convolution's blocked kernels and the pooling's
  // blocked read save about 0.4 ms a step; the chain without the pooling saves nothing.
  if (!blocked_chains_ || !onednn_runs_avx512() || first.c >= 16 || first.out % 16 != 0 || second.c != first.out ||
      second.out % 16 != 0) {
    return false;
  }
  ConvShape a = first, b = second;
  a.x_layout = Layout::kNchw;
  a.y_layout = b.x_layout = b.y_layout = Layout::kNchw16c;
  return DnnlConv(engine_, a, true, bf16_convs_).jit(false) && DnnlConv(engine_, b, true, bf16_convs_).jit(true);
}

void CpuBackend::maxpool2_forward(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts, Buffer& y) {
  ProfileScope timed(profile_, "maxpool", profile_ ? elementwise_shape_label(h, w, c) : "", "fwd");
  const PoolKernelLayout in = kernel_layout(layouts, c);
  for_ranges(static_cast<std::size_t>(n), images_per_part(h * w * c), 1, [&](std::size_t i0, std::size_t i1) {
    cpu::maxpool2_forward(x.data, y.data, static_cast<int>(i0), static_cast<int>(i1), h, w, c, in);
  });
}

void CpuBackend::maxpool2_backward(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts, const Buffer& y,
                                   const Buffer& dy, const PoolBackwardFusion& fused, Buffer& dx) {
  ProfileScope timed(profile_, "maxpool", profile_ ? elementwise_shape_label(h, w, c) : "", "bwd");
  const float* dy_mask = fused.dy_mask != nullptr ? fused.dy_mask->data : nullptr;
  const PoolKernelLayout in = kernel_layout(layouts, c);
  for_ranges(static_cast<std::size_t>(n), images_per_part(h * w * c), 1, [&](std::size_t i0, std::size_t i1) {
    cpu::maxpool2_backward(x.data, y.data, dy.data, dy_mask, fused.relu_of_x, dx.data, static_cast<int>(i0),
                           static_cast<int>(i1), h, w, c, in);
  });
}

bool CpuBackend::conv_wants_blocked(const ConvShape& s) {
  return blocked_chains_ && pool_routes_ && s.x_layout == Layout::kNchw16c && s.y_layout == Layout::kNchw16c &&
         conv(s, true).winograd();
}

void CpuBackend::maxpool2_forward_routed(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts,
                                         const PoolRouting& routing, Buffer& y, Buffer& routes) {
  ProfileScope timed(profile_, "maxpool", profile_ ? elementwise_shape_label(h, w, c) : "",
                     routing.dropout_rate > 0.0f ? "fwd+dropout" : "fwd");
  const PoolKernelLayout in = kernel_layout(layouts, c);
  const std::size_t outputs = static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c;
  if (routes.size < route_floats(outputs) || y.size < outputs) {
    throw Error("routed pooling: buffers too small (internal error)");
  }
  cpu::RouteDraws draws;
  if (routing.dropout_rate > 0.0f) {
    draws = {dropout_keep_scale(routing.dropout_rate), dropout_threshold(routing.dropout_rate), routing.layer_stream,
             routing.first_image_key};
  }
  auto* bytes = reinterpret_cast<std::uint8_t*>(routes.data);
  for_ranges(static_cast<std::size_t>(n), images_per_part(h * w * c), 1, [&](std::size_t i0, std::size_t i1) {
    cpu::maxpool2_forward_routed(x.data, y.data, bytes, draws, static_cast<int>(i0), static_cast<int>(i1), h, w, c,
                                 in);
  });
}

void CpuBackend::maxpool2_backward_routed(int n, int h, int w, int c, const Buffer& routes, const Buffer& dy,
                                          const PoolRouting& routing, PoolLayouts layouts, Buffer& dx) {
  ProfileScope timed(profile_, "maxpool", profile_ ? elementwise_shape_label(h, w, c) : "", "bwd");
  const PoolKernelLayout in = kernel_layout(layouts, c);
  const std::size_t outputs = static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c;
  if (routes.size < route_floats(outputs) || dy.size < outputs) {
    throw Error("routed pooling: buffers too small (internal error)");
  }
  const float keep = routing.dropout_rate > 0.0f ? dropout_keep_scale(routing.dropout_rate) : 0.0f;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(routes.data);
  for_ranges(static_cast<std::size_t>(n), images_per_part(h * w * c), 1, [&](std::size_t i0, std::size_t i1) {
    cpu::maxpool2_backward_routed(bytes, dy.data, keep, routing.relu_of_x, dx.data, static_cast<int>(i0),
                                  static_cast<int>(i1), h, w, c, in);
  });
}

void CpuBackend::dropout_forward(const Buffer& x, Buffer& y, Buffer& mask, float rate, std::uint64_t layer_stream,
                                 std::uint64_t first_image_key, std::size_t per_image) {
  ProfileScope timed(profile_, "dropout", profile_ ? std::to_string(x.size) + " floats" : "", "fwd");
  if (per_image == 0) return;
  if (x.size % per_image != 0) throw Error("dropout over a partial image (internal error)");
  const float keep = dropout_keep_scale(rate);
  const std::uint64_t threshold = dropout_threshold(rate);
  for_ranges(x.size / per_image, images_per_part(per_image), 1, [&](std::size_t i0, std::size_t i1) {
    cpu::dropout_forward(x.data, y.data, mask.data, per_image, i0, i1, keep, threshold, layer_stream,
                         first_image_key);
  });
}

void CpuBackend::dropout_backward(const Buffer& dy, const Buffer& mask, Buffer& dx) {
  ProfileScope timed(profile_, "dropout", profile_ ? std::to_string(dy.size) + " floats" : "", "bwd");
  for_ranges(dy.size, kMinFloatsPerPart, 16, [&](std::size_t b, std::size_t e) { multiply(dy.data, mask.data, dx.data, b, e); });
}

void CpuBackend::softmax_cross_entropy(int n, int classes, const Buffer& logits, const Buffer& labels,
                                       Buffer* dlogits, double* loss_sum, int* correct) {
  ProfileScope timed(profile_, "loss", profile_ ? std::to_string(n) + "x" + std::to_string(classes) : "", "fwd+bwd");
  double loss = 0.0;
  int hits = 0;
  for (int r = 0; r < n; ++r) {
    const std::size_t at = static_cast<std::size_t>(r) * classes;
    const XentRow row = softmax_xent_row(logits.data + at, classes, static_cast<int>(labels.data[r]),
                                         dlogits != nullptr ? dlogits->data + at : nullptr, 1.0 / n);
    loss += row.loss;
    hits += row.hit ? 1 : 0;
  }
  if (loss_sum != nullptr) *loss_sum = loss;
  if (correct != nullptr) *correct = hits;
}

void CpuBackend::rmsprop_update(Buffer& params, const Buffer& grads, Buffer& ms, float lr, float rho,
                                float eps) {
  settle_overlapping(grads.data, grads.size);
  ProfileScope timed(profile_, "rmsprop", profile_ ? std::to_string(params.size) : "", "update");
  for_ranges(params.size, kMinFloatsPerPart, 16, [&](std::size_t b, std::size_t e) {
    rmsprop(params.data, grads.data, ms.data, b, e, lr, rho, eps);
  });
}

void CpuBackend::scale(Buffer& x, float factor) {
  settle_overlapping(x.data, x.size);
  ProfileScope timed(profile_, "scale", profile_ ? std::to_string(x.size) : "", "allreduce");
  for (std::size_t i = 0; i < x.size; ++i) x.data[i] *= factor;
}

}  // namespace batchai::train::cpu
