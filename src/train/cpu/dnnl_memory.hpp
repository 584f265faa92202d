// oneDNN memory over the CPU backend's own host arrays, and the ISA question its primitive
// wrappers share.
#pragma once
#include <dnnl.hpp>

namespace batchai::train::cpu {

// Wraps a host pointer without copying (oneDNN never frees it; inputs are only read).
inline dnnl::memory wrap(const dnnl::memory::desc& md, const dnnl::engine& engine, const float* p) {
  return dnnl::memory(md, engine, const_cast<float*>(p));  // NOLINT: oneDNN takes void*
}

// Whether oneDNN runs its AVX-512 kernels here (ONEDNN_MAX_CPU_ISA can hold it lower).
inline bool onednn_runs_avx512() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (isa & avx512) == avx512;
}

// Whether oneDNN runs at least its AVX2 kernels here.
inline bool onednn_runs_avx2() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx2 = static_cast<unsigned>(dnnl::cpu_isa::avx2);
  return (isa & avx2) == avx2;
}

}  // namespace batchai::train::cpu
