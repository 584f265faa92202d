// The CPU backend defers the gradient arena's zeroing (Backend::zero_gradients): each slot's first
// write overwrites it, and settle_gradients zeroes what nothing wrote. Whatever the arena held
// before, the gradients must be those of an arena zeroed first, bit for bit. And a convolution's
// backward whose ReLU the pooling did runs on the forward's primitives.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_backend.hpp"
#include "gradcheck_reference.hpp"
#include "model.hpp"
#include "network.hpp"

namespace batchai::train {
namespace {

constexpr float kStale = std::numeric_limits<float>::quiet_NaN();

using testing::random_floats;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A convolution's and a dense layer's backward into an arena of `slots` floats with room left
// over that no call writes; `deferred`: zero_gradients over stale NaNs, else fill(0).
std::vector<float> backward_into_arena(bool deferred, bool twice) {
  cpu::CpuBackend cpu(1);
  Backend& be = cpu;
  std::mt19937 rng(3);
  const ConvShape conv{2, 6, 6, 3, 16, 3, 1};
  const DenseShape dense{2, 40, 7};
  const std::size_t cw = 9u * 3 * 16, dw = 40u * 7;
  const std::size_t conv_b = cw, dense_w = cw + 16, dense_b = dense_w + dw, unused = dense_b + 7;
  const std::size_t arena = unused + 100;
  auto put = [&](const std::vector<float>& v) {
    Buffer b = be.allocate(v.size());
    be.upload(b, v.data(), v.size());
    return b;
  };
  Buffer params = put(random_floats(arena, rng, -0.3f, 0.3f));
  Buffer grads = put(std::vector<float>(arena, kStale));
  Buffer x = put(random_floats(2u * 6 * 6 * 3, rng, -1, 1)), y = be.allocate(2u * 6 * 6 * 16);
  Buffer dy = be.allocate(y.size), dx = be.allocate(x.size);
  Buffer dx_in = put(random_floats(2u * 40, rng, -1, 1)), dense_y = be.allocate(2u * 7);
  Buffer dense_dx = be.allocate(dx_in.size);
  const std::vector<float> conv_dy = random_floats(dy.size, rng, -1, 1);
  const std::vector<float> dense_dy = random_floats(dense_y.size, rng, -1, 1);
  Buffer ddy = be.allocate(dense_y.size);
  if (deferred) {
    be.zero_gradients(grads);
  } else {
    be.fill(grads, 0.0f);
  }
  for (int pass = 0; pass < (twice ? 2 : 1); ++pass) {  // a second pass adds onto the first
    be.conv2d_forward(conv, x, params, 0, conv_b, y, true);
    be.upload(dy, conv_dy.data(), conv_dy.size());
    be.conv2d_backward(conv, x, params, 0, y, dy, &dx, grads, conv_b, true);
    be.dense_forward(dense, dx_in, params, dense_w, dense_b, dense_y, true);
    be.upload(ddy, dense_dy.data(), dense_dy.size());
    be.dense_backward(dense, dx_in, params, dense_w, dense_y, ddy, &dense_dx, grads, dense_b, true);
  }
  if (deferred) be.settle_gradients(grads);
  std::vector<float> out(arena);
  be.download(out.data(), grads, arena);
  for (Buffer* b : {&params, &grads, &x, &y, &dy, &dx, &dx_in, &dense_y, &dense_dx, &ddy}) be.release(*b);
  return out;
}

TEST(GradientArena, DeferredZeroingGivesTheGradientsOfAZeroedArenaBitForBit) {
  const std::vector<float> zeroed = backward_into_arena(false, false);
  const std::vector<float> deferred = backward_into_arena(true, false);
  EXPECT_TRUE(same_bits(deferred, zeroed));
  // The slot no call wrote is zero (settled), not the stale NaNs.
  for (std::size_t i = deferred.size() - 100; i < deferred.size(); ++i) ASSERT_EQ(deferred[i], 0.0f) << i;
  for (float v : deferred) ASSERT_FALSE(std::isnan(v));
}

TEST(GradientArena, ASecondBackwardIntoTheSameSlotsAdds) {
  const std::vector<float> once = backward_into_arena(true, false);
  const std::vector<float> twice = backward_into_arena(true, true);
  const std::vector<float> twice_zeroed = backward_into_arena(false, true);
  EXPECT_TRUE(same_bits(twice, twice_zeroed));
  std::size_t doubled = 0;
  for (std::size_t i = 0; i < once.size(); ++i) doubled += once[i] != 0.0f && twice[i] == 2.0f * once[i];
  EXPECT_GT(doubled, once.size() / 2);
}

TEST(GradientArena, TheModelsStepIgnoresWhatTheArenaHeld) {
  // The same step twice on one model, the arena poisoned in between: the same gradients.
  cpu::CpuBackend be(2);
  Model model(be, tutorial_network(), 4);
  model.init_glorot(7);
  std::mt19937 rng(9);
  const std::vector<float> images = random_floats(4u * 32 * 32 * 3, rng, 0, 1);
  const std::vector<float> labels = {1, 3, 5, 7};
  model.train_batch(images.data(), labels.data(), 4, false, 0, 0);
  const std::vector<float> first = model.get_grads();
  std::fill(model.grads().data, model.grads().data + model.grads().size, kStale);
  model.train_batch(images.data(), labels.data(), 4, false, 0, 0);
  EXPECT_TRUE(same_bits(model.get_grads(), first));
}

TEST(GradientArena, TheBackwardOfAConvolutionWhosePoolingMaskedItUsesTheForwardsPrimitives) {
  // conv2d_2 and conv2d_4 leave their ReLU's backward to the pooling (relu = false in their
  // backward): still one oneDNN convolution a layer, not a second set built for the backward.
  cpu::CpuBackend be(2);
  Model model(be, tutorial_network(), 2);
  model.init_glorot(7);
  const std::vector<float> images(2u * 32 * 32 * 3, 0.5f), labels = {1, 2};
  model.train_batch(images.data(), labels.data(), 2, true, 1, 0);
  int convolutions = 0;
  for (const std::string& k : be.kernels()) convolutions += k.rfind("conv ", 0) == 0;
  EXPECT_EQ(convolutions, 4);
}

}  // namespace
}  // namespace batchai::train
