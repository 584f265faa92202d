// The few-channel weight gradient of the CPU backend (see few_channel_weight_gradient.hpp).
#include "cpu/few_channel_weight_gradient.hpp"

#include <immintrin.h>

#include <algorithm>

#include "cpu/dnnl_memory.hpp"

namespace batchai::train::cpu {
namespace {

// 9c + 1 accumulators, a dy vector and the zero in AVX-512's 32 registers: 30 for c = 3 (c = 4
// would need 39 and spill).
constexpr int kMaxChannels = 3;

// Where one 16-channel block of dy (and of y, same layout) starts in an image, and the distance
// between two positions: NHWC interleaves the blocks, nChw16c keeps each block's plane apart.
struct BlockAt {
  std::size_t offset, stride;
};
BlockAt block_at(Layout layout, int block, int positions, int out) {
  if (layout == Layout::kNchw16c) return {static_cast<std::size_t>(block) * positions * 16, 16};
  return {static_cast<std::size_t>(block) * 16, static_cast<std::size_t>(out)};
}

// One image's input, channel planes of (h + 2 pad) x (w + 2 pad), zero around it.
void pad_image(const ConvShape& s, const float* x_image, float* padded) {
  const int ph = s.h + 2 * s.pad, pw = s.w + 2 * s.pad;
  std::fill(padded, padded + static_cast<std::size_t>(s.c) * ph * pw, 0.0f);
  for (int ci = 0; ci < s.c; ++ci) {
    for (int r = 0; r < s.h; ++r) {
      float* row = padded + (static_cast<std::size_t>(ci) * ph + r + s.pad) * pw + s.pad;
      for (int col = 0; col < s.w; ++col) {
        row[col] = s.x_layout == Layout::kNchw ? x_image[(static_cast<std::size_t>(ci) * s.h + r) * s.w + col]
                                               : x_image[(static_cast<std::size_t>(r) * s.w + col) * s.c + ci];
      }
    }
  }
}

// One image's contribution to one block of 16 output channels, added to dw (hwio) and db.
// GCC would carry the patch's values from one position to the next (predictive commoning) and
// spill accumulators for it; each FMA reads its value from the padded image instead.
template <int C, bool kRelu>
[[gnu::target("avx512f"), gnu::optimize("no-predictive-commoning")]] void add_block(
    const float* padded, int ph, int pw, const float* dy, const float* y, std::size_t stride, int oh, int ow, int out,
    float* dw, float* db) {
  constexpr int kTaps = 9 * C;  // t = (kh * 3 + kw) * C + ci, hwio's order
  __m512 acc[kTaps + 1];
  for (auto& a : acc) a = _mm512_setzero_ps();
  const std::size_t plane = static_cast<std::size_t>(ph) * pw;
  for (int r = 0; r < oh; ++r) {
    for (int col = 0; col < ow; ++col) {
      const std::size_t at = (static_cast<std::size_t>(r) * ow + col) * stride;
      __m512 d = _mm512_loadu_ps(dy + at);
      if constexpr (kRelu) {
        d = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_loadu_ps(y + at), _mm512_setzero_ps(), _CMP_GT_OQ), d);
      }
      acc[kTaps] = _mm512_add_ps(acc[kTaps], d);
      const float* patch = padded + static_cast<std::size_t>(r) * pw + col;
#pragma GCC unroll 64
      for (int t = 0; t < kTaps; ++t) {
        const int tap = t / C, ci = t % C;
        const float v = patch[ci * plane + static_cast<std::size_t>(tap / 3) * pw + tap % 3];
        acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(v), d, acc[t]);
      }
    }
  }
  for (int t = 0; t < kTaps; ++t) {
    float* to = dw + static_cast<std::size_t>(t) * out;
    _mm512_storeu_ps(to, _mm512_add_ps(_mm512_loadu_ps(to), acc[t]));
  }
  _mm512_storeu_ps(db, _mm512_add_ps(_mm512_loadu_ps(db), acc[kTaps]));
}

template <int C>
void add_image(const ConvShape& s, const float* padded, const float* dy_image, const float* y_image, float* dw,
               float* db) {
  const int positions = s.oh() * s.ow();
  for (int block = 0; block < s.out / 16; ++block) {
    const BlockAt b = block_at(s.y_layout, block, positions, s.out);
    float* dw_block = dw + static_cast<std::size_t>(block) * 16;
    if (y_image != nullptr) {
      add_block<C, true>(padded, s.h + 2 * s.pad, s.w + 2 * s.pad, dy_image + b.offset, y_image + b.offset,
                         b.stride, s.oh(), s.ow(), s.out, dw_block, db + block * 16);
    } else {
      add_block<C, false>(padded, s.h + 2 * s.pad, s.w + 2 * s.pad, dy_image + b.offset, nullptr, b.stride,
                          s.oh(), s.ow(), s.out, dw_block, db + block * 16);
    }
  }
}

}  // namespace

bool few_channel_weight_gradient_applies(const ConvShape& s) {
  return s.k == 3 && s.c >= 1 && s.c <= kMaxChannels && s.out % 16 == 0 &&
         (s.x_layout == Layout::kNhwc || s.x_layout == Layout::kNchw) &&
         (s.y_layout == Layout::kNhwc || s.y_layout == Layout::kNchw16c) && __builtin_cpu_supports("avx512f") &&
         onednn_runs_avx512();
}

std::size_t few_channel_scratch_floats(const ConvShape& s) {
  return static_cast<std::size_t>(s.c) * (s.h + 2 * s.pad) * (s.w + 2 * s.pad);
}

void few_channel_weight_gradient(const ConvShape& s, const float* x, const float* dy, const float* y, int img_begin,
                                 int img_end, float* scratch, float* dw, float* db) {
  std::fill(dw, dw + static_cast<std::size_t>(9) * s.c * s.out, 0.0f);
  std::fill(db, db + s.out, 0.0f);
  const std::size_t x_image = static_cast<std::size_t>(s.h) * s.w * s.c;
  const std::size_t y_image = static_cast<std::size_t>(s.oh()) * s.ow() * s.out;
  for (int i = img_begin; i < img_end; ++i) {
    pad_image(s, x + i * x_image, scratch);
    const float* yi = y != nullptr ? y + i * y_image : nullptr;
    switch (s.c) {
      case 1: add_image<1>(s, scratch, dy + i * y_image, yi, dw, db); break;
      case 2: add_image<2>(s, scratch, dy + i * y_image, yi, dw, db); break;
      default: add_image<3>(s, scratch, dy + i * y_image, yi, dw, db); break;
    }
  }
}

}  // namespace batchai::train::cpu
