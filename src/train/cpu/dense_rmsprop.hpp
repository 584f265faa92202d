// RMSprop on a dense layer's kernel straight from the factors of its gradient, x^T dy, for a run
// of one rank, where no allreduce stands between the backward pass and the update: each row of
// the gradient is summed in registers and applied at once, so the 4.7 MB gradient of the
// tutorial's dense_1 is never written to memory and read back. The update's arithmetic is
// cpu_elementwise's rmsprop, operation for operation, so the same gradient gives the same floats.
#pragma once
#include <cstddef>

namespace batchai::train::cpu {

// Whether the kernel runs here: AVX-512 (where oneDNN runs it too) and out a multiple of 64.
bool dense_rmsprop_applies(int out);

// For kernel rows [row_begin, row_end) of a (in, out) kernel: g[i][j] = sum over b < n, in order,
// of xt[i][b] * dy[b][j] (xt: x transposed, (in, n)); then ms = rho*ms + (1-rho)*g^2 and
// p -= lr * g / (sqrt(ms) + eps) on those rows of p and ms.
void dense_rmsprop_rows(const float* xt, const float* dy, int n, int out, int row_begin, int row_end, float* p,
                        float* ms, float lr, float rho, float eps);

}  // namespace batchai::train::cpu
