// Test-only double-precision reference layers (naive loops, written independently of the CPU
// backend) used to compute forward values and central finite differences in double.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "batchai/train/backend.hpp"

namespace batchai::train::testing {

using Vec = std::vector<double>;

// n floats drawn uniformly from [lo, hi).
inline std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// NHWC conv, kernel (3, 3, c, out), bias (out).
inline Vec ref_conv(const ConvShape& s, const Vec& x, const Vec& w, const Vec& b, bool relu) {
  const int oh = s.oh(), ow = s.ow();
  Vec y(static_cast<std::size_t>(s.n) * oh * ow * s.out);
  for (int n = 0; n < s.n; ++n)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int o = 0; o < s.out; ++o) {
          double acc = b[o];
          for (int ky = 0; ky < s.k; ++ky)
            for (int kx = 0; kx < s.k; ++kx) {
              const int iy = oy + ky - s.pad, ix = ox + kx - s.pad;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              for (int c = 0; c < s.c; ++c)
                acc += x[((static_cast<std::size_t>(n) * s.h + iy) * s.w + ix) * s.c + c] *
                       w[((static_cast<std::size_t>(ky) * s.k + kx) * s.c + c) * s.out + o];
            }
          y[((static_cast<std::size_t>(n) * oh + oy) * ow + ox) * s.out + o] = relu ? std::max(acc, 0.0) : acc;
        }
  return y;
}

// dx[n, y, x, ci] = sum over taps and co of dy[n, y + pad - kh, x + pad - kw, co] * w[kh, kw, ci, co].
inline Vec ref_conv_data_gradient(const ConvShape& s, const std::vector<float>& w, const std::vector<float>& dy) {
  Vec dx(static_cast<std::size_t>(s.n) * s.h * s.w * s.c, 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int y = 0; y < s.h; ++y)
      for (int x = 0; x < s.w; ++x)
        for (int kh = 0; kh < s.k; ++kh)
          for (int kw = 0; kw < s.k; ++kw) {
            const int oy = y + s.pad - kh, ox = x + s.pad - kw;
            if (oy < 0 || ox < 0 || oy >= s.oh() || ox >= s.ow()) continue;
            const float* g = dy.data() + ((static_cast<std::size_t>(n) * s.oh() + oy) * s.ow() + ox) * s.out;
            for (int ci = 0; ci < s.c; ++ci) {
              const float* wk = w.data() + ((static_cast<std::size_t>(kh) * s.k + kw) * s.c + ci) * s.out;
              double sum = 0.0;
              for (int co = 0; co < s.out; ++co) sum += static_cast<double>(g[co]) * wk[co];
              dx[((static_cast<std::size_t>(n) * s.h + y) * s.w + x) * s.c + ci] += sum;
            }
          }
  return dx;
}

// dw[kh, kw, ci, co] = sum over images and outputs of x[n, oy + kh - pad, ox + kw - pad, ci] *
// dy[n, oy, ox, co], then db[co] = sum of dy[.., co]: the kernel's k*k*c*out values, then the bias.
inline Vec ref_conv_weight_gradient(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& dy) {
  const std::size_t kernel = static_cast<std::size_t>(s.k) * s.k * s.c * s.out;
  Vec g(kernel + s.out, 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int oy = 0; oy < s.oh(); ++oy)
      for (int ox = 0; ox < s.ow(); ++ox) {
        const float* d = dy.data() + ((static_cast<std::size_t>(n) * s.oh() + oy) * s.ow() + ox) * s.out;
        for (int co = 0; co < s.out; ++co) g[kernel + co] += d[co];
        for (int kh = 0; kh < s.k; ++kh)
          for (int kw = 0; kw < s.k; ++kw) {
            const int iy = oy + kh - s.pad, ix = ox + kw - s.pad;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            const float* xi = x.data() + ((static_cast<std::size_t>(n) * s.h + iy) * s.w + ix) * s.c;
            for (int ci = 0; ci < s.c; ++ci)
              for (int co = 0; co < s.out; ++co)
                g[((static_cast<std::size_t>(kh) * s.k + kw) * s.c + ci) * s.out + co] +=
                    static_cast<double>(xi[ci]) * d[co];
          }
      }
  return g;
}

inline Vec ref_dense(const DenseShape& s, const Vec& x, const Vec& w, const Vec& b, bool relu) {
  Vec y(static_cast<std::size_t>(s.n) * s.out);
  for (int n = 0; n < s.n; ++n)
    for (int o = 0; o < s.out; ++o) {
      double acc = b[o];
      for (int i = 0; i < s.in; ++i) acc += x[static_cast<std::size_t>(n) * s.in + i] * w[static_cast<std::size_t>(i) * s.out + o];
      y[static_cast<std::size_t>(n) * s.out + o] = relu ? std::max(acc, 0.0) : acc;
    }
  return y;
}

inline Vec ref_maxpool(int n, int h, int w, int c, const Vec& x) {
  const int ph = h / 2, pw = w / 2;
  Vec y(static_cast<std::size_t>(n) * ph * pw * c);
  for (int i = 0; i < n; ++i)
    for (int py = 0; py < ph; ++py)
      for (int px = 0; px < pw; ++px)
        for (int ch = 0; ch < c; ++ch) {
          double m = -1e300;
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx)
              m = std::max(m, x[((static_cast<std::size_t>(i) * h + 2 * py + dy) * w + 2 * px + dx) * c + ch]);
          y[((static_cast<std::size_t>(i) * ph + py) * pw + px) * c + ch] = m;
        }
  return y;
}

// Mean categorical cross entropy of softmax(logits) (n, classes) against class labels, as Keras
// computes it: the label's probability clipped to [1e-7, 1 - 1e-7] before the log.
inline double ref_softmax_xent(int n, int classes, const Vec& z, const std::vector<int>& labels) {
  double loss = 0.0;
  for (int i = 0; i < n; ++i) {
    const double* r = z.data() + static_cast<std::size_t>(i) * classes;
    const double m = *std::max_element(r, r + classes);
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) sum += std::exp(r[j] - m);
    loss -= std::log(std::clamp(std::exp(r[labels[i]] - m) / sum, 1e-7, 1.0 - 1e-7));
  }
  return loss / n;
}

inline double dot(const Vec& a, const Vec& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Central differences of f at v (double), step h.
template <typename F>
Vec finite_difference(Vec& v, F&& f, double h = 1e-6) {
  Vec g(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i];
    v[i] = keep + h;
    const double up = f();
    v[i] = keep - h;
    const double down = f();
    v[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// ||a - b|| / max(||b||, tiny): one number per gradient, robust to tiny entries.
inline double relative_error(const std::vector<float>& a, const Vec& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-12);
}

}  // namespace batchai::train::testing
