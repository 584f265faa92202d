// train_bench --roofline: the step's time per layer and phase (from the CPU backend's profile)
// against the machine's sgemm measured in the same process and against each convolution and
// dense layer's limit (layer_limits.hpp), printed as a markdown table.
#pragma once
#include <string>
#include <vector>

#include "cpu/cpu_profile.hpp"
#include "network.hpp"

namespace batchai::bench {

// A row the backend's profile does not hold (augmentation, the batch hand-over, the allreduce's).
struct ExtraRow {
  std::string name, phase;
  double seconds_per_step = 0.0;
  bool on_path = true;  // false: runs beside the step (the prefetch thread), not in it
  std::string note;
};

struct RooflineInput {
  std::vector<train::LayerSpec> specs;
  int batch = 32, steps = 1, limit_reps = 20;
  double sgemm_gflops = 0.0;      // the anchor: the machine's measured sgemm, GFLOP/s
  double step_seconds = 0.0;      // the median step
  double step_flops = 0.0;        // floating-point operations of one step
  const train::cpu::CpuProfile* profile = nullptr;  // summed over `steps` steps
  bool bf16 = false;  // the step ran in mixed precision: its convolutions' limits are bf16 ones
  std::vector<ExtraRow> extra;
};

void print_roofline(const RooflineInput& in);

}  // namespace batchai::bench
