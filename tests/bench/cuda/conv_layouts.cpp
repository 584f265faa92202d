// Which cuDNN convolution algorithms the tutorial's four convolutions get, per layout (NHWC, as
// the trainer stores activations, or NCHW, as PyTorch does), math (full fp32 FMA or TF32) and
// determinism: cudnnFind*'s time of the fastest algorithm, and of the fastest deterministic one,
// for forward, backward-data (not for the first layer: the trainer never needs it) and
// backward-filter, then each combination's sum per training step.
// usage: conv_layouts [--batches 32,256]
// Prints "no CUDA device" and exits 0 where there is none.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "batchai/train/backend.hpp"
#include "network.hpp"

namespace {

using batchai::train::ConvShape;

void check(cudnnStatus_t rc, const char* what) {
  if (rc != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "conv_layouts: %s: %s\n", what, cudnnGetErrorString(rc));
    std::exit(1);
  }
}
void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "conv_layouts: %s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}

// The tutorial's convolutions at batch n, from the network the trainer builds.
std::vector<ConvShape> tutorial_convs(int n) {
  std::vector<ConvShape> shapes;
  int h = 32, w = 32, c = 3;
  for (const auto& layer : batchai::train::tutorial_network()) {
    if (layer.kind == batchai::train::LayerKind::kConv) {
      ConvShape s;
      s.n = n, s.h = h, s.w = w, s.c = c, s.out = layer.units, s.k = 3, s.pad = layer.same ? 1 : 0;
      shapes.push_back(s);
      h = s.oh(), w = s.ow(), c = s.out;
    } else if (layer.kind == batchai::train::LayerKind::kMaxPool) {
      h /= 2, w /= 2;
    }
  }
  return shapes;
}

struct Best {
  float any_ms = -1, det_ms = -1;
  int any_algo = -1, det_algo = -1;
};

template <typename Perf>
Best best_of(const Perf* perf, int count) {
  Best b;
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].time < 0) continue;
    if (b.any_ms < 0 || perf[i].time < b.any_ms) b.any_ms = perf[i].time, b.any_algo = static_cast<int>(perf[i].algo);
    if (perf[i].determinism == CUDNN_DETERMINISTIC && (b.det_ms < 0 || perf[i].time < b.det_ms)) {
      b.det_ms = perf[i].time, b.det_algo = static_cast<int>(perf[i].algo);
    }
  }
  return b;
}

struct Buffers {
  float *x = nullptr, *y = nullptr, *w = nullptr;
  void* ws = nullptr;
  std::size_t ws_bytes = std::size_t{256} << 20;
};

// Forward, backward-data, backward-filter of one shape in one layout and math.
std::vector<Best> measure(cudnnHandle_t h, const ConvShape& s, cudnnTensorFormat_t layout, cudnnMathType_t math,
                          bool need_data, Buffers& b) {
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  check(cudnnCreateTensorDescriptor(&xd), "tensor");
  check(cudnnCreateTensorDescriptor(&yd), "tensor");
  check(cudnnCreateFilterDescriptor(&wd), "filter");
  check(cudnnCreateConvolutionDescriptor(&cd), "conv");
  check(cudnnSetTensor4dDescriptor(xd, layout, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w), "x");
  check(cudnnSetTensor4dDescriptor(yd, layout, CUDNN_DATA_FLOAT, s.n, s.out, s.oh(), s.ow()), "y");
  check(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, layout, s.out, s.c, s.k, s.k), "w");
  check(cudnnSetConvolution2dDescriptor(cd, s.pad, s.pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "conv");
  check(cudnnSetConvolutionMathType(cd, math), "math");
  std::vector<Best> out;
  int count = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd[16];
  check(cudnnFindConvolutionForwardAlgorithmEx(h, xd, b.x, wd, b.w, cd, yd, b.y, 16, &count, fwd, b.ws, b.ws_bytes),
        "find forward");
  out.push_back(best_of(fwd, count));
  cudnnConvolutionBwdDataAlgoPerf_t data[16];
  if (need_data) {
    check(cudnnFindConvolutionBackwardDataAlgorithmEx(h, wd, b.w, yd, b.y, cd, xd, b.x, 16, &count, data, b.ws,
                                                      b.ws_bytes),
          "find backward data");
    out.push_back(best_of(data, count));
  } else {
    out.push_back(Best{0, 0, -1, -1});
  }
  cudnnConvolutionBwdFilterAlgoPerf_t filter[16];
  check(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, xd, b.x, yd, b.y, cd, wd, b.w, 16, &count, filter, b.ws,
                                                      b.ws_bytes),
        "find backward filter");
  out.push_back(best_of(filter, count));
  cudnnDestroyConvolutionDescriptor(cd);
  cudnnDestroyFilterDescriptor(wd);
  cudnnDestroyTensorDescriptor(yd);
  cudnnDestroyTensorDescriptor(xd);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> batches{32, 256};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) != "--batches") {
      std::fprintf(stderr, "usage: conv_layouts [--batches 32,256]\n");
      return 2;
    }
    batches.clear();
    std::stringstream ss(argv[i + 1]);
    for (std::string item; std::getline(ss, item, ',');) batches.push_back(std::stoi(item));
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device; no figures\n");
    return 0;
  }
  cudnnHandle_t h;
  check(cudnnCreate(&h), "cudnnCreate");
  std::printf("cuDNN %zu; times in ms from cudnnFind*Ex (fastest / fastest deterministic, algorithm number)\n",
              cudnnGetVersion());
  const char* directions[3] = {"fwd", "bwd-data", "bwd-filter"};
  for (const int n : batches) {
    const auto shapes = tutorial_convs(n);
    std::size_t most = 0;
    for (const auto& s : shapes) {
      most = std::max({most, static_cast<std::size_t>(s.n) * s.h * s.w * s.c,
                       static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out});
    }
    Buffers b;
    check(cudaMalloc(&b.x, most * sizeof(float)), "malloc");
    check(cudaMalloc(&b.y, most * sizeof(float)), "malloc");
    check(cudaMalloc(&b.w, 64 * 64 * 9 * sizeof(float)), "malloc");
    check(cudaMalloc(&b.ws, b.ws_bytes), "malloc");
    check(cudaMemset(b.x, 0, most * sizeof(float)), "memset");
    check(cudaMemset(b.y, 0, most * sizeof(float)), "memset");
    check(cudaMemset(b.w, 0, 64 * 64 * 9 * sizeof(float)), "memset");
    for (const auto layout : {CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW}) {
      for (const auto math : {CUDNN_FMA_MATH, CUDNN_DEFAULT_MATH}) {
        const char* lname = layout == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW";
        const char* mname = math == CUDNN_FMA_MATH ? "fp32" : "tf32";
        double any_sum = 0, det_sum = 0;
        for (std::size_t i = 0; i < shapes.size(); ++i) {
          const auto& s = shapes[i];
          const auto best = measure(h, s, layout, math, i > 0, b);
          for (int d = 0; d < 3; ++d) {
            if (d == 1 && i == 0) continue;
            std::printf("batch %3d %s %s conv%zu %2dx%2dx%2d->%2d %-10s %8.4f (%d) / %8.4f (%d)\n", n, lname, mname,
                        i + 1, s.h, s.w, s.c, s.out, directions[d], best[d].any_ms, best[d].any_algo, best[d].det_ms,
                        best[d].det_algo);
            any_sum += best[d].any_ms;
            det_sum += best[d].det_ms >= 0 ? best[d].det_ms : 1e9;  // none deterministic: shows as huge
          }
        }
        std::printf("batch %3d %s %s SUM per step: fastest %.4f ms, deterministic %.4f ms\n", n, lname, mname,
                    any_sum, det_sum);
      }
    }
    cudaFree(b.x), cudaFree(b.y), cudaFree(b.w), cudaFree(b.ws);
  }
  cudnnDestroy(h);
  return 0;
}
