// Batch preparation and Keras-style augmentation (see augment.hpp).
#include "augment.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "batchai/train/counter_rng.hpp"

namespace batchai::train {
namespace {

constexpr int kSide = kCifarImageSize;
constexpr int kPlane = kSide * kSide;

}  // namespace

void transform_image(const std::uint8_t* chw, float dy, float dx, bool flip, float* hwc) {
  constexpr float kScale = 1.0f / 255.0f;
  // Keras 2.1's apply_transform samples with scipy's affine_transform at order=0: each output
  // pixel copies the nearest source pixel (no blending, so shifted images stay as sharp as the
  // test images), and sources past the edge are clamped (fill_mode "nearest").
  int src_y[kSide], src_x[kSide];
  for (int i = 0; i < kSide; ++i) {
    auto nearest = [](float s) { return std::clamp(static_cast<int>(std::floor(s + 0.5f)), 0, kSide - 1); };
    src_y[i] = nearest(static_cast<float>(i) - dy);
    src_x[i] = nearest(static_cast<float>(flip ? kSide - 1 - i : i) - dx);
  }
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      float* out = hwc + (y * kSide + x) * kCifarChannels;
      const int at = src_y[y] * kSide + src_x[x];
      for (int c = 0; c < kCifarChannels; ++c) out[c] = chw[c * kPlane + at] * kScale;
    }
  }
}

void prepare_batch(const Dataset& data, const int* indices, int n, const AugmentConfig& config,
                   std::uint64_t seed, std::uint64_t first_key, float* x, float* labels) {
  const std::size_t image_floats = kCifarImageBytes;
  for (int i = 0; i < n; ++i) {
    const int idx = indices[i];
    labels[i] = static_cast<float>(data.labels[idx]);
    float dy = 0.0f, dx = 0.0f;
    bool flip = false;
    if (config.enabled) {
      const std::uint64_t base = image_stream(seed, first_key + static_cast<std::uint64_t>(i));
      // Keras draws a uniform shift in (-range, range) * size (in pixels; the sampling rounds).
      dy = static_cast<float>((2 * unit_interval(splitmix64(base + 1)) - 1) * config.height_shift * kSide);
      dx = static_cast<float>((2 * unit_interval(splitmix64(base + 2)) - 1) * config.width_shift * kSide);
      flip = config.horizontal_flip && unit_interval(splitmix64(base + 3)) < 0.5;
    }
    transform_image(data.image(idx), dy, dx, flip, x + static_cast<std::size_t>(i) * image_floats);
  }
}

BatchPrefetcher::BatchPrefetcher(const Dataset& data, AugmentConfig config, std::uint64_t seed, int max_batch,
                                 PrepareOn where)
    : data_(data), config_(config), seed_(seed), max_batch_(max_batch), where_(where) {
  for (int s = 0; s < 2; ++s) {
    x_[s].resize(static_cast<std::size_t>(max_batch) * kCifarImageBytes);
    labels_[s].resize(static_cast<std::size_t>(max_batch));
  }
}

BatchPrefetcher::~BatchPrefetcher() {
  if (pending_.valid()) pending_.wait();
}

void BatchPrefetcher::request(const int* indices, int n, std::uint64_t first_key) {
  if (pending_.valid()) pending_.wait();
  slot_ ^= 1;
  n_ = std::min(n, max_batch_);
  indices_.assign(indices, indices + n_);
  const int slot = slot_;
  if (where_ == PrepareOn::kOnTeam) {
    first_key_ = first_key;
    requested_ = true;
    return;
  }
  pending_ = std::async(std::launch::async, [this, slot, first_key] {
    prepare_batch(data_, indices_.data(), n_, config_, seed_, first_key, x_[slot].data(), labels_[slot].data());
  });
}

void BatchPrefetcher::wait(const float** x, const float** labels, int* n) {
  if (pending_.valid()) pending_.get();
  if (requested_) {
    requested_ = false;
    float* xs = x_[slot_].data();
    float* ys = labels_[slot_].data();
    // Images are independent (each draws from its own key), so any split gives the same batch.
    const int parts = std::max(1, std::min(omp_get_max_threads(), n_));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) {
      const int b = n_ * p / parts, e = n_ * (p + 1) / parts;
      prepare_batch(data_, indices_.data() + b, e - b, config_, seed_, first_key_ + static_cast<std::uint64_t>(b),
                    xs + static_cast<std::size_t>(b) * kCifarImageBytes, ys + b);
    }
  }
  *x = x_[slot_].data();
  *labels = labels_[slot_].data();
  *n = n_;
}

}  // namespace batchai::train
