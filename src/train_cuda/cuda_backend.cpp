// CUDA backend: memory, transfers and the layer operations (plan in cuda_backend_impl.hpp), and
// its registration with the trainer.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "batchai/common/errors.hpp"
#include "batchai/train/counter_rng.hpp"
#include "batchai/train_cuda/cuda_device.hpp"
#include "batchai/train_cuda/nccl_communicator.hpp"
#include "cuda_backend_impl.hpp"
#include "cuda_check.hpp"

namespace batchai::train_cuda {
namespace {

using train::Buffer;

void require(bool ok, const char* what) {
  if (!ok) throw Error(std::string("CUDA backend: ") + what + " (internal error: a buffer is too small)");
}

// This backend never agrees to a blocked chain (blocked_chain_pays), so it is given NHWC only.
void require_nhwc(bool ok, const char* what) {
  if (!ok) throw Error(std::string("CUDA backend: ") + what + " (internal error: activations not NHWC)");
}

// Releases must not throw (Model's destructor releases), so failures are reported, not raised.
void warn_on_failure(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) std::fprintf(stderr, "batchai: warning: %s failed: %s\n", what, cudaGetErrorString(rc));
}

}  // namespace

DeviceScratch::~DeviceScratch() {
  if (data_ != nullptr) warn_on_failure(cudaFree(data_), "cudaFree (scratch)");
}

void* DeviceScratch::ensure(std::size_t bytes) {
  if (bytes <= bytes_) return data_;
  // cudaFree waits for the device, so work still reading the old area finishes first.
  if (data_ != nullptr) BATCHAI_CUDA_CHECK(cudaFree(data_));
  data_ = nullptr;
  bytes_ = 0;
  BATCHAI_CUDA_CHECK(cudaMalloc(&data_, bytes));
  bytes_ = bytes;
  return data_;
}

namespace {
cudnnTensorFormat_t resolve_layout(const CudaBackendOptions& o) {
  switch (o.conv_layout) {
    case ConvLayout::kNhwc:
      return CUDNN_TENSOR_NHWC;
    case ConvLayout::kNchw:
      return CUDNN_TENSOR_NCHW;
    case ConvLayout::kAuto:
      break;
  }
  return o.allow_tf32 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}
}  // namespace

CudaBackend::CudaBackend(const CudaBackendOptions& options)
    : options_(options), conv_layout_(resolve_layout(options)) {
  if (options_.device < 0) {
    device_ = select_local_device();
  } else {
    device_ = options_.device;
    BATCHAI_CUDA_CHECK(cudaSetDevice(device_));
  }
  BATCHAI_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  BATCHAI_CUDNN_CHECK(cudnnCreate(&cudnn_));
  BATCHAI_CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
  BATCHAI_CUBLAS_CHECK(cublasCreate(&cublas_));
  BATCHAI_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  BATCHAI_CUBLAS_CHECK(
      cublasSetMathMode(cublas_, options_.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  for (auto& s : uploads_) BATCHAI_CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
  BATCHAI_CUDA_CHECK(cudaMalloc(&xent_device_, sizeof(kernels::XentResult)));
  BATCHAI_CUDA_CHECK(cudaMallocHost(&xent_host_, sizeof(kernels::XentResult)));
}

CudaBackend::~CudaBackend() {
  warn_on_failure(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (backend shutdown)");
  convs_.clear();
  for (Staging* s : {&uploads_[0], &uploads_[1], &download_}) {
    if (s->host != nullptr) warn_on_failure(cudaFreeHost(s->host), "cudaFreeHost (staging)");
    if (s->done != nullptr) warn_on_failure(cudaEventDestroy(s->done), "cudaEventDestroy");
  }
  if (xent_host_ != nullptr) warn_on_failure(cudaFreeHost(xent_host_), "cudaFreeHost (loss)");
  if (xent_device_ != nullptr) warn_on_failure(cudaFree(xent_device_), "cudaFree (loss)");
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  if (stream_ != nullptr) warn_on_failure(cudaStreamDestroy(stream_), "cudaStreamDestroy");
}

void CudaBackend::set_threads(int /*threads*/) {}

CudnnConv& CudaBackend::conv(const train::ConvShape& s) {
  const auto key = std::make_tuple(s.n, s.h, s.w, s.c, s.out, s.pad, s.k);
  auto it = convs_.find(key);
  if (it == convs_.end()) {
    it = convs_.emplace(key, std::make_unique<CudnnConv>(cudnn_, s, ConvChoice{options_.allow_tf32, options_.find_algorithms,
                                                                             options_.deterministic, conv_layout_}))
             .first;
  }
  return *it->second;
}

float* CudaBackend::pinned(Staging& staging, std::size_t count) {
  if (staging.pending) {
    BATCHAI_CUDA_CHECK(cudaEventSynchronize(staging.done));  // its previous copy has been read
    staging.pending = false;
  }
  if (count > staging.capacity) {
    if (staging.host != nullptr) BATCHAI_CUDA_CHECK(cudaFreeHost(staging.host));
    staging.host = nullptr;
    staging.capacity = 0;
    BATCHAI_CUDA_CHECK(cudaMallocHost(&staging.host, count * sizeof(float)));
    staging.capacity = count;
  }
  return staging.host;
}

Buffer CudaBackend::allocate(std::size_t count) {
  Buffer b;
  b.kind = train::BufferKind::kDevice;  // only the device collectives may reduce it
  if (count == 0) return b;
  BATCHAI_CUDA_CHECK(cudaMalloc(&b.data, count * sizeof(float)));
  b.size = count;
  BATCHAI_CUDA_CHECK(cudaMemsetAsync(b.data, 0, count * sizeof(float), stream_));
  BATCHAI_CUDA_CHECK(cudaStreamSynchronize(stream_));  // zeroed before anyone else's stream sees it
  return b;
}

void CudaBackend::release(Buffer& buffer) {
  if (buffer.data != nullptr) warn_on_failure(cudaFree(buffer.data), "cudaFree");
  buffer = Buffer{};
}

void CudaBackend::upload_images(Buffer& dst, const float* host_nhwc, int n, int h, int w, int c,
                                train::Layout layout) {
  require_nhwc(layout == train::Layout::kNhwc, "upload_images");
  upload(dst, host_nhwc, static_cast<std::size_t>(n) * h * w * c, 0);
}

void CudaBackend::upload(Buffer& dst, const float* host, std::size_t count, std::size_t offset) {
  if (offset + count > dst.size) throw Error("upload past the end of a backend buffer (internal error)");
  if (count == 0) return;
  Staging& staging = uploads_[next_upload_];
  next_upload_ = (next_upload_ + 1) % uploads_.size();
  float* pin = pinned(staging, count);
  std::memcpy(pin, host, count * sizeof(float));  // the caller may reuse `host` on return
  BATCHAI_CUDA_CHECK(
      cudaMemcpyAsync(dst.data + offset, pin, count * sizeof(float), cudaMemcpyHostToDevice, stream_));
  BATCHAI_CUDA_CHECK(cudaEventRecord(staging.done, stream_));
  staging.pending = true;
}

void CudaBackend::download(float* host, const Buffer& src, std::size_t count, std::size_t offset) {
  if (offset + count > src.size) throw Error("download past the end of a backend buffer (internal error)");
  if (count == 0) return;
  float* pin = pinned(download_, count);
  BATCHAI_CUDA_CHECK(
      cudaMemcpyAsync(pin, src.data + offset, count * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  BATCHAI_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::memcpy(host, pin, count * sizeof(float));
}

void CudaBackend::fill(Buffer& dst, float value) {
  if (value == 0.0f && !std::signbit(value)) {
    if (dst.size > 0) BATCHAI_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, dst.size * sizeof(float), stream_));
    return;
  }
  kernels::fill(dst.data, dst.size, value, stream_);
}

// Keras' (k, k, c, out) filter in the plan's layout: KRSC (its transpose) for NHWC, KCRS for NCHW.
const float* CudaBackend::plan_filter(const CudnnConv& plan, const train::ConvShape& s, const float* keras) {
  const int kkc = s.k * s.k * s.c;
  float* out = filter_.floats(static_cast<std::size_t>(kkc) * s.out);
  if (plan.layout() == CUDNN_TENSOR_NHWC) {
    kernels::transpose(keras, kkc, s.out, out, stream_);
  } else {
    kernels::filter_to_kcrs(keras, s.k, s.c, s.out, out, stream_);
  }
  return out;
}

// In NCHW plans activations are transposed around cuDNN (they stay NHWC between layers); the
// bias and ReLU then ride on the transpose back.
void CudaBackend::conv2d_forward(const train::ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                 std::size_t b_off, Buffer& y, bool relu) {
  const int kkc = s.k * s.k * s.c;
  const std::size_t rows = static_cast<std::size_t>(s.n) * s.oh() * s.ow();
  const std::size_t in = static_cast<std::size_t>(s.n) * s.h * s.w * s.c;
  require(x.size >= in && y.size >= rows * s.out, "conv2d_forward");
  require_nhwc(s.x_layout == train::Layout::kNhwc && s.y_layout == train::Layout::kNhwc, "conv2d_forward");
  require(w.size >= w_off + static_cast<std::size_t>(kkc) * s.out && w.size >= b_off + s.out, "conv2d_forward");
  CudnnConv& plan = conv(s);
  const float* filter = plan_filter(plan, s, w.data + w_off);
  void* ws = workspace_.ensure(plan.workspace_bytes());
  if (plan.layout() == CUDNN_TENSOR_NHWC) {
    plan.forward(cudnn_, x.data, filter, y.data, ws);
    kernels::bias_act(y.data, rows, s.out, w.data + b_off, relu, stream_);
    return;
  }
  float* xt = nchw_in_.floats(in);
  float* yt = nchw_out_.floats(rows * s.out);
  kernels::batched_transpose(x.data, s.n, s.h * s.w, s.c, xt, nullptr, false, stream_);
  plan.forward(cudnn_, xt, filter, yt, ws);
  kernels::batched_transpose(yt, s.n, s.out, s.oh() * s.ow(), y.data, w.data + b_off, relu, stream_);
}

void CudaBackend::conv2d_backward(const train::ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                  const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                                  bool relu) {
  const int kkc = s.k * s.k * s.c;
  const std::size_t rows = static_cast<std::size_t>(s.n) * s.oh() * s.ow();
  const std::size_t in = static_cast<std::size_t>(s.n) * s.h * s.w * s.c;
  require(dy.size >= rows * s.out && y.size >= rows * s.out && x.size >= in, "conv2d_backward");
  require(dw.size >= w_off + static_cast<std::size_t>(kkc) * s.out && dw.size >= b_off + s.out, "conv2d_backward");
  require(dx == nullptr || dx->size >= in, "conv2d_backward");
  require_nhwc(s.x_layout == train::Layout::kNhwc && s.y_layout == train::Layout::kNhwc, "conv2d_backward");
  CudnnConv& plan = conv(s);
  void* ws = workspace_.ensure(plan.workspace_bytes());
  kernels::column_sums_add(dy.data, relu ? y.data : nullptr, rows, s.out, dw.data + b_off,
                           column_scratch_.floats(kernels::column_sum_scratch(rows, s.out)), stream_);
  // cuDNN writes the filter gradient in its layout; it is accumulated into Keras' layout.
  float* dfilter = filter_grad_.floats(static_cast<std::size_t>(kkc) * s.out);
  if (plan.layout() == CUDNN_TENSOR_NHWC) {
    plan.backward_filter(cudnn_, x.data, dy.data, dfilter, ws);
    kernels::transpose_add(dfilter, s.out, kkc, dw.data + w_off, stream_);
    if (dx != nullptr) plan.backward_data(cudnn_, plan_filter(plan, s, w.data + w_off), dy.data, dx->data, ws);
    return;
  }
  float* xt = nchw_in_.floats(in);
  float* dyt = nchw_out_.floats(rows * s.out);
  kernels::batched_transpose(dy.data, s.n, s.oh() * s.ow(), s.out, dyt, nullptr, false, stream_);
  kernels::batched_transpose(x.data, s.n, s.h * s.w, s.c, xt, nullptr, false, stream_);
  plan.backward_filter(cudnn_, xt, dyt, dfilter, ws);
  kernels::filter_add_from_kcrs(dfilter, s.k, s.c, s.out, dw.data + w_off, stream_);
  if (dx != nullptr) {
    float* dxt = xt;  // x's copy is spent once the filter gradient is queued (one stream)
    plan.backward_data(cudnn_, plan_filter(plan, s, w.data + w_off), dyt, dxt, ws);
    kernels::batched_transpose(dxt, s.n, s.c, s.h * s.w, dx->data, nullptr, false, stream_);
  }
}

// Row-major X (n, in) times W (in, out) is, to column-major cuBLAS, W^T (out, in) times X^T.
void CudaBackend::dense_forward(const train::DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                std::size_t b_off, Buffer& y, bool relu) {
  require(x.size >= static_cast<std::size_t>(s.n) * s.in && y.size >= static_cast<std::size_t>(s.n) * s.out,
          "dense_forward");
  require(w.size >= w_off + static_cast<std::size_t>(s.in) * s.out && w.size >= b_off + s.out, "dense_forward");
  const float one = 1.0f, zero = 0.0f;
  BATCHAI_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, s.out, s.n, s.in, &one, w.data + w_off, s.out,
                                   x.data, s.in, &zero, y.data, s.out));
  kernels::bias_act(y.data, static_cast<std::size_t>(s.n), s.out, w.data + b_off, relu, stream_);
}

void CudaBackend::dense_backward(const train::DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                 const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                                 bool relu) {
  const std::size_t count = static_cast<std::size_t>(s.n) * s.out;
  require(dy.size >= count && y.size >= count, "dense_backward");
  require(dw.size >= w_off + static_cast<std::size_t>(s.in) * s.out && dw.size >= b_off + s.out, "dense_backward");
  require(dx == nullptr || dx->size >= static_cast<std::size_t>(s.n) * s.in, "dense_backward");
  kernels::column_sums_add(dy.data, relu ? y.data : nullptr, static_cast<std::size_t>(s.n), s.out, dw.data + b_off,
                           column_scratch_.floats(kernels::column_sum_scratch(s.n, s.out)), stream_);
  const float one = 1.0f, zero = 0.0f;
  // dW (in, out) += X^T dY: column-major dW^T (out, in) += dY^T (out, n) * X (n, in).
  BATCHAI_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_T, s.out, s.in, s.n, &one, dy.data, s.out, x.data,
                                   s.in, &one, dw.data + w_off, s.out));
  if (dx != nullptr) {
    // dX (n, in) = dY W^T: column-major dX^T (in, n) = W (in, out) * dY^T (out, n).
    BATCHAI_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, s.in, s.n, s.out, &one, w.data + w_off,
                                     s.out, dy.data, s.out, &zero, dx->data, s.in));
  }
}

void CudaBackend::maxpool2_forward(int n, int h, int w, int c, const Buffer& x, train::PoolLayouts layouts,
                                   Buffer& y) {
  require_nhwc(layouts.x == train::Layout::kNhwc && layouts.y == train::Layout::kNhwc, "maxpool2_forward");
  require(x.size >= static_cast<std::size_t>(n) * h * w * c &&
              y.size >= static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c,
          "maxpool2_forward");
  kernels::maxpool2_forward(n, h, w, c, x.data, y.data, stream_);
}

void CudaBackend::maxpool2_backward(int n, int h, int w, int c, const Buffer& x, train::PoolLayouts layouts,
                                    const Buffer& y, const Buffer& dy, const train::PoolBackwardFusion& fused,
                                    Buffer& dx) {
  require_nhwc(layouts.x == train::Layout::kNhwc && layouts.y == train::Layout::kNhwc, "maxpool2_backward");
  const std::size_t pooled = static_cast<std::size_t>(n) * (h / 2) * (w / 2) * c;
  require(dx.size >= static_cast<std::size_t>(n) * h * w * c && dy.size >= pooled &&
              (fused.dy_mask == nullptr || fused.dy_mask->size >= pooled),
          "maxpool2_backward");
  kernels::maxpool2_backward(n, h, w, c, x.data, y.data, dy.data, fused.dy_mask ? fused.dy_mask->data : nullptr,
                             fused.relu_of_x, dx.data, stream_);
}

void CudaBackend::dropout_forward(const Buffer& x, Buffer& y, Buffer& mask, float rate, std::uint64_t layer_stream,
                                  std::uint64_t first_image_key, std::size_t per_image) {
  require(y.size >= x.size && mask.size >= x.size, "dropout_forward");
  // The kernel draws with counter_rng.hpp's functions, as the CPU backend: masks agree bit for bit.
  const float keep = 1.0f / (1.0f - rate);
  kernels::dropout_forward(x.data, y.data, mask.data, x.size, per_image, layer_stream, first_image_key,
                           train::dropout_threshold(rate), keep, stream_);
}

void CudaBackend::dropout_backward(const Buffer& dy, const Buffer& mask, Buffer& dx) {
  require(mask.size >= dy.size && dx.size >= dy.size, "dropout_backward");
  kernels::multiply(dy.data, mask.data, dx.data, dy.size, stream_);
}

void CudaBackend::softmax_cross_entropy(int n, int classes, const Buffer& logits, const Buffer& labels,
                                        Buffer* dlogits, double* loss_sum, int* correct) {
  const std::size_t count = static_cast<std::size_t>(n) * classes;
  require(n > 0 && classes > 0 && logits.size >= count && labels.size >= static_cast<std::size_t>(n),
          "softmax_cross_entropy");
  require(dlogits == nullptr || dlogits->size >= count, "softmax_cross_entropy");
  kernels::softmax_xent(n, classes, logits.data, labels.data, dlogits != nullptr ? dlogits->data : nullptr,
                        xent_device_, stream_);
  BATCHAI_CUDA_CHECK(
      cudaMemcpyAsync(xent_host_, xent_device_, sizeof(kernels::XentResult), cudaMemcpyDeviceToHost, stream_));
  BATCHAI_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (loss_sum != nullptr) *loss_sum = xent_host_->loss_sum;
  if (correct != nullptr) *correct = xent_host_->correct;
}

void CudaBackend::rmsprop_update(Buffer& params, const Buffer& grads, Buffer& ms, float lr, float rho, float eps) {
  require(grads.size >= params.size && ms.size >= params.size, "rmsprop_update");
  kernels::rmsprop(params.data, grads.data, ms.data, params.size, lr, rho, eps, stream_);
}

void CudaBackend::scale(Buffer& x, float factor) { kernels::scale(x.data, x.size, factor, stream_); }

std::unique_ptr<train::Backend> make_cuda_backend(const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

// Registration with the trainer: the factories behind train::make_backend(kCuda / kAuto) and
// the device communicator.
namespace {

bool env_is_false(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  const std::string s(v);
  return s == "0" || s == "false" || s == "off" || s == "no";
}

ConvLayout conv_layout_from_env() {
  const char* v = std::getenv("BATCHAI_CUDNN_LAYOUT");
  const std::string s = v == nullptr ? "" : v;
  if (s == "nhwc") return ConvLayout::kNhwc;
  if (s == "nchw") return ConvLayout::kNchw;
  if (s.empty() || s == "auto") return ConvLayout::kAuto;
  throw InvalidArgument("BATCHAI_CUDNN_LAYOUT must be nhwc, nchw or auto, not '" + s + "'");
}

std::unique_ptr<train::Backend> factory(int /*threads: device kernels ignore it*/) {
  if (device_count() == 0) return nullptr;
  CudaBackendOptions options;
  options.allow_tf32 = !env_is_false("BATCHAI_CUDA_TF32");
  options.find_algorithms = !env_is_false("BATCHAI_CUDNN_FIND");
  options.deterministic = !env_is_false("BATCHAI_CUDNN_DETERMINISTIC");
  options.conv_layout = conv_layout_from_env();
  return make_cuda_backend(options);
}

}  // namespace

train::BackendFactory cuda_backend_factory() { return &factory; }

train::DeviceCommunicatorFactory cuda_communicator_factory() {
  return [](train::AllreduceAlgorithm host_algorithm) {
    NcclOptions options;
    options.host_algorithm = host_algorithm;
    return make_nccl_communicator(options);
  };
}

void register_cuda_backend() {
  train::register_cuda_backend_factory(cuda_backend_factory());
  train::register_device_communicator_factory(cuda_communicator_factory());
}

}  // namespace batchai::train_cuda
