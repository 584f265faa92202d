// Shared pieces of the CUDA backend tests: the skip-without-device fixture holding a CPU
// reference backend and a full-fp32 CUDA backend, random host data, and norm-wise comparison.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "batchai/train/backend.hpp"
#include "batchai/train_cuda/cuda_backend.hpp"
#include "batchai/train_cuda/cuda_device.hpp"

namespace batchai::train_cuda::testing {

inline std::vector<float> random_vector(std::size_t count, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(gen);
  return v;
}

// max |a - b| / max |b| (norm-wise relative error; 0 when both are zero).
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  if (a.size() != b.size()) return INFINITY;
  return scale == 0.0 ? diff : diff / scale;
}

constexpr double kTolerance = 1e-4;

class CudaVsCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) GTEST_SKIP() << "no CUDA device: " << device_unavailable_reason();
    cpu_ = train::make_backend(train::BackendKind::kCpu, 1);
    CudaBackendOptions options;
    options.allow_tf32 = false;  // TF32 would cost ~3 decimal digits; the comparison wants fp32
    options.conv_layout = layout_;
    gpu_ = make_cuda_backend(options);
  }
  void TearDown() override {
    for (auto& b : cpu_buffers_) cpu_->release(b);
    for (auto& b : gpu_buffers_) gpu_->release(b);
  }

  // The same host data in a buffer of each backend.
  struct Pair {
    train::Buffer* cpu;
    train::Buffer* gpu;
  };
  Pair make(const std::vector<float>& host) {
    cpu_buffers_.push_back(cpu_->allocate(host.size()));
    gpu_buffers_.push_back(gpu_->allocate(host.size()));
    cpu_->upload(cpu_buffers_.back(), host.data(), host.size(), 0);
    gpu_->upload(gpu_buffers_.back(), host.data(), host.size(), 0);
    return {&cpu_buffers_.back(), &gpu_buffers_.back()};
  }
  Pair zeros(std::size_t count) { return make(std::vector<float>(count, 0.0f)); }
  std::vector<float> get(train::Backend& backend, const train::Buffer& b) {
    std::vector<float> host(b.size);
    backend.download(host.data(), b, host.size(), 0);
    return host;
  }
  // Relative error between the two buffers of a pair.
  double error(const Pair& p) { return relative_error(get(*gpu_, *p.gpu), get(*cpu_, *p.cpu)); }

  ConvLayout layout_ = ConvLayout::kAuto;  // set before SetUp by fixtures that choose one
  std::unique_ptr<train::Backend> cpu_, gpu_;
  std::deque<train::Buffer> cpu_buffers_, gpu_buffers_;  // a deque keeps Pair pointers valid
};

}  // namespace batchai::train_cuda::testing
