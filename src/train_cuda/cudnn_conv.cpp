// cuDNN convolution plans: descriptors and algorithm choice per shape (see cudnn_conv.hpp).
#include "cudnn_conv.hpp"

#include <algorithm>
#include <string>

#include "batchai/common/errors.hpp"
#include "cuda_check.hpp"

namespace batchai::train_cuda {
namespace {

// Algorithms needing more scratch than this are passed over (the tutorial net needs far less).
constexpr std::size_t kWorkspaceLimit = std::size_t{256} << 20;
constexpr int kMaxAlgorithms = 16;

// The fastest usable result, preferring deterministic algorithms so reruns give the same
// bits; perf arrays from cudnnFind*/Get*_v7 come sorted fastest first.
template <typename Perf>
const Perf* pick(const Perf* results, int count, const char* direction, const train::ConvShape& s) {
  const Perf* any = nullptr;
  for (int i = 0; i < count; ++i) {
    const Perf& p = results[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kWorkspaceLimit) continue;
    if (p.determinism == CUDNN_DETERMINISTIC) return &p;
    if (any == nullptr) any = &p;
  }
  if (any != nullptr) return any;
  throw Error(std::string("cuDNN offers no ") + direction + " algorithm for a 3x3 convolution of " +
                  std::to_string(s.n) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
                  std::to_string(s.c) + " -> " + std::to_string(s.out) + " channels within " +
                  std::to_string(kWorkspaceLimit >> 20) + " MiB of workspace",
              "CudaError");
}

cudnnConvolutionDescriptor_t make_conv_desc(const train::ConvShape& s) {
  cudnnConvolutionDescriptor_t desc = nullptr;
  BATCHAI_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc));
  BATCHAI_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(desc, s.pad, s.pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                      CUDNN_DATA_FLOAT));
  return desc;
}

}  // namespace

CudnnConv::CudnnConv(cudnnHandle_t handle, const train::ConvShape& s, bool allow_tf32, bool find) : shape_(s) {
  if (s.n <= 0 || s.h <= 0 || s.w <= 0 || s.c <= 0 || s.out <= 0 || s.k <= 0 || s.oh() <= 0 || s.ow() <= 0) {
    throw InvalidArgument("invalid convolution shape for the CUDA backend");
  }
  BATCHAI_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc_));
  BATCHAI_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc_));
  BATCHAI_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
  BATCHAI_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc_, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w));
  BATCHAI_CUDNN_CHECK(
      cudnnSetTensor4dDescriptor(y_desc_, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s.n, s.out, s.oh(), s.ow()));
  // NHWC filters are (out, k, k, c): the transpose of Keras' (k, k, c, out).
  BATCHAI_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, s.out, s.c, s.k, s.k));
  fwd_desc_ = make_conv_desc(s);
  bwd_data_desc_ = make_conv_desc(s);
  bwd_filter_desc_ = make_conv_desc(s);

  int n = 0, c = 0, h = 0, w = 0;
  BATCHAI_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(fwd_desc_, x_desc_, w_desc_, &n, &c, &h, &w));
  if (n != s.n || c != s.out || h != s.oh() || w != s.ow()) {
    throw Error("cuDNN computes a different convolution output shape than the trainer (internal error)");
  }
  const cudnnMathType_t math = allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  choose_forward(handle, math, find);
  choose_backward_data(handle, math, find);
  choose_backward_filter(handle, math, find);
}

CudnnConv::~CudnnConv() {
  // Destructors must not throw: statuses are ignored here.
  for (auto* d : {fwd_desc_, bwd_data_desc_, bwd_filter_desc_}) {
    if (d != nullptr) cudnnDestroyConvolutionDescriptor(d);
  }
  if (w_desc_ != nullptr) cudnnDestroyFilterDescriptor(w_desc_);
  if (y_desc_ != nullptr) cudnnDestroyTensorDescriptor(y_desc_);
  if (x_desc_ != nullptr) cudnnDestroyTensorDescriptor(x_desc_);
}

void CudnnConv::choose_forward(cudnnHandle_t handle, cudnnMathType_t math, bool find) {
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(fwd_desc_, math));
  cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgorithms];
  int count = 0;
  if (find) {
    BATCHAI_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(handle, x_desc_, w_desc_, fwd_desc_, y_desc_,
                                                             kMaxAlgorithms, &count, perf));
  } else {
    BATCHAI_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc_, w_desc_, fwd_desc_, y_desc_,
                                                               kMaxAlgorithms, &count, perf));
  }
  const auto* best = pick(perf, count, "forward", shape_);
  fwd_algo_ = best->algo;
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(fwd_desc_, best->mathType));
  std::size_t bytes = 0;
  BATCHAI_CUDNN_CHECK(
      cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc_, w_desc_, fwd_desc_, y_desc_, fwd_algo_, &bytes));
  workspace_bytes_ = std::max(workspace_bytes_, bytes);
}

void CudnnConv::choose_backward_data(cudnnHandle_t handle, cudnnMathType_t math, bool find) {
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_data_desc_, math));
  cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgorithms];
  int count = 0;
  if (find) {
    BATCHAI_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(handle, w_desc_, y_desc_, bwd_data_desc_, x_desc_,
                                                                  kMaxAlgorithms, &count, perf));
  } else {
    BATCHAI_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, w_desc_, y_desc_, bwd_data_desc_,
                                                                    x_desc_, kMaxAlgorithms, &count, perf));
  }
  const auto* best = pick(perf, count, "backward-data", shape_);
  bwd_data_algo_ = best->algo;
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_data_desc_, best->mathType));
  std::size_t bytes = 0;
  BATCHAI_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle, w_desc_, y_desc_, bwd_data_desc_, x_desc_,
                                                                   bwd_data_algo_, &bytes));
  workspace_bytes_ = std::max(workspace_bytes_, bytes);
}

void CudnnConv::choose_backward_filter(cudnnHandle_t handle, cudnnMathType_t math, bool find) {
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_filter_desc_, math));
  cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgorithms];
  int count = 0;
  if (find) {
    BATCHAI_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(handle, x_desc_, y_desc_, bwd_filter_desc_,
                                                                    w_desc_, kMaxAlgorithms, &count, perf));
  } else {
    BATCHAI_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, x_desc_, y_desc_, bwd_filter_desc_,
                                                                      w_desc_, kMaxAlgorithms, &count, perf));
  }
  const auto* best = pick(perf, count, "backward-filter", shape_);
  bwd_filter_algo_ = best->algo;
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_filter_desc_, best->mathType));
  std::size_t bytes = 0;
  BATCHAI_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, x_desc_, y_desc_, bwd_filter_desc_,
                                                                     w_desc_, bwd_filter_algo_, &bytes));
  workspace_bytes_ = std::max(workspace_bytes_, bytes);
}

void CudnnConv::forward(cudnnHandle_t handle, const float* x, const float* w, float* y, void* workspace) const {
  const float alpha = 1.0f, beta = 0.0f;
  BATCHAI_CUDNN_CHECK(cudnnConvolutionForward(handle, &alpha, x_desc_, x, w_desc_, w, fwd_desc_, fwd_algo_, workspace,
                                              workspace_bytes_, &beta, y_desc_, y));
}

void CudnnConv::backward_data(cudnnHandle_t handle, const float* w, const float* dy, float* dx,
                              void* workspace) const {
  const float alpha = 1.0f, beta = 0.0f;
  BATCHAI_CUDNN_CHECK(cudnnConvolutionBackwardData(handle, &alpha, w_desc_, w, y_desc_, dy, bwd_data_desc_,
                                                   bwd_data_algo_, workspace, workspace_bytes_, &beta, x_desc_, dx));
}

void CudnnConv::backward_filter(cudnnHandle_t handle, const float* x, const float* dy, float* dw,
                                void* workspace) const {
  const float alpha = 1.0f, beta = 0.0f;
  BATCHAI_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, &alpha, x_desc_, x, y_desc_, dy, bwd_filter_desc_,
                                                     bwd_filter_algo_, workspace, workspace_bytes_, &beta, w_desc_,
                                                     dw));
}

}  // namespace batchai::train_cuda
