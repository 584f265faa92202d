// A Chrome-trace timeline of the training step (open it in chrome://tracing or Perfetto):
// complete ("X") events for data, forward, backward, allreduce and update, one pid per rank.
// Appending is thread-safe; a disabled Timeline costs one branch per span.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace batchai::train {

class Timeline {
 public:
  Timeline() = default;  // disabled: spans are no-ops, nothing is written
  // Enabled: events are kept in memory and written to `path` by flush() / the destructor.
  Timeline(std::string path, int pid);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  bool enabled() const { return enabled_; }
  // Microseconds since this timeline was created.
  std::int64_t now_us() const;
  // Records a span [ts_us, ts_us + dur_us) on the calling thread. `name` is kept by pointer:
  // pass a string literal (or anything that outlives the timeline).
  void add(const char* name, std::int64_t ts_us, std::int64_t dur_us);
  std::size_t event_count() const;
  // Writes {"traceEvents":[...]} atomically to the path; may be called repeatedly.
  void flush() const;
  std::string to_json() const;

 private:
  struct Event {
    const char* name;  // span names are string literals
    std::int64_t ts_us;
    std::int64_t dur_us;
    int tid;
  };
  bool enabled_ = false;
  std::string path_;
  int pid_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

// Times one scope: ScopedSpan span(timeline, "forward");
class ScopedSpan {
 public:
  ScopedSpan(Timeline& timeline, const char* name)
      : timeline_(timeline.enabled() ? &timeline : nullptr), name_(name),
        start_us_(timeline_ ? timeline.now_us() : 0) {}
  ~ScopedSpan() {
    if (timeline_) timeline_->add(name_, start_us_, timeline_->now_us() - start_us_);
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  Timeline* timeline_;
  const char* name_;
  std::int64_t start_us_;
};

}  // namespace batchai::train
