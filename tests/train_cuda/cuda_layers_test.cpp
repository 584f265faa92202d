// Each CUDA backend operation against the CPU backend on random inputs: norm-wise relative error
// below 1e-4 in fp32 (TF32 off); dropout masks and pooling routes must agree exactly.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "cuda_test_util.hpp"

namespace batchai::train_cuda::testing {
namespace {

using train::ConvShape;
using train::DenseShape;

struct ConvCase {
  int n, h, w, c, out, pad;
  bool relu;
  ConvLayout layout = ConvLayout::kAuto;
};

std::string conv_case_name(const ConvCase& t) {
  return "n" + std::to_string(t.n) + "_" + std::to_string(t.h) + "x" + std::to_string(t.w) + "x" +
         std::to_string(t.c) + "_to" + std::to_string(t.out) + (t.pad != 0 ? "_same" : "_valid") +
         (t.relu ? "_relu" : "") + (t.layout == ConvLayout::kNhwc ? "_nhwc" : "_nchw");
}

// Every shape in both layouts cuDNN may convolve in (activations stay NHWC either way).
std::vector<ConvCase> conv_cases() {
  const ConvCase shapes[] = {
      {4, 32, 32, 3, 32, 1, true},    // conv2d_1 (same)
      {4, 32, 32, 32, 32, 0, true},   // conv2d_2 (valid)
      {3, 15, 15, 32, 64, 1, false},  // same, no ReLU
      {2, 15, 13, 64, 64, 0, true},   // valid, odd sizes
      {300, 6, 6, 8, 16, 1, true},    // many rows
      {33, 32, 32, 3, 8, 1, true},    // more rows than the bias gradient's blocks, unevenly split
  };
  std::vector<ConvCase> cases;
  for (const auto layout : {ConvLayout::kNhwc, ConvLayout::kNchw}) {
    for (ConvCase c : shapes) {
      c.layout = layout;
      cases.push_back(c);
    }
  }
  return cases;
}
// Readable parameters in failure messages (the default prints raw bytes, padding included).
void PrintTo(const ConvCase& t, std::ostream* os) { *os << conv_case_name(t); }

class CudaConv : public CudaVsCpu, public ::testing::WithParamInterface<ConvCase> {
 protected:
  CudaConv() { layout_ = GetParam().layout; }
};

TEST_P(CudaConv, ForwardMatchesCpu) {
  const ConvCase t = GetParam();
  const ConvShape s{t.n, t.h, t.w, t.c, t.out, 3, t.pad};
  const std::size_t wn = 9u * t.c * t.out;
  auto params = random_vector(wn + t.out, 1, -0.3f, 0.3f);
  auto p = make(params);
  auto x = make(random_vector(static_cast<std::size_t>(t.n) * t.h * t.w * t.c, 2));
  auto y = zeros(static_cast<std::size_t>(t.n) * s.oh() * s.ow() * t.out);
  cpu_->conv2d_forward(s, *x.cpu, *p.cpu, 0, wn, *y.cpu, t.relu);
  gpu_->conv2d_forward(s, *x.gpu, *p.gpu, 0, wn, *y.gpu, t.relu);
  EXPECT_LT(error(y), kTolerance);
}

TEST_P(CudaConv, BackwardMatchesCpu) {
  const ConvCase t = GetParam();
  const ConvShape s{t.n, t.h, t.w, t.c, t.out, 3, t.pad};
  const std::size_t wn = 9u * t.c * t.out;
  auto p = make(random_vector(wn + t.out, 3, -0.3f, 0.3f));
  auto x = make(random_vector(static_cast<std::size_t>(t.n) * t.h * t.w * t.c, 4));
  const std::size_t ysize = static_cast<std::size_t>(t.n) * s.oh() * s.ow() * t.out;
  auto y = zeros(ysize);
  cpu_->conv2d_forward(s, *x.cpu, *p.cpu, 0, wn, *y.cpu, t.relu);
  gpu_->conv2d_forward(s, *x.gpu, *p.gpu, 0, wn, *y.gpu, t.relu);
  auto dy = make(random_vector(ysize, 5));
  auto dw = make(random_vector(wn + t.out, 6));  // non-zero: backward must accumulate
  auto dx = zeros(x.cpu->size);
  cpu_->conv2d_backward(s, *x.cpu, *p.cpu, 0, *y.cpu, *dy.cpu, dx.cpu, *dw.cpu, wn, t.relu);
  gpu_->conv2d_backward(s, *x.gpu, *p.gpu, 0, *y.gpu, *dy.gpu, dx.gpu, *dw.gpu, wn, t.relu);
  EXPECT_LT(error(dy), kTolerance) << "ReLU-masked dy";
  EXPECT_LT(error(dx), kTolerance) << "dx";
  const auto gw = get(*gpu_, *dw.gpu), cw = get(*cpu_, *dw.cpu);
  EXPECT_LT(relative_error({gw.begin(), gw.begin() + wn}, {cw.begin(), cw.begin() + wn}), kTolerance) << "dW";
  EXPECT_LT(relative_error({gw.begin() + wn, gw.end()}, {cw.begin() + wn, cw.end()}), kTolerance) << "db";
}

TEST_P(CudaConv, BackwardWithoutDxMatchesCpu) {
  const ConvCase t = GetParam();
  const ConvShape s{t.n, t.h, t.w, t.c, t.out, 3, t.pad};
  const std::size_t wn = 9u * t.c * t.out;
  auto p = make(random_vector(wn + t.out, 7, -0.3f, 0.3f));
  auto x = make(random_vector(static_cast<std::size_t>(t.n) * t.h * t.w * t.c, 8));
  const std::size_t ysize = static_cast<std::size_t>(t.n) * s.oh() * s.ow() * t.out;
  auto y = make(random_vector(ysize, 9));
  auto dy = make(random_vector(ysize, 10));
  auto dw = zeros(wn + t.out);
  cpu_->conv2d_backward(s, *x.cpu, *p.cpu, 0, *y.cpu, *dy.cpu, nullptr, *dw.cpu, wn, t.relu);
  gpu_->conv2d_backward(s, *x.gpu, *p.gpu, 0, *y.gpu, *dy.gpu, nullptr, *dw.gpu, wn, t.relu);
  EXPECT_LT(error(dw), kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaConv,
                         ::testing::ValuesIn(conv_cases()),
                         [](const ::testing::TestParamInfo<ConvCase>& p) { return conv_case_name(p.param); });

TEST_F(CudaVsCpu, DenseForwardBackwardMatchCpu) {
  for (const bool relu : {true, false}) {
    for (const DenseShape s : {DenseShape{5, 37, 19}, DenseShape{32, 2304, 512}, DenseShape{7, 512, 10}}) {
      const std::size_t wn = static_cast<std::size_t>(s.in) * s.out;
      auto p = make(random_vector(wn + s.out, 11, -0.1f, 0.1f));
      auto x = make(random_vector(static_cast<std::size_t>(s.n) * s.in, 12));
      auto y = zeros(static_cast<std::size_t>(s.n) * s.out);
      cpu_->dense_forward(s, *x.cpu, *p.cpu, 0, wn, *y.cpu, relu);
      gpu_->dense_forward(s, *x.gpu, *p.gpu, 0, wn, *y.gpu, relu);
      EXPECT_LT(error(y), kTolerance) << "forward " << s.n << "x" << s.in << "x" << s.out;
      auto dy = make(random_vector(y.cpu->size, 13));
      auto dw = make(random_vector(wn + s.out, 14));
      auto dx = zeros(x.cpu->size);
      cpu_->dense_backward(s, *x.cpu, *p.cpu, 0, *y.cpu, *dy.cpu, dx.cpu, *dw.cpu, wn, relu);
      gpu_->dense_backward(s, *x.gpu, *p.gpu, 0, *y.gpu, *dy.gpu, dx.gpu, *dw.gpu, wn, relu);
      EXPECT_LT(error(dx), kTolerance) << "dx";
      EXPECT_LT(error(dw), kTolerance) << "dW, db";
    }
  }
}

TEST_F(CudaVsCpu, MaxPoolMatchesCpuIncludingTies) {
  for (const int h : {8, 7}) {
    const int n = 3, w = h + 2, c = 5;
    // Values from a small set so windows contain ties (the first maximum must get the gradient)
    // and maxima not > 0 (which the fused ReLU's backward zeroes).
    auto xs = random_vector(static_cast<std::size_t>(n) * h * w * c, 15, -2.0f, 4.0f);
    for (auto& v : xs) v = std::floor(v);
    auto x = make(xs);
    auto y = zeros(static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c);
    cpu_->maxpool2_forward(n, h, w, c, *x.cpu, train::PoolLayouts{}, *y.cpu);
    gpu_->maxpool2_forward(n, h, w, c, *x.gpu, train::PoolLayouts{}, *y.gpu);
    EXPECT_EQ(get(*gpu_, *y.gpu), get(*cpu_, *y.cpu));
    auto dy = make(random_vector(y.cpu->size, 16));
    auto dx = make(random_vector(x.cpu->size, 17));  // stale values must be overwritten
    auto mask = make(random_vector(y.cpu->size, 18, 0.0f, 2.0f));
    for (const bool with_mask : {false, true}) {
      for (const bool relu_of_x : {false, true}) {
        const train::PoolBackwardFusion on_cpu{with_mask ? mask.cpu : nullptr, relu_of_x};
        const train::PoolBackwardFusion on_gpu{with_mask ? mask.gpu : nullptr, relu_of_x};
        cpu_->maxpool2_backward(n, h, w, c, *x.cpu, train::PoolLayouts{}, *y.cpu, *dy.cpu, on_cpu, *dx.cpu);
        gpu_->maxpool2_backward(n, h, w, c, *x.gpu, train::PoolLayouts{}, *y.gpu, *dy.gpu, on_gpu, *dx.gpu);
        EXPECT_EQ(get(*gpu_, *dx.gpu), get(*cpu_, *dx.cpu))
            << "h=" << h << " mask " << with_mask << " relu " << relu_of_x;
      }
    }
  }
}

TEST_F(CudaVsCpu, DropoutMasksAreIdentical) {
  for (const float rate : {0.25f, 0.5f}) {
    auto x = make(random_vector(100003, 18));
    auto y = zeros(x.cpu->size), mask = zeros(x.cpu->size);
    cpu_->dropout_forward(*x.cpu, *y.cpu, *mask.cpu, rate, 42, 7 * 64 + 3, 96);
    gpu_->dropout_forward(*x.gpu, *y.gpu, *mask.gpu, rate, 42, 7 * 64 + 3, 96);
    EXPECT_EQ(get(*gpu_, *mask.gpu), get(*cpu_, *mask.cpu));
    EXPECT_EQ(get(*gpu_, *y.gpu), get(*cpu_, *y.cpu));
    auto dy = make(random_vector(x.cpu->size, 19));
    auto dx = zeros(x.cpu->size);
    cpu_->dropout_backward(*dy.cpu, *mask.cpu, *dx.cpu);
    gpu_->dropout_backward(*dy.gpu, *mask.gpu, *dx.gpu);
    EXPECT_EQ(get(*gpu_, *dx.gpu), get(*cpu_, *dx.cpu));
  }
}

TEST_F(CudaVsCpu, SoftmaxCrossEntropyMatchesCpu) {
  for (const int n : {1, 32, 300}) {
    const int classes = 10;
    auto logits = make(random_vector(static_cast<std::size_t>(n) * classes, 20, -6.0f, 6.0f));
    std::vector<float> labels(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) labels[static_cast<std::size_t>(i)] = static_cast<float>((i * 7) % classes);
    auto lab = make(labels);
    auto dl = zeros(logits.cpu->size);
    double cpu_loss = 0, gpu_loss = 0;
    int cpu_correct = -1, gpu_correct = -2;
    cpu_->softmax_cross_entropy(n, classes, *logits.cpu, *lab.cpu, dl.cpu, &cpu_loss, &cpu_correct);
    gpu_->softmax_cross_entropy(n, classes, *logits.gpu, *lab.gpu, dl.gpu, &gpu_loss, &gpu_correct);
    EXPECT_NEAR(gpu_loss, cpu_loss, 1e-9 * std::max(1.0, cpu_loss)) << "n=" << n;
    EXPECT_EQ(gpu_correct, cpu_correct);
    EXPECT_LT(error(dl), kTolerance);
    // Without dlogits (evaluation) only the statistics come back.
    gpu_->softmax_cross_entropy(n, classes, *logits.gpu, *lab.gpu, nullptr, &gpu_loss, &gpu_correct);
    EXPECT_NEAR(gpu_loss, cpu_loss, 1e-9 * std::max(1.0, cpu_loss));
  }
}

TEST_F(CudaVsCpu, RmspropScaleFillMatchCpu) {
  const std::size_t count = 1250858;
  auto p = make(random_vector(count, 21));
  auto ms = zeros(count);
  for (int step = 0; step < 3; ++step) {
    auto g = make(random_vector(count, 22 + static_cast<std::uint32_t>(step), -0.01f, 0.01f));
    cpu_->scale(*g.cpu, 0.5f);
    gpu_->scale(*g.gpu, 0.5f);
    EXPECT_LT(error(g), 1e-7);
    cpu_->rmsprop_update(*p.cpu, *g.cpu, *ms.cpu, 1e-3f, 0.9f, 1e-7f);
    gpu_->rmsprop_update(*p.gpu, *g.gpu, *ms.gpu, 1e-3f, 0.9f, 1e-7f);
  }
  EXPECT_LT(error(p), kTolerance);
  EXPECT_LT(error(ms), kTolerance);
  cpu_->fill(*p.cpu, 0.75f);
  gpu_->fill(*p.gpu, 0.75f);
  EXPECT_EQ(get(*gpu_, *p.gpu), get(*cpu_, *p.cpu));
  gpu_->fill(*p.gpu, 0.0f);
  EXPECT_EQ(get(*gpu_, *p.gpu), std::vector<float>(count, 0.0f));
}

TEST_F(CudaVsCpu, UploadDownloadWithOffsets) {
  auto b = zeros(1000);
  const auto host = random_vector(300, 23);
  gpu_->upload(*b.gpu, host.data(), host.size(), 500);
  std::vector<float> back(300);
  gpu_->download(back.data(), *b.gpu, back.size(), 500);
  EXPECT_EQ(back, host);
  EXPECT_THROW(gpu_->upload(*b.gpu, host.data(), host.size(), 800), Error);
  EXPECT_THROW(gpu_->download(back.data(), *b.gpu, back.size(), 701), Error);
}

}  // namespace
}  // namespace batchai::train_cuda::testing
