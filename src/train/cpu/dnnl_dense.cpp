// The matmul behind a dense layer's input gradient (see dnnl_dense.hpp).
#include "cpu/dnnl_dense.hpp"

#include "cpu/dnnl_memory.hpp"

namespace batchai::train::cpu {

DnnlDenseData::DnnlDenseData(const dnnl::engine& engine, const DenseShape& s) : engine_(engine) {
  using tag = dnnl::memory::format_tag;
  auto matrix = [](dnnl::memory::dim rows, dnnl::memory::dim cols, tag t) {
    return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32, t);
  };
  pd_ = dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(matrix(s.n, s.out, tag::ab), matrix(s.out, s.in, tag::ba), matrix(s.n, s.in, tag::ab)),
      engine);
  matmul_ = dnnl::matmul(pd_);
}

void DnnlDenseData::backward_data(dnnl::stream& stream, const float* w, const float* dy, float* dx) {
  matmul_.execute(stream, {{DNNL_ARG_SRC, wrap(pd_.src_desc(), engine_, dy)},
                           {DNNL_ARG_WEIGHTS, wrap(pd_.weights_desc(), engine_, w)},
                           {DNNL_ARG_DST, wrap(pd_.dst_desc(), engine_, dx)}});
  stream.wait();
}

}  // namespace batchai::train::cpu
