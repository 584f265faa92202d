// CPU backend: the Backend operations over host memory (see cpu_backend.hpp for the plan).
#include "cpu/cpu_backend.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "batchai/common/errors.hpp"
#include "batchai/train/counter_rng.hpp"
#include "batchai/train/softmax_xent_row.hpp"
#include "cpu/cpu_elementwise.hpp"

extern "C" void openblas_set_num_threads(int num_threads);

namespace batchai::train::cpu {
namespace {

// C[m, n] (+)= A[m, k] * B[k, n] (row-major), with optional transposes.
void gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
          float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k,
              1.0f, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

CpuBackend::CpuBackend(int threads) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  set_threads(threads);
}
CpuBackend::~CpuBackend() = default;

void CpuBackend::set_threads(int threads) {
  threads_ = std::max(1, threads);
  // One OpenMP team for oneDNN and for our own parts; OpenBLAS runs on its caller's thread.
  omp_set_num_threads(threads_);
  openblas_set_num_threads(1);
}

void CpuBackend::run(int parts, const std::function<void(int)>& fn) const {
  if (parts <= 1) {
    for (int p = 0; p < parts; ++p) fn(p);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) fn(p);
}

void CpuBackend::split(int total, int parts, int part, int& begin, int& end) {
  begin = static_cast<int>(static_cast<long long>(total) * part / parts);
  end = static_cast<int>(static_cast<long long>(total) * (part + 1) / parts);
}

DnnlConv& CpuBackend::conv(const ConvShape& s, bool relu) {
  auto key = std::make_tuple(s.n, s.h, s.w, s.c, s.out, s.pad, relu);
  auto it = convs_.find(key);
  if (it == convs_.end()) {
    if (s.k != 3) throw InvalidArgument("the CPU backend supports 3x3 convolutions only");
    it = convs_.emplace(key, std::make_unique<DnnlConv>(engine_, s, relu)).first;
  }
  return *it->second;
}

Buffer CpuBackend::allocate(std::size_t count) {
  Buffer b;
  b.data = new float[count]();
  b.size = count;
  return b;
}

void CpuBackend::release(Buffer& buffer) {
  delete[] buffer.data;
  buffer = Buffer{};
}

void CpuBackend::upload(Buffer& dst, const float* host, std::size_t count, std::size_t offset) {
  if (offset + count > dst.size) throw Error("upload past the end of a backend buffer (internal error)");
  std::memcpy(dst.data + offset, host, count * sizeof(float));
}

void CpuBackend::download(float* host, const Buffer& src, std::size_t count, std::size_t offset) {
  if (offset + count > src.size) throw Error("download past the end of a backend buffer (internal error)");
  std::memcpy(host, src.data + offset, count * sizeof(float));
}

void CpuBackend::fill(Buffer& dst, float value) { std::fill(dst.data, dst.data + dst.size, value); }

void CpuBackend::conv2d_forward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                std::size_t b_off, Buffer& y, bool relu) {
  conv(s, relu).forward(stream_, x.data, w.data + w_off, w.data + b_off, y.data);
}

void CpuBackend::conv2d_backward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                 const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                                 bool relu) {
  const std::size_t count = static_cast<std::size_t>(s.n) * s.oh() * s.ow() * s.out;
  // Memory-bound: one pass on this thread is cheaper than waking the team.
  if (relu) relu_mask_rows(dy.data, y.data, count);
  // The ReLU belongs to the forward primitive only; backward takes the already-masked dy.
  conv(s, relu).backward(stream_, x.data, w.data + w_off, dy.data, dx != nullptr ? dx->data : nullptr,
                         dw.data + w_off, dw.data + b_off);
}

void CpuBackend::dense_forward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                               std::size_t b_off, Buffer& y, bool relu) {
  // Split by output columns: each part reads all of x and its own slice of the kernel.
  const bool big = static_cast<long long>(s.in) * s.out >= 65536;  // else one thread is faster
  const int parts = big ? std::min(threads_, std::max(1, s.out / 16)) : 1;
  run(parts, [&](int part) {
    int o0, o1;
    split(s.out, parts, part, o0, o1);
    const int cols = o1 - o0;
    float* out = y.data + o0;
    gemm(false, false, s.n, cols, s.in, x.data, s.in, w.data + w_off + o0, s.out, 0.0f, out, s.out);
    const float* bias = w.data + b_off + o0;
    for (int r = 0; r < s.n; ++r) {
      float* row = out + static_cast<std::size_t>(r) * s.out;
      for (int j = 0; j < cols; ++j) row[j] = relu ? std::max(row[j] + bias[j], 0.0f) : row[j] + bias[j];
    }
  });
}

void CpuBackend::dense_backward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                                const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                                bool relu) {
  const std::size_t count = static_cast<std::size_t>(s.n) * s.out;
  if (relu) relu_mask_rows(dy.data, y.data, count);
  // One region: each part computes its columns of dW (and db) and its columns of dx.
  const bool big = static_cast<long long>(s.in) * s.out >= 65536;
  const int parts = big ? std::min(threads_, std::max(1, s.out / 16)) : 1;
  run(parts, [&](int part) {
    int o0, o1;
    split(s.out, parts, part, o0, o1);
    const int cols = o1 - o0;
    const float* g = dy.data + o0;
    // dW[:, o0:o1] += x^T dy[:, o0:o1]; db[o0:o1] += column sums.
    gemm(true, false, s.in, cols, s.n, x.data, s.in, g, s.out, 1.0f, dw.data + w_off + o0, s.out);
    float* db = dw.data + b_off + o0;
    for (int r = 0; r < s.n; ++r) {
      const float* row = g + static_cast<std::size_t>(r) * s.out;
      for (int j = 0; j < cols; ++j) db[j] += row[j];
    }
    if (dx != nullptr) {
      int i0, i1;
      split(s.in, parts, part, i0, i1);
      // dx[:, i0:i1] = dy * W[i0:i1, :]^T
      gemm(false, true, s.n, i1 - i0, s.out, dy.data, s.out, w.data + w_off + static_cast<std::size_t>(i0) * s.out,
           s.out, 0.0f, dx->data + i0, s.in);
    }
  });
}

void CpuBackend::maxpool2_forward(int n, int h, int w, int c, const Buffer& x, Buffer& y) {
  const int ph = h / 2, pw = w / 2;
  for (int img = 0; img < n; ++img) {
    for (int py = 0; py < ph; ++py) {
      for (int px = 0; px < pw; ++px) {
        const float* a = x.data + ((static_cast<std::size_t>(img) * h + 2 * py) * w + 2 * px) * c;
        const float* b = a + c;
        const float* d = a + static_cast<std::size_t>(w) * c;
        const float* e = d + c;
        float* o = y.data + ((static_cast<std::size_t>(img) * ph + py) * pw + px) * c;
        for (int ch = 0; ch < c; ++ch) o[ch] = std::max(std::max(a[ch], b[ch]), std::max(d[ch], e[ch]));
      }
    }
  }
}

void CpuBackend::maxpool2_backward(int n, int h, int w, int c, const Buffer& x, const Buffer& y,
                                   const Buffer& dy, Buffer& dx) {
  // One pass: every window writes all four of its inputs (dy at the first maximum, 0 elsewhere);
  // only the row/column a floor-pool drops on odd sizes needs a separate zero fill.
  const int ph = h / 2, pw = w / 2;
  const std::size_t row = static_cast<std::size_t>(w) * c;
  for (int img = 0; img < n; ++img) {
    float* dimg = dx.data + static_cast<std::size_t>(img) * h * row;
    if (h % 2 != 0) std::fill(dimg + (h - 1) * row, dimg + h * row, 0.0f);
    for (int py = 0; py < ph; ++py) {
      if (w % 2 != 0) {
        std::fill(dimg + (2 * py) * row + (w - 1) * c, dimg + (2 * py) * row + w * c, 0.0f);
        std::fill(dimg + (2 * py + 1) * row + (w - 1) * c, dimg + (2 * py + 1) * row + w * c, 0.0f);
      }
      for (int px = 0; px < pw; ++px) {
        const std::size_t base = (static_cast<std::size_t>(img) * h + 2 * py) * row + static_cast<std::size_t>(2 * px) * c;
        const float* a = x.data + base;
        const float* b = a + c;
        const float* d = a + row;
        float* da = dx.data + base;
        float* db = da + c;
        float* dd = da + row;
        float* de = dd + c;
        const std::size_t o = ((static_cast<std::size_t>(img) * ph + py) * pw + px) * c;
        const float* m = y.data + o;
        const float* g = dy.data + o;
        for (int ch = 0; ch < c; ++ch) {
          const float v = m[ch], gv = g[ch];
          const bool ha = a[ch] == v, hb = !ha && b[ch] == v, hd = !ha && !hb && d[ch] == v;
          const bool he = !ha && !hb && !hd;
          da[ch] = ha ? gv : 0.0f;
          db[ch] = hb ? gv : 0.0f;
          dd[ch] = hd ? gv : 0.0f;
          de[ch] = he ? gv : 0.0f;
        }
      }
    }
  }
}

void CpuBackend::dropout_forward(const Buffer& x, Buffer& y, Buffer& mask, float rate, std::uint64_t layer_stream,
                                 std::uint64_t first_image_key, std::size_t per_image) {
  const float keep = 1.0f / (1.0f - rate);
  const std::uint64_t threshold = dropout_threshold(rate);
  if (per_image == 0) return;
  for (std::size_t at = 0, j = 0; at < x.size; at += per_image, ++j) {
    const std::uint64_t image = image_stream(layer_stream, first_image_key + j);
    for (std::size_t f = 0; f < per_image && at + f < x.size; ++f) {
      const float m = dropout_drops(image, f, threshold) ? 0.0f : keep;
      mask.data[at + f] = m;
      y.data[at + f] = x.data[at + f] * m;
    }
  }
}

void CpuBackend::dropout_backward(const Buffer& dy, const Buffer& mask, Buffer& dx) {
  for (std::size_t i = 0; i < dy.size; ++i) dx.data[i] = dy.data[i] * mask.data[i];
}

void CpuBackend::softmax_cross_entropy(int n, int classes, const Buffer& logits, const Buffer& labels,
                                       Buffer* dlogits, double* loss_sum, int* correct) {
  double loss = 0.0;
  int hits = 0;
  for (int r = 0; r < n; ++r) {
    const std::size_t at = static_cast<std::size_t>(r) * classes;
    const XentRow row = softmax_xent_row(logits.data + at, classes, static_cast<int>(labels.data[r]),
                                         dlogits != nullptr ? dlogits->data + at : nullptr, 1.0 / n);
    loss += row.loss;
    hits += row.hit ? 1 : 0;
  }
  if (loss_sum != nullptr) *loss_sum = loss;
  if (correct != nullptr) *correct = hits;
}

void CpuBackend::rmsprop_update(Buffer& params, const Buffer& grads, Buffer& ms, float lr, float rho,
                                float eps) {
  const int parts = threads_;
  run(parts, [&](int part) {
    int b0, b1;
    split(static_cast<int>(params.size), parts, part, b0, b1);
    float* p = params.data;
    const float* g = grads.data;
    float* m = ms.data;
    for (int i = b0; i < b1; ++i) {
      m[i] = rho * m[i] + (1.0f - rho) * g[i] * g[i];
      p[i] -= lr * g[i] / (std::sqrt(m[i]) + eps);
    }
  });
}

void CpuBackend::scale(Buffer& x, float factor) {
  for (std::size_t i = 0; i < x.size; ++i) x.data[i] *= factor;
}

}  // namespace batchai::train::cpu
