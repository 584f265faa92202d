// The kernels of dense layers of few outputs (see narrow_dense.hpp).
#include "cpu/narrow_dense.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>

#include "cpu/dnnl_memory.hpp"

namespace batchai::train::cpu {
namespace {

constexpr int kBlock = 8;  // rows summed at once: 8 independent chains of fused multiply-adds

using std::size_t;

[[gnu::target("avx512f")]] inline __mmask16 first_lanes(int count) {
  return static_cast<__mmask16>((1u << count) - 1u);
}

// acc[r] = the sum over t < count, in order, of s[r * rs + t * ts] times row t of v (its first
// `out` floats, rows `out` apart): both the forward's rows (t over the kernel's rows) and the
// weight gradient's kernel rows (t over the batch). Every loop over acc is unrolled, so that it
// stays in registers.
template <int R>
[[gnu::target("avx512f")]] inline void row_sums(const float* s, size_t rs, size_t ts, const float* v, int out,
                                                int count, __m512 (&acc)[R]) {
  const __mmask16 m = first_lanes(out);
#pragma GCC unroll 8
  for (auto& a : acc) a = _mm512_setzero_ps();
  for (int t = 0; t < count; ++t) {
    const __m512 vt = _mm512_maskz_loadu_ps(m, v + static_cast<size_t>(t) * out);
    const float* st = s + t * ts;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(st[r * rs]), vt, acc[r]);
  }
}

// R rows of y from x's rows: each the sum over the kernel's rows in order, then the bias, then
// the ReLU as std::max(v, 0) takes it (a NaN stays a NaN).
template <int R>
[[gnu::target("avx512f")]] inline void forward_block(const float* x, const float* w, const float* bias, int in,
                                                     int out, float* y, bool relu) {
  __m512 acc[R];
  row_sums<R>(x, static_cast<size_t>(in), 1, w, out, in, acc);
  const __mmask16 m = first_lanes(out);
  const __m512 b = _mm512_maskz_loadu_ps(m, bias);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512 v = _mm512_add_ps(acc[r], b);
    // (maskz_max: GCC 12 warns of _mm512_max_ps' undefined pass-through operand)
    if (relu) v = _mm512_maskz_max_ps(static_cast<__mmask16>(0xffff), _mm512_setzero_ps(), v);
    _mm512_mask_storeu_ps(y + static_cast<size_t>(r) * out, m, v);
  }
}

// R kernel rows of the gradient (x's columns k..k+R-1): each the sum over the batch in order.
template <int R>
[[gnu::target("avx512f")]] inline void weight_block(const float* x, const float* dy, int n, int in, int out, int k,
                                                    bool accumulate, float* dw) {
  __m512 acc[R];
  row_sums<R>(x + k, 1, static_cast<size_t>(in), dy, out, n, acc);
  const __mmask16 m = first_lanes(out);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* row = dw + static_cast<size_t>(k + r) * out;
    const __m512 v = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, row), acc[r]) : acc[r];
    _mm512_mask_storeu_ps(row, m, v);
  }
}

// B images' 16 columns of dx (masked by m): each one vector summed over the outputs in order, the
// kernel's 16 rows transposed in wt (wt[j] holds output j of each row).
template <int B>
[[gnu::target("avx512f")]] inline void input_gradient_block(const float* dy, const float (*wt)[16], int in, int out,
                                                            __mmask16 m, float* dx) {
  __m512 acc[B];
#pragma GCC unroll 8
  for (auto& a : acc) a = _mm512_setzero_ps();
  for (int j = 0; j < out; ++j) {
    const __m512 wj = _mm512_load_ps(wt[j]);
#pragma GCC unroll 8
    for (int b = 0; b < B; ++b) {
      acc[b] = _mm512_fmadd_ps(_mm512_set1_ps(dy[static_cast<size_t>(b) * out + j]), wj, acc[b]);
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) _mm512_mask_storeu_ps(dx + static_cast<size_t>(b) * in, m, acc[b]);
}

}  // namespace

bool narrow_dense_applies(int out) { return out >= 1 && out <= 16 && onednn_runs_avx512(); }

[[gnu::target("avx512f")]] void narrow_dense_forward(const float* x, const float* w, const float* bias, int in,
                                                     int out, int row_begin, int row_end, float* y, bool relu) {
  int r = row_begin;
  for (; r + kBlock <= row_end; r += kBlock) {
    forward_block<kBlock>(x + static_cast<size_t>(r) * in, w, bias, in, out, y + static_cast<size_t>(r) * out, relu);
  }
  for (; r < row_end; ++r) {
    forward_block<1>(x + static_cast<size_t>(r) * in, w, bias, in, out, y + static_cast<size_t>(r) * out, relu);
  }
}

// 16 columns of dx at a time: those 16 kernel rows gathered transposed (faster than scalar moves
// on Zen 4), then the images 8 at a time.
[[gnu::target("avx512f")]] void narrow_dense_input_gradient(const float* dy, const float* w, int n, int in, int out,
                                                            int col_begin, int col_end, float* dx) {
  alignas(64) float wt[16][16] = {};
  const __m512i rows = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                          _mm512_set1_epi32(out));
  for (int k = col_begin; k < col_end; k += 16) {
    const int width = std::min(16, col_end - k);
    const __mmask16 m = first_lanes(width);
    for (int j = 0; j < out; ++j) {
      _mm512_store_ps(wt[j], _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, rows,
                                                      w + static_cast<size_t>(k) * out + j, 4));
    }
    int b = 0;
    for (; b + 8 <= n; b += 8) {
      input_gradient_block<8>(dy + static_cast<size_t>(b) * out, wt, in, out, m, dx + static_cast<size_t>(b) * in + k);
    }
    for (; b < n; ++b) {
      input_gradient_block<1>(dy + static_cast<size_t>(b) * out, wt, in, out, m, dx + static_cast<size_t>(b) * in + k);
    }
  }
}

[[gnu::target("avx512f")]] void narrow_dense_weight_gradient(const float* x, const float* dy, int n, int in, int out,
                                                             int row_begin, int row_end, bool accumulate, float* dw) {
  int k = row_begin;
  for (; k + kBlock <= row_end; k += kBlock) weight_block<kBlock>(x, dy, n, in, out, k, accumulate, dw);
  for (; k < row_end; ++k) weight_block<1>(x, dy, n, in, out, k, accumulate, dw);
}

}  // namespace batchai::train::cpu
