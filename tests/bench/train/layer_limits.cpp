// Per-layer limits of the roofline: oneDNN primitives timed alone (see layer_limits.hpp).
#include "layer_limits.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <numeric>
#include <unordered_map>
#include <vector>

namespace batchai::bench {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

memory make(const memory::desc& md, const dnnl::engine& engine) {
  memory m(md, engine);
  auto* p = static_cast<float*>(m.get_data_handle());
  const std::size_t count = md.get_size() / sizeof(float);
  for (std::size_t i = 0; i < count; ++i) p[i] = 0.01f * static_cast<float>(i % 97) - 0.3f;
  return m;
}

std::string formats_of(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked) return "?";
  std::string s;
  for (int i = 0; i < d.format_desc.blocking.inner_nblks; ++i) {
    s += std::to_string(d.format_desc.blocking.inner_blks[i]) + static_cast<char>('a' + d.format_desc.blocking.inner_idxs[i]);
  }
  return s.empty() ? "plain" : s;
}

bool g_show_variants = false;

void keep_faster(PhaseLimit& best, double seconds, double cold_seconds, const std::string& impl) {
  if (g_show_variants) {
    std::printf("   variant %.3f ms (evicted %.3f ms) %s\n", seconds * 1e3, cold_seconds * 1e3, impl.c_str());
  }
  if (best.impl.empty() || seconds < best.seconds) best.seconds = seconds, best.impl = impl;
  if (best.cold_impl.empty() || cold_seconds < best.cold_seconds) {
    best.cold_seconds = cold_seconds, best.cold_impl = impl;
  }
}

// Writes and reads back 64 MB, twice a large L3 (32 MB on the Zen 5 measured), so that what a
// primitive touched before is gone from every cache level.
void evict_caches() {
  static std::vector<float> junk(16u << 20);
  static float value = 0.0f;
  value += 1.0f;
  std::fill(junk.begin(), junk.end(), value);
  volatile float sink = std::accumulate(junk.begin(), junk.begin() + 1024, 0.0f);
  (void)sink;
}

dnnl::primitive_attr relu_attr(bool relu) {
  dnnl::primitive_attr attr;
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  return attr;
}

// Times one primitive on memories made from its own descriptors (one per argument listed) and
// keeps it in `best` when it is the faster; then each further implementation oneDNN offers for
// the same descriptors (next_impl), so the limit is the fastest of them all.
template <class Pd, class Primitive>
void time_primitive(PhaseLimit& best, int reps, const dnnl::engine& engine, dnnl::stream& stream, Pd pd,
                    std::initializer_list<int> args, const std::string& formats) {
  do {
    std::unordered_map<int, memory> memories;
    for (const int arg : args) memories.emplace(arg, make(pd.query_md(dnnl::query::exec_arg_md, arg), engine));
    std::string layouts;  // each argument's inner blocks, in the order listed
    for (const int arg : args) layouts += (layouts.empty() ? " " : "/") + formats_of(memories.at(arg).get_desc());
    const Primitive primitive(pd);
    auto run = [&] {
      primitive.execute(stream, memories);
      stream.wait();
    };
    const double seconds = median_seconds(reps, run), cold = median_seconds(reps, run, true);
    keep_faster(best, seconds, cold, std::string(pd.impl_info_str()) + formats + layouts);
  } while (pd.next_impl());
}

// The three phases of one algorithm with activations in `act`, each kept in `best` if faster.
void time_conv_phases(LayerLimit& best, const dnnl::engine& engine, dnnl::stream& stream, const train::ConvShape& s,
                      const dnnl::primitive_attr& attr, dnnl::algorithm alg, tag act, dt low, int reps) {
  const memory::dims src{s.n, s.c, s.h, s.w}, wei{s.out, s.c, s.k, s.k}, bias{s.out};
  const memory::dims dst{s.n, s.out, s.oh(), s.ow()}, strides{1, 1}, pad{s.pad, s.pad};
  const memory::desc src_md(src, dt::f32, act), dst_md(dst, dt::f32, act);
  const memory::desc src_read(src, low, act), dst_read(dst, low, act);
  const memory::desc w_md(wei, low, tag::any), dw_md(wei, dt::f32, tag::any), b_md(bias, dt::f32, tag::x);
  const auto fwd_pd = dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, src_read, w_md, b_md, dst_md,
                                      strides, pad, pad),
      attr, engine);
  time_primitive<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>(
      best.forward, reps, engine, stream, fwd_pd,
      {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST}, "");
  const auto bwd_d_pd = dnnl::convolution_backward_data::primitive_desc(
      dnnl::convolution_backward_data::desc(alg, src_md, w_md, dst_read, strides, pad, pad), engine, fwd_pd);
  time_primitive<dnnl::convolution_backward_data::primitive_desc, dnnl::convolution_backward_data>(
      best.backward_data, reps, engine, stream, bwd_d_pd,
      {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC}, "");
  // The data gradient as a forward convolution of dy (the CPU backend's way with direct kernels on
  // AVX-512): the kernel mirrored with its channels swapped, padding k - 1 - pad.
  const memory::dims swapped{s.c, s.out, s.k, s.k}, full_pad{s.k - 1 - s.pad, s.k - 1 - s.pad};
  try {
    const auto as_fwd_pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, dst_read,
                                        memory::desc(swapped, low, tag::any), src_md, strides, full_pad,
                                        full_pad),
        engine);
    time_primitive<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>(
        best.backward_data, reps, engine, stream, as_fwd_pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
        " as forward");
  } catch (const dnnl::error&) {
  }
  const auto bwd_w_pd = dnnl::convolution_backward_weights::primitive_desc(
      dnnl::convolution_backward_weights::desc(alg, src_read, dw_md, b_md, dst_read, strides, pad, pad), engine,
      fwd_pd);
  time_primitive<dnnl::convolution_backward_weights::primitive_desc, dnnl::convolution_backward_weights>(
      best.backward_weights, reps, engine, stream, bwd_w_pd,
      {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS}, "");
}

}  // namespace

void show_variants(bool on) { g_show_variants = on; }

double median_seconds(int reps, const std::function<void()>& fn, bool evict) {
  for (int i = 0; i < 3; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    if (evict) evict_caches();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

LayerLimit conv_limit(const dnnl::engine& engine, const train::ConvShape& s, bool relu, int reps, bool bf16) {
  dnnl::stream stream(engine);
  const dnnl::primitive_attr attr = relu_attr(relu);
  LayerLimit best;
  // bf16: what the kernels read (x, dy, the kernel) in bfloat16, what they write in float32.
  const dt low = bf16 ? dt::bf16 : dt::f32;
  // Direct and Winograd, each in NHWC and in the layouts oneDNN likes best; what oneDNN does not
  // implement (Winograd in NHWC, in bfloat16, on AVX2) is passed over.
  for (const auto alg : {dnnl::algorithm::convolution_direct, dnnl::algorithm::convolution_winograd}) {
    for (const tag act : {tag::nhwc, tag::any}) {
      try {
        time_conv_phases(best, engine, stream, s, attr, alg, act, low, reps);
      } catch (const dnnl::error&) {
      }
    }
  }
  return best;
}

PhaseLimit relu_backward_limit(const dnnl::engine& engine, const train::ConvShape& s, int reps) {
  dnnl::stream stream(engine);
  PhaseLimit best;
  const memory::dims dst{s.n, s.out, s.oh(), s.ow()};
  for (const tag layout : {tag::nhwc, tag::nChw16c}) {
    const memory::desc md(dst, dt::f32, layout);
    const auto fwd_pd = dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training,
                                    dnnl::algorithm::eltwise_relu_use_dst_for_bwd, md, 0.0f),
        engine);
    const auto pd = dnnl::eltwise_backward::primitive_desc(
        dnnl::eltwise_backward::desc(dnnl::algorithm::eltwise_relu_use_dst_for_bwd, md, md, 0.0f), engine,
        fwd_pd);
    time_primitive<dnnl::eltwise_backward::primitive_desc, dnnl::eltwise_backward>(
        best, reps, engine, stream, pd, {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC}, "");
  }
  return best;
}

PhaseLimit plus(const PhaseLimit& a, const PhaseLimit& b) {
  return {a.seconds + b.seconds, a.impl + " + " + b.impl, a.cold_seconds + b.cold_seconds,
          a.cold_impl + " + " + b.cold_impl};
}

LayerLimit dense_limit(const dnnl::engine& engine, const train::DenseShape& s, bool relu, int reps) {
  dnnl::stream stream(engine);
  LayerLimit best;
  // Inner product, with Keras' plain layouts (x nc, kernel (in, out) = io) and with `any`.
  for (const bool plain : {true, false}) {
    const memory::desc x_md({s.n, s.in}, dt::f32, plain ? tag::nc : tag::any);
    const memory::desc w_md({s.out, s.in}, dt::f32, plain ? tag::io : tag::any);
    const memory::desc b_md({s.out}, dt::f32, tag::x), y_md({s.n, s.out}, dt::f32, plain ? tag::nc : tag::any);
    const std::string fmt = plain ? " plain" : " any";
    const auto fwd_pd = dnnl::inner_product_forward::primitive_desc(
        dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, x_md, w_md, b_md, y_md),
        relu_attr(relu), engine);
    time_primitive<dnnl::inner_product_forward::primitive_desc, dnnl::inner_product_forward>(
        best.forward, reps, engine, stream, fwd_pd,
        {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST}, fmt);
    const auto bd_pd = dnnl::inner_product_backward_data::primitive_desc(
        dnnl::inner_product_backward_data::desc(x_md, w_md, y_md), engine, fwd_pd);
    time_primitive<dnnl::inner_product_backward_data::primitive_desc, dnnl::inner_product_backward_data>(
        best.backward_data, reps, engine, stream, bd_pd,
        {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC}, fmt);
    const auto bw_pd = dnnl::inner_product_backward_weights::primitive_desc(
        dnnl::inner_product_backward_weights::desc(x_md, w_md, b_md, y_md), engine, fwd_pd);
    time_primitive<dnnl::inner_product_backward_weights::primitive_desc, dnnl::inner_product_backward_weights>(
        best.backward_weights, reps, engine, stream, bw_pd,
        {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS}, fmt);
  }
  // Matmul on the row-major arrays: y = x W, dx = dy W^T, dW = x^T dy.
  struct Gemm {
    memory::dim m, k, n;
    tag a, b;
    PhaseLimit LayerLimit::*phase;
  };
  for (const Gemm g : {Gemm{s.n, s.in, s.out, tag::ab, tag::ab, &LayerLimit::forward},
                       Gemm{s.n, s.out, s.in, tag::ab, tag::ba, &LayerLimit::backward_data},
                       Gemm{s.in, s.n, s.out, tag::ba, tag::ab, &LayerLimit::backward_weights}}) {
    const memory::desc a_md({g.m, g.k}, dt::f32, g.a), b_md({g.k, g.n}, dt::f32, g.b), c_md({g.m, g.n}, dt::f32, tag::ab);
    const auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), engine);
    time_primitive<dnnl::matmul::primitive_desc, dnnl::matmul>(best.*g.phase, reps, engine, stream, pd,
        {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}, " matmul");
  }
  return best;
}

}  // namespace batchai::bench
