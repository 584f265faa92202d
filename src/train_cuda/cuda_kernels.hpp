// Launchers of the CUDA backend's own kernels (cuda_kernels.cu): everything that is not a
// convolution (cuDNN) or a matrix product (cuBLAS). All are asynchronous on `stream`, take
// device pointers, and use the CPU backend's definitions so results agree (masks bit for bit).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace batchai::train_cuda::kernels {

void fill(float* y, std::size_t count, float value, cudaStream_t stream);
void scale(float* x, std::size_t count, float factor, cudaStream_t stream);
// y[i] = a[i] * b[i] (dropout backward, and the identity copy when b is all ones).
void multiply(const float* a, const float* b, float* y, std::size_t count, cudaStream_t stream);

// Row-major (rows, cols): y[r, j] = act(y[r, j] + bias[j]), act = ReLU when `relu`.
void bias_act(float* y, std::size_t rows, int cols, const float* bias, bool relu, cudaStream_t stream);
// db[j] += sum over r of dy[r, j], in a fixed order (deterministic, no atomics). With `relu_y`
// (the ReLU's output), dy is first masked in place: dy[i] = relu_y[i] > 0 ? dy[i] : 0. `scratch`
// holds column_sum_scratch(rows, cols) floats.
std::size_t column_sum_scratch(std::size_t rows, int cols);
void column_sums_add(float* dy, const float* relu_y, std::size_t rows, int cols, float* db, float* scratch,
                     cudaStream_t stream);

// b (cols, rows) = a (rows, cols)^T; transpose_add: b += a^T. Used between Keras' (k,k,c,out)
// kernels and cuDNN's NHWC filters (out,k,k,c).
void transpose(const float* a, int rows, int cols, float* b, cudaStream_t stream);
void transpose_add(const float* a, int rows, int cols, float* b, cudaStream_t stream);

// For each of `batch` row-major matrices: b (cols, rows) = a (rows, cols)^T; NHWC <-> NCHW per
// image. With `bias` (one per row of a), b = act(a^T + bias), act = ReLU when `relu`.
void batched_transpose(const float* a, int batch, int rows, int cols, float* b, const float* bias, bool relu,
                       cudaStream_t stream);
// Keras' (k, k, c, out) filter to cuDNN's NCHW one (out, c, k, k), and its gradient back, added.
void filter_to_kcrs(const float* keras, int k, int c, int out, float* kcrs, cudaStream_t stream);
void filter_add_from_kcrs(const float* kcrs, int k, int c, int out, float* keras, cudaStream_t stream);

// 2x2 max pooling, stride 2, floor, NHWC; backward routes g to the first maximum (a, b, d, e
// order as the CPU backend) and zeroes the rest of dx: g = dy (times dy_mask unless null), 0 where
// relu_of_x and the maximum is not > 0 (backend.hpp's PoolBackwardFusion).
void maxpool2_forward(int n, int h, int w, int c, const float* x, float* y, cudaStream_t stream);
void maxpool2_backward(int n, int h, int w, int c, const float* x, const float* y, const float* dy,
                       const float* dy_mask, bool relu_of_x, float* dx, cudaStream_t stream);

// Dropout over images of per_image floats, drawn as counter_rng.hpp says (mask = 0 or keep);
// y = x * mask.
void dropout_forward(const float* x, float* y, float* mask, std::size_t count, std::size_t per_image,
                     std::uint64_t layer_stream, std::uint64_t first_image_key, std::uint64_t threshold, float keep,
                     cudaStream_t stream);

// Softmax + cross entropy (Keras clipping) over (n, classes); labels are class indices as
// floats. Writes dlogits = (p - onehot) / n unless null, and the batch's loss sum and correct
// count into *result (device memory), reduced on the device in a fixed order.
struct XentResult {
  double loss_sum;
  int correct;
};
void softmax_xent(int n, int classes, const float* logits, const float* labels, float* dlogits, XentResult* result,
                  cudaStream_t stream);

// Keras RMSprop: ms = rho*ms + (1-rho)*g^2; p -= lr * g / (sqrt(ms) + eps).
void rmsprop(float* p, const float* g, float* ms, std::size_t count, float lr, float rho, float eps,
             cudaStream_t stream);

}  // namespace batchai::train_cuda::kernels
