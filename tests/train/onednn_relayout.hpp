// Test helper: activations between NHWC and the CPU backend's other layouts, through oneDNN.
#pragma once
#include <vector>

#include <dnnl.hpp>

#include "cpu/dnnl_memory.hpp"

namespace batchai::train::testing {

// n x c x h x w floats from the layout `from` to the layout `to` (nhwc, nChw16c), by a reorder.
inline std::vector<float> relayout(const dnnl::engine& eng, dnnl::stream& st, const std::vector<float>& v, int n,
                                   int c, int h, int w, dnnl::memory::format_tag from, dnnl::memory::format_tag to) {
  using dnnl::memory;
  const memory::dims dims{n, c, h, w};
  std::vector<float> out(v.size());
  memory a = cpu::wrap(memory::desc(dims, memory::data_type::f32, from), eng, v.data());
  memory b = cpu::wrap(memory::desc(dims, memory::data_type::f32, to), eng, out.data());
  dnnl::reorder(a, b).execute(st, a, b);
  st.wait();
  return out;
}

}  // namespace batchai::train::testing
