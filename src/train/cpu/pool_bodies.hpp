// The pooling bodies of the CPU backend's element-wise kernels (cpu_elementwise.cpp compiles them
// once per ISA). They take x (and dx) as `blocks` planes an image, each (h, w, lanes): NHWC is one
// plane of all c channels, nChw16c c/16 planes of 16; y, dy and the routes NHWC, or nChw16c too
// when y_blocked (x blocked).
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "batchai/train/counter_rng.hpp"
#include "cpu/cpu_elementwise.hpp"

namespace batchai::train::cpu::pool_bodies {

#define BATCHAI_POOL_INLINE [[gnu::always_inline]] inline
#define BATCHAI_POOL_INLINE_LAMBDA __attribute__((always_inline))

// Calls window(img, o, f, base, row) for every 2x2 window of images [img_begin, img_end): o is its
// output's index in y's layout (NHWC, or nChw16c when y_blocked, which x's blocks of 16 lanes
// then are too), f the output's feature within its image in NHWC order (a dropout's draw), base
// its top-left input's index (in x's layout), row the distance to the row below. The lambdas
// passed are always_inline too, so that each ISA's variant compiles its own. With dx, first zeroes
// the row and column of dx that a floor-pool drops on odd sizes (every window writes all four of
// its inputs, so nothing else needs a fill).
template <class Window>
BATCHAI_POOL_INLINE void for_each_window(float* dx, int img_begin, int img_end, int h, int w, int c, int blocks,
                                         int lanes, bool y_blocked, Window window) {
  const int ph = h / 2, pw = w / 2;
  const std::size_t row = static_cast<std::size_t>(w) * lanes, per_image = static_cast<std::size_t>(ph) * pw * c;
  for (int img = img_begin; img < img_end; ++img) {
    for (int blk = 0; blk < blocks; ++blk) {
      const std::size_t plane = (static_cast<std::size_t>(img) * blocks + blk) * h * row;
      const std::size_t y_plane = (static_cast<std::size_t>(img) * blocks + blk) * ph * pw * lanes;
      if (dx != nullptr && h % 2 != 0) std::fill(dx + plane + (h - 1) * row, dx + plane + h * row, 0.0f);
      for (int py = 0; py < ph; ++py) {
        if (dx != nullptr && w % 2 != 0) {
          for (int r = 2 * py; r < 2 * py + 2; ++r) {
            std::fill(dx + plane + r * row + (w - 1) * lanes, dx + plane + r * row + w * lanes, 0.0f);
          }
        }
        for (int px = 0; px < pw; ++px) {
          const std::size_t f = (static_cast<std::size_t>(py) * pw + px) * c + blk * lanes;
          const std::size_t o =
              y_blocked ? y_plane + (static_cast<std::size_t>(py) * pw + px) * lanes : img * per_image + f;
          window(img, o, f, plane + (2 * py) * row + static_cast<std::size_t>(2 * px) * lanes, row);
        }
      }
    }
  }
}

BATCHAI_POOL_INLINE void maxpool2_forward_body(const float* __restrict x, float* __restrict y, int img_begin,
                                               int img_end, int h, int w, int c, int blocks, int lanes,
                                               bool y_blocked) {
  for_each_window(nullptr, img_begin, img_end, h, w, c, blocks, lanes, y_blocked,
                  [&](int, std::size_t o, std::size_t, std::size_t base, std::size_t row) BATCHAI_POOL_INLINE_LAMBDA {
                    const float *a = x + base, *b = a + lanes, *d = a + row, *e = d + lanes;
                    for (int ch = 0; ch < lanes; ++ch) {
                      y[o + ch] = std::max(std::max(a[ch], b[ch]), std::max(d[ch], e[ch]));
                    }
                  });
}

// What a pooling's backward also does (cpu_elementwise.hpp): dy times a following dropout's mask
// (gm, or null), and the backward of the ReLU whose output x is (kept where the maximum is > 0).
struct PoolFusion {
  const float* gm;
  bool relu;
};

// One window's channels: dy to the first of a, b, d, e (the window's inputs) equal to m.
BATCHAI_POOL_INLINE void pool_window_plain(const float* a, const float* b, const float* d, const float* e,
                                           const float* m, const float* g, const float* gm, bool relu, float* da,
                                           float* db, float* dd, float* de, int c) {
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
BATCHAI_POOL_INLINE void maxpool2_backward_body(const float* __restrict x, const float* __restrict y,
                                                const float* __restrict dy, PoolFusion fused, float* __restrict dx,
                                                int img_begin, int img_end, int h, int w, int c, int blocks, int lanes,
                                                bool y_blocked, Window window) {
  for_each_window(dx, img_begin, img_end, h, w, c, blocks, lanes, y_blocked,
                  [&](int, std::size_t o, std::size_t, std::size_t base, std::size_t row) BATCHAI_POOL_INLINE_LAMBDA {
                    const float *a = x + base, *d = a + row;
                    float *da = dx + base, *dd = da + row;
                    window(a, a + lanes, d, d + lanes, y + o, dy + o, fused.gm != nullptr ? fused.gm + o : nullptr,
                           fused.relu, da, da + lanes, dd, dd + lanes, lanes);
                  });
}

// Routed pooling (cpu_elementwise.hpp's maxpool2_forward_routed): 16 channels a step in GCC's
// vector extension (one AVX-512 vector, two AVX2 or four SSE2 ones per variant), a scalar tail.
using V16 = float __attribute__((vector_size(64)));
using V16i = std::int32_t __attribute__((vector_size(64)));
using V16b = std::uint8_t __attribute__((vector_size(16)));

// kept = -1 where feature f + j of the image is kept, 0 where dropped (dropout_forward's draw).
BATCHAI_POOL_INLINE void kept16(std::uint64_t image, std::size_t f, std::uint64_t threshold, V16i& kept) {
  std::int32_t k[16];
  for (int j = 0; j < 16; ++j) k[j] = dropout_drops(image, f + j, threshold) ? 0 : -1;
  std::memcpy(&kept, k, sizeof kept);
}

BATCHAI_POOL_INLINE std::uint8_t route_of(float a, float b, float d, float m) {
  const std::uint8_t where = a == m ? 0 : b == m ? 1 : d == m ? 2 : 3;
  return static_cast<std::uint8_t>(where | (m > 0.0f ? kRoutePositive : 0));
}

// One window's channels: y = the maximum (times the dropout's mask when draws.keep != 0; image is
// the dropout's stream of this image, feature the output's index in it) and its route.
BATCHAI_POOL_INLINE void routed_forward_window(const float* a, const float* b, const float* d, const float* e,
                                               float* y, std::uint8_t* routes, const RouteDraws& draws,
                                               std::uint64_t image, std::size_t feature, int lanes) {
  const bool drop = draws.keep != 0.0f;
  int ch = 0;
  for (; ch + 16 <= lanes; ch += 16) {
    V16 va, vb, vd, ve;
    std::memcpy(&va, a + ch, sizeof va), std::memcpy(&vb, b + ch, sizeof vb);
    std::memcpy(&vd, d + ch, sizeof vd), std::memcpy(&ve, e + ch, sizeof ve);
    const V16 ab = va < vb ? vb : va, de = vd < ve ? ve : vd;  // std::max's choices
    const V16 m = ab < de ? de : ab;
    const V16i none{}, one = none + 1, two = none + 2, three = none + 3;
    V16i route = va == m ? none : vb == m ? one : vd == m ? two : three;
    route |= m > 0.0f ? none + kRoutePositive : none;
    V16 out = m;
    if (drop) {
      V16i kept;
      kept16(image, feature + ch, draws.threshold, kept);
      out = m * (kept != 0 ? V16{} + draws.keep : V16{});
      route |= kept & kRouteKept;
    }
    std::memcpy(y + ch, &out, sizeof out);
    const V16b bytes = __builtin_convertvector(route, V16b);
    std::memcpy(routes + ch, &bytes, sizeof bytes);
  }
  for (; ch < lanes; ++ch) {
    const float m = std::max(std::max(a[ch], b[ch]), std::max(d[ch], e[ch]));
    std::uint8_t route = route_of(a[ch], b[ch], d[ch], m);
    float out = m;
    if (drop) {
      const bool kept = !dropout_drops(image, feature + ch, draws.threshold);
      out = m * (kept ? draws.keep : 0.0f);
      route = static_cast<std::uint8_t>(route | (kept ? kRouteKept : 0));
    }
    y[ch] = out;
    routes[ch] = route;
  }
}

BATCHAI_POOL_INLINE void maxpool2_forward_routed_body(const float* __restrict x, float* __restrict y,
                                                      std::uint8_t* __restrict routes, const RouteDraws& draws,
                                                      int img_begin, int img_end, int h, int w, int c, int blocks,
                                                      int lanes, bool y_blocked) {
  int drawn = -1;  // the image whose dropout stream `image` is
  std::uint64_t image = 0;
  for_each_window(nullptr, img_begin, img_end, h, w, c, blocks, lanes, y_blocked,
                  [&](int img, std::size_t o, std::size_t f, std::size_t base, std::size_t row)
                      BATCHAI_POOL_INLINE_LAMBDA {
                        if (draws.keep != 0.0f && img != drawn) {
                          image = image_stream(draws.layer_stream, draws.first_key + img), drawn = img;
                        }
                        const float* a = x + base;
                        routed_forward_window(a, a + lanes, a + row, a + row + lanes, y + o, routes + o, draws, image,
                                              f, lanes);
                      });
}

// One window's channels from its routes alone: g = dy, times the dropout's mask when keep != 0, 0
// where the maximum was not > 0 when relu; g to the route's input, 0 to the other three.
BATCHAI_POOL_INLINE void routed_backward_window(const std::uint8_t* routes, const float* dy, float keep, bool relu,
                                                float* da, float* db, float* dd, float* de, int lanes) {
  int ch = 0;
  for (; ch + 16 <= lanes; ch += 16) {
    V16b bytes;
    std::memcpy(&bytes, routes + ch, sizeof bytes);
    const V16i route = __builtin_convertvector(bytes, V16i), where = route & kRouteWhere;
    V16 g;
    std::memcpy(&g, dy + ch, sizeof g);
    if (keep != 0.0f) g = g * ((route & kRouteKept) != 0 ? V16{} + keep : V16{});
    if (relu) g = (route & kRoutePositive) != 0 ? g : V16{};
    const V16 ga = where == 0 ? g : V16{}, gb = where == 1 ? g : V16{};
    const V16 gd = where == 2 ? g : V16{}, ge = where == 3 ? g : V16{};
    std::memcpy(da + ch, &ga, sizeof ga), std::memcpy(db + ch, &gb, sizeof gb);
    std::memcpy(dd + ch, &gd, sizeof gd), std::memcpy(de + ch, &ge, sizeof ge);
  }
  for (; ch < lanes; ++ch) {
    const std::uint8_t route = routes[ch];
    float g = dy[ch];
    if (keep != 0.0f) g = g * ((route & kRouteKept) != 0 ? keep : 0.0f);
    if (relu && (route & kRoutePositive) == 0) g = 0.0f;
    const int where = route & kRouteWhere;
    da[ch] = where == 0 ? g : 0.0f, db[ch] = where == 1 ? g : 0.0f;
    dd[ch] = where == 2 ? g : 0.0f, de[ch] = where == 3 ? g : 0.0f;
  }
}

BATCHAI_POOL_INLINE void maxpool2_backward_routed_body(const std::uint8_t* __restrict routes,
                                                       const float* __restrict dy, float keep, bool relu,
                                                       float* __restrict dx, int img_begin, int img_end, int h, int w,
                                                       int c, int blocks, int lanes, bool y_blocked) {
  for_each_window(dx, img_begin, img_end, h, w, c, blocks, lanes, y_blocked,
                  [&](int, std::size_t o, std::size_t, std::size_t base, std::size_t row) BATCHAI_POOL_INLINE_LAMBDA {
                    float* da = dx + base;
                    routed_backward_window(routes + o, dy + o, keep, relu, da, da + lanes, da + row, da + row + lanes,
                                           lanes);
                  });
}

#undef BATCHAI_POOL_INLINE
#undef BATCHAI_POOL_INLINE_LAMBDA

}  // namespace batchai::train::cpu::pool_bodies
