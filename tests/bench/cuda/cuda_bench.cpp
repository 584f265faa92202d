// Training throughput of the tutorial CNN on the CUDA backend: images/s of whole steps (host
// upload of the batch, forward, loss, backward, RMSprop) at batch 32 and 256 on one GPU.
// usage: cuda_bench [--batches 32,256] [--steps 200] [--warmup 20] [--tf32 0|1] [--deterministic 0|1]
//                   [--layout auto|nhwc|nchw] [--profile-steps N]
// --profile-steps N runs N more steps per batch size between cudaProfilerStart and Stop, for
// `ncu --profile-from-start off` (one kernel list per step, cuDNN's algorithm search left out).
// Prints "no CUDA device" and exits 0 where there is none (no figures are invented).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_profiler_api.h>

#include "model.hpp"
#include "batchai/train_cuda/cuda_backend.hpp"
#include "batchai/train_cuda/cuda_device.hpp"

namespace {

using namespace batchai;

struct Options {
  std::vector<int> batches{32, 256};
  int steps = 200, warmup = 20, profile_steps = 0;
  bool tf32 = true, deterministic = true;
  std::string layout = "auto";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--batches") {
      o.batches.clear();
      std::stringstream ss(value);
      for (std::string item; std::getline(ss, item, ',');) o.batches.push_back(std::stoi(item));
    } else if (key == "--steps") {
      o.steps = std::stoi(value);
    } else if (key == "--warmup") {
      o.warmup = std::stoi(value);
    } else if (key == "--tf32") {
      o.tf32 = value != "0";
    } else if (key == "--deterministic") {
      o.deterministic = value != "0";
    } else if (key == "--layout") {
      o.layout = value;
    } else if (key == "--profile-steps") {
      o.profile_steps = std::stoi(value);
    } else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return o;
}

double run(train::Backend& backend, int batch, const Options& o) {
  train::Model model(backend, train::tutorial_network(), batch);
  model.init_glorot(1);
  train::Buffer ms = backend.allocate(model.param_count());
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(batch) * model.input_size());
  for (auto& v : x) v = pixel(gen);
  std::vector<float> labels(static_cast<std::size_t>(batch));
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(i % 10);
  auto step = [&](std::uint64_t t) {
    model.train_batch(x.data(), labels.data(), batch, true, 11, t);
    backend.rmsprop_update(model.params(), model.grads(), ms, 1e-4f, 0.9f, 1e-7f);
  };
  for (int t = 0; t < o.warmup; ++t) step(static_cast<std::uint64_t>(t));
  float sink = 0.0f;
  backend.download(&sink, model.params(), 1, 0);  // drain the stream before timing
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < o.steps; ++t) step(static_cast<std::uint64_t>(o.warmup + t));
  backend.download(&sink, model.params(), 1, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.profile_steps > 0) {
    cudaProfilerStart();
    for (int t = 0; t < o.profile_steps; ++t) step(static_cast<std::uint64_t>(o.warmup + o.steps + t));
    backend.download(&sink, model.params(), 1, 0);
    cudaProfilerStop();
  }
  backend.release(ms);
  return static_cast<double>(batch) * o.steps / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (train_cuda::device_count() == 0) {
    std::printf("no CUDA device: %s; no figures\n", train_cuda::device_unavailable_reason().c_str());
    return 0;
  }
  try {
    train_cuda::CudaBackendOptions options;
    options.allow_tf32 = o.tf32;
    options.deterministic = o.deterministic;
    options.conv_layout = o.layout == "nhwc"   ? train_cuda::ConvLayout::kNhwc
                          : o.layout == "nchw" ? train_cuda::ConvLayout::kNchw
                                               : train_cuda::ConvLayout::kAuto;
    auto backend = train_cuda::make_cuda_backend(options);
    const int device = train_cuda::select_local_device();
    std::printf("batchai cuda backend on %s, TF32 %s, %s algorithms, layout %s, %d steps after %d warm-up steps\n",
                train_cuda::device_description(device).c_str(), o.tf32 ? "on" : "off",
                o.deterministic ? "deterministic" : "fastest", o.layout.c_str(), o.steps, o.warmup);
    for (const int batch : o.batches) {
      const double rate = run(*backend, batch, o);
      std::printf("batchai  batch %4d: %10.0f images/s  (%.3f ms/step)\n", batch, rate, 1e3 * batch / rate);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
