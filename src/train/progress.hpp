// Keras-style progress output of the trainer (rank 0 only): "Epoch 1/25", then
// "  32/1563 [=====>........................] - ETA: 1:23 - loss: 2.2871 - acc: 0.1250",
// rewritten in place with '\r' on a terminal and printed as a new line every few seconds
// otherwise; the epoch ends with "1563/1563 [====...] - 60s 38ms/step - loss: ... - val_acc: ...".
#pragma once
#include <chrono>
#include <ostream>
#include <string>

namespace batchai::train {

// "[=====>.....]" for `current` of `target` (30 characters inside the brackets, as Keras).
std::string progress_bar(int current, int target);
// Keras' ETA format: "1:23" (m:ss), "1:02:03" (h:mm:ss) or "45s" below a minute.
std::string format_eta(double seconds);
// One progress line without trailing newline.
std::string progress_line(int current, int target, double eta_s, double loss, double acc);
// End-of-epoch line without trailing newline; val_* omitted when negative.
std::string epoch_end_line(int steps, double seconds, double loss, double acc, double val_loss, double val_acc);

class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& out, bool terminal, double interval_s, bool enabled);
  void begin_epoch(int epoch, int epochs, int steps);
  void update(int current, double loss, double acc);  // running means so far
  void end_epoch(double loss, double acc, double val_loss, double val_acc);

 private:
  std::ostream& out_;
  bool terminal_, enabled_;
  double interval_s_;
  int steps_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  std::size_t last_width_ = 0;
};

}  // namespace batchai::train
