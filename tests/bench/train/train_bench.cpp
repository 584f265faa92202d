// Training-step benchmark of the CPU backend at the tutorial's batch size: images/s for the
// whole step (batch preparation with augmentation, forward, backward, RMSprop), achieved
// GFLOP/s against this machine's sgemm rate measured here (OpenBLAS and oneDNN, 1024^3, oneDNN
// before and after the steps; the fastest median is the anchor), per-layer times and peak RSS.
// On a shared host whose speed changes from second to second, the share also comes per window:
// after every --window steps, three sgemm calls, and each window's steps against that sgemm.
// --roofline adds the per-layer, per-phase table against the sgemm and each layer's limit
// (roofline.hpp) and the ISAs that ran.
// Usage: train_bench [--threads 2] [--batch 32] [--steps 60] [--warmup 5] [--window 10]
//                    [--roofline [--limit-reps 20]]
//                    [--no-blocked-chain] [--prepare-ahead] [--no-folding] [--no-routes] [--no-winograd]
//                    [--precision float32|mixed_bfloat16]
//        (--variants: --roofline, also printing every format variant the limits tried;
//         --no-blocked-chain: every activation NHWC, as before the blocked chain; --prepare-ahead: the
//         batch prepared on a helper thread as before; --no-folding: dense_1's weight gradient stored
//         and then applied, as a run of several ranks does; --no-routes: the poolings' backward
//         reads x, y and the dropout's mask, the dropout its own forward pass; --no-winograd: the
//         convolutions on oneDNN's direct kernels, as before Winograd; each for a side-by-side run)
#include <cblas.h>
#include <sys/resource.h>

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "augment.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/dnnl_memory.hpp"
#include "optimizer.hpp"
#include "layer_limits.hpp"
#include "roofline.hpp"

extern "C" void openblas_set_num_threads(int num_threads);
extern "C" char* openblas_get_corename(void);
extern "C" char* openblas_get_config(void);

namespace bt = batchai::train;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Rate {
  double median = 0.0, best = 0.0;  // GFLOP/s
};

// sgemm rate over `calls` calls (after one to warm up) of m x n x k: OpenBLAS on `threads`
// threads, or oneDNN's (on the OpenMP team).
Rate sgemm_rate(int m, int n, int k, int threads, bool onednn, int calls = 15) {
  openblas_set_num_threads(threads);
  std::vector<float> a(static_cast<std::size_t>(m) * k, 0.5f), b(static_cast<std::size_t>(k) * n, 0.25f),
      c(static_cast<std::size_t>(m) * n);
  std::vector<double> t;
  for (int r = 0; r <= calls; ++r) {
    const auto t0 = Clock::now();
    if (onednn) {
      dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    }
    if (r > 0) t.push_back(seconds_since(t0));  // the first call warms up
  }
  std::sort(t.begin(), t.end());
  const double flops = 2.0 * m * n * k;
  return Rate{flops / t[t.size() / 2] / 1e9, flops / t.front() / 1e9};
}

std::string loadavg() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  char buf[64] = {};
  if (f != nullptr) {
    if (std::fgets(buf, sizeof buf, f) == nullptr) buf[0] = 0;
    std::fclose(f);
  }
  std::string s(buf);
  return s.substr(0, s.find(' ', s.find(' ', s.find(' ') + 1) + 1));  // the 1, 5 and 15 minute figures
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, batch = 32, steps = 60, warmup = 5, limit_reps = 20, window = 10;
  bool roofline = false, blocked_chain = true, prepare_ahead = false, folding = true, routes = true, winograd = true;
  std::string precision = "float32";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--prepare-ahead") {
      prepare_ahead = true;
      continue;
    }
    if (a == "--no-folding") {
      folding = false;
      continue;
    }
    if (a == "--no-winograd") {
      winograd = false;
      continue;
    }
    if (a == "--no-routes") {
      routes = false;
      continue;
    }
    if (a == "--no-blocked-chain") {
      blocked_chain = false;
      continue;
    }
    if (a == "--roofline" || a == "--variants") {
      roofline = true;
      batchai::bench::show_variants(a == "--variants");
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "option %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--precision") {
      precision = argv[++i];
      continue;
    }
    const int v = std::atoi(argv[++i]);
    if (a == "--threads") threads = v;
    else if (a == "--batch") batch = v;
    else if (a == "--steps") steps = v;
    else if (a == "--warmup") warmup = v;
    else if (a == "--limit-reps") limit_reps = v;
    else if (a == "--window") window = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (threads < 1 || batch < 1 || steps < 1 || warmup < 0 || limit_reps < 1 || window < 1) {
    std::fprintf(stderr, "threads, batch, steps, --window and --limit-reps must be positive\n");
    return 2;
  }
  const std::string load_before = loadavg();
  const bt::Precision arithmetic = bt::parse_precision(precision);
  auto backend = bt::make_backend(bt::BackendKind::kCpu, threads, {}, arithmetic);  // sets the OpenMP team's size
  const Rate blas = sgemm_rate(1024, 1024, 1024, threads, false);
  const Rate dnnl = sgemm_rate(1024, 1024, 1024, threads, true);
  const Rate conv_shape = sgemm_rate(batch * 169, 64, 576, threads, false);  // conv2d_4's forward GEMM shape
  backend->set_threads(threads);  // OpenBLAS back to one thread per caller, as the backend runs it

  // Random stand-in data in the CIFAR-10 layout (speed does not depend on the pixels).
  bt::Dataset data;
  data.count = 1024;
  data.images.resize(data.count * bt::kCifarImageBytes);
  data.labels.resize(data.count);
  std::mt19937 rng(1);
  for (auto& b : data.images) b = static_cast<std::uint8_t>(rng());
  for (auto& l : data.labels) l = static_cast<std::uint8_t>(rng() % 10);

  auto* cpu = dynamic_cast<bt::cpu::CpuBackend*>(backend.get());
  if (cpu != nullptr) {
    cpu->allow_blocked_chains(blocked_chain);
    cpu->allow_winograd(winograd);
    cpu->allow_pool_routes(routes);
  }
  bt::Model model(*backend, bt::tutorial_network(), batch);
  model.init_glorot(1);
  model.fold_dense_gradients(folding);  // as the trainer does on one rank
  bt::RmsProp opt(model, bt::RmsPropConfig{});
  bt::BatchPrefetcher prefetch(data, bt::AugmentConfig{}, 7, batch,
                               prepare_ahead ? bt::PrepareOn::kAhead : bt::PrepareOn::kOnTeam);
  std::vector<int> order(data.count);
  std::iota(order.begin(), order.end(), 0);
  bt::cpu::CpuProfile profile;

  auto indices = [&](int step) { return order.data() + (step * batch) % (data.count - batch); };
  prefetch.request(indices(0), batch, 0);
  double train_s = 0, wait_s = 0, copy_s = 0;
  std::vector<double> step_s;
  // Per window: its steps' seconds and the sgemm right after them (the window's anchor).
  std::vector<double> window_shares, window_s;
  double fwd_flops = 0;
  const double flops = train_flops_per_image(bt::tutorial_network(), &fwd_flops);
  for (int step = 0; step < warmup + steps; ++step) {
    if (step == warmup) {
      model.enable_timing(true);
      if (roofline && cpu != nullptr) cpu->set_profile(&profile);
    }
    const auto t0 = Clock::now();
    const float *x, *y;
    int n;
    prefetch.wait(&x, &y, &n);
    const auto t1 = Clock::now();
    // As the trainer does: the next batch goes to the other buffer while this one trains.
    prefetch.request(indices(step + 1), batch, step + 1);
    const auto t2 = Clock::now();
    model.train_batch(x, y, n, true, 3, step);
    opt.step();
    if (step >= warmup) {
      step_s.push_back(seconds_since(t0));
      train_s += step_s.back();
      wait_s += std::chrono::duration<double>(t1 - t0).count();
      copy_s += std::chrono::duration<double>(t2 - t1).count();
      if (step_s.size() % static_cast<std::size_t>(window) == 0) {
        const double s_sum = std::accumulate(step_s.end() - window, step_s.end(), 0.0);
        const Rate r = sgemm_rate(1024, 1024, 1024, threads, true, 3);
        backend->set_threads(threads);  // OpenBLAS back to one thread per caller
        window_shares.push_back(flops * batch * window / s_sum / 1e9 / r.median);
        window_s.push_back(s_sum / window);
      }
    }
  }
  if (cpu != nullptr) cpu->set_profile(nullptr);
  // oneDNN's sgemm again after the steps: on a shared host one measurement can read low (seen:
  // 150-250 GFLOP/s in consecutive runs on a 2-vCPU Xeon), and the higher one is the machine's.
  const Rate dnnl_after = sgemm_rate(1024, 1024, 1024, threads, true);
  const double anchor = std::max({blas.median, dnnl.median, dnnl_after.median});
  const double ips = steps * batch / train_s;
  std::printf("train_bench: batch %d, %d threads, %d steps (after %d warm-up)\n", batch, threads, steps, warmup);
  std::printf("sgemm 1024^3, median (best) of 15: OpenBLAS %.1f (%.1f) GFLOP/s, oneDNN %.1f (%.1f) GFLOP/s, "
              "after the steps %.1f (%.1f); anchor %.1f\n",
              blas.median, blas.best, dnnl.median, dnnl.best, dnnl_after.median, dnnl_after.best, anchor);
  std::printf("sgemm %dx64x576 (conv2d_4 shape, OpenBLAS): %.1f GFLOP/s\n", batch * 169, conv_shape.median);
  std::printf("model: %.1f MFLOP/image forward, %.1f MFLOP/image per training step\n", fwd_flops / 1e6, flops / 1e6);
  // Also against the fastest single sgemm call: the machine at its best, the stricter share.
  const double fastest = std::max({blas.best, dnnl.best, dnnl_after.best});
  std::printf("step: %.2f ms; images/s: %.1f; achieved %.1f GFLOP/s = %.0f%% of sgemm 1024^3 (%.0f%% of its fastest "
              "call)\n",
              1e3 * train_s / steps, ips, ips * flops / 1e9, 100.0 * ips * flops / 1e9 / anchor,
              100.0 * ips * flops / 1e9 / fastest);
  if (!window_shares.empty()) {
    const auto [lo, hi] = std::minmax_element(window_shares.begin(), window_shares.end());
    std::printf("windows of %d steps, each against 3 oneDNN sgemm calls right after it: share median %.0f%% "
                "(%.0f-%.0f%%) over %zu windows; window step ms median %.2f\n",
                window, 100.0 * median(window_shares), 100.0 * *lo, 100.0 * *hi, window_shares.size(),
                1e3 * median(window_s));
  }
  {
    std::vector<double> sorted = step_s;
    std::sort(sorted.begin(), sorted.end());
    auto at = [&](double q) { return 1e3 * sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1))]; };
    std::printf("step ms: min %.2f, 10%% %.2f, median %.2f, 90%% %.2f, max %.2f\n", at(0), at(0.1), at(0.5), at(0.9),
                at(1));
  }
  std::printf("%-16s %10s %10s\n", "layer", "fwd ms", "bwd ms");
  double layer_total = 0;
  for (const auto& t : model.layer_times()) {
    std::printf("%-16s %10.3f %10.3f\n", t.name.c_str(), 1e3 * t.forward_s / steps, 1e3 * t.backward_s / steps);
    layer_total += t.forward_s + t.backward_s;
  }
  std::printf("%-16s %10.3f ms/step (the rest: loss, optimizer, batch copy)\n", "layers total",
              1e3 * layer_total / steps);
  if (roofline && cpu != nullptr) {
    const dnnl_version_t* v = dnnl_version();
    std::printf("oneDNN %d.%d.%d, effective ISA %s; OpenBLAS core %s (%s)\n", v->major, v->minor, v->patch,
                bt::cpu::onednn_isa_name().c_str(), openblas_get_corename(), openblas_get_config());
    for (const auto& k : cpu->kernels()) std::printf("  %s\n", k.c_str());
    batchai::bench::RooflineInput in;
    in.specs = bt::tutorial_network();
    in.batch = batch, in.steps = steps, in.limit_reps = limit_reps;
    std::sort(step_s.begin(), step_s.end());
    in.sgemm_gflops = anchor, in.step_seconds = step_s[step_s.size() / 2], in.step_flops = flops * batch;
    in.profile = &profile;
    in.bf16 = arithmetic == bt::Precision::kMixedBfloat16;
    // Augmentation timed here alone on this thread (in the step it runs on the team or the helper).
    std::vector<float> bx(static_cast<std::size_t>(batch) * bt::kCifarImageBytes), by(batch);
    const double augment_s = batchai::bench::median_seconds(limit_reps, [&] {
      bt::prepare_batch(data, order.data(), batch, bt::AugmentConfig{}, 7, 0, bx.data(), by.data());
    });
    // What a rank hands the allreduce: the gradient arena copied out, then scaled by 1/ranks.
    std::vector<float> slot(model.param_count());
    const double handoff_s = batchai::bench::median_seconds(limit_reps, [&] {
      backend->download(slot.data(), model.grads(), slot.size());
      backend->scale(model.grads(), 1.0f);
    });
    in.extra = {{"augmentation (prepare_batch), one thread alone", "prepare", augment_s, false,
                 prepare_ahead ? "beside the step: helper thread" : "inside the row below, split over the team"},
                {prepare_ahead ? "waiting for the prefetched batch" : "preparing the batch on the team", "data",
                 wait_s / steps, true, ""},
                {"requesting the next batch", "data", copy_s / steps, true, ""},
                {"allreduce hand-off: arena copy + scale", "allreduce", handoff_s, false,
                 "2+ ranks only; not in a 1-rank step"}};
    batchai::bench::print_roofline(in);
  }
  std::printf("load average (1, 5, 15 min): before %s, after %s\n", load_before.c_str(), loadavg().c_str());
  std::printf("peak RSS: %ld MB\n", peak_rss_mb());
  std::printf("RESULT images_per_s=%.1f\n", ips);
  return 0;
}
