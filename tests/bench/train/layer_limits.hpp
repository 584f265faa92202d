// The per-layer limit of the benchmark's roofline: for one convolution or dense shape, the
// fastest oneDNN primitive for each phase (forward with the layer's bias + ReLU, backward data,
// backward weights with bias) timed alone, over the memory formats tried (the layer's plain
// NHWC / row-major ones and `any`, oneDNN's own choice), with the kernel that won; once with its
// operands in cache (repeated calls on the same memories) and once with them evicted before each
// call, as a step finds most of them after the layers between.
#pragma once
#include <functional>
#include <string>

#include <dnnl.hpp>

#include "batchai/train/backend.hpp"

namespace batchai::bench {

struct PhaseLimit {
  double seconds = 0.0;  // median of the repeats of the fastest variant
  std::string impl;      // oneDNN's implementation name and the variant's formats
  double cold_seconds = 0.0;  // the same with the caches evicted before each call
  std::string cold_impl;
};

struct LayerLimit {
  PhaseLimit forward, backward_data, backward_weights;
};

// `reps` timed executions (after a few untimed ones) per variant and phase. bf16: the primitives
// of mixed precision (bfloat16 x, dy and kernel; float32 outputs), as DnnlConv's bf16 runs them.
LayerLimit conv_limit(const dnnl::engine& engine, const train::ConvShape& shape, bool relu, int reps,
                      bool bf16 = false);
LayerLimit dense_limit(const dnnl::engine& engine, const train::DenseShape& shape, bool relu, int reps);

// The ReLU's backward on a convolution's output alone (oneDNN's eltwise backward from y, in NHWC and
// nChw16c): what a phase that folds it in does beyond the convolution.
PhaseLimit relu_backward_limit(const dnnl::engine& engine, const train::ConvShape& shape, int reps);

// Two primitives one after the other: the times added, the kernels named both.
PhaseLimit plus(const PhaseLimit& a, const PhaseLimit& b);

// Median seconds of `reps` calls of fn (after 3 untimed ones); with `evict`, each call follows a
// pass over a buffer larger than the caches (not timed).
double median_seconds(int reps, const std::function<void()>& fn, bool evict = false);

// Print every variant's time as it is measured (train_bench --variants).
void show_variants(bool on);

}  // namespace batchai::bench
