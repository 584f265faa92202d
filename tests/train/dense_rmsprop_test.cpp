// A dense layer updated straight from its gradient's factors (Backend::rmsprop_dense_from_factors,
// a run of one rank): the same floats as RMSprop of the gradient summed over the batch in order,
// nothing outside the layer's kernel and bias touched, and a Model that folds its dense layers
// training as one that does not. Skips where the CPU backend does not fold (below AVX-512).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise.hpp"
#include "gradcheck_reference.hpp"
#include "model.hpp"
#include "network.hpp"
#include "optimizer.hpp"

namespace batchai::train {
namespace {

using testing::random_floats;

TEST(DenseRmsProp, FromFactorsIsRmsPropOfTheGradientBitForBit) {
  for (const int threads : {1, 2}) {
    cpu::CpuBackend be(threads);
    const DenseShape s{5, 37, 128};
    if (!be.dense_rmsprop_folds(s)) GTEST_SKIP() << "this CPU backend does not fold dense updates";
    std::mt19937 rng(9);
    const std::size_t kernel = static_cast<std::size_t>(s.in) * s.out;
    const std::size_t w_off = 3, b_off = w_off + kernel, arena = b_off + s.out + 2;  // 3 and 2 floats around
    const std::vector<float> x = random_floats(static_cast<std::size_t>(s.n) * s.in, rng, -1, 1);
    const std::vector<float> dy = random_floats(static_cast<std::size_t>(s.n) * s.out, rng, -1, 1);
    const std::vector<float> p0 = random_floats(arena, rng, -0.3f, 0.3f), m0 = random_floats(arena, rng, 0, 0.01f);
    // The gradient as the kernel defines it: each element summed over the batch in order, fused.
    std::vector<float> g(arena, 0.0f);
    for (int i = 0; i < s.in; ++i) {
      for (int j = 0; j < s.out; ++j) {
        float acc = 0.0f;
        for (int b = 0; b < s.n; ++b) acc = std::fma(x[b * s.in + i], dy[b * s.out + j], acc);
        g[w_off + static_cast<std::size_t>(i) * s.out + j] = acc;
      }
    }
    for (int j = 0; j < s.out; ++j) {
      for (int b = 0; b < s.n; ++b) g[b_off + j] += dy[b * s.out + j];
    }
    std::vector<float> p_want = p0, m_want = m0;
    cpu::rmsprop(p_want.data(), g.data(), m_want.data(), w_off, b_off + s.out, 1e-3f, 0.9f, 1e-7f);

    Backend& api = be;  // upload and download's default offsets are the interface's
    auto put = [&](const std::vector<float>& v) {
      Buffer b = be.allocate(v.size());
      api.upload(b, v.data(), v.size());
      return b;
    };
    Buffer bx = put(x), bdy = put(dy), bp = put(p0), bm = put(m0);
    be.rmsprop_dense_from_factors(s, bx, bdy, bp, bm, w_off, b_off, 1e-3f, 0.9f, 1e-7f);
    std::vector<float> p(arena), m(arena);
    api.download(p.data(), bp, arena);
    api.download(m.data(), bm, arena);
    for (std::size_t k = 0; k < arena; ++k) {
      ASSERT_EQ(p[k], p_want[k]) << "parameter " << k << ", " << threads << " threads";
      ASSERT_EQ(m[k], m_want[k]) << "accumulator " << k << ", " << threads << " threads";
    }
    for (Buffer* b : {&bx, &bdy, &bp, &bm}) be.release(*b);
  }
}

// Three steps of the tutorial's network on 4 images, dense_1 folded or not: the same weights to
// float rounding (oneDNN's sgemm may sum the batch in another order than the folded kernel).
TEST(DenseRmsProp, AModelThatFoldsTrainsAsOneThatDoesNot) {
  cpu::CpuBackend be(2);
  std::mt19937 rng(4);
  const std::vector<float> images = random_floats(4u * 32 * 32 * 3, rng, 0, 1);
  const std::vector<float> labels = {1, 3, 5, 7};
  std::vector<float> weights[2];
  for (const bool fold : {false, true}) {
    Model model(be, tutorial_network(), 4);
    model.init_glorot(1);
    model.fold_dense_gradients(fold);
    RmsProp opt(model, RmsPropConfig{});
    for (int step = 0; step < 3; ++step) {
      model.train_batch(images.data(), labels.data(), 4, true, 2, static_cast<std::uint64_t>(step) * 4);
      if (fold && !be.dense_rmsprop_folds(DenseShape{4, 2304, 512})) GTEST_SKIP() << "no folding here";
      // dense_1 (2304 -> 512) folds; dense_2 (512 -> 10) has too few outputs for the kernel.
      EXPECT_EQ(model.folded_dense().size(), fold ? 1u : 0u);
      opt.step();
    }
    weights[fold] = model.get_params();
  }
  const testing::Vec unfolded(weights[0].begin(), weights[0].end());
  EXPECT_LT(testing::relative_error(weights[1], unfolded), 1e-5);
}

}  // namespace
}  // namespace batchai::train
