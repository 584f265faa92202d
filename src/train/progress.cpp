// Keras-style progress lines (see progress.hpp).
#include "progress.hpp"

#include <cmath>
#include <cstdio>

namespace batchai::train {
namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
std::string fixed4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}
}  // namespace

std::string progress_bar(int current, int target) {
  constexpr int kWidth = 30;
  int done = target > 0 ? static_cast<int>(static_cast<double>(kWidth) * current / target) : kWidth;
  std::string bar = "[";
  if (done > 0) {
    bar.append(static_cast<std::size_t>(done - 1), '=');
    bar += current < target ? '>' : '=';
  }
  bar.append(static_cast<std::size_t>(kWidth - std::max(done, 0)), '.');
  return bar + "]";
}

std::string format_eta(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s % 3600) / 60, s % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", s);
  }
  return buf;
}

std::string progress_line(int current, int target, double eta_s, double loss, double acc) {
  const std::string t = std::to_string(target);
  std::string c = std::to_string(current);
  if (c.size() < t.size()) c.insert(0, t.size() - c.size(), ' ');
  return c + "/" + t + " " + progress_bar(current, target) + " - ETA: " + format_eta(eta_s) +
         " - loss: " + fixed4(loss) + " - acc: " + fixed4(acc);
}

std::string epoch_end_line(int steps, double seconds, double loss, double acc, double val_loss, double val_acc) {
  const std::string t = std::to_string(steps);
  char timing[64];
  std::snprintf(timing, sizeof timing, "%lds %ldms/step", std::lround(seconds),
                std::lround(1000.0 * seconds / std::max(steps, 1)));
  std::string line = t + "/" + t + " " + progress_bar(steps, steps) + " - " + timing + " - loss: " + fixed4(loss) +
                     " - acc: " + fixed4(acc);
  if (val_loss >= 0.0) line += " - val_loss: " + fixed4(val_loss) + " - val_acc: " + fixed4(val_acc);
  return line;
}

ProgressPrinter::ProgressPrinter(std::ostream& out, bool terminal, double interval_s, bool enabled)
    : out_(out), terminal_(terminal), enabled_(enabled), interval_s_(interval_s) {}

void ProgressPrinter::begin_epoch(int epoch, int epochs, int steps) {
  steps_ = steps;
  start_ = last_ = std::chrono::steady_clock::now();
  last_width_ = 0;
  if (enabled_) out_ << "Epoch " << epoch << "/" << epochs << "\n" << std::flush;
}

void ProgressPrinter::update(int current, double loss, double acc) {
  if (!enabled_ || current >= steps_) return;
  // A terminal gets frequent in-place updates; a log file one line per interval.
  const double interval = terminal_ ? 0.1 : interval_s_;
  if (current != 1 && since(last_) < interval) return;
  last_ = std::chrono::steady_clock::now();
  const double eta = since(start_) / current * (steps_ - current);
  const std::string line = progress_line(current, steps_, eta, loss, acc);
  if (terminal_) {
    out_ << "\r" << line;
    if (line.size() < last_width_) out_ << std::string(last_width_ - line.size(), ' ');
    last_width_ = line.size();
    out_ << std::flush;
  } else {
    out_ << line << "\n" << std::flush;
  }
}

void ProgressPrinter::end_epoch(double loss, double acc, double val_loss, double val_acc) {
  if (!enabled_) return;
  const std::string line = epoch_end_line(steps_, since(start_), loss, acc, val_loss, val_acc);
  if (terminal_) {
    out_ << "\r" << line;
    if (line.size() < last_width_) out_ << std::string(last_width_ - line.size(), ' ');
  } else {
    out_ << line;
  }
  out_ << "\n" << std::flush;
}

}  // namespace batchai::train
