// Element-wise epilogues of the CPU backend's dense layers and ReLU masks (row-major, NHWC).
#include <algorithm>

#include "cpu/cpu_backend.hpp"

namespace batchai::train::cpu {

void bias_act_rows(float* y, std::size_t rows, int cols, const float* bias, bool relu) {
  for (std::size_t r = 0; r < rows; ++r, y += cols) {
    if (relu) {
      for (int j = 0; j < cols; ++j) y[j] = std::max(y[j] + bias[j], 0.0f);
    } else {
      for (int j = 0; j < cols; ++j) y[j] += bias[j];
    }
  }
}

void relu_mask_rows(float* dy, const float* y, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void column_sums_add(const float* dy, std::size_t rows, int cols, float* db) {
  for (std::size_t r = 0; r < rows; ++r, dy += cols) {
    for (int j = 0; j < cols; ++j) db[j] += dy[j];
  }
}

}  // namespace batchai::train::cpu
