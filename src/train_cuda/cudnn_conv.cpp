// cuDNN convolution plans: descriptors and algorithm choice per shape (see cudnn_conv.hpp).
#include "cudnn_conv.hpp"

#include <algorithm>
#include <memory>
#include <vector>
#include <string>

#include "batchai/common/errors.hpp"
#include "cuda_check.hpp"

namespace batchai::train_cuda {
namespace {

// Algorithms needing more scratch than this are passed over (the tutorial net needs far less).
constexpr std::size_t kWorkspaceLimit = std::size_t{256} << 20;
constexpr int kMaxAlgorithms = 16;

// The fastest usable result; with `deterministic`, the fastest deterministic one if any (so
// reruns give the same bits). Perf arrays from cudnnFind*/Get*_v7 come sorted fastest first.
template <typename Perf>
const Perf* pick(const Perf* results, int count, bool deterministic, const char* direction,
                 const train::ConvShape& s) {
  const Perf* any = nullptr;
  for (int i = 0; i < count; ++i) {
    const Perf& p = results[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kWorkspaceLimit) continue;
    if (!deterministic || p.determinism == CUDNN_DETERMINISTIC) return &p;
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

// Device memory cudnnFind*Ex times the algorithms on: the shape's tensors (contents irrelevant,
// zeroed so timings do not depend on garbage) and a workspace of at most kWorkspaceLimit, less
// where the device has little free. Freed once the plan is chosen.
class SearchArea {
 public:
  explicit SearchArea(const train::ConvShape& s) {
    owned_.reserve(4);
    std::size_t free_bytes = 0, total = 0;
    BATCHAI_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    workspace_bytes = std::min(kWorkspaceLimit, free_bytes / 4);
    x = alloc(static_cast<std::size_t>(s.n) * s.h * s.w * s.c * sizeof(float));
    y = alloc(static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out * sizeof(float));
    w = alloc(static_cast<std::size_t>(s.k) * s.k * s.c * s.out * sizeof(float));
    workspace = alloc(workspace_bytes);
  }
  SearchArea(const SearchArea&) = delete;
  SearchArea& operator=(const SearchArea&) = delete;

  void *x = nullptr, *y = nullptr, *w = nullptr, *workspace = nullptr;
  std::size_t workspace_bytes = 0;

 private:
  void* alloc(std::size_t bytes) {
    void* p = nullptr;
    if (bytes == 0) return p;
    BATCHAI_CUDA_CHECK(cudaMalloc(&p, bytes));
    owned_.emplace_back(p);  // reserved: cannot throw
    BATCHAI_CUDA_CHECK(cudaMemset(p, 0, bytes));
    return p;
  }
  // Freed also when the constructor throws half way (statuses ignored: no throwing there).
  struct Free {
    void operator()(void* p) const { cudaFree(p); }
  };
  std::vector<std::unique_ptr<void, Free>> owned_;
};

CudnnConv::CudnnConv(cudnnHandle_t handle, const train::ConvShape& s, const ConvChoice& choice)
    : shape_(s), choice_(choice) {
  if (s.n <= 0 || s.h <= 0 || s.w <= 0 || s.c <= 0 || s.out <= 0 || s.k <= 0 || s.oh() <= 0 || s.ow() <= 0) {
    throw InvalidArgument("invalid convolution shape for the CUDA backend");
  }
  BATCHAI_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc_));
  BATCHAI_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc_));
  BATCHAI_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
  if (choice.layout != CUDNN_TENSOR_NHWC && choice.layout != CUDNN_TENSOR_NCHW) {
    throw InvalidArgument("the CUDA backend convolves in NHWC or NCHW only");
  }
  const cudnnTensorFormat_t f = choice.layout;
  BATCHAI_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc_, f, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w));
  BATCHAI_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y_desc_, f, CUDNN_DATA_FLOAT, s.n, s.out, s.oh(), s.ow()));
  // The filter format follows the tensors': (out, k, k, c) for NHWC, (out, c, k, k) for NCHW.
  BATCHAI_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_FLOAT, f, s.out, s.c, s.k, s.k));
  fwd_desc_ = make_conv_desc(s);
  bwd_data_desc_ = make_conv_desc(s);
  bwd_filter_desc_ = make_conv_desc(s);

  int n = 0, c = 0, h = 0, w = 0;
  BATCHAI_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(fwd_desc_, x_desc_, w_desc_, &n, &c, &h, &w));
  if (n != s.n || c != s.out || h != s.oh() || w != s.ow()) {
    throw Error("cuDNN computes a different convolution output shape than the trainer (internal error)");
  }
  const cudnnMathType_t math = choice.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  std::unique_ptr<SearchArea> area;
  if (choice.find) area = std::make_unique<SearchArea>(s);
  choose_forward(handle, math, area.get());
  choose_backward_data(handle, math, area.get());
  choose_backward_filter(handle, math, area.get());
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

void CudnnConv::choose_forward(cudnnHandle_t handle, cudnnMathType_t math, const SearchArea* area) {
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(fwd_desc_, math));
  cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgorithms];
  int count = 0;
  if (area != nullptr) {
    BATCHAI_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(handle, x_desc_, area->x, w_desc_, area->w, fwd_desc_,
                                                               y_desc_, area->y, kMaxAlgorithms, &count, perf,
                                                               area->workspace, area->workspace_bytes));
  } else {
    BATCHAI_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc_, w_desc_, fwd_desc_, y_desc_,
                                                               kMaxAlgorithms, &count, perf));
  }
  const auto* best = pick(perf, count, choice_.deterministic, "forward", shape_);
  fwd_algo_ = best->algo;
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(fwd_desc_, best->mathType));
  std::size_t bytes = 0;
  BATCHAI_CUDNN_CHECK(
      cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc_, w_desc_, fwd_desc_, y_desc_, fwd_algo_, &bytes));
  workspace_bytes_ = std::max(workspace_bytes_, bytes);
}

void CudnnConv::choose_backward_data(cudnnHandle_t handle, cudnnMathType_t math, const SearchArea* area) {
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_data_desc_, math));
  cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgorithms];
  int count = 0;
  if (area != nullptr) {
    BATCHAI_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
        handle, w_desc_, area->w, y_desc_, area->y, bwd_data_desc_, x_desc_, area->x, kMaxAlgorithms, &count, perf,
        area->workspace, area->workspace_bytes));
  } else {
    BATCHAI_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, w_desc_, y_desc_, bwd_data_desc_,
                                                                    x_desc_, kMaxAlgorithms, &count, perf));
  }
  const auto* best = pick(perf, count, choice_.deterministic, "backward-data", shape_);
  bwd_data_algo_ = best->algo;
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_data_desc_, best->mathType));
  std::size_t bytes = 0;
  BATCHAI_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle, w_desc_, y_desc_, bwd_data_desc_, x_desc_,
                                                                   bwd_data_algo_, &bytes));
  workspace_bytes_ = std::max(workspace_bytes_, bytes);
}

void CudnnConv::choose_backward_filter(cudnnHandle_t handle, cudnnMathType_t math, const SearchArea* area) {
  BATCHAI_CUDNN_CHECK(cudnnSetConvolutionMathType(bwd_filter_desc_, math));
  cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgorithms];
  int count = 0;
  if (area != nullptr) {
    BATCHAI_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
        handle, x_desc_, area->x, y_desc_, area->y, bwd_filter_desc_, w_desc_, area->w, kMaxAlgorithms, &count, perf,
        area->workspace, area->workspace_bytes));
  } else {
    BATCHAI_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, x_desc_, y_desc_, bwd_filter_desc_,
                                                                      w_desc_, kMaxAlgorithms, &count, perf));
  }
  const auto* best = pick(perf, count, choice_.deterministic, "backward-filter", shape_);
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
