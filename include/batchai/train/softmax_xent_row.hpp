// One row of Keras' categorical cross-entropy on a softmax output, shared by the CPU backend and
// the CUDA kernel. Keras clips the label's probability to [1e-7, 1 - 1e-7] before the log, and
// TensorFlow's clip passes no gradient outside that range: a row the network already gets
// (all but) certainly right or wrong contributes its capped loss and a zero gradient.
#pragma once

#include <cmath>

#include "batchai/train/host_device.hpp"

namespace batchai::train {

constexpr double kKerasEpsilon = 1e-7;

struct XentRow {
  double loss = 0.0;
  bool hit = false;  // the arg-max class is the label
};

// z: the row's `classes` logits. grad (may be null): d(loss)/dz * scale, e.g. scale = 1/batch.
BATCHAI_HOST_DEVICE inline XentRow softmax_xent_row(const float* z, int classes, int label, float* grad,
                                                    double scale) {
  int best = 0;
  for (int j = 1; j < classes; ++j) best = z[j] > z[best] ? j : best;
  const double zmax = z[best];
  double sum = 0.0;
  for (int j = 0; j < classes; ++j) sum += exp(static_cast<double>(z[j]) - zmax);
  const double p_label = exp(static_cast<double>(z[label]) - zmax) / sum;
  const bool clipped = p_label < kKerasEpsilon || p_label > 1.0 - kKerasEpsilon;
  XentRow row;
  row.hit = best == label;
  row.loss = -log(fmin(fmax(p_label, kKerasEpsilon), 1.0 - kKerasEpsilon));
  if (grad != nullptr) {
    for (int j = 0; j < classes; ++j) {
      const double p = exp(static_cast<double>(z[j]) - zmax) / sum;
      grad[j] = clipped ? 0.0f : static_cast<float>((p - (j == label ? 1.0 : 0.0)) * scale);
    }
  }
  return row;
}

}  // namespace batchai::train
