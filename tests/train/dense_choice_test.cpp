// Where the CPU backend runs the dense layers (CpuBackend::dense_on_onednn): OpenBLAS picks its
// kernels from the CPU models it knows and falls back to old ones on a newer CPU, so its core's
// name decides whether its sgemm is an AVX2 one.
#include <gtest/gtest.h>

#include <string>

#include "cpu/cpu_backend.hpp"

extern "C" char* openblas_get_corename(void);

namespace batchai::train::cpu {
namespace {

TEST(DenseChoice, OpenBlasCoresWithAvx2KernelsAreTold) {
  for (const char* core : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Excavator"}) {
    EXPECT_TRUE(openblas_core_runs_avx2(core)) << core;
  }
  // Prescott: what 0.3.21 runs on an Emerald Rapids Xeon; Sandybridge and Piledriver have AVX but
  // not AVX2; an unknown name is no promise of AVX2.
  for (const char* core : {"Prescott", "Core2", "Nehalem", "Sandybridge", "Piledriver", "Unknown", "", "haswell"}) {
    EXPECT_FALSE(openblas_core_runs_avx2(core)) << core;
  }
}

TEST(DenseChoice, TheBackendSaysWhereItsDenseLayersRun) {
  CpuBackend be(1);
  bool on_openblas = false;
  for (const std::string& k : be.kernels()) on_openblas = on_openblas || k.rfind("dense: OpenBLAS", 0) == 0;
  // OpenBLAS only with AVX2 kernels, unless the CPU has no AVX2 at all.
  __builtin_cpu_init();
  if (on_openblas && __builtin_cpu_supports("avx2")) {
    EXPECT_TRUE(openblas_core_runs_avx2(openblas_get_corename())) << openblas_get_corename();
  }
}

}  // namespace
}  // namespace batchai::train::cpu
