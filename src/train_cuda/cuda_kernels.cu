// The CUDA backend's own kernels (see cuda_kernels.hpp). Element-wise work uses grid-stride
// loops; reductions (bias gradients, loss and accuracy) run in a fixed order so two runs of
// the same step give the same bits.
#include "cuda_kernels.hpp"

#include <algorithm>

#include "batchai/train/counter_rng.hpp"
#include "batchai/train/softmax_xent_row.hpp"
#include "cuda_check.hpp"

namespace batchai::train_cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = std::size_t{1} << 16;
constexpr std::size_t kRowsPerChunk = 128;  // rows one block folds in column_sums_add's first pass
constexpr int kTile = 32;                    // batched_transpose's square tile

unsigned blocks_for(std::size_t count) {
  return static_cast<unsigned>(std::clamp<std::size_t>((count + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

#define BATCHAI_GRID_STRIDE(i, count)                                                              \
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < (count);           \
       i += std::size_t{gridDim.x} * blockDim.x)

__global__ void fill_kernel(float* y, std::size_t count, float value) {
  BATCHAI_GRID_STRIDE(i, count) y[i] = value;
}

__global__ void scale_kernel(float* x, std::size_t count, float factor) {
  BATCHAI_GRID_STRIDE(i, count) x[i] *= factor;
}

__global__ void multiply_kernel(const float* a, const float* b, float* y, std::size_t count) {
  BATCHAI_GRID_STRIDE(i, count) y[i] = a[i] * b[i];
}

__global__ void bias_act_kernel(float* y, std::size_t count, int cols, const float* bias, bool relu) {
  BATCHAI_GRID_STRIDE(i, count) {
    const float v = y[i] + bias[i % cols];
    y[i] = relu ? fmaxf(v, 0.0f) : v;
  }
}

__global__ void relu_mask_kernel(float* dy, const float* y, std::size_t count) {
  BATCHAI_GRID_STRIDE(i, count) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

// The bias gradient's first pass, one block per chunk of rows: partials[chunk, j] = sum of
// dy[r, j] over the chunk's rows.
__global__ void column_partials_kernel(const float* dy, std::size_t rows, int cols, float* partials) {
  __shared__ float sums[kThreads];
  const std::size_t r0 = blockIdx.x * kRowsPerChunk;
  const std::size_t r1 = min(rows, r0 + kRowsPerChunk);
  const int t = static_cast<int>(threadIdx.x);
  float* out = partials + static_cast<std::size_t>(blockIdx.x) * cols;
  if (cols > kThreads) {
    for (int j = t; j < cols; j += kThreads) {
      float s = 0.0f;
      for (std::size_t r = r0; r < r1; ++r) s += dy[r * cols + j];
      out[j] = s;
    }
    return;
  }
  // cols <= kThreads: `groups` threads share a column, each taking every groups-th row.
  const int groups = kThreads / cols;
  float s = 0.0f;
  if (t < groups * cols) {
    const int j = t % cols;
    for (std::size_t r = r0 + t / cols; r < r1; r += groups) s += dy[r * cols + j];
  }
  sums[t] = s;
  __syncthreads();
  if (t < cols) {
    float total = 0.0f;
    for (int g = 0; g < groups; ++g) total += sums[g * cols + t];
    out[t] = total;
  }
}

// The second pass, one block per column: a fixed-shape tree over the chunks' partials.
__global__ void column_finish_kernel(const float* partials, std::size_t chunks, int cols, float* db) {
  __shared__ float sums[kThreads];
  const int j = static_cast<int>(blockIdx.x);
  float s = 0.0f;
  for (std::size_t k = threadIdx.x; k < chunks; k += kThreads) s += partials[k * cols + j];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[j] += sums[0];
}

// Per matrix z of `batch`: b[z] (cols, rows) = a[z] (rows, cols)^T through a shared tile, so
// both the reads and the writes are coalesced; with `bias`, b = act(a^T + bias[row of a]).
__global__ void batched_transpose_kernel(const float* a, int rows, int cols, float* b, const float* bias,
                                         bool relu) {
  __shared__ float tile[kTile][kTile + 1];
  const std::size_t offset = static_cast<std::size_t>(blockIdx.z) * rows * cols;
  a += offset;
  b += offset;
  const int c0 = static_cast<int>(blockIdx.x) * kTile, r0 = static_cast<int>(blockIdx.y) * kTile;
  const int tx = static_cast<int>(threadIdx.x);
  for (int i = static_cast<int>(threadIdx.y); i < kTile; i += static_cast<int>(blockDim.y)) {
    const int r = r0 + i, c = c0 + tx;
    if (r < rows && c < cols) tile[i][tx] = a[static_cast<std::size_t>(r) * cols + c];
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.y); i < kTile; i += static_cast<int>(blockDim.y)) {
    const int c = c0 + i, r = r0 + tx;
    if (c < cols && r < rows) {
      float v = tile[tx][i];
      if (bias != nullptr) {
        v += bias[r];
        if (relu) v = fmaxf(v, 0.0f);
      }
      b[static_cast<std::size_t>(c) * rows + r] = v;
    }
  }
}

// Keras' (k, k, c, out) filter index i -> its place in cuDNN's NCHW filter (out, c, k, k).
__device__ inline std::size_t kcrs_index(std::size_t i, int kk, int c, int out) {
  const std::size_t o = i % out, rest = i / out;
  return (o * c + rest % c) * kk + rest / c;
}

__global__ void filter_to_kcrs_kernel(const float* keras, int kk, int c, int out, float* kcrs) {
  BATCHAI_GRID_STRIDE(i, static_cast<std::size_t>(kk) * c * out) kcrs[kcrs_index(i, kk, c, out)] = keras[i];
}

__global__ void filter_add_from_kcrs_kernel(const float* kcrs, int kk, int c, int out, float* keras) {
  BATCHAI_GRID_STRIDE(i, static_cast<std::size_t>(kk) * c * out) keras[i] += kcrs[kcrs_index(i, kk, c, out)];
}

__global__ void transpose_kernel(const float* a, int rows, int cols, float* b, bool add) {
  const std::size_t count = static_cast<std::size_t>(rows) * cols;
  BATCHAI_GRID_STRIDE(i, count) {
    const std::size_t r = i / cols, j = i % cols;
    float* dst = b + j * rows + r;
    *dst = add ? *dst + a[i] : a[i];
  }
}

__global__ void maxpool_forward_kernel(int n, int h, int w, int c, const float* x, float* y) {
  const int ph = h / 2, pw = w / 2;
  const std::size_t count = static_cast<std::size_t>(n) * ph * pw * c;
  BATCHAI_GRID_STRIDE(o, count) {
    const int ch = static_cast<int>(o % c);
    std::size_t rest = o / c;
    const int px = static_cast<int>(rest % pw);
    rest /= pw;
    const int py = static_cast<int>(rest % ph);
    const std::size_t img = rest / ph;
    const float* a = x + ((img * h + 2 * py) * w + 2 * px) * c + ch;
    const float* d = a + static_cast<std::size_t>(w) * c;
    y[o] = fmaxf(fmaxf(a[0], a[c]), fmaxf(d[0], d[c]));
  }
}

// Windows do not overlap (stride 2), so each thread owns its four dx cells.
__global__ void maxpool_backward_kernel(int n, int h, int w, int c, const float* x, const float* y,
                                        const float* dy, const float* dy_mask, bool relu_of_x, float* dx) {
  const int ph = h / 2, pw = w / 2;
  const std::size_t count = static_cast<std::size_t>(n) * ph * pw * c;
  BATCHAI_GRID_STRIDE(o, count) {
    const int ch = static_cast<int>(o % c);
    std::size_t rest = o / c;
    const int px = static_cast<int>(rest % pw);
    rest /= pw;
    const int py = static_cast<int>(rest % ph);
    const std::size_t img = rest / ph;
    const std::size_t base = ((img * h + 2 * py) * w + 2 * px) * c + ch;
    const std::size_t offs[4] = {base, base + c, base + static_cast<std::size_t>(w) * c,
                                 base + static_cast<std::size_t>(w) * c + c};
    const float m = y[o];
    float g = dy_mask != nullptr ? dy[o] * dy_mask[o] : dy[o];
    if (relu_of_x && !(m > 0.0f)) g = 0.0f;
    bool routed = false;
    for (std::size_t q : offs) {
      const bool hit = !routed && x[q] == m;
      dx[q] = hit ? g : 0.0f;
      routed = routed || hit;
    }
  }
}

__global__ void dropout_kernel(const float* x, float* y, float* mask, std::size_t count, std::size_t per_image,
                               std::uint64_t layer_stream, std::uint64_t first_image_key, std::uint64_t threshold,
                               float keep) {
  BATCHAI_GRID_STRIDE(i, count) {
    const std::uint64_t image = train::image_stream(layer_stream, first_image_key + i / per_image);
    const float m = train::dropout_drops(image, i % per_image, threshold) ? 0.0f : keep;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

// One block: rows are spread over the threads, then a fixed-shape tree sums loss and hits.
__global__ void softmax_xent_kernel(int n, int classes, const float* logits, const float* labels, float* dlogits,
                                    XentResult* result) {
  __shared__ double losses[kThreads];
  __shared__ int hits[kThreads];
  double loss = 0.0;
  int hit = 0;
  for (int r = static_cast<int>(threadIdx.x); r < n; r += kThreads) {
    const std::size_t at = static_cast<std::size_t>(r) * classes;
    const train::XentRow row = train::softmax_xent_row(logits + at, classes, static_cast<int>(labels[r]),
                                                       dlogits != nullptr ? dlogits + at : nullptr, 1.0 / n);
    loss += row.loss;
    hit += row.hit ? 1 : 0;
  }
  losses[threadIdx.x] = loss;
  hits[threadIdx.x] = hit;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      losses[threadIdx.x] += losses[threadIdx.x + stride];
      hits[threadIdx.x] += hits[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    result->loss_sum = losses[0];
    result->correct = hits[0];
  }
}

__global__ void rmsprop_kernel(float* p, const float* g, float* ms, std::size_t count, float lr, float rho,
                               float eps) {
  BATCHAI_GRID_STRIDE(i, count) {
    const float gi = g[i];
    const float m = rho * ms[i] + (1.0f - rho) * gi * gi;
    ms[i] = m;
    p[i] -= lr * gi / (sqrtf(m) + eps);
  }
}

}  // namespace

void fill(float* y, std::size_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<blocks_for(count), kThreads, 0, stream>>>(y, count, value);
  BATCHAI_CUDA_CHECK_LAUNCH("fill");
}

void scale(float* x, std::size_t count, float factor, cudaStream_t stream) {
  if (count == 0) return;
  scale_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, count, factor);
  BATCHAI_CUDA_CHECK_LAUNCH("scale");
}

void multiply(const float* a, const float* b, float* y, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  multiply_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, b, y, count);
  BATCHAI_CUDA_CHECK_LAUNCH("multiply");
}

void bias_act(float* y, std::size_t rows, int cols, const float* bias, bool relu, cudaStream_t stream) {
  const std::size_t count = rows * static_cast<std::size_t>(cols);
  if (count == 0) return;
  bias_act_kernel<<<blocks_for(count), kThreads, 0, stream>>>(y, count, cols, bias, relu);
  BATCHAI_CUDA_CHECK_LAUNCH("bias_act");
}

std::size_t column_sum_scratch(std::size_t rows, int cols) {
  return (rows + kRowsPerChunk - 1) / kRowsPerChunk * static_cast<std::size_t>(cols);
}

// The ReLU mask is its own pass: a version that masked inside the first pass (conditional stores
// between each thread's loads) took about seven times as long as both passes (ncu, H100).
void column_sums_add(float* dy, const float* relu_y, std::size_t rows, int cols, float* db, float* scratch,
                     cudaStream_t stream) {
  if (rows == 0 || cols <= 0) return;
  const std::size_t count = rows * static_cast<std::size_t>(cols);
  if (relu_y != nullptr) {
    relu_mask_kernel<<<blocks_for(count), kThreads, 0, stream>>>(dy, relu_y, count);
    BATCHAI_CUDA_CHECK_LAUNCH("relu_mask");
  }
  const std::size_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
  column_partials_kernel<<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(dy, rows, cols, scratch);
  BATCHAI_CUDA_CHECK_LAUNCH("column_partials");
  column_finish_kernel<<<static_cast<unsigned>(cols), kThreads, 0, stream>>>(scratch, chunks, cols, db);
  BATCHAI_CUDA_CHECK_LAUNCH("column_finish");
}

void batched_transpose(const float* a, int batch, int rows, int cols, float* b, const float* bias, bool relu,
                       cudaStream_t stream) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return;
  const dim3 block(kTile, 8);
  const std::size_t per = static_cast<std::size_t>(rows) * cols;
  constexpr int kMaxGridZ = 65535;
  for (int z0 = 0; z0 < batch; z0 += kMaxGridZ) {
    const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile),
                    static_cast<unsigned>(std::min(kMaxGridZ, batch - z0)));
    batched_transpose_kernel<<<grid, block, 0, stream>>>(a + z0 * per, rows, cols, b + z0 * per, bias, relu);
    BATCHAI_CUDA_CHECK_LAUNCH("batched_transpose");
  }
}

void filter_to_kcrs(const float* keras, int k, int c, int out, float* kcrs, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(k) * k * c * out;
  if (count == 0) return;
  filter_to_kcrs_kernel<<<blocks_for(count), kThreads, 0, stream>>>(keras, k * k, c, out, kcrs);
  BATCHAI_CUDA_CHECK_LAUNCH("filter_to_kcrs");
}

void filter_add_from_kcrs(const float* kcrs, int k, int c, int out, float* keras, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(k) * k * c * out;
  if (count == 0) return;
  filter_add_from_kcrs_kernel<<<blocks_for(count), kThreads, 0, stream>>>(kcrs, k * k, c, out, keras);
  BATCHAI_CUDA_CHECK_LAUNCH("filter_add_from_kcrs");
}

void transpose(const float* a, int rows, int cols, float* b, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(rows) * cols;
  if (count == 0) return;
  transpose_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, rows, cols, b, false);
  BATCHAI_CUDA_CHECK_LAUNCH("transpose");
}

void transpose_add(const float* a, int rows, int cols, float* b, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(rows) * cols;
  if (count == 0) return;
  transpose_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, rows, cols, b, true);
  BATCHAI_CUDA_CHECK_LAUNCH("transpose_add");
}

void maxpool2_forward(int n, int h, int w, int c, const float* x, float* y, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c;
  if (count == 0) return;
  maxpool_forward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(n, h, w, c, x, y);
  BATCHAI_CUDA_CHECK_LAUNCH("maxpool2_forward");
}

void maxpool2_backward(int n, int h, int w, int c, const float* x, const float* y, const float* dy,
                       const float* dy_mask, bool relu_of_x, float* dx, cudaStream_t stream) {
  // Odd trailing rows/columns belong to no window: zero everything, then route.
  if ((h % 2) != 0 || (w % 2) != 0) {
    BATCHAI_CUDA_CHECK(cudaMemsetAsync(dx, 0, sizeof(float) * n * h * w * c, stream));
  }
  const std::size_t count = static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c;
  if (count == 0) return;
  maxpool_backward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(n, h, w, c, x, y, dy, dy_mask, relu_of_x,
                                                                      dx);
  BATCHAI_CUDA_CHECK_LAUNCH("maxpool2_backward");
}

void dropout_forward(const float* x, float* y, float* mask, std::size_t count, std::size_t per_image,
                     std::uint64_t layer_stream, std::uint64_t first_image_key, std::uint64_t threshold, float keep,
                     cudaStream_t stream) {
  if (count == 0 || per_image == 0) return;
  dropout_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, y, mask, count, per_image, layer_stream,
                                                             first_image_key, threshold, keep);
  BATCHAI_CUDA_CHECK_LAUNCH("dropout_forward");
}

void softmax_xent(int n, int classes, const float* logits, const float* labels, float* dlogits, XentResult* result,
                  cudaStream_t stream) {
  softmax_xent_kernel<<<1, kThreads, 0, stream>>>(n, classes, logits, labels, dlogits, result);
  BATCHAI_CUDA_CHECK_LAUNCH("softmax_xent");
}

void rmsprop(float* p, const float* g, float* ms, std::size_t count, float lr, float rho, float eps,
             cudaStream_t stream) {
  if (count == 0) return;
  rmsprop_kernel<<<blocks_for(count), kThreads, 0, stream>>>(p, g, ms, count, lr, rho, eps);
  BATCHAI_CUDA_CHECK_LAUNCH("rmsprop");
}

}  // namespace batchai::train_cuda::kernels
