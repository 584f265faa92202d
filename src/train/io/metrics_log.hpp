// Per-epoch training metrics written to the output folder as metrics.csv, metrics.json and
// metrics.svg (loss and accuracy curves against epoch, a plain SVG we draw ourselves).
// Every append rewrites the three small files, so they are complete after each epoch.
#pragma once
#include <limits>
#include <string>
#include <vector>

namespace batchai::train {

struct EpochMetrics {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  int epoch = 0;  // 1-based, as Keras prints it
  double loss = kNone;
  double acc = kNone;
  double val_loss = kNone;  // NaN = not evaluated this epoch (CSV: empty, JSON: null)
  double val_acc = kNone;
  double lr = kNone;
  double seconds = kNone;
  double images_per_sec = kNone;
};

class MetricsLog {
 public:
  // Files go to <dir>/<stem>.csv|.json|.svg. With `resume`, rows already in <stem>.json
  // are read back so a resumed run continues the same log.
  explicit MetricsLog(std::string dir, std::string stem = "metrics", bool resume = false);

  void append(const EpochMetrics& row);
  const std::vector<EpochMetrics>& rows() const { return rows_; }
  std::string csv_path() const;
  std::string json_path() const;
  std::string svg_path() const;

  static std::string to_csv(const std::vector<EpochMetrics>& rows);
  static std::string to_json(const std::vector<EpochMetrics>& rows);
  static std::vector<EpochMetrics> from_json(const std::string& text);
  // Two panels (loss, accuracy) with train and validation curves.
  static std::string to_svg(const std::vector<EpochMetrics>& rows);

 private:
  void write_all() const;
  std::string dir_;
  std::string stem_;
  std::vector<EpochMetrics> rows_;
};

}  // namespace batchai::train
