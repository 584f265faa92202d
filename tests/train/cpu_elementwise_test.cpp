// The CPU backend's element-wise kernels are compiled once per ISA (cpu_elementwise.hpp): every
// variant this CPU runs must give the baseline x86-64 variant's results bit for bit, on odd
// sizes (vector tails) and with ties in the pooling windows (the first maximum wins).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_elementwise.hpp"

namespace batchai::train::cpu {
namespace {

using Floats = std::vector<float>;

// Values on a coarse grid, so that pooling windows hold equal maxima and ReLU sees zeros.
Floats grid_values(std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-3, 4);
  Floats v(n);
  for (auto& x : v) x = 0.5f * static_cast<float>(d(rng));
  return v;
}

Floats random_values(std::size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  Floats v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Everything the kernels compute from one set of inputs, concatenated.
Floats run_all() {
  std::mt19937 rng(11);
  constexpr int kImages = 3, kH = 7, kW = 9, kC = 20;  // odd sides (floor pooling), 20 channels (a tail)
  const std::size_t in = static_cast<std::size_t>(kImages) * kH * kW * kC;
  const std::size_t pooled = static_cast<std::size_t>(kImages) * (kH / 2) * (kW / 2) * kC;
  const Floats x = grid_values(in, rng);
  Floats out;
  auto keep = [&](const Floats& v) { out.insert(out.end(), v.begin(), v.end()); };

  Floats y(pooled), dy = random_values(pooled, rng, -1, 1), dx(in, 7.0f);
  maxpool2_forward(x.data(), y.data(), 0, kImages, kH, kW, kC, PoolKernelLayout::kNhwc);
  maxpool2_backward(x.data(), y.data(), dy.data(), nullptr, false, dx.data(), 0, kImages, kH, kW, kC,
                    PoolKernelLayout::kNhwc);
  keep(y), keep(dx);
  const Floats dy_mask = grid_values(pooled, rng);
  maxpool2_backward(x.data(), y.data(), dy.data(), dy_mask.data(), true, dx.data(), 0, kImages, kH, kW, kC,
                    PoolKernelLayout::kNhwc);
  keep(dx);

  Floats g = random_values(1003, rng, -1e-2f, 1e-2f), p = random_values(1003, rng, -1, 1), m(1003, 0.0f);
  for (int step = 0; step < 3; ++step) rmsprop(p.data(), g.data(), m.data(), 0, p.size(), 1e-4f, 0.9f, 1e-7f);
  keep(p), keep(m);

  Floats mask(in), dropped(in);
  dropout_forward(x.data(), dropped.data(), mask.data(), in / kImages, 0, kImages, 4.0f / 3.0f,
                  static_cast<std::uint64_t>(0.25 * 18446744073709551616.0), 99, 5);
  keep(mask), keep(dropped);

  Floats grad = random_values(in, rng, -1, 1), prod(in);
  relu_mask(grad.data(), x.data(), 0, in);
  multiply(grad.data(), mask.data(), prod.data(), 0, in);
  keep(grad), keep(prod);

  Floats rows = random_values(5 * 37, rng, -1, 1), bias = random_values(37, rng, -1, 1), sums(37, 0.5f);
  bias_relu_rows(rows.data(), bias.data(), 0, 5, 37, 37, true);
  add_column_sums(rows.data(), 5, 37, 37, sums.data());
  keep(rows), keep(sums);

  const Floats y32 = grid_values(2 * 5 * 32, rng), dy32 = random_values(y32.size(), rng, -1, 1);
  Floats blocked(y32.size(), 7.0f), copied(y32.size(), 7.0f);
  relu_mask_to_blocked16(dy32.data(), y32.data(), blocked.data(), 0, 2, 5, 32, true);
  relu_mask_to_blocked16(dy32.data(), y32.data(), copied.data(), 1, 2, 5, 32, false);
  keep(blocked), keep(copied);

  // Pooling over x in nChw16c: 32 channels, odd sides.
  const std::size_t in32 = static_cast<std::size_t>(kImages) * kH * kW * 32;
  const std::size_t pooled32 = static_cast<std::size_t>(kImages) * (kH / 2) * (kW / 2) * 32;
  const Floats xb = grid_values(in32, rng);
  Floats yb(pooled32), dyb = random_values(pooled32, rng, -1, 1), dxb(in32, 7.0f);
  maxpool2_forward(xb.data(), yb.data(), 0, kImages, kH, kW, 32, PoolKernelLayout::kBlockedToNhwc);
  maxpool2_backward(xb.data(), yb.data(), dyb.data(), nullptr, false, dxb.data(), 0, kImages, kH, kW, 32,
                    PoolKernelLayout::kBlockedToNhwc);
  keep(yb), keep(dxb);
  const Floats dyb_mask = grid_values(pooled32, rng);
  maxpool2_backward(xb.data(), yb.data(), dyb.data(), dyb_mask.data(), true, dxb.data(), 0, kImages, kH, kW,
                            32, PoolKernelLayout::kBlockedToNhwc);
  keep(dxb);
  return out;
}

// NHWC (n, h, w, c) into oneDNN's nChw16c: (n, c/16, h, w, 16).
Floats to_nchw16c(const Floats& nhwc, int n, int h, int w, int c) {
  Floats out(nhwc.size());
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < h * w; ++p)
      for (int ch = 0; ch < c; ++ch)
        out[((static_cast<std::size_t>(i) * (c / 16) + ch / 16) * h * w + p) * 16 + ch % 16] =
            nhwc[(static_cast<std::size_t>(i) * h * w + p) * c + ch];
  return out;
}

TEST(CpuElementwise, EveryVariantThisCpuRunsMatchesTheBaselineBitForBit) {
  ASSERT_TRUE(select_elementwise_isa("x86-64"));
  const Floats baseline = run_all();
  int compared = 0;
  for (const std::string isa : {"avx2", "avx512"}) {
    if (!select_elementwise_isa(isa)) continue;
    const Floats got = run_all();
    ASSERT_EQ(got.size(), baseline.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(std::memcmp(&got[i], &baseline[i], sizeof(float)), 0)
          << isa << " differs from x86-64 at value " << i << ": " << got[i] << " vs " << baseline[i];
    }
    ++compared;
  }
  select_elementwise_isa("");
  std::printf("compared %d variant(s) with the baseline; the backend runs %s\n", compared, elementwise_isa());
}

TEST(CpuElementwise, PoolingRoutesToTheFirstMaximumOfATie) {
  // One 2x2 window, two channels: channel 0 ties top-right and bottom-left, channel 1 all equal.
  const Floats x = {0.0f, 2.0f, 3.0f, 2.0f, 3.0f, 2.0f, 1.0f, 2.0f};  // (y, x, c) = NHWC of 1x2x2x2
  for (const std::string isa : {"x86-64", "avx2", "avx512"}) {
    if (!select_elementwise_isa(isa)) continue;
    Floats y(2), dx(8, 9.0f);
    const Floats dy = {10.0f, 20.0f};
    maxpool2_forward(x.data(), y.data(), 0, 1, 2, 2, 2, PoolKernelLayout::kNhwc);
    maxpool2_backward(x.data(), y.data(), dy.data(), nullptr, false, dx.data(), 0, 1, 2, 2, 2, PoolKernelLayout::kNhwc);
    EXPECT_EQ(y, (Floats{3.0f, 2.0f})) << isa;
    EXPECT_EQ(dx, (Floats{0.0f, 20.0f, 10.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f})) << isa;
  }
  select_elementwise_isa("");
}

TEST(CpuElementwise, TheBlockedMaskWritesOneDnnsNChw16c) {
  // One image of 2 pixels and 32 channels: NHWC value 100 * pixel + channel.
  Floats dy(64), y(64, 1.0f);
  for (int p = 0; p < 2; ++p) {
    for (int c = 0; c < 32; ++c) dy[p * 32 + c] = static_cast<float>(100 * p + c);
  }
  y[32 + 17] = 0.0f;  // pixel 1, channel 17: masked
  for (const std::string isa : {"x86-64", "avx2", "avx512"}) {
    if (!select_elementwise_isa(isa)) continue;
    Floats out(64, -1.0f);
    relu_mask_to_blocked16(dy.data(), y.data(), out.data(), 0, 1, 2, 32, true);
    // (block, pixel, 16): block 1 of pixel 1 starts at (1 * 2 + 1) * 16.
    EXPECT_EQ(out[0], 0.0f) << isa;
    EXPECT_EQ(out[16 + 3], 103.0f) << isa;
    EXPECT_EQ(out[32 + 5], 21.0f) << isa;
    EXPECT_EQ(out[48 + 1], 0.0f) << isa;
    EXPECT_EQ(out[48 + 2], 118.0f) << isa;
    EXPECT_EQ(std::count(dy.begin(), dy.end(), 0.0f), 1) << isa << ": dy is left as it was";
  }
  select_elementwise_isa("");
}

// Two images of 9x7 (odd sides: a dropped row and column) and c channels on the coarse grid (ties,
// zeros, negative maxima), and a random gradient of their pooling.
struct PoolingCase {
  static constexpr int kImages = 2, kH = 9, kW = 7;
  std::mt19937 rng;
  std::size_t pooled;
  Floats x, dy;
  PoolingCase(int c, unsigned seed)
      : rng(seed), pooled(static_cast<std::size_t>(kImages) * (kH / 2) * (kW / 2) * c),
        x(grid_values(static_cast<std::size_t>(kImages) * kH * kW * c, rng)), dy(random_values(pooled, rng, -1, 1)) {}
};

TEST(CpuElementwise, BlockedPoolingIsTheNhwcPoolingOfTheSameImages) {
  // 48 channels (three blocks), in every variant.
  constexpr int kC = 48, kImages = PoolingCase::kImages, kH = PoolingCase::kH, kW = PoolingCase::kW;
  PoolingCase pc(kC, 21);
  const Floats &x = pc.x, &dy = pc.dy;
  const std::size_t pooled = pc.pooled;
  for (const std::string isa : {"x86-64", "avx2", "avx512"}) {
    if (!select_elementwise_isa(isa)) continue;
    Floats y(pooled), dx(x.size(), 7.0f), yb(pooled, 5.0f), dxb(x.size(), 7.0f);
    maxpool2_forward(x.data(), y.data(), 0, kImages, kH, kW, kC, PoolKernelLayout::kNhwc);
    maxpool2_backward(x.data(), y.data(), dy.data(), nullptr, false, dx.data(), 0, kImages, kH, kW, kC,
                      PoolKernelLayout::kNhwc);
    const Floats xb = to_nchw16c(x, kImages, kH, kW, kC);
    maxpool2_forward(xb.data(), yb.data(), 0, kImages, kH, kW, kC, PoolKernelLayout::kBlockedToNhwc);
    maxpool2_backward(xb.data(), yb.data(), dy.data(), nullptr, false, dxb.data(), 0, kImages, kH, kW, kC,
                      PoolKernelLayout::kBlockedToNhwc);
    EXPECT_EQ(yb, y) << isa;
    EXPECT_EQ(dxb, to_nchw16c(dx, kImages, kH, kW, kC)) << isa;
  }
  select_elementwise_isa("");
}

TEST(CpuElementwise, PoolingBackwardDoesTheDropoutAfterAndTheReluBeforeAsTheirOwnPassesWould) {
  // The Model lets the pooling's backward do both (model.cpp's plan_fusions): dx must be what the
  // dropout's backward (dy * mask), the routing and the ReLU's mask (x > 0) give one after the
  // other, bit for bit, with windows whose maximum is negative or zero, in both layouts.
  constexpr int kC = 32, kImages = PoolingCase::kImages, kH = PoolingCase::kH, kW = PoolingCase::kW;
  PoolingCase pc(kC, 23);
  const Floats &x = pc.x, &dy = pc.dy;
  const std::size_t pooled = pc.pooled;
  Floats dy_mask(pooled);
  for (auto& m : dy_mask) m = pc.rng() % 4 == 0 ? 0.0f : 4.0f / 3.0f;
  const Floats xb = to_nchw16c(x, kImages, kH, kW, kC);
  for (const std::string isa : {"x86-64", "avx2", "avx512"}) {
    if (!select_elementwise_isa(isa)) continue;
    Floats y(pooled), g(pooled), separate(x.size(), 7.0f), fused(x.size(), 7.0f);
    maxpool2_forward(x.data(), y.data(), 0, kImages, kH, kW, kC, PoolKernelLayout::kNhwc);
    multiply(dy.data(), dy_mask.data(), g.data(), 0, pooled);
    maxpool2_backward(x.data(), y.data(), g.data(), nullptr, false, separate.data(), 0, kImages, kH, kW, kC,
                      PoolKernelLayout::kNhwc);
    relu_mask(separate.data(), x.data(), 0, separate.size());
    maxpool2_backward(x.data(), y.data(), dy.data(), dy_mask.data(), true, fused.data(), 0, kImages, kH, kW, kC,
                      PoolKernelLayout::kNhwc);
    EXPECT_EQ(fused, separate) << isa;
    ASSERT_GT(std::count(separate.begin(), separate.end(), 0.0f), std::count(y.begin(), y.end(), 0.0f)) << isa;

    Floats fused_blocked(x.size(), 7.0f), dropout_only(x.size(), 7.0f), routed(x.size(), 7.0f);
    maxpool2_backward(xb.data(), y.data(), dy.data(), dy_mask.data(), true, fused_blocked.data(), 0, kImages,
                              kH, kW, kC, PoolKernelLayout::kBlockedToNhwc);
    EXPECT_EQ(fused_blocked, to_nchw16c(separate, kImages, kH, kW, kC)) << isa;
    // Each fusion alone.
    maxpool2_backward(x.data(), y.data(), dy.data(), dy_mask.data(), false, dropout_only.data(), 0, kImages, kH, kW,
                      kC, PoolKernelLayout::kNhwc);
    maxpool2_backward(x.data(), y.data(), g.data(), nullptr, false, routed.data(), 0, kImages, kH, kW, kC,
                      PoolKernelLayout::kNhwc);
    EXPECT_EQ(dropout_only, routed) << isa;
    Floats relu_only(x.size(), 7.0f);
    maxpool2_backward(x.data(), y.data(), dy.data(), nullptr, true, relu_only.data(), 0, kImages, kH, kW, kC,
                      PoolKernelLayout::kNhwc);
    maxpool2_backward(x.data(), y.data(), dy.data(), nullptr, false, routed.data(), 0, kImages, kH, kW, kC,
                      PoolKernelLayout::kNhwc);
    relu_mask(routed.data(), x.data(), 0, routed.size());
    EXPECT_EQ(relu_only, routed) << isa;
  }
  select_elementwise_isa("");
}

// Whether two arrays hold the same floats bit for bit (== takes -0 for 0).
bool same_bits(const Floats& a, const Floats& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CpuElementwise, RoutedPoolingIsThePoolingTheDropoutAfterItAndTheFusedBackward) {
  // What the routes replace (backend.hpp's Backend::pools_by_routes): the pooling's forward, the
  // dropout's forward after it, and the pooling's backward that reads x, y and the dropout's mask
  // and does the ReLU's backward. The same floats, bit for bit (signed zeros too), in every
  // variant, both layouts, with and without a dropout or a ReLU, on 20 channels (a scalar tail)
  // and 32 (whole vectors and blocks).
  constexpr int kImages = PoolingCase::kImages, kH = PoolingCase::kH, kW = PoolingCase::kW;
  constexpr float kKeep = 4.0f / 3.0f;
  const std::uint64_t threshold = static_cast<std::uint64_t>(0.25 * 18446744073709551616.0);
  for (const int c : {20, 32}) {
    PoolingCase pc(c, 29);
    const Floats &x = pc.x, &dy = pc.dy;
    const std::size_t pooled = pc.pooled;
    const Floats xb = c % 16 == 0 ? to_nchw16c(x, kImages, kH, kW, c) : Floats{};
    for (const std::string isa : {"x86-64", "avx2", "avx512"}) {
      if (!select_elementwise_isa(isa)) continue;
      for (const bool drop : {false, true}) {
        for (const bool relu : {false, true}) {
          const std::string what = isa + " c=" + std::to_string(c) + (drop ? " dropout" : "") + (relu ? " relu" : "");
          Floats y(pooled), mask(pooled), dropped(pooled), want(x.size(), 7.0f);
          maxpool2_forward(x.data(), y.data(), 0, kImages, kH, kW, c, PoolKernelLayout::kNhwc);
          if (drop) {
            dropout_forward(y.data(), dropped.data(), mask.data(), pooled / kImages, 0, kImages, kKeep, threshold, 99,
                            5);
          }
          maxpool2_backward(x.data(), y.data(), dy.data(), drop ? mask.data() : nullptr, relu, want.data(), 0, kImages,
                            kH, kW, c, PoolKernelLayout::kNhwc);
          const RouteDraws draws = drop ? RouteDraws{kKeep, threshold, 99, 5} : RouteDraws{};
          const float keep = drop ? kKeep : 0.0f;
          std::vector<std::uint8_t> routes(pooled, 0xff);
          Floats routed_y(pooled, 5.0f), got(x.size(), 7.0f);
          maxpool2_forward_routed(x.data(), routed_y.data(), routes.data(), draws, 0, kImages, kH, kW, c,
                                  PoolKernelLayout::kNhwc);
          maxpool2_backward_routed(routes.data(), dy.data(), keep, relu, got.data(), 0, kImages, kH, kW, c,
                                   PoolKernelLayout::kNhwc);
          EXPECT_TRUE(same_bits(routed_y, drop ? dropped : y)) << what;
          EXPECT_TRUE(same_bits(got, want)) << what;
          if (drop) {  // some outputs dropped, and the routes say which
            const auto kept =
                std::count_if(routes.begin(), routes.end(), [](std::uint8_t r) { return (r & kRouteKept) != 0; });
            EXPECT_EQ(kept, std::count(mask.begin(), mask.end(), kKeep)) << what;
            ASSERT_LT(kept, static_cast<long>(pooled)) << what;
          }
          if (xb.empty()) continue;
          Floats blocked_y(pooled, 5.0f), blocked(x.size(), 7.0f);
          maxpool2_forward_routed(xb.data(), blocked_y.data(), routes.data(), draws, 0, kImages, kH, kW, c,
                                  PoolKernelLayout::kBlockedToNhwc);
          maxpool2_backward_routed(routes.data(), dy.data(), keep, relu, blocked.data(), 0, kImages, kH, kW, c,
                                   PoolKernelLayout::kBlockedToNhwc);
          EXPECT_TRUE(same_bits(blocked_y, routed_y)) << what << " blocked";
          EXPECT_TRUE(same_bits(blocked, to_nchw16c(want, kImages, kH, kW, c))) << what << " blocked";
          // y, dy and the routes blocked too: the same floats in that layout, the same draws.
          const int ph = kH / 2, pw = kW / 2;
          Floats both_y(pooled, 5.0f), both(x.size(), 7.0f);
          maxpool2_forward_routed(xb.data(), both_y.data(), routes.data(), draws, 0, kImages, kH, kW, c,
                                  PoolKernelLayout::kBlocked);
          const Floats dy_blocked = to_nchw16c(dy, kImages, ph, pw, c);
          maxpool2_backward_routed(routes.data(), dy_blocked.data(), keep, relu, both.data(), 0, kImages, kH, kW, c,
                                   PoolKernelLayout::kBlocked);
          EXPECT_TRUE(same_bits(both_y, to_nchw16c(routed_y, kImages, ph, pw, c))) << what << " all blocked";
          EXPECT_TRUE(same_bits(both, to_nchw16c(want, kImages, kH, kW, c))) << what << " all blocked";
          if (!drop && !relu) {  // the unrouted pair too (evaluation's forward; a run without routes)
            Floats plain_y(pooled, 5.0f), plain(x.size(), 7.0f);
            maxpool2_forward(xb.data(), plain_y.data(), 0, kImages, kH, kW, c, PoolKernelLayout::kBlocked);
            EXPECT_TRUE(same_bits(plain_y, to_nchw16c(y, kImages, ph, pw, c))) << what << " unrouted, all blocked";
            maxpool2_backward(xb.data(), plain_y.data(), dy_blocked.data(), nullptr, false, plain.data(), 0, kImages,
                              kH, kW, c, PoolKernelLayout::kBlocked);
            EXPECT_TRUE(same_bits(plain, to_nchw16c(want, kImages, kH, kW, c))) << what << " unrouted, all blocked";
          }
        }
      }
    }
  }
  select_elementwise_isa("");
}

TEST(CpuElementwise, AVariantTheCpuLacksIsRefused) {
  EXPECT_FALSE(select_elementwise_isa("avx1024"));
  EXPECT_TRUE(select_elementwise_isa(""));
}

}  // namespace
}  // namespace batchai::train::cpu
