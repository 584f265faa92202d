// An image-classification data set held in memory exactly as CIFAR-10 stores it: per image
// 3072 bytes, channel-major (1024 R, then 1024 G, then 1024 B, each 32x32 row-major).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace batchai::train {

constexpr int kCifarImageSize = 32;
constexpr int kCifarChannels = 3;
constexpr std::size_t kCifarImageBytes = 32 * 32 * 3;        // 3072
constexpr std::size_t kCifarRecordBytes = kCifarImageBytes + 1;  // label byte + image
constexpr int kCifarClasses = 10;

struct Dataset {
  std::vector<std::uint8_t> images;  // count x 3 x 32 x 32 (CHW per image)
  std::vector<std::uint8_t> labels;  // count, each 0..9
  int count = 0;

  // First byte of image i (CHW).
  const std::uint8_t* image(int i) const {
    return images.data() + static_cast<std::size_t>(i) * kCifarImageBytes;
  }
};

}  // namespace batchai::train
