// At most one "yes" per interval, whichever thread asks: rations work that many pollers would
// otherwise repeat (the dashboard's questions to an engine such as Slurm: sinfo, squeue).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

namespace batchai::serve {

class RateGate {
 public:
  explicit RateGate(std::chrono::milliseconds interval) : interval_(interval) {}

  // True for the first caller at or after the interval since the last true.
  bool take(std::chrono::steady_clock::time_point now) {
    const std::int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    std::int64_t next = next_ns_.load();
    if (t < next) return false;
    return next_ns_.compare_exchange_strong(
        next, t + std::chrono::duration_cast<std::chrono::nanoseconds>(interval_).count());
  }

 private:
  std::chrono::milliseconds interval_;
  std::atomic<std::int64_t> next_ns_{std::numeric_limits<std::int64_t>::min()};
};

}  // namespace batchai::serve
