// The dense layer's gradient-and-update kernel of the CPU backend (see dense_rmsprop.hpp).
#include "cpu/dense_rmsprop.hpp"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "cpu/dnnl_memory.hpp"

namespace batchai::train::cpu {
namespace {

constexpr int kVectors = 4;            // a tile's columns: 4 registers of 16
constexpr int kWidth = 16 * kVectors;  // 64

// R rows by 64 columns of the gradient (dy's rows ld apart; p and ms at the tile's first element,
// their rows `out` apart): R x 4 registers summed over the batch, each loaded dy vector used by R
// rows; then the update, each step a separate rounding as in cpu_elementwise's rmsprop (this
// file is built without contraction, like that one).
template <int R>
[[gnu::target("avx512f")]] inline void tile(const float* xt, const float* dy, int n, int ld, int out, float* p,
                                            float* ms, __m512 lr, __m512 rho, __m512 one_minus_rho, __m512 eps) {
  __m512 g[R][kVectors];
  for (auto& row : g) {
    for (auto& v : row) v = _mm512_setzero_ps();
  }
  for (int b = 0; b < n; ++b) {
    __m512 d[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) d[v] = _mm512_loadu_ps(dy + static_cast<std::size_t>(b) * ld + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 xb = _mm512_set1_ps(xt[static_cast<std::size_t>(r) * n + b]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) g[r][v] = _mm512_fmadd_ps(xb, d[v], g[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      float* pv = p + static_cast<std::size_t>(r) * out + 16 * v;
      float* mv = ms + static_cast<std::size_t>(r) * out + 16 * v;
      // m = rho*m + (1-rho)*g*g;  p -= lr*g / (sqrt(m) + eps)
      const __m512 m = _mm512_add_ps(_mm512_mul_ps(rho, _mm512_loadu_ps(mv)),
                                     _mm512_mul_ps(_mm512_mul_ps(one_minus_rho, g[r][v]), g[r][v]));
      _mm512_storeu_ps(mv, m);
      // (maskz_sqrt: GCC 12 warns of _mm512_sqrt_ps' undefined pass-through operand)
      const __m512 root = _mm512_maskz_sqrt_ps(static_cast<__mmask16>(0xffff), m);
      const __m512 step = _mm512_div_ps(_mm512_mul_ps(lr, g[r][v]), _mm512_add_ps(root, eps));
      _mm512_storeu_ps(pv, _mm512_sub_ps(_mm512_loadu_ps(pv), step));
    }
  }
}

// Asks for the four kernel and mean-square rows of the tile kTilesAhead tiles on (at: its first
// element) in the chunk's columns: rows `out` floats apart, 256 bytes each, a pattern the
// hardware's prefetchers follow poorly; with caches cold the pass waited on memory (the
// tutorial's dense_1 on Zen 4, in the step: 0.85-1.34 ms, 0.74-0.98 with this).
constexpr int kTilesAhead = 2;

inline void prefetch_tile(const float* p, const float* ms, std::size_t at, int out) {
  for (int r = 0; r < 4; ++r) {
    for (int l = 0; l < kWidth; l += 16) {
      const std::size_t e = at + static_cast<std::size_t>(r) * out + l;
      _mm_prefetch(reinterpret_cast<const char*>(p + e), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(ms + e), _MM_HINT_T0);
    }
  }
}

[[gnu::target("avx512f")]] void rows(const float* xt, const float* dy, int n, int out, int row_begin, int row_end,
                                     float* p, float* ms, float lr, float rho, float eps) {
  const __m512 vlr = _mm512_set1_ps(lr), vrho = _mm512_set1_ps(rho), v1 = _mm512_set1_ps(1.0f - rho);
  const __m512 veps = _mm512_set1_ps(eps);
  // Column chunks outside: a chunk's dy (n x 64 floats, 8 KB for the tutorial) stays in L1 while
  // the rows go by, packed: in place its rows would be `out` floats apart, on few of L1's sets.
  std::vector<float> packed(static_cast<std::size_t>(n) * kWidth);
  for (int col = 0; col < out; col += kWidth) {
    for (int b = 0; b < n; ++b) {
      std::copy_n(dy + static_cast<std::size_t>(b) * out + col, kWidth,
                  packed.data() + static_cast<std::size_t>(b) * kWidth);
    }
    const float* d = packed.data();
    int i = row_begin;
    for (; i + 4 <= row_end; i += 4) {
      const std::size_t at = static_cast<std::size_t>(i) * out + col;
      if (i + 4 * (kTilesAhead + 1) <= row_end) {
        prefetch_tile(p, ms, at + static_cast<std::size_t>(4 * kTilesAhead) * out, out);
      }
      tile<4>(xt + static_cast<std::size_t>(i) * n, d, n, kWidth, out, p + at, ms + at, vlr, vrho, v1, veps);
    }
    for (; i < row_end; ++i) {
      const std::size_t at = static_cast<std::size_t>(i) * out + col;
      tile<1>(xt + static_cast<std::size_t>(i) * n, d, n, kWidth, out, p + at, ms + at, vlr, vrho, v1, veps);
    }
  }
}

}  // namespace

bool dense_rmsprop_applies(int out) { return out > 0 && out % kWidth == 0 && onednn_runs_avx512(); }

void dense_rmsprop_rows(const float* xt, const float* dy, int n, int out, int row_begin, int row_end, float* p,
                        float* ms, float lr, float rho, float eps) {
  rows(xt, dy, n, out, row_begin, row_end, p, ms, lr, rho, eps);
}

}  // namespace batchai::train::cpu
