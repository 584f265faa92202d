// DnnlConv's data gradient: where oneDNN runs AVX-512 it is a forward convolution of dy with the
// kernel mirrored and its channels swapped (dnnl_conv.cpp), elsewhere oneDNN's data-gradient
// primitive, and in bfloat16 (mixed precision) the data-gradient kernels unless only the forward
// ones run AMX. Either must give dL/dx as the definition does, for "same" and "valid" padding, in
// NHWC and in the blocked layout.
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

void check_data_gradient(const ConvShape& s) {
  using tag = dnnl::memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  std::mt19937 rng(11);
  const std::size_t w_size = static_cast<std::size_t>(s.k) * s.k * s.c * s.out;
  const std::size_t dy_size = static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out;
  const std::vector<float> w = testing::random_floats(w_size, rng, -1, 1);
  const std::vector<float> dy = testing::random_floats(dy_size, rng, -1, 1);
  const bool blocked = s.y_layout == Layout::kNchw16c;
  const tag layout = blocked ? tag::nChw16c : tag::nhwc;
  DnnlConv conv(eng, s, true);
  ASSERT_TRUE(conv.jit(true)) << conv.kernels();
  const std::string kernels = conv.kernels();
  EXPECT_EQ(kernels.find("bwd-data as forward") != std::string::npos, onednn_runs_avx512()) << kernels;
  const std::vector<float> dy_in = testing::relayout(eng, st, dy, s.n, s.out, s.oh(), s.ow(), tag::nhwc, layout);
  std::vector<float> dx(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, 7.0f);  // overwritten, not added to
  conv.backward_data(st, w.data(), dy_in.data(), dx.data());
  const std::vector<float> dx_nhwc = testing::relayout(eng, st, dx, s.n, s.c, s.h, s.w, layout, tag::nhwc);
  EXPECT_LT(testing::relative_error(dx_nhwc, testing::ref_conv_data_gradient(s, w, dy)), 1e-5) << kernels;
}

TEST(ConvDataGradient, SamePaddingNhwc) { check_data_gradient(ConvShape{3, 9, 7, 32, 64, 3, 1}); }

TEST(ConvDataGradient, ValidPaddingNhwc) { check_data_gradient(ConvShape{3, 9, 9, 64, 48, 3, 0}); }

TEST(ConvDataGradient, ValidPaddingBlocked) {
  if (!onednn_runs_avx512()) GTEST_SKIP() << "oneDNN's blocked kernels here are its reference ones";
  check_data_gradient(ConvShape{2, 12, 12, 32, 32, 3, 0, Layout::kNchw16c, Layout::kNchw16c});
}

// Which formulation runs, from the implementations oneDNN chose for the two (names as oneDNN
// 2.6 gives them).
TEST(ConvDataGradient, FormulationByPrecisionAndIsa) {
  const std::string brg = "brgconv:avx512_core", jit_bf16 = "jit_bf16:avx512_core_bf16";
  const std::string brg_bf16 = "brgconv:avx512_core_bf16", amx = "brgconv:avx512_core_amx";
  EXPECT_TRUE(data_gradient_as_forward(true, false, "jit:avx512_core", brg));
  EXPECT_FALSE(data_gradient_as_forward(false, false, "jit:avx2", "jit:avx2")) << "AVX2 keeps its own";
  EXPECT_FALSE(data_gradient_as_forward(true, false, "jit:avx512_core", "ref:any")) << "never a reference kernel";
  EXPECT_FALSE(data_gradient_as_forward(true, true, jit_bf16, brg_bf16)) << "bfloat16, the same ISA";
  EXPECT_TRUE(data_gradient_as_forward(true, true, jit_bf16, amx)) << "only the forward on AMX";
  EXPECT_FALSE(data_gradient_as_forward(true, true, "brgconv_bwd_d:avx512_core_amx", amx)) << "both on AMX";
}

}  // namespace
}  // namespace batchai::train::cpu
