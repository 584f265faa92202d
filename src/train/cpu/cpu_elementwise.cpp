// Element-wise kernels of the CPU backend, one body each, compiled three times (see
// cpu_elementwise.hpp); this file is built with -ffp-contract=off so no variant fuses a
// multiply and an add that the others round separately, and with -fno-math-errno so that sqrt
// vectorizes (it never sees a negative number here).
#include "cpu/cpu_elementwise.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <dnnl.hpp>

#include "batchai/train/counter_rng.hpp"
#include "cpu/dnnl_memory.hpp"
#include "cpu/pool_bodies.hpp"

namespace batchai::train::cpu {
namespace {

using pool_bodies::maxpool2_backward_body;
using pool_bodies::maxpool2_backward_routed_body;
using pool_bodies::maxpool2_forward_body;
using pool_bodies::maxpool2_forward_routed_body;
using pool_bodies::pool_window_avx512;
using pool_bodies::pool_window_plain;
using pool_bodies::PoolFusion;

#define BATCHAI_INLINE [[gnu::always_inline]] inline

BATCHAI_INLINE void relu_mask_body(float* dy, const float* y, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

BATCHAI_INLINE void rmsprop_body(float* __restrict p, const float* __restrict g, float* __restrict m,
                                 std::size_t begin, std::size_t end, float lr, float rho, float eps) {
  for (std::size_t i = begin; i < end; ++i) {
    const float mi = rho * m[i] + (1.0f - rho) * g[i] * g[i];
    m[i] = mi;
    p[i] -= lr * g[i] / (std::sqrt(mi) + eps);
  }
}

BATCHAI_INLINE void dropout_forward_body(const float* __restrict x, float* __restrict y, float* __restrict mask,
                                         std::size_t per_image, std::size_t img_begin, std::size_t img_end,
                                         float keep, std::uint64_t threshold, std::uint64_t layer_stream,
                                         std::uint64_t first_key) {
  for (std::size_t j = img_begin; j < img_end; ++j) {
    const std::uint64_t image = image_stream(layer_stream, first_key + j);
    const std::size_t at = j * per_image;
    for (std::size_t f = 0; f < per_image; ++f) {
      const float m = dropout_drops(image, f, threshold) ? 0.0f : keep;
      mask[at + f] = m;
      y[at + f] = x[at + f] * m;
    }
  }
}

BATCHAI_INLINE void multiply_body(const float* __restrict a, const float* __restrict b, float* __restrict out,
                                  std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) out[i] = a[i] * b[i];
}

BATCHAI_INLINE void bias_relu_rows_body(float* __restrict y, const float* __restrict bias, int row_begin,
                                        int row_end, int cols, int ld, bool relu) {
  for (int r = row_begin; r < row_end; ++r) {
    float* row = y + static_cast<std::size_t>(r) * ld;
    if (relu) {
      for (int j = 0; j < cols; ++j) row[j] = std::max(row[j] + bias[j], 0.0f);
    } else {
      for (int j = 0; j < cols; ++j) row[j] = row[j] + bias[j];
    }
  }
}

BATCHAI_INLINE void add_column_sums_body(const float* __restrict g, int rows, int cols, int ld,
                                         float* __restrict out) {
  for (int r = 0; r < rows; ++r) {
    const float* row = g + static_cast<std::size_t>(r) * ld;
    for (int j = 0; j < cols; ++j) out[j] += row[j];
  }
}

BATCHAI_INLINE void relu_mask_blocked16_body(const float* __restrict dy, const float* __restrict y,
                                            float* __restrict out, int img_begin, int img_end, int hw, int c,
                                            bool relu) {
  const int blocks = c / 16;
  for (int i = img_begin; i < img_end; ++i) {
    for (int p = 0; p < hw; ++p) {
      const std::size_t at = (static_cast<std::size_t>(i) * hw + p) * c;
      for (int b = 0; b < blocks; ++b) {
        // GCC's vector extension: one AVX-512 vector, two AVX2 or four SSE2 ones per variant (its
        // vectorizer leaves the 16-float loop scalar, with a branch per float).
        using V16 = float __attribute__((vector_size(64)));
        V16 g, m;
        std::memcpy(&g, dy + at + static_cast<std::size_t>(b) * 16, sizeof g);
        std::memcpy(&m, y + at + static_cast<std::size_t>(b) * 16, sizeof m);
        const V16 r = relu ? (m > 0.0f ? g : V16{}) : g;
        std::memcpy(out + ((static_cast<std::size_t>(i) * blocks + b) * hw + p) * 16, &r, sizeof r);
      }
    }
  }
}

// One table of entry points per ISA; the bodies above inline into each.
struct Kernels {
  const char* isa;
  void (*relu_mask)(float*, const float*, std::size_t, std::size_t);
  void (*rmsprop)(float*, const float*, float*, std::size_t, std::size_t, float, float, float);
  void (*maxpool2_forward)(const float*, float*, int, int, int, int, int, int, int, bool);
  void (*maxpool2_backward)(const float*, const float*, const float*, PoolFusion, float*, int, int, int, int, int, int,
                            int, bool);
  void (*maxpool2_forward_routed)(const float*, float*, std::uint8_t*, const RouteDraws&, int, int, int, int, int, int,
                                  int, bool);
  void (*maxpool2_backward_routed)(const std::uint8_t*, const float*, float, bool, float*, int, int, int, int, int, int,
                                   int, bool);
  void (*dropout_forward)(const float*, float*, float*, std::size_t, std::size_t, std::size_t, float,
                          std::uint64_t, std::uint64_t, std::uint64_t);
  void (*multiply)(const float*, const float*, float*, std::size_t, std::size_t);
  void (*bias_relu_rows)(float*, const float*, int, int, int, int, bool);
  void (*add_column_sums)(const float*, int, int, int, float*);
  void (*relu_mask_blocked16)(const float*, const float*, float*, int, int, int, int, bool);
};

#define BATCHAI_KERNEL_VARIANT(ns, name, attr, pool_window)                                                      \
  namespace ns {                                                                                                 \
  attr void relu_mask(float* dy, const float* y, std::size_t b, std::size_t e) { relu_mask_body(dy, y, b, e); }  \
  attr void rmsprop(float* p, const float* g, float* m, std::size_t b, std::size_t e, float lr, float rho,        \
                    float eps) {                                                                                 \
    rmsprop_body(p, g, m, b, e, lr, rho, eps);                                                                   \
  }                                                                                                              \
  attr void pool_fwd(const float* x, float* y, int i0, int i1, int h, int w, int c, int blocks, int lanes,       \
                     bool yb) {                                                                                  \
    maxpool2_forward_body(x, y, i0, i1, h, w, c, blocks, lanes, yb);                                             \
  }                                                                                                              \
  attr void pool_bwd(const float* x, const float* y, const float* dy, PoolFusion f, float* dx, int i0, int i1,   \
                     int h, int w, int c, int blocks, int lanes, bool yb) {                                      \
    maxpool2_backward_body(x, y, dy, f, dx, i0, i1, h, w, c, blocks, lanes, yb, pool_window);                    \
  }                                                                                                              \
  attr void pool_fwd_routed(const float* x, float* y, std::uint8_t* r, const RouteDraws& d, int i0, int i1, int h, \
                            int w, int c, int blocks, int lanes, bool yb) {                                     \
    maxpool2_forward_routed_body(x, y, r, d, i0, i1, h, w, c, blocks, lanes, yb);                               \
  }                                                                                                              \
  attr void pool_bwd_routed(const std::uint8_t* r, const float* dy, float keep, bool relu, float* dx, int i0,   \
                            int i1, int h, int w, int c, int blocks, int lanes, bool yb) {                      \
    maxpool2_backward_routed_body(r, dy, keep, relu, dx, i0, i1, h, w, c, blocks, lanes, yb);                   \
  }                                                                                                              \
  attr void dropout_fwd(const float* x, float* y, float* m, std::size_t per, std::size_t i0, std::size_t i1,     \
                        float keep, std::uint64_t t, std::uint64_t s, std::uint64_t k) {                         \
    dropout_forward_body(x, y, m, per, i0, i1, keep, t, s, k);                                                   \
  }                                                                                                              \
  attr void mul(const float* a, const float* b, float* o, std::size_t i0, std::size_t i1) {                      \
    multiply_body(a, b, o, i0, i1);                                                                              \
  }                                                                                                              \
  attr void bias_relu(float* y, const float* bias, int r0, int r1, int cols, int ld, bool relu) {                \
    bias_relu_rows_body(y, bias, r0, r1, cols, ld, relu);                                                        \
  }                                                                                                              \
  attr void colsums(const float* g, int rows, int cols, int ld, float* out) {                                    \
    add_column_sums_body(g, rows, cols, ld, out);                                                                \
  }                                                                                                              \
  attr void mask16(const float* dy, const float* y, float* o, int i0, int i1, int hw, int c, bool relu) {       \
    relu_mask_blocked16_body(dy, y, o, i0, i1, hw, c, relu);                                                     \
  }                                                                                                              \
  constexpr Kernels kKernels{name,     relu_mask,       rmsprop,         pool_fwd,  pool_bwd,                \
                             pool_fwd_routed, pool_bwd_routed, dropout_fwd, mul, bias_relu, colsums, mask16};   \
  }

BATCHAI_KERNEL_VARIANT(isa_avx512, "avx512", [[gnu::target("avx512f,avx512dq,avx512bw,avx512vl,prefer-vector-width=512")]],
                       pool_window_avx512)
BATCHAI_KERNEL_VARIANT(isa_avx2, "avx2", [[gnu::target("avx2")]], pool_window_plain)
BATCHAI_KERNEL_VARIANT(isa_base, "x86-64", , pool_window_plain)

// The widest variant the CPU runs, capped where oneDNN is capped (ONEDNN_MAX_CPU_ISA), so that
// one setting holds the whole backend to an older machine's ISA.
const Kernels* widest_supported() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      onednn_runs_avx512()) {
    return &isa_avx512::kKernels;
  }
  if (__builtin_cpu_supports("avx2") && onednn_runs_avx2()) return &isa_avx2::kKernels;
  return &isa_base::kKernels;
}

const Kernels* g_selected = nullptr;  // a test's choice (select_elementwise_isa), else null

const Kernels& kernels() {
  static const Kernels* const widest = widest_supported();
  return g_selected != nullptr ? *g_selected : *widest;
}

}  // namespace

const char* elementwise_isa() { return kernels().isa; }

bool select_elementwise_isa(const std::string& isa) {
  if (isa.empty()) {
    g_selected = nullptr;
    return true;
  }
  // Variants in order of width: one is usable when it is no wider than what the CPU runs.
  const Kernels* const order[] = {&isa_base::kKernels, &isa_avx2::kKernels, &isa_avx512::kKernels};
  const Kernels* const widest = widest_supported();
  for (const Kernels* k : order) {
    if (isa == k->isa) {
      g_selected = k;
      return true;
    }
    if (k == widest) break;
  }
  return false;
}

void relu_mask(float* dy, const float* y, std::size_t begin, std::size_t end) {
  kernels().relu_mask(dy, y, begin, end);
}

void rmsprop(float* p, const float* g, float* m, std::size_t begin, std::size_t end, float lr, float rho,
             float eps) {
  kernels().rmsprop(p, g, m, begin, end, lr, rho, eps);
}

namespace {

int blocks_of(PoolKernelLayout l, int c) { return l == PoolKernelLayout::kNhwc ? 1 : c / 16; }
int lanes_of(PoolKernelLayout l, int c) { return l == PoolKernelLayout::kNhwc ? c : 16; }
bool y_blocked(PoolKernelLayout l) { return l == PoolKernelLayout::kBlocked; }

}  // namespace

void maxpool2_forward(const float* x, float* y, int img_begin, int img_end, int h, int w, int c, PoolKernelLayout l) {
  kernels().maxpool2_forward(x, y, img_begin, img_end, h, w, c, blocks_of(l, c), lanes_of(l, c), y_blocked(l));
}

void maxpool2_backward(const float* x, const float* y, const float* dy, const float* dy_mask, bool relu_of_x,
                       float* dx, int img_begin, int img_end, int h, int w, int c, PoolKernelLayout l) {
  kernels().maxpool2_backward(x, y, dy, PoolFusion{dy_mask, relu_of_x}, dx, img_begin, img_end, h, w, c,
                              blocks_of(l, c), lanes_of(l, c), y_blocked(l));
}

void maxpool2_forward_routed(const float* x, float* y, std::uint8_t* routes, const RouteDraws& draws, int img_begin,
                             int img_end, int h, int w, int c, PoolKernelLayout l) {
  kernels().maxpool2_forward_routed(x, y, routes, draws, img_begin, img_end, h, w, c, blocks_of(l, c), lanes_of(l, c),
                                    y_blocked(l));
}

void maxpool2_backward_routed(const std::uint8_t* routes, const float* dy, float keep, bool relu_of_x, float* dx,
                              int img_begin, int img_end, int h, int w, int c, PoolKernelLayout l) {
  kernels().maxpool2_backward_routed(routes, dy, keep, relu_of_x, dx, img_begin, img_end, h, w, c, blocks_of(l, c),
                                     lanes_of(l, c), y_blocked(l));
}

void dropout_forward(const float* x, float* y, float* mask, std::size_t per_image, std::size_t img_begin,
                     std::size_t img_end, float keep, std::uint64_t threshold, std::uint64_t layer_stream,
                     std::uint64_t first_key) {
  kernels().dropout_forward(x, y, mask, per_image, img_begin, img_end, keep, threshold, layer_stream, first_key);
}

void multiply(const float* a, const float* b, float* out, std::size_t begin, std::size_t end) {
  kernels().multiply(a, b, out, begin, end);
}

void bias_relu_rows(float* y, const float* bias, int row_begin, int row_end, int cols, int ld, bool relu) {
  kernels().bias_relu_rows(y, bias, row_begin, row_end, cols, ld, relu);
}

void add_column_sums(const float* g, int rows, int cols, int ld, float* out) {
  kernels().add_column_sums(g, rows, cols, ld, out);
}

void relu_mask_to_blocked16(const float* dy, const float* y, float* out, int img_begin, int img_end, int hw, int c,
                            bool relu) {
  kernels().relu_mask_blocked16(dy, y, out, img_begin, img_end, hw, c, relu);
}

}  // namespace batchai::train::cpu
