// Dense layers of few outputs (the tutorial's dense_2, 512 -> 10) in AVX-512 kernels of their own:
// for so small a product oneDNN's sgemm, its matmul and the pass adding the bias each wake the
// team, and on a 2-vCPU AMD EPYC Zen 4 the layer's three phases took 10-45 us against limits of
// 4-9 us (train_bench --roofline). Here each output row or kernel row of up to 16 floats is one
// masked vector, summed over the shared dimension in order with fused multiply-adds, so the floats
// do not depend on how the rows are split over threads.
#pragma once

namespace batchai::train::cpu {

// Whether the kernels run here: 1 <= out <= 16 and a CPU where oneDNN runs AVX-512. The others
// are compiled for AVX-512: call them only where this holds.
bool narrow_dense_applies(int out);

// Rows [row_begin, row_end) of y = x w + bias, ReLU'd when `relu` (x: n x in, w: in x out, row-major).
void narrow_dense_forward(const float* x, const float* w, const float* bias, int in, int out, int row_begin,
                          int row_end, float* y, bool relu);

// Columns [col_begin, col_end) of dx = dy w^T (dy: n x out, dx: n x in).
void narrow_dense_input_gradient(const float* dy, const float* w, int n, int in, int out, int col_begin,
                                 int col_end, float* dx);

// Kernel rows [row_begin, row_end) of dw = x^T dy, added to dw's values when `accumulate`.
void narrow_dense_weight_gradient(const float* x, const float* dy, int n, int in, int out, int row_begin,
                                  int row_end, bool accumulate, float* dw);

}  // namespace batchai::train::cpu
