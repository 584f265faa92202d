// im2col/col2im for NHWC stride-1 convolutions and the fused epilogues of the CPU backend.
// A column row is one output pixel (image, oy, ox); its columns are (ky, kx, ci), which is
// exactly the Keras kernel (kh, kw, in, out) flattened, so the GEMM takes the kernel as is.
#include <algorithm>
#include <cstring>

#include "cpu/cpu_backend.hpp"

namespace batchai::train::cpu {

void im2col_nhwc(const ConvShape& s, const float* x, int n0, int n1, float* col) {
  const int oh = s.oh(), ow = s.ow(), k = s.k, c = s.c;
  const std::size_t row = static_cast<std::size_t>(k) * k * c;
  const std::size_t run = static_cast<std::size_t>(k) * c;  // one kernel row, contiguous in x
  for (int img = n0; img < n1; ++img) {
    const float* xi = x + static_cast<std::size_t>(img) * s.h * s.w * c;
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        float* dst = col;
        col += row;
        const int x0 = ox - s.pad;
        const bool inside_x = x0 >= 0 && x0 + k <= s.w;
        for (int ky = 0; ky < k; ++ky) {
          const int iy = oy - s.pad + ky;
          if (iy < 0 || iy >= s.h) {
            std::memset(dst, 0, run * sizeof(float));
          } else if (inside_x) {
            std::memcpy(dst, xi + (static_cast<std::size_t>(iy) * s.w + x0) * c, run * sizeof(float));
          } else {
            for (int kx = 0; kx < k; ++kx) {
              const int ix = x0 + kx;
              float* d = dst + static_cast<std::size_t>(kx) * c;
              if (ix < 0 || ix >= s.w) {
                std::memset(d, 0, c * sizeof(float));
              } else {
                std::memcpy(d, xi + (static_cast<std::size_t>(iy) * s.w + ix) * c, c * sizeof(float));
              }
            }
          }
          dst += run;
        }
      }
    }
  }
}

void col2im_nhwc(const ConvShape& s, const float* col, int n0, int n1, float* dx) {
  const int oh = s.oh(), ow = s.ow(), k = s.k, c = s.c;
  const std::size_t image = static_cast<std::size_t>(s.h) * s.w * c;
  std::memset(dx + n0 * image, 0, (n1 - n0) * image * sizeof(float));
  for (int img = n0; img < n1; ++img) {
    float* xi = dx + img * image;
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        for (int ky = 0; ky < k; ++ky) {
          const int iy = oy - s.pad + ky;
          if (iy < 0 || iy >= s.h) {
            col += static_cast<std::size_t>(k) * c;
            continue;
          }
          for (int kx = 0; kx < k; ++kx, col += c) {
            const int ix = ox - s.pad + kx;
            if (ix < 0 || ix >= s.w) continue;
            float* d = xi + (static_cast<std::size_t>(iy) * s.w + ix) * c;
            for (int ci = 0; ci < c; ++ci) d[ci] += col[ci];
          }
        }
      }
    }
  }
}

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
