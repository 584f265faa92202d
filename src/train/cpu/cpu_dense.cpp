// Dense layers of the CPU backend (see cpu_backend.hpp). On a CPU where oneDNN runs AVX-512,
// and likewise where OpenBLAS runs kernels older than AVX2 on an AVX2 CPU (dense_on_onednn),
// oneDNN's kernels, JIT-compiled for the ISA found at run time and run on the backend's OpenMP
// team: its sgemm for the forward pass and the weight gradient (which overwrites a slot still
// zero since the arena's zeroing, beta = 0, and adds with beta = 1 otherwise), a matmul for the
// input gradient (dnnl_dense.hpp), the fastest of each measured with train_bench --roofline; on
// AVX-512, layers of up to 16 outputs in kernels of our own (narrow_dense.hpp). Elsewhere
// OpenBLAS, one call per thread over its own output columns.
#include <cblas.h>

#include <algorithm>

#include "batchai/common/errors.hpp"
#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_elementwise.hpp"
#include "cpu/dense_rmsprop.hpp"
#include "cpu/dnnl_memory.hpp"
#include "cpu/narrow_dense.hpp"

extern "C" char* openblas_get_corename(void);

namespace batchai::train::cpu {
namespace {

// C[m, n] (+)= A[m, k] * B[k, n] (row-major), with optional transposes, on this thread.
void blas_gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
               float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
              lda, b, ldb, beta, c, ldc);
}

double dense_flops(const DenseShape& s) { return 2.0 * s.n * s.in * s.out; }

// The same on oneDNN's sgemm, which splits the work over the OpenMP team itself.
void dnnl_gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
               float* c, int ldc) {
  const dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (st != dnnl_success) throw Error("oneDNN sgemm failed with status " + std::to_string(static_cast<int>(st)));
}

// Rows (or kernel rows) a part of a narrow dense layer's phase takes (narrow_dense.hpp).
std::size_t narrow_rows_per_part(long long products_per_row) {
  // In the step, on a 2-vCPU AMD EPYC Zen 4, the tutorial's dense_2 (164k multiply-adds a phase)
  // took 7-14 us a phase on one thread against 10-13 split over two, though alone, with its
  // operands in cache, it runs faster split (3.4-5.3 against 5.4-5.6 us): a part's share of what
  // the previous layers left in the other core's cache costs more than the part saves.
  constexpr long long kMinProductsPerPart = 1 << 18;
  return static_cast<std::size_t>(std::max(1LL, kMinProductsPerPart / std::max(products_per_row, 1LL)));
}

}  // namespace

bool openblas_core_runs_avx2(const std::string& core) {
  // OpenBLAS's x86-64 targets with AVX2 kernels (openblas_get_corename() names them so).
  for (const char* name : {"Haswell", "Excavator", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"}) {
    if (core == name) return true;
  }
  return false;
}

bool CpuBackend::dense_on_onednn() {
  if (onednn_runs_avx512()) return true;
  // OpenBLAS picks its kernels from the CPU models it knows: on a newer one (0.3.21 on an Emerald
  // Rapids Xeon) it runs its Prescott (SSE3) kernels, and with oneDNN held to AVX2 dense_1 then
  // took 7.9 ms of a 46.6 ms step against 3.4 with OpenBLAS's Haswell kernels. oneDNN's AVX2
  // kernels do not depend on knowing the model.
  return onednn_runs_avx2() && !openblas_core_runs_avx2(openblas_get_corename());
}

void CpuBackend::dense_forward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                               std::size_t b_off, Buffer& y, bool relu) {
  ProfileScope timed(profile_, "dense", profile_ ? dense_shape_label(s) : "", "fwd", dense_flops(s));
  const float* bias = w.data + b_off;
  if (narrow_dense_applies(s.out)) {
    const std::size_t per_part = narrow_rows_per_part(1LL * s.in * s.out);
    for_ranges(static_cast<std::size_t>(s.n), per_part, 8, [&](std::size_t r0, std::size_t r1) {
      narrow_dense_forward(x.data, w.data + w_off, bias, s.in, s.out, static_cast<int>(r0), static_cast<int>(r1),
                           y.data, relu);
    });
    return;
  }
  if (dense_onednn_) {
    dnnl_gemm(false, false, s.n, s.out, s.in, x.data, s.in, w.data + w_off, s.out, 0.0f, y.data, s.out);
    for_ranges(static_cast<std::size_t>(s.n), images_per_part(s.out), 1, [&](std::size_t r0, std::size_t r1) {
      bias_relu_rows(y.data, bias, static_cast<int>(r0), static_cast<int>(r1), s.out, s.out, relu);
    });
    return;
  }
  // Split by output columns: each part reads all of x and its own slice of the kernel.
  const int parts = blas_parts(s);
  run(parts, [&](int part) {
    int o0, o1;
    split(s.out, parts, part, o0, o1);
    blas_gemm(false, false, s.n, o1 - o0, s.in, x.data, s.in, w.data + w_off + o0, s.out, 0.0f, y.data + o0, s.out);
    bias_relu_rows(y.data + o0, bias + o0, 0, s.n, o1 - o0, s.out, relu);
  });
}

void CpuBackend::dense_relu_mask(const DenseShape& s, Buffer& dy, const Buffer& y) {
  ProfileScope mask(profile_, "dense", profile_ ? dense_shape_label(s) : "", "relu-mask");
  mask_relu(dy, y, static_cast<std::size_t>(s.n) * s.out);
}

void CpuBackend::dense_input_gradient(const DenseShape& s, const Buffer& w, std::size_t w_off, const Buffer& dy,
                                      Buffer& dx) {
  ProfileScope timed(profile_, "dense", profile_ ? dense_shape_label(s) : "", "bwd-data", dense_flops(s));
  if (narrow_dense_applies(s.out)) {
    const std::size_t per_part = narrow_rows_per_part(1LL * s.n * s.out);
    for_ranges(static_cast<std::size_t>(s.in), per_part, 16, [&](std::size_t i0, std::size_t i1) {
      narrow_dense_input_gradient(dy.data, w.data + w_off, s.n, s.in, s.out, static_cast<int>(i0),
                                  static_cast<int>(i1), dx.data);
    });
    return;
  }
  if (dense_onednn_) {
    dense_data(s).backward_data(stream_, w.data + w_off, dy.data, dx.data);
    return;
  }
  const int parts = blas_parts(s);
  run(parts, [&](int part) {
    int i0, i1;
    split(s.in, parts, part, i0, i1);
    blas_gemm(false, true, s.n, i1 - i0, s.out, dy.data, s.out, w.data + w_off + static_cast<std::size_t>(i0) * s.out,
              s.out, 0.0f, dx.data + i0, s.in);
  });
}

void CpuBackend::dense_backward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                                bool relu) {
  const int parts = blas_parts(s);
  float* dkernel = dw.data + w_off;
  float* dbias = dw.data + b_off;
  if (relu) dense_relu_mask(s, dy, y);
  {
    ProfileScope timed(profile_, "dense", profile_ ? dense_shape_label(s) : "", "bwd-weights", dense_flops(s));
    // dW = x^T dy into a slot whose zeroing was deferred (zero_gradients), else dW += x^T dy.
    const float beta = first_write(dw, w_off, static_cast<std::size_t>(s.in) * s.out) ? 0.0f : 1.0f;
    zero_if_first_write(dw, b_off, static_cast<std::size_t>(s.out));
    if (narrow_dense_applies(s.out)) {
      const std::size_t per_part = narrow_rows_per_part(1LL * s.n * s.out);
      for_ranges(static_cast<std::size_t>(s.in), per_part, 8, [&](std::size_t i0, std::size_t i1) {
        narrow_dense_weight_gradient(x.data, dy.data, s.n, s.in, s.out, static_cast<int>(i0), static_cast<int>(i1),
                                     beta != 0.0f, dkernel);
      });
      add_column_sums(dy.data, s.n, s.out, s.out, dbias);
    } else if (dense_onednn_) {
      // db += column sums of dy.
      dnnl_gemm(true, false, s.in, s.out, s.n, x.data, s.in, dy.data, s.out, beta, dkernel, s.out);
      add_column_sums(dy.data, s.n, s.out, s.out, dbias);
    } else {
      run(parts, [&](int part) {
        int o0, o1;
        split(s.out, parts, part, o0, o1);
        blas_gemm(true, false, s.in, o1 - o0, s.n, x.data, s.in, dy.data + o0, s.out, beta, dkernel + o0, s.out);
        add_column_sums(dy.data + o0, s.n, o1 - o0, s.out, dbias + o0);
      });
    }
  }
  if (dx != nullptr) dense_input_gradient(s, w, w_off, dy, *dx);
}

bool CpuBackend::dense_rmsprop_folds(const DenseShape& s) { return dense_onednn_ && dense_rmsprop_applies(s.out); }

void CpuBackend::dense_backward_data(const DenseShape& s, const Buffer& w, std::size_t w_off, const Buffer& y,
                                     Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off, bool relu) {
  if (!dense_rmsprop_folds(s)) throw Error("dense backward without its weight gradient here (internal error)");
  if (relu) dense_relu_mask(s, dy, y);
  // The slots stay as they are: marked written, so that settling the arena does not zero them.
  first_write(dw, w_off, static_cast<std::size_t>(s.in) * s.out);
  first_write(dw, b_off, static_cast<std::size_t>(s.out));
  if (dx != nullptr) dense_input_gradient(s, w, w_off, dy, *dx);
}

void CpuBackend::rmsprop_dense_from_factors(const DenseShape& s, const Buffer& x, const Buffer& dy, Buffer& params,
                                            Buffer& ms, std::size_t w_off, std::size_t b_off, float lr, float rho,
                                            float eps) {
  if (!dense_rmsprop_folds(s)) throw Error("dense update from the gradient's factors here (internal error)");
  ProfileScope timed(profile_, "rmsprop", profile_ ? dense_shape_label(s) : "", "update-from-factors",
                     dense_flops(s));
  // x transposed, so that a kernel row's factors are contiguous; then the bias gradient, summed
  // over the batch in order as add_column_sums does in dense_backward.
  const std::size_t xt_size = static_cast<std::size_t>(s.in) * s.n;
  factor_scratch_.resize(xt_size + s.out);
  float* xt = factor_scratch_.data();
  float* dbias = xt + xt_size;
  std::fill(dbias, dbias + s.out, 0.0f);
  for_ranges(static_cast<std::size_t>(s.in), 256, 16, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) {
      for (int b = 0; b < s.n; ++b) xt[i * s.n + b] = x.data[static_cast<std::size_t>(b) * s.in + i];
    }
  });
  const int parts = std::clamp(threads_, 1, s.in);
  run(parts, [&](int part) {
    int r0, r1;
    split(s.in, parts, part, r0, r1);
    dense_rmsprop_rows(xt, dy.data, s.n, s.out, r0, r1, params.data + w_off, ms.data + w_off, lr, rho, eps);
  });
  add_column_sums(dy.data, s.n, s.out, s.out, dbias);
  rmsprop(params.data + b_off, dbias, ms.data + b_off, 0, static_cast<std::size_t>(s.out), lr, rho, eps);
}

DnnlDenseData& CpuBackend::dense_data(const DenseShape& s) {
  auto key = std::make_tuple(s.n, s.in, s.out);
  auto it = denses_.find(key);
  if (it == denses_.end()) it = denses_.emplace(key, std::make_unique<DnnlDenseData>(engine_, s)).first;
  return *it->second;
}

int CpuBackend::blas_parts(const DenseShape& s) const {
  const bool big = static_cast<long long>(s.in) * s.out >= 65536;  // else one thread is faster
  return big ? std::min(threads_, std::max(1, s.out / 16)) : 1;
}

}  // namespace batchai::train::cpu
