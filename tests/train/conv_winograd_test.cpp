// DnnlConv on oneDNN's Winograd kernels (float32, where oneDNN runs AVX-512, for whole 16-channel
// blocks): each phase, and the forward with its ReLU, must be its definition to float32 rounding,
// whether the caller's activations are NHWC (copied to and from nChw16c) or blocked; and the
// forward's blocked copy of x, like dy's of the weight gradient, serves the next phase only on the
// same array, once.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "cpu/dnnl_conv.hpp"
#include "cpu/dnnl_memory.hpp"
#include "gradcheck_reference.hpp"
#include "onednn_relayout.hpp"

namespace batchai::train::cpu {
namespace {

using tag = dnnl::memory::format_tag;

// Winograd's transforms round more than a direct sum; these cases read 4e-7 to 8e-7 (relative, L2)
// on Zen 4. A wrong layout or a stale copy is off by about 1.
constexpr double kTolerance = 1e-5;

bool runs_winograd(const DnnlConv& conv) { return conv.kernels().find("wino") != std::string::npos; }

class ConvWinograd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onednn_runs_avx512()) GTEST_SKIP() << "oneDNN's Winograd kernels need AVX-512 (" << onednn_isa_name() << ")";
  }
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream st{eng};

  static std::vector<float> floats(std::size_t count, unsigned seed) {
    std::mt19937 rng(seed);
    return testing::random_floats(count, rng, -1, 1);
  }
  tag layout_of(Layout l) const { return l == Layout::kNchw16c ? tag::nChw16c : tag::nhwc; }

  void check_phases(const ConvShape& s) {
    const std::vector<float> x = floats(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, 1);
    const std::vector<float> w = floats(static_cast<std::size_t>(s.k) * s.k * s.c * s.out, 2);
    const std::vector<float> b = floats(static_cast<std::size_t>(s.out), 3);
    const std::vector<float> dy = floats(static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out, 4);
    DnnlConv conv(eng, s, false, false, true);
    ASSERT_TRUE(runs_winograd(conv)) << conv.kernels();
    ASSERT_TRUE(conv.jit(true)) << conv.kernels();
    const tag xl = layout_of(s.x_layout), yl = layout_of(s.y_layout);
    const std::vector<float> x_in = testing::relayout(eng, st, x, s.n, s.c, s.h, s.w, tag::nhwc, xl);
    const std::vector<float> dy_in = testing::relayout(eng, st, dy, s.n, s.out, s.oh(), s.ow(), tag::nhwc, yl);

    std::vector<float> y(dy.size());
    conv.forward(st, x_in.data(), w.data(), b.data(), y.data());
    const testing::Vec ref_y = testing::ref_conv(s, testing::Vec(x.begin(), x.end()), testing::Vec(w.begin(), w.end()),
                                                 testing::Vec(b.begin(), b.end()), false);
    EXPECT_LT(testing::relative_error(testing::relayout(eng, st, y, s.n, s.out, s.oh(), s.ow(), yl, tag::nhwc), ref_y),
              kTolerance)
        << "forward";
    DnnlConv with_relu(eng, s, true, false, true);  // the ReLU as the kernels' post-op
    with_relu.forward(st, x_in.data(), w.data(), b.data(), y.data());
    const testing::Vec ref_relu = testing::ref_conv(s, testing::Vec(x.begin(), x.end()),
                                                    testing::Vec(w.begin(), w.end()), testing::Vec(b.begin(), b.end()),
                                                    true);
    EXPECT_LT(testing::relative_error(testing::relayout(eng, st, y, s.n, s.out, s.oh(), s.ow(), yl, tag::nhwc),
                                      ref_relu),
              kTolerance)
        << "forward with the ReLU";

    std::vector<float> dw(w.size() + b.size(), 0.0f);
    conv.backward_weights(st, x_in.data(), dy_in.data());
    conv.accumulate_weights(st, dw.data(), dw.data() + w.size());
    EXPECT_LT(testing::relative_error(dw, testing::ref_conv_weight_gradient(s, x, dy)), kTolerance)
        << "weight gradient";

    std::vector<float> dx(x.size(), 7.0f);  // overwritten, not added to
    conv.backward_data(st, w.data(), dy_in.data(), dx.data());
    EXPECT_LT(testing::relative_error(testing::relayout(eng, st, dx, s.n, s.c, s.h, s.w, xl, tag::nhwc),
                                      testing::ref_conv_data_gradient(s, w, dy)),
              kTolerance)
        << "data gradient";
  }
};

TEST_F(ConvWinograd, SamePaddingNhwc) { check_phases(ConvShape{3, 9, 7, 32, 64, 3, 1}); }

TEST_F(ConvWinograd, ValidPaddingNhwc) { check_phases(ConvShape{3, 9, 9, 64, 48, 3, 0}); }

TEST_F(ConvWinograd, ValidPaddingBlocked) {
  check_phases(ConvShape{2, 12, 12, 32, 32, 3, 0, Layout::kNchw16c, Layout::kNchw16c});
}

// Winograd only where asked, in float32, and for whole 16-channel blocks in and out: oneDNN would
// run it for the first layer's 3 channels too, padded to 16, five times slower than direct.
TEST_F(ConvWinograd, OnlyFloat32WholeChannelBlocksWhenAsked) {
  EXPECT_TRUE(runs_winograd(DnnlConv(eng, ConvShape{2, 8, 8, 16, 32, 3, 1}, true, false, true)));
  EXPECT_FALSE(runs_winograd(DnnlConv(eng, ConvShape{2, 8, 8, 16, 32, 3, 1}, true, false, false)));
  EXPECT_FALSE(runs_winograd(DnnlConv(eng, ConvShape{2, 8, 8, 3, 32, 3, 1}, true, false, true)));
  EXPECT_FALSE(runs_winograd(DnnlConv(eng, ConvShape{2, 8, 8, 32, 24, 3, 1}, true, false, true)));
  if (onednn_runs_bf16()) {
    EXPECT_FALSE(runs_winograd(DnnlConv(eng, ConvShape{2, 8, 8, 32, 32, 3, 1}, true, true, true)));
  }
}

// In NHWC the weight gradient reads the forward's blocked copy of x when given the array that
// forward read, once (backprop's contract: x unchanged since), and the data gradient the weight
// gradient's copy of dy likewise; the reuse is seen by breaking the contract.
TEST_F(ConvWinograd, PhasesReuseTheBlockedCopiesOnce) {
  const ConvShape s{2, 8, 8, 32, 32, 3, 1};
  const std::vector<float> x0 = floats(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, 5);
  const std::vector<float> x1 = floats(x0.size(), 6);
  const std::vector<float> w = floats(static_cast<std::size_t>(s.k) * s.k * s.c * s.out, 7);
  const std::vector<float> b(static_cast<std::size_t>(s.out), 0.0f);
  const std::vector<float> dy0 = floats(static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out, 8);
  const std::vector<float> dy1 = floats(dy0.size(), 9);
  DnnlConv conv(eng, s, false, false, true);
  ASSERT_TRUE(runs_winograd(conv)) << conv.kernels();
  std::vector<float> x = x0, dy = dy0, y(dy0.size()), dx(x0.size()), dw;
  const auto expect_dw_of = [&](const std::vector<float>& from, const char* what) {
    dw.assign(w.size() + b.size(), 0.0f);
    conv.backward_weights(st, x.data(), dy.data());
    conv.accumulate_weights(st, dw.data(), dw.data() + w.size());
    EXPECT_LT(testing::relative_error(dw, testing::ref_conv_weight_gradient(s, from, dy)), kTolerance) << what;
  };
  const auto expect_dx_of = [&](const std::vector<float>& g, const char* what) {
    conv.backward_data(st, w.data(), dy.data(), dx.data());
    EXPECT_LT(testing::relative_error(dx, testing::ref_conv_data_gradient(s, w, g)), kTolerance) << what;
  };
  conv.forward(st, x.data(), w.data(), b.data(), y.data());
  x = x1;  // the same array, new values: the forward's copy still serves
  expect_dw_of(x0, "the forward's array");
  expect_dw_of(x1, "the same array a second time");
  dy = dy1;  // the weight gradient's copy of dy serves the data gradient
  expect_dx_of(dy0, "the weight gradient's array");
  expect_dx_of(dy1, "the same array a second time");
  conv.forward(st, x0.data(), w.data(), b.data(), y.data());
  expect_dw_of(x1, "another array than the forward's");
}

}  // namespace
}  // namespace batchai::train::cpu
