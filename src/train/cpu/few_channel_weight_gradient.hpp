// The weight gradient of a 3x3 convolution of few input channels (the first layer: 3 -> 32 at
// 32x32), with the backward of the ReLU after it folded in, in one AVX-512 pass: per 16 output
// channels, 9c + 1 accumulators (kernel and bias) take each position's dy, masked where y is not
// > 0, times the position's input patch. It replaces a mask pass over dy and y (4 MB each in the
// tutorial's step) and oneDNN's weight gradient: on a 2-vCPU Emerald Rapids Xeon conv2d_1's
// backward took 0.48 against 0.54 ms with the blocked chain (12 alternating train_bench pairs,
// 11 faster) and 0.75-0.81 against 0.94-1.24 ms without it (4 pairs).
#pragma once
#include <cstddef>

#include "batchai/train/backend.hpp"

namespace batchai::train::cpu {

// Whether the kernel takes this shape here: k = 3, c <= 3, out a multiple of 16, x NHWC or
// NCHW, y NHWC or nChw16c, and a CPU with AVX-512 where oneDNN runs it too.
bool few_channel_weight_gradient_applies(const ConvShape& s);

// Per-image scratch the caller gives each thread: the image's input, zero-padded.
std::size_t few_channel_scratch_floats(const ConvShape& s);

// dw (hwio, k*k*c*out) and db (out) = the sum over images [img_begin, img_end) of the gradient,
// overwritten; dy masked where y is not > 0 when `y` is not null.
void few_channel_weight_gradient(const ConvShape& s, const float* x, const float* dy, const float* y, int img_begin,
                                 int img_end, float* scratch, float* dw, float* db);

}  // namespace batchai::train::cpu
