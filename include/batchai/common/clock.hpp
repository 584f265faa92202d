// Time as the control plane sees it: an injectable Clock (tests pin or advance it) and the
// Python-style text forms the Azure CLI printed (ISO-8601 with +00:00, timedelta strings).
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace batchai {

using TimePoint = std::chrono::time_point<std::chrono::system_clock, std::chrono::microseconds>;
using Micros = std::chrono::microseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint now() const override;
};

// A clock that only moves when told to; for tests.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start) : now_(start) {}
  TimePoint now() const override { return now_; }
  void set(TimePoint t) { now_ = t; }
  void advance(Micros d) { now_ += d; }

 private:
  TimePoint now_;
};

// The process clock: SystemClock, or a fixed/offset clock when BATCHAI_CLOCK_OFFSET_S is set
// (scenario tests use it to move simulated time forward without sleeping).
std::shared_ptr<Clock> make_process_clock();

// "2018-06-21T17:15:18.288000+00:00"; the fraction is omitted when zero (Python isoformat).
std::string format_iso(TimePoint t);
// "2018-06-13 00:35:47.573000+00:00" (Python str(datetime)).
std::string format_python_str(TimePoint t);
// Parses format_iso output and common ISO-8601 UTC forms ("Z", "+00:00", with or without fraction).
std::optional<TimePoint> parse_iso(std::string_view text);
// Python timedelta text: "7 days, 0:00:00", "1:30:00", "0:00:00.500000".
std::string format_timedelta(Micros d);
// The longest duration the text forms below accept: 36,500 days (about 100 years) keeps every
// deadline computed from one (int64 micro- or nanoseconds from now) far from overflow.
inline constexpr Micros kMaxDuration{36500LL * 86400 * 1000000};
// ISO-8601 duration ("P7D", "PT2H30M", "P1DT2H"), timedelta text ("7 days, 0:00:00", "1:30:00")
// or .NET TimeSpan text ("7.00:00:00"). nullopt when unreadable or longer than kMaxDuration;
// `too_long` (when given) is set to tell the second case from the first.
std::optional<Micros> parse_duration(std::string_view text, bool* too_long = nullptr);

}  // namespace batchai
