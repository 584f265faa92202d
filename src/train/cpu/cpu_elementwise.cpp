// Element-wise helpers of the CPU backend (ReLU masks on NHWC / row-major gradients).
#include "cpu/cpu_elementwise.hpp"

#include <algorithm>

namespace batchai::train::cpu {

void relu_mask_rows(float* dy, const float* y, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

}  // namespace batchai::train::cpu
