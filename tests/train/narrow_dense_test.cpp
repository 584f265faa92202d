// Dense layers of up to 16 outputs in the CPU backend's own AVX-512 kernels (narrow_dense.hpp):
// each phase the in-order sum of fused multiply-adds, bit for bit, on exactly the rows asked for,
// the ReLU keeping a NaN as std::max does, and the backend's split over its team changing no
// float. Skips where the kernels do not run (below AVX-512).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cpu/cpu_backend.hpp"
#include "cpu/narrow_dense.hpp"
#include "gradcheck_reference.hpp"

namespace batchai::train::cpu {
namespace {

using testing::random_floats;

constexpr float kUntouched = -12345.0f;

struct Shape {
  int n, in, out;
};

// The shapes: one of everything, the tutorial's dense_2, every output count's mask edge, rows
// and columns not a multiple of the kernels' blocks.
const Shape kShapes[] = {{1, 1, 1}, {3, 17, 10}, {32, 512, 10}, {9, 33, 16}, {13, 40, 7}, {20, 31, 15}};

// y[b][j] = fma over k in order from 0, then + bias, then std::max(v, 0) when relu.
float forward_reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                        const Shape& s, int b, int j, bool relu) {
  float acc = 0.0f;
  for (int k = 0; k < s.in; ++k) acc = std::fma(x[b * s.in + k], w[k * s.out + j], acc);
  const float v = acc + bias[j];
  return relu ? std::max(v, 0.0f) : v;
}

TEST(NarrowDense, ForwardIsTheInOrderSumOnTheRowsAskedFor) {
  if (!narrow_dense_applies(10)) GTEST_SKIP() << "narrow dense kernels need AVX-512";
  std::mt19937 rng(3);
  for (const Shape& s : kShapes) {
    const auto x = random_floats(static_cast<std::size_t>(s.n) * s.in, rng, -1, 1);
    const auto w = random_floats(static_cast<std::size_t>(s.in) * s.out, rng, -1, 1);
    const auto bias = random_floats(s.out, rng, -1, 1);
    for (const bool relu : {false, true}) {
      // The rows after the first and before the last, so that both edges must be kept.
      const int r0 = s.n > 2 ? 1 : 0, r1 = s.n > 2 ? s.n - 1 : s.n;
      std::vector<float> y(static_cast<std::size_t>(s.n) * s.out, kUntouched);
      narrow_dense_forward(x.data(), w.data(), bias.data(), s.in, s.out, r0, r1, y.data(), relu);
      for (int b = 0; b < s.n; ++b) {
        for (int j = 0; j < s.out; ++j) {
          const float want = b >= r0 && b < r1 ? forward_reference(x, w, bias, s, b, j, relu) : kUntouched;
          ASSERT_EQ(y[b * s.out + j], want) << "n " << s.n << " in " << s.in << " out " << s.out << " row " << b
                                            << " col " << j << " relu " << relu;
        }
      }
    }
  }
}

TEST(NarrowDense, InputGradientIsTheInOrderSumOnTheColumnsAskedFor) {
  if (!narrow_dense_applies(10)) GTEST_SKIP() << "narrow dense kernels need AVX-512";
  std::mt19937 rng(5);
  for (const Shape& s : kShapes) {
    const auto dy = random_floats(static_cast<std::size_t>(s.n) * s.out, rng, -1, 1);
    const auto w = random_floats(static_cast<std::size_t>(s.in) * s.out, rng, -1, 1);
    const int c0 = s.in > 2 ? 1 : 0, c1 = s.in > 2 ? s.in - 1 : s.in;
    std::vector<float> dx(static_cast<std::size_t>(s.n) * s.in, kUntouched);
    narrow_dense_input_gradient(dy.data(), w.data(), s.n, s.in, s.out, c0, c1, dx.data());
    for (int b = 0; b < s.n; ++b) {
      for (int k = 0; k < s.in; ++k) {
        float want = kUntouched;
        if (k >= c0 && k < c1) {
          want = 0.0f;
          for (int j = 0; j < s.out; ++j) want = std::fma(dy[b * s.out + j], w[k * s.out + j], want);
        }
        ASSERT_EQ(dx[b * s.in + k], want) << "n " << s.n << " in " << s.in << " out " << s.out << " image " << b
                                          << " col " << k;
      }
    }
  }
}

TEST(NarrowDense, WeightGradientIsTheInOrderSumOverwrittenOrAdded) {
  if (!narrow_dense_applies(10)) GTEST_SKIP() << "narrow dense kernels need AVX-512";
  std::mt19937 rng(7);
  for (const Shape& s : kShapes) {
    const auto x = random_floats(static_cast<std::size_t>(s.n) * s.in, rng, -1, 1);
    const auto dy = random_floats(static_cast<std::size_t>(s.n) * s.out, rng, -1, 1);
    const auto before = random_floats(static_cast<std::size_t>(s.in) * s.out, rng, -1, 1);
    for (const bool accumulate : {false, true}) {
      const int r0 = s.in > 2 ? 1 : 0, r1 = s.in > 2 ? s.in - 1 : s.in;
      std::vector<float> dw = before;
      narrow_dense_weight_gradient(x.data(), dy.data(), s.n, s.in, s.out, r0, r1, accumulate, dw.data());
      for (int k = 0; k < s.in; ++k) {
        for (int j = 0; j < s.out; ++j) {
          float want = before[k * s.out + j];
          if (k >= r0 && k < r1) {
            float acc = 0.0f;
            for (int b = 0; b < s.n; ++b) acc = std::fma(x[b * s.in + k], dy[b * s.out + j], acc);
            want = accumulate ? want + acc : acc;
          }
          ASSERT_EQ(dw[k * s.out + j], want) << "n " << s.n << " in " << s.in << " out " << s.out << " row " << k
                                             << " col " << j << " accumulate " << accumulate;
        }
      }
    }
  }
}

TEST(NarrowDense, TheReluKeepsANanAsStdMaxDoes) {
  if (!narrow_dense_applies(1)) GTEST_SKIP() << "narrow dense kernels need AVX-512";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {nan, 1.0f, -1.0f}, w = {1.0f}, bias = {0.0f};
  std::vector<float> y(3, kUntouched);
  narrow_dense_forward(x.data(), w.data(), bias.data(), 1, 1, 0, 3, y.data(), true);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_EQ(y[2], 0.0f);
}

// Through the backend, on a shape whose phases it splits over two threads: the same floats as
// on one thread, which runs each phase whole.
TEST(NarrowDense, TheBackendsSplitOverItsTeamChangesNoFloat) {
  const DenseShape s{256, 512, 10};
  if (!narrow_dense_applies(s.out)) GTEST_SKIP() << "narrow dense kernels need AVX-512";
  std::mt19937 rng(11);
  const std::size_t kernel = static_cast<std::size_t>(s.in) * s.out;
  const auto x = random_floats(static_cast<std::size_t>(s.n) * s.in, rng, -1, 1);
  const auto wb = random_floats(kernel + s.out, rng, -0.1f, 0.1f);
  const auto dy = random_floats(static_cast<std::size_t>(s.n) * s.out, rng, -1, 1);
  std::vector<float> results[2];
  for (const int threads : {1, 2}) {
    CpuBackend be(threads);
    Backend& api = be;
    auto put = [&](const std::vector<float>& v) {
      Buffer b = be.allocate(v.size());
      api.upload(b, v.data(), v.size());
      return b;
    };
    Buffer bx = put(x), bw = put(wb), bdy = put(dy), by = be.allocate(static_cast<std::size_t>(s.n) * s.out);
    Buffer bdx = be.allocate(x.size()), bdw = be.allocate(wb.size());
    be.dense_forward(s, bx, bw, 0, kernel, by, true);
    be.dense_backward(s, bx, bw, 0, by, bdy, &bdx, bdw, kernel, true);
    for (const Buffer* b : {&by, &bdx, &bdw}) {
      std::vector<float> host(b->size);
      api.download(host.data(), *b, host.size());
      results[threads - 1].insert(results[threads - 1].end(), host.begin(), host.end());
    }
    for (Buffer* b : {&bx, &bw, &bdy, &by, &bdx, &bdw}) be.release(*b);
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (std::size_t i = 0; i < results[0].size(); ++i) ASSERT_EQ(results[0][i], results[1][i]) << "float " << i;
}

}  // namespace
}  // namespace batchai::train::cpu
