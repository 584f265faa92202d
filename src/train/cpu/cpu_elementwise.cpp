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

namespace batchai::train::cpu {
namespace {

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

// The pooling bodies take x (and dx) as `blocks` planes an image, each (h, w, lanes): NHWC is one
// plane of all c channels, nChw16c c/16 planes of 16; y and dy are NHWC either way.
BATCHAI_INLINE void maxpool2_forward_body(const float* __restrict x, float* __restrict y, int img_begin,
                                          int img_end, int h, int w, int c, int blocks, int lanes) {
  const int ph = h / 2, pw = w / 2;
  for (int img = img_begin; img < img_end; ++img) {
    for (int blk = 0; blk < blocks; ++blk) {
      for (int py = 0; py < ph; ++py) {
        for (int px = 0; px < pw; ++px) {
          const float* a =
              x + (((static_cast<std::size_t>(img) * blocks + blk) * h + 2 * py) * w + 2 * px) * lanes;
          const float* b = a + lanes;
          const float* d = a + static_cast<std::size_t>(w) * lanes;
          const float* e = d + lanes;
          float* o = y + ((static_cast<std::size_t>(img) * ph + py) * pw + px) * c + blk * lanes;
          for (int ch = 0; ch < lanes; ++ch) o[ch] = std::max(std::max(a[ch], b[ch]), std::max(d[ch], e[ch]));
        }
      }
    }
  }
}

// What a pooling's backward also does (cpu_elementwise.hpp): dy times a following dropout's mask
// (gm, or null), and the backward of the ReLU whose output x is (kept where the maximum is > 0).
struct PoolFusion {
  const float* gm;
  bool relu;
};

// One window's channels: dy to the first of a, b, d, e (the window's inputs) equal to m.
BATCHAI_INLINE void pool_window_plain(const float* a, const float* b, const float* d, const float* e, const float* m,
                                      const float* g, const float* gm, bool relu, float* da, float* db, float* dd,
                                      float* de, int c) {
  for (int ch = 0; ch < c; ++ch) {
    const float v = m[ch];
    float gv = gm != nullptr ? g[ch] * gm[ch] : g[ch];
    if (relu && !(v > 0.0f)) gv = 0.0f;
    const bool ha = a[ch] == v, hb = !ha && b[ch] == v, hd = !ha && !hb && d[ch] == v;
    const bool he = !ha && !hb && !hd;
    (void)e;
    da[ch] = ha ? gv : 0.0f;
    db[ch] = hb ? gv : 0.0f;
    dd[ch] = hd ? gv : 0.0f;
    de[ch] = he ? gv : 0.0f;
  }
}

// The same, 16 channels a step with AVX-512 masks (the compiler does not vectorize the above).
[[gnu::target("avx512f,avx512dq,avx512bw,avx512vl")]] inline void pool_window_avx512(
    const float* a, const float* b, const float* d, const float* e, const float* m, const float* g, const float* gm,
    bool relu, float* da, float* db, float* dd, float* de, int c) {
  (void)e;
  for (int ch = 0; ch < c; ch += 16) {
    const __mmask16 live = c - ch >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (c - ch)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(live, m + ch);
    __m512 gv = _mm512_maskz_loadu_ps(live, g + ch);
    if (gm != nullptr) gv = _mm512_mul_ps(gv, _mm512_maskz_loadu_ps(live, gm + ch));
    if (relu) gv = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ), gv);
    const __mmask16 ha = _mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(live, a + ch), v, _CMP_EQ_OQ);
    const __mmask16 hb = _mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(live, b + ch), v, _CMP_EQ_OQ) & ~ha;
    const __mmask16 hd = _mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(live, d + ch), v, _CMP_EQ_OQ) & ~ha & ~hb;
    const __mmask16 he = static_cast<__mmask16>(~(ha | hb | hd));
    _mm512_mask_storeu_ps(da + ch, live, _mm512_maskz_mov_ps(ha, gv));
    _mm512_mask_storeu_ps(db + ch, live, _mm512_maskz_mov_ps(hb, gv));
    _mm512_mask_storeu_ps(dd + ch, live, _mm512_maskz_mov_ps(hd, gv));
    _mm512_mask_storeu_ps(de + ch, live, _mm512_maskz_mov_ps(he, gv));
  }
}

template <class Window>
BATCHAI_INLINE void maxpool2_backward_body(const float* __restrict x, const float* __restrict y,
                                           const float* __restrict dy, PoolFusion fused, float* __restrict dx,
                                           int img_begin, int img_end, int h, int w, int c, int blocks, int lanes,
                                           Window window) {
  // One pass: every window writes all four of its inputs; only the row/column a floor-pool
  // drops on odd sizes needs a separate zero fill.
  const int ph = h / 2, pw = w / 2;
  const std::size_t row = static_cast<std::size_t>(w) * lanes;
  for (int img = img_begin; img < img_end; ++img) {
    for (int blk = 0; blk < blocks; ++blk) {
      const std::size_t plane = (static_cast<std::size_t>(img) * blocks + blk) * h * row;
      float* dplane = dx + plane;
      if (h % 2 != 0) std::fill(dplane + (h - 1) * row, dplane + h * row, 0.0f);
      for (int py = 0; py < ph; ++py) {
        if (w % 2 != 0) {
          std::fill(dplane + (2 * py) * row + (w - 1) * lanes, dplane + (2 * py) * row + w * lanes, 0.0f);
          std::fill(dplane + (2 * py + 1) * row + (w - 1) * lanes, dplane + (2 * py + 1) * row + w * lanes, 0.0f);
        }
        for (int px = 0; px < pw; ++px) {
          const std::size_t base = plane + (2 * py) * row + static_cast<std::size_t>(2 * px) * lanes;
          const float* a = x + base;
          const float* b = a + lanes;
          const float* d = a + row;
          float* da = dx + base;
          float* db = da + lanes;
          float* dd = da + row;
          float* de = dd + lanes;
          const std::size_t o = ((static_cast<std::size_t>(img) * ph + py) * pw + px) * c + blk * lanes;
          window(a, b, d, d + lanes, y + o, dy + o, fused.gm != nullptr ? fused.gm + o : nullptr, fused.relu, da, db,
                 dd, de, lanes);
        }
      }
    }
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
  void (*maxpool2_forward)(const float*, float*, int, int, int, int, int, int, int);
  void (*maxpool2_backward)(const float*, const float*, const float*, PoolFusion, float*, int, int, int, int, int, int,
                            int);
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
  attr void pool_fwd(const float* x, float* y, int i0, int i1, int h, int w, int c, int blocks, int lanes) {     \
    maxpool2_forward_body(x, y, i0, i1, h, w, c, blocks, lanes);                                                 \
  }                                                                                                              \
  attr void pool_bwd(const float* x, const float* y, const float* dy, PoolFusion f, float* dx, int i0, int i1,   \
                     int h, int w, int c, int blocks, int lanes) {                                               \
    maxpool2_backward_body(x, y, dy, f, dx, i0, i1, h, w, c, blocks, lanes, pool_window);                        \
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
  constexpr Kernels kKernels{name,        relu_mask, rmsprop,  pool_fwd, pool_bwd,                              \
                             dropout_fwd, mul,       bias_relu, colsums, mask16};                                \
  }

BATCHAI_KERNEL_VARIANT(isa_avx512, "avx512", [[gnu::target("avx512f,avx512dq,avx512bw,avx512vl,prefer-vector-width=512")]],
                       pool_window_avx512)
BATCHAI_KERNEL_VARIANT(isa_avx2, "avx2", [[gnu::target("avx2")]], pool_window_plain)
BATCHAI_KERNEL_VARIANT(isa_base, "x86-64", , pool_window_plain)

// The widest variant the CPU runs, capped where oneDNN is capped (ONEDNN_MAX_CPU_ISA), so that
// one setting holds the whole backend to an older machine's ISA.
const Kernels* widest_supported() {
  __builtin_cpu_init();
  const auto onednn = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto onednn_has = [&](dnnl::cpu_isa isa) {
    return (onednn & static_cast<unsigned>(isa)) == static_cast<unsigned>(isa);
  };
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      onednn_has(dnnl::cpu_isa::avx512_core)) {
    return &isa_avx512::kKernels;
  }
  if (__builtin_cpu_supports("avx2") && onednn_has(dnnl::cpu_isa::avx2)) return &isa_avx2::kKernels;
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

void maxpool2_forward(const float* x, float* y, int img_begin, int img_end, int h, int w, int c) {
  kernels().maxpool2_forward(x, y, img_begin, img_end, h, w, c, 1, c);
}

void maxpool2_backward(const float* x, const float* y, const float* dy, const float* dy_mask, bool relu_of_x,
                       float* dx, int img_begin, int img_end, int h, int w, int c) {
  kernels().maxpool2_backward(x, y, dy, PoolFusion{dy_mask, relu_of_x}, dx, img_begin, img_end, h, w, c, 1, c);
}

void maxpool2_forward_nchw16c(const float* x, float* y, int img_begin, int img_end, int h, int w, int c) {
  kernels().maxpool2_forward(x, y, img_begin, img_end, h, w, c, c / 16, 16);
}

void maxpool2_backward_nchw16c(const float* x, const float* y, const float* dy, const float* dy_mask,
                               bool relu_of_x, float* dx, int img_begin, int img_end, int h, int w, int c) {
  kernels().maxpool2_backward(x, y, dy, PoolFusion{dy_mask, relu_of_x}, dx, img_begin, img_end, h, w, c, c / 16,
                              16);
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
