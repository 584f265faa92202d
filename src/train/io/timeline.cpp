// Timeline: in-memory span list, serialised as Chrome trace JSON (traceEvents, ph "X").
#include "io/timeline.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "batchai/common/errors.hpp"

namespace batchai::train {
namespace fs = std::filesystem;

namespace {

// Small stable thread ids (1, 2, ...) read better in the trace viewer than native ids.
int this_thread_tid() {
  static std::atomic<int> next{1};
  thread_local const int tid = next.fetch_add(1);
  return tid;
}

}  // namespace

Timeline::Timeline(std::string path, int pid) : enabled_(true), path_(std::move(path)), pid_(pid) {
  events_.reserve(1 << 14);
}

Timeline::~Timeline() {
  if (!enabled_) return;
  try {
    flush();
  } catch (...) {  // a destructor must not throw; flush() explicitly to see errors
  }
}

std::int64_t Timeline::now_us() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               start_)
      .count();
}

void Timeline::add(const char* name, std::int64_t ts_us, std::int64_t dur_us) {
  if (!enabled_) return;
  const int tid = this_thread_tid();
  std::lock_guard lock(mutex_);
  events_.push_back({name, ts_us, dur_us, tid});
}

std::size_t Timeline::event_count() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

std::string Timeline::to_json() const {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid_},
                    {"args", {{"name", "rank " + std::to_string(pid_)}}}});
  std::lock_guard lock(mutex_);
  for (const Event& e : events_) {
    events.push_back({{"name", e.name}, {"ph", "X"}, {"ts", e.ts_us}, {"dur", e.dur_us},
                      {"pid", pid_}, {"tid", e.tid}});
  }
  return nlohmann::ordered_json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

void Timeline::flush() const {
  if (!enabled_) return;
  const fs::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << to_json();
    if (!out.flush()) throw SystemError("cannot write timeline '" + tmp + "'");
  }
  fs::rename(tmp, target, ec);
  if (ec) throw SystemError("cannot move timeline into place at '" + path_ + "': " + ec.message());
}

}  // namespace batchai::train
