// Augmentation as Keras 2.1's ImageDataGenerator does it: a shift copies whole source pixels
// (scipy affine_transform, order=0: the nearest one, no blending), clamps at the edges
// (fill_mode "nearest"), flips mirror columns; the draws depend on the image's key only.
#include "augment.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace batchai::train {
namespace {

constexpr int kSide = kCifarImageSize;

// A CHW image whose every byte says where it came from: (y * 32 + x + 17 * c) mod 256.
std::vector<std::uint8_t> coded_image() {
  std::vector<std::uint8_t> chw(kCifarImageBytes);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x)
        chw[static_cast<std::size_t>((c * kSide + y) * kSide + x)] = static_cast<std::uint8_t>((y * kSide + x + 17 * c) % 256);
  return chw;
}

float expected(const std::vector<std::uint8_t>& chw, int y, int x, int c) {
  auto clamp = [](int v) { return v < 0 ? 0 : (v >= kSide ? kSide - 1 : v); };
  return chw[static_cast<std::size_t>((c * kSide + clamp(y)) * kSide + clamp(x))] * (1.0f / 255.0f);
}

float at(const std::vector<float>& hwc, int y, int x, int c) {
  return hwc[static_cast<std::size_t>((y * kSide + x) * 3 + c)];
}

TEST(Augment, FractionalShiftsCopyTheNearestPixelWithoutBlending) {
  const auto chw = coded_image();
  std::vector<float> hwc(kCifarImageBytes);
  // (dy, dx) -> the integer shift nearest-pixel sampling makes of it.
  const struct { float dy, dx; int sy, sx; } cases[] = {
      {0.0f, 0.0f, 0, 0}, {1.4f, -0.4f, 1, 0}, {1.6f, -2.6f, 2, -3}, {-3.2f, 3.1f, -3, 3}};
  for (const auto& k : cases) {
    transform_image(chw.data(), k.dy, k.dx, false, hwc.data());
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x)
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(at(hwc, y, x, c), expected(chw, y - k.sy, x - k.sx, c))
              << "dy " << k.dy << " dx " << k.dx << " at " << y << "," << x << "," << c;
  }
}

TEST(Augment, FlipMirrorsColumnsBeforeTheShift) {
  const auto chw = coded_image();
  std::vector<float> hwc(kCifarImageBytes);
  transform_image(chw.data(), 0.0f, 1.0f, true, hwc.data());
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x) EXPECT_EQ(at(hwc, y, x, 1), expected(chw, y, kSide - 1 - x - 1, 1));
}

TEST(Augment, EveryValueIsAStoredPixel) {
  // Random batches hold only values of the source image: nothing is interpolated.
  Dataset data;
  data.count = 1;
  data.images = coded_image();
  data.labels = {7};
  std::set<float> allowed;
  for (auto b : data.images) allowed.insert(b * (1.0f / 255.0f));
  std::vector<float> x(static_cast<std::size_t>(64) * kCifarImageBytes), labels(64);
  std::vector<int> indices(64, 0);
  prepare_batch(data, indices.data(), 64, AugmentConfig{}, 42, 1000, x.data(), labels.data());
  for (float v : x) ASSERT_TRUE(allowed.count(v) > 0) << v;
  EXPECT_EQ(labels[63], 7.0f);
  // Different keys draw different shifts: the 64 images are not all the same.
  EXPECT_NE(std::vector<float>(x.begin(), x.begin() + kCifarImageBytes),
            std::vector<float>(x.begin() + kCifarImageBytes, x.begin() + 2 * kCifarImageBytes));
}

// Prepared on the team at the wait or on a helper thread ahead, every batch is the same, images
// and labels, including a short last batch; and one preparation follows each request.
TEST(Augment, BatchesAreTheSameWhereverTheyArePrepared) {
  Dataset data;
  data.count = 3;
  for (int i = 0; i < 3; ++i) {
    const std::vector<std::uint8_t> image = coded_image();
    data.images.insert(data.images.end(), image.begin(), image.end());
    data.labels.push_back(static_cast<std::uint8_t>(4 + i));
  }
  data.images[kCifarImageBytes + 5] ^= 0x55;  // the images differ
  std::vector<int> order(41);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i * 7 % 3);
  auto batches = [&](PrepareOn where) {
    BatchPrefetcher prefetch(data, AugmentConfig{}, 9, 16, where);
    std::vector<std::vector<float>> out;
    const int sizes[] = {16, 16, 9};  // 41 images: the last batch holds the remainder
    int at = 0;
    prefetch.request(order.data(), sizes[0], 0);
    for (int b = 0; b < 3; ++b) {
      const float *x = nullptr, *y = nullptr;
      int n = 0;
      prefetch.wait(&x, &y, &n);
      EXPECT_EQ(n, sizes[b]);
      std::vector<float> got(x, x + static_cast<std::size_t>(n) * kCifarImageBytes);
      got.insert(got.end(), y, y + n);
      out.push_back(got);
      at += n;
      if (b + 1 < 3) prefetch.request(order.data() + at, sizes[b + 1], static_cast<std::uint64_t>(at));
    }
    return out;
  };
  const auto ahead = batches(PrepareOn::kAhead), on_team = batches(PrepareOn::kOnTeam);
  ASSERT_EQ(ahead.size(), 3u);
  for (int b = 0; b < 3; ++b) EXPECT_EQ(on_team[b], ahead[b]) << "batch " << b;
  std::vector<float> first(static_cast<std::size_t>(16) * kCifarImageBytes), labels(16);
  prepare_batch(data, order.data(), 16, AugmentConfig{}, 9, 0, first.data(), labels.data());
  first.insert(first.end(), labels.begin(), labels.end());
  EXPECT_EQ(on_team[0], first);
}

}  // namespace
}  // namespace batchai::train
