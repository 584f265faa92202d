// Every layer's backward on the CPU backend (float) against central finite differences of an
// independent double-precision reference forward; forward values against the reference too.
#include <gtest/gtest.h>

#include <random>

#include "batchai/train/backend.hpp"
#include "gradcheck_reference.hpp"

namespace batchai::train {
namespace {

using testing::Vec;

Vec random_vec(std::size_t n, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> d(lo, hi);
  Vec v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

struct Fixture {
  std::unique_ptr<Backend> be = make_backend(BackendKind::kCpu, 2);
  Buffer put(const Vec& v) {
    Buffer b = be->allocate(v.size());
    std::vector<float> f(v.begin(), v.end());
    be->upload(b, f.data(), f.size());
    return b;
  }
  std::vector<float> get(const Buffer& b, std::size_t n, std::size_t off = 0) {
    std::vector<float> f(n);
    be->download(f.data(), b, n, off);
    return f;
  }
  // Rounds a double vector to float precision so reference and backend see the same inputs.
  static Vec as_float(Vec v) {
    for (auto& x : v) x = static_cast<float>(x);
    return v;
  }
};

// Without dx (a first layer) the CPU backend may take another kernel for the weight gradient.
void check_conv(const ConvShape& s, bool relu, int threads, bool with_dx = true) {
  Fixture f;
  f.be->set_threads(threads);
  std::mt19937 rng(42);
  const std::size_t ksize = 9u * s.c * s.out;
  Vec x = Fixture::as_float(random_vec(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, rng));
  Vec wb = Fixture::as_float(random_vec(ksize + s.out, rng, -0.5, 0.5));
  const std::size_t ysize = static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out;
  Vec r = Fixture::as_float(random_vec(ysize, rng));
  auto split = [&](const Vec& v) {
    return std::make_pair(Vec(v.begin(), v.begin() + ksize), Vec(v.begin() + ksize, v.end()));
  };
  auto loss = [&] {
    auto [w, b] = split(wb);
    return testing::dot(testing::ref_conv(s, x, w, b, relu), r);
  };
  Buffer bx = f.put(x), bw = f.put(wb), by = f.be->allocate(ysize), bdy = f.put(r);
  Buffer bdx = f.be->allocate(x.size()), bdw = f.be->allocate(wb.size());
  f.be->conv2d_forward(s, bx, bw, 0, ksize, by, relu);
  auto [w0, b0] = split(wb);
  EXPECT_LT(testing::relative_error(f.get(by, ysize), testing::ref_conv(s, x, w0, b0, relu)), 1e-5);
  f.be->conv2d_backward(s, bx, bw, 0, by, bdy, with_dx ? &bdx : nullptr, bdw, ksize, relu);
  if (with_dx) {
    EXPECT_LT(testing::relative_error(f.get(bdx, x.size()), testing::finite_difference(x, loss)), 1e-4);
  }
  EXPECT_LT(testing::relative_error(f.get(bdw, wb.size()), testing::finite_difference(wb, loss)), 1e-4);
  for (Buffer* b : {&bx, &bw, &by, &bdy, &bdx, &bdw}) f.be->release(*b);
}

TEST(GradcheckLayers, ConvSameRelu) { check_conv(ConvShape{3, 5, 6, 3, 4, 3, 1}, true, 2); }
TEST(GradcheckLayers, ConvValidRelu) { check_conv(ConvShape{2, 6, 5, 4, 5, 3, 0}, true, 2); }
TEST(GradcheckLayers, ConvValidLinearOneThread) { check_conv(ConvShape{2, 5, 5, 2, 3, 3, 0}, false, 1); }
// Few input channels and 32 out, as the tutorial's first layer: on AVX-512 its weight gradient
// runs the backend's own kernel with the ReLU's mask folded in (few_channel_weight_gradient.hpp).
TEST(GradcheckLayers, ConvFirstLayerRelu) { check_conv(ConvShape{3, 6, 5, 3, 32, 3, 1}, true, 2, false); }
TEST(GradcheckLayers, ConvFirstLayerLinear) { check_conv(ConvShape{2, 5, 6, 3, 32, 3, 1}, false, 1, false); }
TEST(GradcheckLayers, ConvFewChannelsWithInputGradient) { check_conv(ConvShape{2, 5, 5, 3, 32, 3, 1}, true, 2); }
TEST(GradcheckLayers, ConvOneChannelValidRelu) { check_conv(ConvShape{3, 6, 7, 1, 16, 3, 0}, true, 2, false); }
TEST(GradcheckLayers, ConvTwoChannelsValidLinear) { check_conv(ConvShape{2, 6, 6, 2, 16, 3, 0}, false, 1, false); }
// Four and five channels: past the kernel's registers, oneDNN's blocked weight gradient takes them.
TEST(GradcheckLayers, ConvFourChannelsSameRelu) { check_conv(ConvShape{2, 5, 4, 4, 48, 3, 1}, true, 2, false); }
TEST(GradcheckLayers, ConvFiveChannelsSameRelu) { check_conv(ConvShape{2, 5, 5, 5, 32, 3, 1}, true, 2, false); }

void check_dense(const DenseShape& s, bool relu) {
  Fixture f;
  std::mt19937 rng(7);
  const std::size_t ksize = static_cast<std::size_t>(s.in) * s.out;
  Vec x = Fixture::as_float(random_vec(static_cast<std::size_t>(s.n) * s.in, rng));
  Vec wb = Fixture::as_float(random_vec(ksize + s.out, rng, -0.5, 0.5));
  Vec r = Fixture::as_float(random_vec(static_cast<std::size_t>(s.n) * s.out, rng));
  auto loss = [&] {
    Vec w(wb.begin(), wb.begin() + ksize), b(wb.begin() + ksize, wb.end());
    return testing::dot(testing::ref_dense(s, x, w, b, relu), r);
  };
  Buffer bx = f.put(x), bw = f.put(wb), by = f.be->allocate(r.size()), bdy = f.put(r);
  Buffer bdx = f.be->allocate(x.size()), bdw = f.be->allocate(wb.size());
  f.be->dense_forward(s, bx, bw, 0, ksize, by, relu);
  EXPECT_LT(testing::relative_error(f.get(by, r.size()),
                                    testing::ref_dense(s, x, Vec(wb.begin(), wb.begin() + ksize),
                                                       Vec(wb.begin() + ksize, wb.end()), relu)),
            1e-5);
  f.be->dense_backward(s, bx, bw, 0, by, bdy, &bdx, bdw, ksize, relu);
  EXPECT_LT(testing::relative_error(f.get(bdx, x.size()), testing::finite_difference(x, loss)), 1e-4);
  EXPECT_LT(testing::relative_error(f.get(bdw, wb.size()), testing::finite_difference(wb, loss)), 1e-4);
  for (Buffer* b : {&bx, &bw, &by, &bdy, &bdx, &bdw}) f.be->release(*b);
}

TEST(GradcheckLayers, DenseRelu) { check_dense(DenseShape{4, 40, 33}, true); }
TEST(GradcheckLayers, DenseLinear) { check_dense(DenseShape{3, 17, 10}, false); }

TEST(GradcheckLayers, MaxPool) {
  Fixture f;
  std::mt19937 rng(3);
  const int n = 2, h = 5, w = 7, c = 3;  // odd sizes: the last row and column are dropped (floor)
  Vec x = Fixture::as_float(random_vec(static_cast<std::size_t>(n) * h * w * c, rng));
  const std::size_t ysize = static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c;
  Vec r = Fixture::as_float(random_vec(ysize, rng));
  auto loss = [&] { return testing::dot(testing::ref_maxpool(n, h, w, c, x), r); };
  Buffer bx = f.put(x), by = f.be->allocate(ysize), bdy = f.put(r), bdx = f.be->allocate(x.size());
  f.be->maxpool2_forward(n, h, w, c, bx, {}, by);
  EXPECT_LT(testing::relative_error(f.get(by, ysize), testing::ref_maxpool(n, h, w, c, x)), 1e-7);
  f.be->maxpool2_backward(n, h, w, c, bx, {}, by, bdy, {}, bdx);
  EXPECT_LT(testing::relative_error(f.get(bdx, x.size()), testing::finite_difference(x, loss)), 1e-6);
  for (Buffer* b : {&bx, &by, &bdy, &bdx}) f.be->release(*b);
}

// Sharded ranks train an image in another batch position than one rank does: its mask must
// depend on its key alone, and differ between images and layers.
TEST(GradcheckLayers, DropoutMaskDependsOnlyOnTheImageKey) {
  Fixture f;
  constexpr std::size_t kFeatures = 300;
  const Vec ones(4 * kFeatures, 1.0);
  Buffer bx = f.put(ones), by = f.be->allocate(ones.size()), batch = f.be->allocate(ones.size()),
         single = f.be->allocate(kFeatures);
  f.be->dropout_forward(bx, by, batch, 0.5f, 77, 1000, kFeatures);  // images keyed 1000..1003
  const auto in_batch = f.get(batch, ones.size());
  Buffer one = f.put(Vec(kFeatures, 1.0));
  f.be->dropout_forward(one, by, single, 0.5f, 77, 1002, kFeatures);  // image 1002 alone
  const auto alone = f.get(single, kFeatures);
  EXPECT_EQ(std::vector<float>(in_batch.begin() + 2 * kFeatures, in_batch.begin() + 3 * kFeatures),
            std::vector<float>(alone.begin(), alone.end()));
  EXPECT_NE(std::vector<float>(in_batch.begin(), in_batch.begin() + kFeatures),
            std::vector<float>(in_batch.begin() + kFeatures, in_batch.begin() + 2 * kFeatures));
  f.be->dropout_forward(one, by, single, 0.5f, 78, 1002, kFeatures);  // another layer stream
  EXPECT_NE(f.get(single, kFeatures), alone);
  for (Buffer* b : {&bx, &by, &batch, &single, &one}) f.be->release(*b);
}

TEST(GradcheckLayers, DropoutIsLinearInItsMask) {
  Fixture f;
  std::mt19937 rng(5);
  Vec x = Fixture::as_float(random_vec(4000, rng));
  Buffer bx = f.put(x), by = f.be->allocate(x.size()), mask = f.be->allocate(x.size());
  f.be->dropout_forward(bx, by, mask, 0.25f, 11, 2, 400);  // 10 images of 400 features
  auto m = f.get(mask, x.size()), y = f.get(by, x.size());
  int dropped = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(m[i] == 0.0f || std::abs(m[i] - 1.0f / 0.75f) < 1e-6f);
    dropped += m[i] == 0.0f;
    EXPECT_FLOAT_EQ(y[i], static_cast<float>(x[i]) * m[i]);
  }
  EXPECT_NEAR(dropped / 4000.0, 0.25, 0.03);
  // d(sum(r * y))/dx = r * mask, checked by finite differences of the same (fixed) mask.
  Vec r = Fixture::as_float(random_vec(x.size(), rng));
  auto loss = [&] {
    double s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) s += r[i] * x[i] * m[i];
    return s;
  };
  Buffer bdy = f.put(r), bdx = f.be->allocate(x.size());
  f.be->dropout_backward(bdy, mask, bdx);
  EXPECT_LT(testing::relative_error(f.get(bdx, x.size()), testing::finite_difference(x, loss)), 1e-6);
  for (Buffer* b : {&bx, &by, &mask, &bdy, &bdx}) f.be->release(*b);
}

TEST(GradcheckLayers, SoftmaxCrossEntropy) {
  Fixture f;
  std::mt19937 rng(9);
  const int n = 5, classes = 10;
  Vec z = Fixture::as_float(random_vec(n * classes, rng, -3, 3));
  std::vector<int> labels = {0, 3, 9, 3, 7};
  Vec labels_d(labels.begin(), labels.end());
  Buffer bz = f.put(z), bl = f.put(labels_d), bg = f.be->allocate(z.size());
  double loss_sum = 0.0;
  int correct = -1;
  f.be->softmax_cross_entropy(n, classes, bz, bl, &bg, &loss_sum, &correct);
  auto loss = [&] { return testing::ref_softmax_xent(n, classes, z, labels); };
  EXPECT_NEAR(loss_sum / n, loss(), 1e-6);
  EXPECT_LT(testing::relative_error(f.get(bg, z.size()), testing::finite_difference(z, loss)), 1e-5);
  int expect_correct = 0;
  for (int i = 0; i < n; ++i) {
    auto row = z.begin() + i * classes;
    expect_correct += std::max_element(row, row + classes) - row == labels[i];
  }
  EXPECT_EQ(correct, expect_correct);
  for (Buffer* b : {&bz, &bl, &bg}) f.be->release(*b);
}

TEST(GradcheckLayers, SoftmaxCrossEntropyClipsLikeKeras) {
  // Rows 0 and 1 sit deep in Keras' clipped range (label probability ~1e-13 and 1 - ~1e-12): their
  // loss is capped and flat, so their gradient is zero; row 2 is an ordinary row.
  Fixture f;
  const int n = 3, classes = 4;
  Vec z = {30, 0, 0, 0, 30, 0, 0, 0, 0.5, -1, 2, 0};
  std::vector<int> labels = {1, 0, 3};
  Vec labels_d(labels.begin(), labels.end());
  Buffer bz = f.put(z), bl = f.put(labels_d), bg = f.be->allocate(z.size());
  double loss_sum = 0.0;
  f.be->softmax_cross_entropy(n, classes, bz, bl, &bg, &loss_sum, nullptr);
  auto loss = [&] { return testing::ref_softmax_xent(n, classes, z, labels); };
  EXPECT_NEAR(loss_sum / n, loss(), 1e-9);
  const auto g = f.get(bg, z.size());
  for (int j = 0; j < 2 * classes; ++j) EXPECT_EQ(g[j], 0.0) << "clipped rows, element " << j;
  EXPECT_NE(g[2 * classes + 3], 0.0);
  EXPECT_LT(testing::relative_error(g, testing::finite_difference(z, loss)), 1e-5);
  for (Buffer* b : {&bz, &bl, &bg}) f.be->release(*b);
}

// A 3 -> 4 dense layer over 2 images whose kernel gradient at [0] is 1 + 4 and bias
// gradient 2 per backward call (x[:,0] and the count summed over the batch; dy all ones).
struct TinyDense {
  Fixture f;
  const DenseShape s{2, 3, 4};
  Buffer bx = f.put({1, 2, 3, 4, 5, 6}), bw = f.put(Vec(16, 0.1)), by = f.be->allocate(8);
  Buffer bdy = f.put(Vec(8, 1.0)), bdw = f.be->allocate(16);
  TinyDense() { f.be->dense_forward(s, bx, bw, 0, 12, by, false); }
  ~TinyDense() {
    for (Buffer* b : {&bx, &bw, &by, &bdy, &bdw}) f.be->release(*b);
  }
  void backward() { f.be->dense_backward(s, bx, bw, 0, by, bdy, nullptr, bdw, 12, false); }
  std::vector<float> grads() { return f.get(bdw, 16); }
};

TEST(GradcheckLayers, GradientsAccumulate) {
  TinyDense d;
  d.backward();
  d.backward();
  EXPECT_FLOAT_EQ(d.grads()[0], 2 * (1 + 4));
  EXPECT_FLOAT_EQ(d.grads()[12], 2 * 2);
}

// After fill(dw, 0) the first backward may overwrite its slot, but only a slot that nothing has
// written since: a second backward, or values uploaded or scaled after the zeroing, are added to.
TEST(GradcheckLayers, GradientsAccumulateAfterTheArenaIsZeroed) {
  TinyDense d;
  d.f.be->fill(d.bdw, 7.0f);
  d.f.be->fill(d.bdw, 0.0f);
  d.backward();
  EXPECT_FLOAT_EQ(d.grads()[0], 1 + 4);
  d.backward();
  EXPECT_FLOAT_EQ(d.grads()[0], 2 * (1 + 4));
  d.f.be->fill(d.bdw, 0.0f);
  const std::vector<float> earlier(12, 10.0f);
  d.f.be->upload(d.bdw, earlier.data(), earlier.size());
  d.backward();
  EXPECT_FLOAT_EQ(d.grads()[0], 10 + 1 + 4);
  EXPECT_FLOAT_EQ(d.grads()[12], 2);
  d.f.be->fill(d.bdw, 0.0f);
  d.f.be->scale(d.bdw, 3.0f);
  d.backward();
  EXPECT_FLOAT_EQ(d.grads()[0], 1 + 4);
}

}  // namespace
}  // namespace batchai::train
