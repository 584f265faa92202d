// A dense layer's input gradient on oneDNN's matmul for the CPU backend (where oneDNN runs
// AVX-512; cpu_dense.cpp): dx (n, in) = dy (n, out) w^T, the kernel read in Keras' (in, out)
// layout through a transposed descriptor, so nothing is reordered. Created once per shape.
#pragma once
#include <string>

#include <dnnl.hpp>

#include "batchai/train/backend.hpp"

namespace batchai::train::cpu {

class DnnlDenseData {
 public:
  DnnlDenseData(const dnnl::engine& engine, const DenseShape& shape);
  void backward_data(dnnl::stream& stream, const float* w, const float* dy, float* dx);
  std::string kernel() const { return pd_.impl_info_str(); }

 private:
  dnnl::engine engine_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul matmul_;
};

}  // namespace batchai::train::cpu
