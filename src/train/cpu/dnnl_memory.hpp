// oneDNN memory over the CPU backend's own host arrays, and the ISA questions its primitive
// wrappers share.
#pragma once
#include <string>

#include <dnnl.hpp>

namespace batchai::train::cpu {

// Wraps a host pointer without copying (oneDNN never frees it; inputs are only read).
inline dnnl::memory wrap(const dnnl::memory::desc& md, const dnnl::engine& engine, const float* p) {
  return dnnl::memory(md, engine, const_cast<float*>(p));  // NOLINT: oneDNN takes void*
}

// Whether oneDNN runs at least the kernels of `isa` here (ONEDNN_MAX_CPU_ISA can hold it lower).
inline bool onednn_runs(dnnl::cpu_isa isa) {
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  return (effective & static_cast<unsigned>(isa)) == static_cast<unsigned>(isa);
}

inline bool onednn_runs_avx512() { return onednn_runs(dnnl::cpu_isa::avx512_core); }
inline bool onednn_runs_avx2() { return onednn_runs(dnnl::cpu_isa::avx2); }
// Its bfloat16 instructions (AVX512-BF16; AMX machines have them too).
inline bool onednn_runs_bf16() { return onednn_runs(dnnl::cpu_isa::avx512_core_bf16); }

// The effective ISA as oneDNN names it ("avx512_core_bf16"), for messages and benchmarks.
inline std::string onednn_isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

}  // namespace batchai::train::cpu
