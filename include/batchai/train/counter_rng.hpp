// Counter-based random draws for the trainer: every random choice (weights, augmentation,
// dropout) is a pure function of a seed and a key, so it does not depend on which rank, thread,
// batch position or backend (CPU or CUDA) computes it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "batchai/train/host_device.hpp"

namespace batchai::train {

// splitmix64's output function: a fast, well-mixed bijection of 64-bit words.
BATCHAI_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform double in [0, 1) from the top 53 bits.
BATCHAI_HOST_DEVICE inline double unit_interval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// One image's draws within a stream: keyed by the image's position in the epoch, so an image is
// augmented and dropped alike whichever rank or batch trains it.
BATCHAI_HOST_DEVICE inline std::uint64_t image_stream(std::uint64_t stream, std::uint64_t image_key) {
  return splitmix64(stream ^ splitmix64(image_key));
}

// Dropout: each layer draws from its own stream of (seed, layer); augmentation uses the seed's.
BATCHAI_HOST_DEVICE inline std::uint64_t dropout_layer_stream(std::uint64_t seed, std::size_t layer) {
  return splitmix64(seed ^ splitmix64(0xd1b54a32d192ed03ULL + layer));
}
// Feature `feature` of an image is dropped when its draw falls below `threshold` (rate * 2^64).
BATCHAI_HOST_DEVICE inline bool dropout_drops(std::uint64_t image_stream, std::size_t feature, std::uint64_t threshold) {
  return splitmix64(image_stream + feature) < threshold;
}
// What a kept feature is scaled by (inverted dropout).
inline float dropout_keep_scale(float rate) { return 1.0f / (1.0f - rate); }
inline std::uint64_t dropout_threshold(float rate) {
  return static_cast<std::uint64_t>(static_cast<double>(rate) * 18446744073709551616.0);
}

}  // namespace batchai::train
