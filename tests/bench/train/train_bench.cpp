// Training-step benchmark of the CPU backend at the tutorial's batch size: images/s for the
// whole step (batch preparation with augmentation, forward, backward, RMSprop), achieved
// GFLOP/s against this machine's sgemm rate measured here, per-layer times and peak RSS.
// Usage: train_bench [--threads 2] [--batch 32] [--steps 60] [--warmup 5]
#include <cblas.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "augment.hpp"
#include "optimizer.hpp"

extern "C" void openblas_set_num_threads(int num_threads);

namespace bt = batchai::train;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Best-of-N sgemm rate in GFLOP/s (OpenBLAS, `threads` threads).
double sgemm_rate(int m, int n, int k, int threads) {
  openblas_set_num_threads(threads);
  std::vector<float> a(static_cast<std::size_t>(m) * k, 0.5f), b(static_cast<std::size_t>(k) * n, 0.25f),
      c(static_cast<std::size_t>(m) * n);
  double best = 1e30;
  for (int r = 0; r < 15; ++r) {
    const auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    best = std::min(best, seconds_since(t0));
  }
  return 2.0 * m * n * k / best / 1e9;
}

// Multiply-adds x2 of one training step per image: forward, weight gradient, input gradient
// (none for the first layer).
double train_flops_per_image(const std::vector<bt::LayerSpec>& specs, double* forward) {
  int h = 32, w = 32, c = 3;
  double fwd = 0, total = 0;
  bool first = true;
  for (const auto& s : specs) {
    double macs = 0;
    if (s.kind == bt::LayerKind::kConv) {
      const int oh = s.same ? h : h - 2, ow = s.same ? w : w - 2;
      macs = 9.0 * c * s.units * oh * ow;
      h = oh, w = ow, c = s.units;
    } else if (s.kind == bt::LayerKind::kDense) {
      macs = 1.0 * h * w * c * s.units;
      h = w = 1, c = s.units;
    } else if (s.kind == bt::LayerKind::kMaxPool) {
      h /= 2, w /= 2;
    }
    fwd += 2 * macs;
    total += 2 * macs * (first ? 2 : 3);
    if (macs > 0) first = false;
  }
  *forward = fwd;
  return total;
}

long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, batch = 32, steps = 60, warmup = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--threads") threads = v;
    else if (a == "--batch") batch = v;
    else if (a == "--steps") steps = v;
    else if (a == "--warmup") warmup = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const double peak_big = sgemm_rate(1024, 1024, 1024, threads);
  const double peak_conv = sgemm_rate(batch * 169, 64, 576, threads);  // conv2d_4's forward GEMM shape

  // Random stand-in data in the CIFAR-10 layout (speed does not depend on the pixels).
  bt::Dataset data;
  data.count = 1024;
  data.images.resize(data.count * bt::kCifarImageBytes);
  data.labels.resize(data.count);
  std::mt19937 rng(1);
  for (auto& b : data.images) b = static_cast<std::uint8_t>(rng());
  for (auto& l : data.labels) l = static_cast<std::uint8_t>(rng() % 10);

  auto backend = bt::make_backend(bt::BackendKind::kCpu, threads);
  bt::Model model(*backend, bt::tutorial_network(), batch);
  model.init_glorot(1);
  bt::RmsProp opt(model, bt::RmsPropConfig{});
  bt::BatchPrefetcher prefetch(data, bt::AugmentConfig{}, 7, batch);
  std::vector<int> order(data.count);
  std::iota(order.begin(), order.end(), 0);

  auto indices = [&](int step) { return order.data() + (step * batch) % (data.count - batch); };
  prefetch.request(indices(0), batch, 0);
  double train_s = 0;
  for (int step = 0; step < warmup + steps; ++step) {
    if (step == warmup) model.enable_timing(true);
    const auto t0 = Clock::now();
    const float *x, *y;
    int n;
    prefetch.wait(&x, &y, &n);
    std::vector<float> xs(x, x + static_cast<std::size_t>(n) * bt::kCifarImageBytes), ys(y, y + n);
    prefetch.request(indices(step + 1), batch, step + 1);  // overlaps with this step's compute
    model.train_batch(xs.data(), ys.data(), n, true, 3, step);
    opt.step();
    if (step >= warmup) train_s += seconds_since(t0);
  }
  double fwd_flops = 0;
  const double flops = train_flops_per_image(bt::tutorial_network(), &fwd_flops);
  const double ips = steps * batch / train_s;
  std::printf("train_bench: batch %d, %d threads, %d steps (after %d warm-up)\n", batch, threads, steps, warmup);
  std::printf("sgemm 1024^3: %.1f GFLOP/s; sgemm %dx64x576 (conv2d_4 shape): %.1f GFLOP/s\n", peak_big,
              batch * 169, peak_conv);
  std::printf("model: %.1f MFLOP/image forward, %.1f MFLOP/image per training step\n", fwd_flops / 1e6, flops / 1e6);
  std::printf("step: %.2f ms; images/s: %.1f; achieved %.1f GFLOP/s = %.0f%% of sgemm 1024^3\n",
              1e3 * train_s / steps, ips, ips * flops / 1e9, 100.0 * ips * flops / 1e9 / peak_big);
  std::printf("%-16s %10s %10s\n", "layer", "fwd ms", "bwd ms");
  double layer_total = 0;
  for (const auto& t : model.layer_times()) {
    std::printf("%-16s %10.3f %10.3f\n", t.name.c_str(), 1e3 * t.forward_s / steps, 1e3 * t.backward_s / steps);
    layer_total += t.forward_s + t.backward_s;
  }
  std::printf("%-16s %10.3f ms/step (the rest: loss, optimizer, batch copy)\n", "layers total",
              1e3 * layer_total / steps);
  std::printf("peak RSS: %ld MB\n", peak_rss_mb());
  std::printf("RESULT images_per_s=%.1f\n", ips);
  return 0;
}
