// The CPU backend's blocked chain (Backend::blocked_chain_pays): a first convolution, the next
// and a pooling with their activations in oneDNN's nChw16c must compute what the NHWC layers
// compute, layer by layer and in the Model, where the chain goes on through the convolutions that
// run Winograd (Backend::conv_wants_blocked). Skips where the backend does not take the chain
// (oneDNN below AVX-512).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "cpu/cpu_backend.hpp"
#include "gradcheck_reference.hpp"
#include "model.hpp"

namespace batchai::train {
namespace {

using testing::random_floats;

testing::Vec as_vec(const std::vector<float>& v) { return testing::Vec(v.begin(), v.end()); }

// conv(3 -> 32, same) -> conv(32 -> 32, valid) -> 2x2 pooling on 4 images of 12x12, the input
// uploaded in `input`, the activations between in `between`; returns the pooled output, then both
// convolutions' weight gradients.
struct ChainRun {
  std::vector<float> pooled, dw1, dw2;
};

ChainRun run_chain(Backend& be, Layout input, Layout between) {
  const ConvShape first{4, 12, 12, 3, 32, 3, 1, input, between};
  const ConvShape second{4, 12, 12, 32, 32, 3, 0, between, between};
  const int ph = second.oh() / 2, pw = second.ow() / 2;
  const std::size_t w1 = 9u * 3 * 32 + 32, w2 = 9u * 32 * 32 + 32;
  const std::size_t x_size = 4u * 12 * 12 * 3, y1 = 4u * 12 * 12 * 32, y2 = 4u * 10 * 10 * 32;
  const std::size_t pooled = 4u * ph * pw * 32;
  std::mt19937 rng(5);
  auto put = [&](const std::vector<float>& v) {
    Buffer b = be.allocate(v.size());
    be.upload(b, v.data(), v.size());
    return b;
  };
  Buffer x = be.allocate(x_size);
  const std::vector<float> x_nhwc = random_floats(x_size, rng, 0, 1);
  be.upload_images(x, x_nhwc.data(), 4, 12, 12, 3, input);
  Buffer params = put(random_floats(w1 + w2, rng, -0.3f, 0.3f));
  Buffer grads = be.allocate(w1 + w2);
  Buffer a = be.allocate(y1), da = be.allocate(y1), b = be.allocate(y2), db = be.allocate(y2);
  Buffer p = be.allocate(pooled), dp = put(random_floats(pooled, rng, -1, 1));
  be.fill(grads, 0.0f);
  be.conv2d_forward(first, x, params, 0, w1 - 32, a, true);
  be.conv2d_forward(second, a, params, w1, w1 + w2 - 32, b, true);
  be.maxpool2_forward(4, second.oh(), second.ow(), 32, b, {between, Layout::kNhwc}, p);
  be.maxpool2_backward(4, second.oh(), second.ow(), 32, b, {between, Layout::kNhwc}, p, dp, {}, db);
  be.conv2d_backward(second, a, params, w1, b, db, &da, grads, w1 + w2 - 32, true);
  be.conv2d_backward(first, x, params, 0, a, da, nullptr, grads, w1 - 32, true);
  ChainRun out{std::vector<float>(pooled), std::vector<float>(w1), std::vector<float>(w2)};
  be.download(out.pooled.data(), p, pooled);
  be.download(out.dw1.data(), grads, w1);
  be.download(out.dw2.data(), grads, w2, w1);
  for (Buffer* buf : {&x, &params, &grads, &a, &da, &b, &db, &p, &dp}) be.release(*buf);
  return out;
}

TEST(BlockedChain, TheLayersComputeWhatTheNhwcLayersCompute) {
  cpu::CpuBackend be(2);
  if (!be.blocked_chain_pays(ConvShape{4, 12, 12, 3, 32, 3, 1}, ConvShape{4, 12, 12, 32, 32, 3, 0})) {
    GTEST_SKIP() << "this CPU's oneDNN takes no blocked chain";
  }
  const ChainRun nhwc = run_chain(be, Layout::kNhwc, Layout::kNhwc);
  // The chain's input as the Model gives it (channels-first) and as NHWC (copied for the kernels).
  for (const Layout input : {Layout::kNchw, Layout::kNhwc}) {
    const ChainRun blocked = run_chain(be, input, Layout::kNchw16c);
    const char* name = input == Layout::kNchw ? "NCHW input" : "NHWC input";
    EXPECT_LT(testing::relative_error(blocked.pooled, as_vec(nhwc.pooled)), 1e-6) << name;
    EXPECT_LT(testing::relative_error(blocked.dw2, as_vec(nhwc.dw2)), 1e-5) << name;
    EXPECT_LT(testing::relative_error(blocked.dw1, as_vec(nhwc.dw1)), 1e-5) << name;
    EXPECT_GT(testing::relative_error(blocked.dw1, testing::Vec(blocked.dw1.size(), 0.0)), 0.5) << name;
  }
}

// How many convolution shapes (of any batch) ran with blocked activations.
int chained(const cpu::CpuBackend& be) {
  std::set<std::string> shapes;
  for (const std::string& k : be.kernels()) {
    if (k.find("(blocked chain)") != std::string::npos) shapes.insert(k);
  }
  return static_cast<int>(shapes.size());
}

// Two steps of the tutorial's network, with the chain and without, then an evaluation of 3
// images: the loss, the logits and every gradient agree to float rounding.
TEST(BlockedChain, TheModelTrainsAlikeWithTheChainAndWithout) {
  constexpr int kBatch = 8;
  std::mt19937 rng(3);
  const std::vector<float> x = random_floats(kBatch * 32u * 32 * 3, rng, 0, 1);
  std::vector<float> labels(kBatch);
  for (int i = 0; i < kBatch; ++i) labels[i] = static_cast<float>(i % 10);
  struct Result {
    double loss;
    std::vector<float> grads, logits, few_logits;
    int chained;
    bool winograd;  // conv2d_3's kernels want blocked activations (Backend::conv_wants_blocked)
  };
  auto train = [&](bool allow) {
    cpu::CpuBackend be(2);
    be.allow_blocked_chains(allow);
    Model m(be, tutorial_network(), kBatch);
    m.init_glorot(7);
    BatchStats s = m.train_batch(x.data(), labels.data(), kBatch, true, 1, 0);
    s = m.train_batch(x.data(), labels.data(), kBatch, true, 1, kBatch);
    const std::vector<float> grads = m.get_grads(), logits = m.logits(kBatch);
    m.evaluate_batch(x.data(), labels.data(), 3);  // fewer images than the buffers hold
    const ConvShape conv2d_3{kBatch, 15, 15, 32, 64, 3, 1, Layout::kNchw16c, Layout::kNchw16c};
    return Result{s.loss_sum, grads, logits, m.logits(3), chained(be), be.conv_wants_blocked(conv2d_3)};
  };
  const Result with = train(true), without = train(false);
  if (with.chained == 0) GTEST_SKIP() << "this CPU's oneDNN takes no blocked chain";
  EXPECT_EQ(without.chained, 0);
  // The first chain (conv2d_1, conv2d_2); with Winograd also conv2d_3 and conv2d_4, from the
  // first pooling's output to the second pooling's input.
  EXPECT_EQ(with.chained, with.winograd ? 4 : 2);
  EXPECT_NEAR(with.loss, without.loss, 1e-5 * std::abs(without.loss));
  EXPECT_LT(testing::relative_error(with.logits, as_vec(without.logits)), 1e-5);
  EXPECT_LT(testing::relative_error(with.grads, as_vec(without.grads)), 1e-4);
  EXPECT_LT(testing::relative_error(with.few_logits, as_vec(without.few_logits)), 1e-5);
}

}  // namespace
}  // namespace batchai::train
