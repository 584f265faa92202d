// A job's per-epoch metrics as the dashboard reads them: the trainer's metrics.json, else the
// Keras-style lines of its stdout.txt. Pure parsing of text a job wrote, so hostile: every read is
// bounded (kMetricsBudget, at most 100,000 epochs), numbers that are not finite are dropped.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "ui/bounded_json.hpp"

namespace batchai::serve {

constexpr std::size_t kMetricCount = 7;
// The metrics in Epoch::v's order: loss, acc, val_loss, val_acc, lr, seconds, images_per_sec.
extern const char* const kMetricNames[kMetricCount];

// What metrics.json may cost a read: its bytes, and ~100 bytes of document per value.
constexpr JsonBudget kMetricsBudget{4 * 1024 * 1024, 16, 100000};  // ~11,000 epochs of 8 numbers

struct Epoch {
  std::int64_t epoch = 0;
  std::optional<double> v[kMetricCount];
};

// metrics.json's {"epochs": [{"epoch": N, "loss": ..., ...}]}; nullopt when it has another shape.
std::optional<std::vector<Epoch>> parse_metrics_json(const std::string& text);

// Keras' fit output: "Epoch 3/25" then, on its last progress line, "- loss: … - acc: … -
// val_loss: … - val_acc: …" (accuracy/val_accuracy in newer Keras); the last line of an epoch wins.
std::vector<Epoch> parse_keras(std::string_view text);

// {"epoch": N, "loss": ..., ...}: every metric when `all`, else the four a curve plots.
Json epoch_json(const Epoch& e, bool all);

// At most n rows, evenly spaced, the first and the last kept.
template <typename T>
std::vector<T> downsample(const std::vector<T>& rows, std::size_t n) {
  if (rows.size() <= n || n < 2) return rows.size() <= n ? rows : std::vector<T>(rows.begin(), rows.begin() + std::min(n, rows.size()));
  std::vector<T> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(rows[i * (rows.size() - 1) / (n - 1)]);
  return out;
}

}  // namespace batchai::serve
