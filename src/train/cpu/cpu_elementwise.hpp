// Element-wise kernels of the CPU backend (cpu_elementwise.cpp) on plain host arrays, each over
// a range so that the backend can split it over its OpenMP team. Each is compiled for AVX-512,
// AVX2 and the baseline x86-64 and the widest the CPU runs is chosen once, at run time; all
// variants compute the same float operations in the same order (no contraction into FMAs), so
// their results are bit-identical.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace batchai::train::cpu {

// Which variant runs here: "avx512", "avx2" or "x86-64".
const char* elementwise_isa();
// For tests: run the named variant from now on ("" goes back to the widest); false, changing
// nothing, when this CPU cannot run it. Not thread-safe.
bool select_elementwise_isa(const std::string& isa);

// The ReLU gradient mask, in place: dy[i] = 0 wherever y[i] <= 0, for i in [begin, end).
void relu_mask(float* dy, const float* y, std::size_t begin, std::size_t end);
// The same mask into oneDNN's nChw16c layout, for images [img_begin, img_end) of hw pixels and
// c channels (a multiple of 16), dy and y NHWC: out[((i * c/16 + b) * hw + p) * 16 + k] = dy at
// channel 16b + k, or 0 there when relu and y <= 0. dy itself is left as it is.
void relu_mask_to_blocked16(const float* dy, const float* y, float* out, int img_begin, int img_end, int hw, int c,
                            bool relu);

// Keras RMSprop on [begin, end): m = rho*m + (1-rho)*g^2; p -= lr * g / (sqrt(m) + eps).
void rmsprop(float* p, const float* g, float* m, std::size_t begin, std::size_t end, float lr, float rho,
             float eps);

// Where a pooling's x (and dx) and y (and dy, the routes) lie: all NHWC; x in oneDNN's nChw16c (c
// a multiple of 16) and y NHWC; or both nChw16c.
enum class PoolKernelLayout { kNhwc, kBlockedToNhwc, kBlocked };

// 2x2 max pooling, stride 2, floor, over images [img_begin, img_end) of (h, w, c).
void maxpool2_forward(const float* x, float* y, int img_begin, int img_end, int h, int w, int c, PoolKernelLayout l);
// dx = g at the first maximum of each window (x == y there, in the order top-left, top-right,
// bottom-left, bottom-right), 0 elsewhere and on the row/column a floor-pool drops. g = dy, or
// dy * dy_mask when dy_mask is not null (a dropout after the pooling: its backward, the same
// product); when relu_of_x (x is a ReLU's output), g = 0 where the window's maximum is not > 0
// (the ReLU's backward: x > 0 at the maximum exactly when the maximum is > 0).
void maxpool2_backward(const float* x, const float* y, const float* dy, const float* dy_mask, bool relu_of_x,
                       float* dx, int img_begin, int img_end, int h, int w, int c, PoolKernelLayout l);

// A pooling that keeps its routes (backend.hpp's Backend::pools_by_routes): routes[o], a byte per
// output, holds the position of the window's first maximum (kRouteWhere: 0..3, the order above),
// kRoutePositive where the maximum is > 0 and kRouteKept where a dropout after the pooling keeps
// the output. draws: that dropout's, as dropout_forward's (keep = 0: none); then y = maximum * mask.
struct RouteDraws {
  float keep = 0.0f;
  std::uint64_t threshold = 0, layer_stream = 0, first_key = 0;
};
constexpr std::uint8_t kRouteWhere = 3, kRouteKept = 4, kRoutePositive = 8;
// A dropout's draw for an output is by its feature's NHWC index in the image, whatever y's layout.
void maxpool2_forward_routed(const float* x, float* y, std::uint8_t* routes, const RouteDraws& draws, int img_begin,
                             int img_end, int h, int w, int c, PoolKernelLayout l);
// dx from the routes and dy alone, the same floats as maxpool2_backward given x, y and the
// dropout's mask (keep != 0) and relu_of_x.
void maxpool2_backward_routed(const std::uint8_t* routes, const float* dy, float keep, bool relu_of_x, float* dx,
                              int img_begin, int img_end, int h, int w, int c, PoolKernelLayout l);

// Inverted dropout over images [img_begin, img_end) of `per_image` floats each: mask = 0 where
// counter_rng.hpp's dropout_drops(image_stream(layer_stream, first_key + j), f, threshold), else
// keep; y = x * mask.
void dropout_forward(const float* x, float* y, float* mask, std::size_t per_image, std::size_t img_begin,
                     std::size_t img_end, float keep, std::uint64_t threshold, std::uint64_t layer_stream,
                     std::uint64_t first_key);
// out[i] = a[i] * b[i] on [begin, end).
void multiply(const float* a, const float* b, float* out, std::size_t begin, std::size_t end);

// Dense epilogue on rows [row_begin, row_end) of y (row stride ld): y += bias, then ReLU when relu.
void bias_relu_rows(float* y, const float* bias, int row_begin, int row_end, int cols, int ld, bool relu);
// out[j] += sum over rows of g[r * ld + j], j in [0, cols).
void add_column_sums(const float* g, int rows, int cols, int ld, float* out);

}  // namespace batchai::train::cpu
