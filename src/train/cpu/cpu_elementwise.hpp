// Element-wise kernels of the CPU backend (cpu_elementwise.cpp), on plain host arrays.
#pragma once
#include <cstddef>

namespace batchai::train::cpu {

// The ReLU gradient mask, in place: dy[i] = 0 wherever y[i] <= 0.
void relu_mask_rows(float* dy, const float* y, std::size_t count);

}  // namespace batchai::train::cpu
