// oneDNN memory over the CPU backend's own host arrays, shared by its primitive wrappers.
#pragma once
#include <dnnl.hpp>

namespace batchai::train::cpu {

// Wraps a host pointer without copying (oneDNN never frees it; inputs are only read).
inline dnnl::memory wrap(const dnnl::memory::desc& md, const dnnl::engine& engine, const float* p) {
  return dnnl::memory(md, engine, const_cast<float*>(p));  // NOLINT: oneDNN takes void*
}

}  // namespace batchai::train::cpu
