// DnnlConv's data gradient: where oneDNN runs AVX-512 it is a forward convolution of dy with the
// kernel mirrored and its channels swapped (dnnl_conv.cpp), elsewhere oneDNN's data-gradient
// primitive. Either must give dL/dx as the definition does, for "same" and "valid" padding, in
// NHWC and in the blocked layout.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "cpu/dnnl_conv.hpp"
#include "cpu/dnnl_memory.hpp"
#include "gradcheck_reference.hpp"

namespace batchai::train::cpu {
namespace {

// dx[n, y, x, ci] = sum over taps and co of dy[n, y + pad - kh, x + pad - kw, co] * w[kh, kw, ci, co].
testing::Vec data_gradient_by_definition(const ConvShape& s, const std::vector<float>& w,
                                         const std::vector<float>& dy) {
  testing::Vec dx(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int y = 0; y < s.h; ++y)
      for (int x = 0; x < s.w; ++x)
        for (int kh = 0; kh < s.k; ++kh)
          for (int kw = 0; kw < s.k; ++kw) {
            const int oy = y + s.pad - kh, ox = x + s.pad - kw;
            if (oy < 0 || ox < 0 || oy >= s.oh() || ox >= s.ow()) continue;
            const float* g = dy.data() + ((static_cast<std::size_t>(n) * s.oh() + oy) * s.ow() + ox) * s.out;
            for (int ci = 0; ci < s.c; ++ci) {
              const float* wk = w.data() + ((static_cast<std::size_t>(kh) * s.k + kw) * s.c + ci) * s.out;
              double sum = 0.0;
              for (int co = 0; co < s.out; ++co) sum += static_cast<double>(g[co]) * wk[co];
              dx[((static_cast<std::size_t>(n) * s.h + y) * s.w + x) * s.c + ci] += sum;
            }
          }
  return dx;
}

// NHWC floats to the layout `to` (nhwc or nChw16c) and back, through a oneDNN reorder.
std::vector<float> relayout(const dnnl::engine& eng, dnnl::stream& st, const std::vector<float>& v, int n, int c,
                            int h, int w, dnnl::memory::format_tag from, dnnl::memory::format_tag to) {
  using dnnl::memory;
  const memory::dims dims{n, c, h, w};
  std::vector<float> out(v.size());
  memory a = wrap(memory::desc(dims, memory::data_type::f32, from), eng, v.data());
  memory b = wrap(memory::desc(dims, memory::data_type::f32, to), eng, out.data());
  dnnl::reorder(a, b).execute(st, a, b);
  st.wait();
  return out;
}

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
  const std::vector<float> dy_in = relayout(eng, st, dy, s.n, s.out, s.oh(), s.ow(), tag::nhwc, layout);
  std::vector<float> dx(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, 7.0f);  // overwritten, not added to
  conv.backward_data(st, w.data(), dy_in.data(), dx.data());
  const std::vector<float> dx_nhwc = relayout(eng, st, dx, s.n, s.c, s.h, s.w, layout, tag::nhwc);
  EXPECT_LT(testing::relative_error(dx_nhwc, data_gradient_by_definition(s, w, dy)), 1e-5) << kernels;
}

TEST(ConvDataGradient, SamePaddingNhwc) { check_data_gradient(ConvShape{3, 9, 7, 32, 64, 3, 1}); }

TEST(ConvDataGradient, ValidPaddingNhwc) { check_data_gradient(ConvShape{3, 9, 9, 64, 48, 3, 0}); }

TEST(ConvDataGradient, ValidPaddingBlocked) {
  if (!onednn_runs_avx512()) GTEST_SKIP() << "oneDNN's blocked kernels here are its reference ones";
  check_data_gradient(ConvShape{2, 12, 12, 32, 32, 3, 0, Layout::kNchw16c, Layout::kNchw16c});
}

}  // namespace
}  // namespace batchai::train::cpu
