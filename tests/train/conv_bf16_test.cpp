// DnnlConv in mixed precision (--precision mixed_bfloat16): each phase must be its definition
// evaluated on x, dy and the kernel rounded to bfloat16 (to nearest even), summed in float32 --
// much closer to that than to the definition on the unrounded floats, which shows that the
// rounding happened, and where. Skips where oneDNN has no bfloat16 kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
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

// v rounded to bfloat16 (to nearest, ties to even; the test's values are finite), as a float.
std::vector<float> to_bf16(std::vector<float> v) {
  for (float& f : v) {
    std::uint32_t u = 0;
    std::memcpy(&u, &f, sizeof u);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    std::memcpy(&f, &u, sizeof u);
  }
  return v;
}

testing::Vec as_doubles(const std::vector<float>& v) { return testing::Vec(v.begin(), v.end()); }

struct Case {
  ConvShape shape;
  std::vector<float> x, w, b, dy;  // NHWC, hwio
};

Case random_case(const ConvShape& s) {
  std::mt19937 rng(5);
  Case c{s, {}, {}, {}, {}};
  c.x = testing::random_floats(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, rng, -1, 1);
  c.w = testing::random_floats(static_cast<std::size_t>(s.k) * s.k * s.c * s.out, rng, -1, 1);
  c.b = testing::random_floats(static_cast<std::size_t>(s.out), rng, -1, 1);
  c.dy = testing::random_floats(static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out, rng, -1, 1);
  return c;
}

// How far `got` is from the definition on rounded inputs, and from the one on the floats as given.
struct Errors {
  double rounded = 0.0, unrounded = 0.0;
};

void expect_bf16(const Errors& e, const char* phase) {
  EXPECT_LT(e.rounded, 1e-5) << phase << ": not the definition on bfloat16-rounded inputs";
  EXPECT_GT(e.unrounded, 1e-4) << phase << ": as close to float32 as to bfloat16: not rounded?";
}

class ConvBf16 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onednn_runs_bf16()) GTEST_SKIP() << "oneDNN runs no bfloat16 kernels here (" << onednn_isa_name() << ")";
  }
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream st{eng};

  tag layout_of(Layout l) const { return l == Layout::kNchw16c ? tag::nChw16c : tag::nhwc; }
  std::vector<float> in_x_layout(const ConvShape& s, const std::vector<float>& nhwc) {
    return testing::relayout(eng, st, nhwc, s.n, s.c, s.h, s.w, tag::nhwc, layout_of(s.x_layout));
  }
  std::vector<float> in_y_layout(const ConvShape& s, const std::vector<float>& nhwc) {
    return testing::relayout(eng, st, nhwc, s.n, s.out, s.oh(), s.ow(), tag::nhwc, layout_of(s.y_layout));
  }
  std::vector<float> dx_to_nhwc(const ConvShape& s, const std::vector<float>& dx) {
    return testing::relayout(eng, st, dx, s.n, s.c, s.h, s.w, layout_of(s.x_layout), tag::nhwc);
  }

  // Another array of random floats, for the tests of which array a rounded copy serves.
  static std::vector<float> other_floats(std::size_t count, unsigned seed) {
    std::mt19937 rng(seed);
    return testing::random_floats(count, rng, -1, 1);
  }

  void check_phases(const ConvShape& s) {
    const Case c = random_case(s);
    const std::vector<float> xr = to_bf16(c.x), wr = to_bf16(c.w), dyr = to_bf16(c.dy);
    DnnlConv conv(eng, s, false, true);
    ASSERT_TRUE(conv.bf16());
    ASSERT_TRUE(conv.jit(true)) << conv.kernels();

    const std::vector<float> x = in_x_layout(s, c.x), dy = in_y_layout(s, c.dy);
    std::vector<float> y(c.dy.size());
    conv.forward(st, x.data(), c.w.data(), c.b.data(), y.data());
    const std::vector<float> y_nhwc =
        testing::relayout(eng, st, y, s.n, s.out, s.oh(), s.ow(), layout_of(s.y_layout), tag::nhwc);
    const testing::Vec b = as_doubles(c.b);
    expect_bf16({testing::relative_error(y_nhwc, testing::ref_conv(s, as_doubles(xr), as_doubles(wr), b, false)),
                 testing::relative_error(y_nhwc, testing::ref_conv(s, as_doubles(c.x), as_doubles(c.w), b, false))},
                "forward");

    std::vector<float> dw(c.w.size() + c.b.size(), 0.0f);
    conv.backward_weights(st, x.data(), dy.data());
    conv.accumulate_weights(st, dw.data(), dw.data() + c.w.size());
    expect_bf16({testing::relative_error(dw, testing::ref_conv_weight_gradient(s, xr, dyr)),
                 testing::relative_error(dw, testing::ref_conv_weight_gradient(s, c.x, c.dy))},
                "weight gradient");

    std::vector<float> dx(x.size());
    conv.backward_data(st, c.w.data(), dy.data(), dx.data());  // dy as backward_weights rounded it
    const std::vector<float> dx_nhwc = dx_to_nhwc(s, dx);
    expect_bf16({testing::relative_error(dx_nhwc, testing::ref_conv_data_gradient(s, wr, dyr)),
                 testing::relative_error(dx_nhwc, testing::ref_conv_data_gradient(s, c.w, c.dy))},
                "data gradient");
  }
};

TEST_F(ConvBf16, SamePaddingNhwc) { check_phases(ConvShape{3, 9, 7, 32, 64, 3, 1}); }

TEST_F(ConvBf16, ValidPaddingNhwc) { check_phases(ConvShape{3, 9, 9, 64, 48, 3, 0}); }

TEST_F(ConvBf16, ValidPaddingBlocked) {
  check_phases(ConvShape{2, 12, 12, 32, 32, 3, 0, Layout::kNchw16c, Layout::kNchw16c});
}

// The rounded dy that backward_weights made serves only the backward_data right after it on the
// same array: another dy, or new values in the same array after that, are rounded afresh.
TEST_F(ConvBf16, DataGradientRoundsEachNewDy) {
  const ConvShape s{2, 8, 8, 32, 32, 3, 1};
  const Case c = random_case(s);
  const std::vector<float> other = other_floats(c.dy.size(), 9);
  DnnlConv conv(eng, s, false, true);
  std::vector<float> dy = c.dy, dx(c.x.size()), dw(c.w.size() + c.b.size(), 0.0f);
  const auto expect_dx_of = [&](const std::vector<float>& g, const char* what) {
    EXPECT_LT(testing::relative_error(dx, testing::ref_conv_data_gradient(s, to_bf16(c.w), to_bf16(g))), 1e-5)
        << what;
  };
  conv.backward_weights(st, c.x.data(), dy.data());
  conv.backward_data(st, c.w.data(), other.data(), dx.data());
  expect_dx_of(other, "another array than backward_weights'");
  conv.backward_weights(st, c.x.data(), dy.data());
  conv.backward_data(st, c.w.data(), dy.data(), dx.data());
  expect_dx_of(c.dy, "backward_weights' own dy");
  dy = other;  // the same array, new values
  conv.backward_data(st, c.w.data(), dy.data(), dx.data());
  expect_dx_of(other, "the same array with new values");
}

// The weight gradient reads the forward's rounded x when given the array that forward read, once
// (backprop's contract: x unchanged since); another array, or the same one a second time, is
// rounded afresh. The reuse is seen by breaking the contract: new values in x after the forward.
TEST_F(ConvBf16, WeightGradientReusesTheForwardsRoundedXOnce) {
  const ConvShape s{2, 8, 8, 32, 32, 3, 1};
  const Case c = random_case(s);
  const std::vector<float> other = other_floats(c.x.size(), 11);
  DnnlConv conv(eng, s, false, true);
  std::vector<float> x = c.x, y(c.dy.size()), dw;
  const auto expect_dw_of = [&](const std::vector<float>& from, const char* what) {
    dw.assign(c.w.size() + c.b.size(), 0.0f);
    conv.backward_weights(st, x.data(), c.dy.data());
    conv.accumulate_weights(st, dw.data(), dw.data() + c.w.size());
    EXPECT_LT(testing::relative_error(dw, testing::ref_conv_weight_gradient(s, to_bf16(from), to_bf16(c.dy))), 1e-5)
        << what;
  };
  conv.forward(st, other.data(), c.w.data(), c.b.data(), y.data());
  expect_dw_of(c.x, "another array than the forward's");
  conv.forward(st, x.data(), c.w.data(), c.b.data(), y.data());
  x = other;  // the same array, new values: the forward's rounding still serves
  expect_dw_of(c.x, "the forward's array");
  expect_dw_of(other, "the same array a second time");
  conv.forward(st, x.data(), c.w.data(), c.b.data(), y.data());
  x = c.x;  // a forward on new values in the array of the forward before it
  conv.forward(st, x.data(), c.w.data(), c.b.data(), y.data());
  const testing::Vec ref =
      testing::ref_conv(s, as_doubles(to_bf16(c.x)), as_doubles(to_bf16(c.w)), as_doubles(c.b), false);
  EXPECT_LT(testing::relative_error(y, ref), 1e-5) << "a forward reading its array's earlier values";
  expect_dw_of(c.x, "the second forward's array");
}

// The first layer (3 input channels) stays float32 in mixed precision.
TEST_F(ConvBf16, FewInputChannelsStayFloat32) {
  EXPECT_FALSE(DnnlConv(eng, ConvShape{2, 8, 8, 3, 32, 3, 1}, true, true).bf16());
  EXPECT_TRUE(DnnlConv(eng, ConvShape{2, 8, 8, 16, 32, 3, 1}, true, true).bf16());
  EXPECT_FALSE(DnnlConv(eng, ConvShape{2, 8, 8, 32, 32, 3, 1}, true, false).bf16());
}

}  // namespace
}  // namespace batchai::train::cpu
