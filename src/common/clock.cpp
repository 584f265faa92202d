// Clock implementations and the Python-compatible time/duration text forms.
#include "batchai/common/clock.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <regex>
#include <string>

namespace batchai {
namespace {

// Simulated time moved forward by a fixed offset, for scenario tests (BATCHAI_CLOCK_OFFSET_S).
class OffsetClock final : public Clock {
 public:
  explicit OffsetClock(Micros offset) : offset_(offset) {}
  TimePoint now() const override { return SystemClock().now() + offset_; }

 private:
  Micros offset_;
};

std::tm to_utc_tm(TimePoint t) {
  auto secs = std::chrono::floor<std::chrono::seconds>(t);
  std::time_t tt = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return tm;
}

std::string format_with(TimePoint t, char separator) {
  std::tm tm = to_utc_tm(t);
  auto micros = (t - std::chrono::floor<std::chrono::seconds>(t)).count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d%c%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, separator, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::string out = buf;
  if (micros != 0) {
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(micros));
    out += buf;
  }
  return out + "+00:00";
}

}  // namespace

TimePoint SystemClock::now() const {
  return std::chrono::time_point_cast<Micros>(std::chrono::system_clock::now());
}

std::shared_ptr<Clock> make_process_clock() {
  if (const char* offset = std::getenv("BATCHAI_CLOCK_OFFSET_S"); offset && *offset) {
    double seconds = std::strtod(offset, nullptr);
    return std::make_shared<OffsetClock>(Micros(static_cast<long long>(seconds * 1e6)));
  }
  return std::make_shared<SystemClock>();
}

std::string format_iso(TimePoint t) { return format_with(t, 'T'); }
std::string format_python_str(TimePoint t) { return format_with(t, ' '); }

std::optional<TimePoint> parse_iso(std::string_view text) {
  static const std::regex re(
      R"(^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$)");
  std::cmatch m;
  if (!std::regex_match(text.begin(), text.end(), m, re)) return std::nullopt;
  std::tm tm{};
  tm.tm_year = std::stoi(m[1]) - 1900;
  tm.tm_mon = std::stoi(m[2]) - 1;
  tm.tm_mday = std::stoi(m[3]);
  tm.tm_hour = std::stoi(m[4]);
  tm.tm_min = std::stoi(m[5]);
  tm.tm_sec = std::stoi(m[6]);
  long long micros = 0;
  if (m[7].matched) {
    std::string frac = m[7].str();
    frac.resize(6, '0');
    micros = std::stoll(frac.substr(0, 6));
  }
  long long offset_s = 0;
  if (m[8].matched && m[8].str() != "Z") {
    std::string off = m[8].str();
    int sign = off[0] == '-' ? -1 : 1;
    std::string digits;
    for (char c : off.substr(1))
      if (c != ':') digits += c;
    offset_s = sign * (std::stoll(digits.substr(0, 2)) * 3600 + std::stoll(digits.substr(2, 2)) * 60);
  }
  std::time_t secs = timegm(&tm) - offset_s;
  return TimePoint(Micros(static_cast<long long>(secs) * 1000000 + micros));
}

std::string format_timedelta(Micros d) {
  long long total = d.count();
  // Python normalises negative deltas as "-1 day, 23:59:59"; keep that shape.
  long long day_us = 86400LL * 1000000;
  long long days = total >= 0 ? total / day_us : -((-total + day_us - 1) / day_us);
  long long rest = total - days * day_us;
  long long secs = rest / 1000000, micros = rest % 1000000;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", secs / 3600, (secs / 60) % 60, secs % 60);
  std::string out = buf;
  if (micros) {
    std::snprintf(buf, sizeof buf, ".%06lld", micros);
    out += buf;
  }
  if (days != 0) out = std::to_string(days) + (days == 1 || days == -1 ? " day, " : " days, ") + out;
  return out;
}

std::optional<Micros> parse_duration(std::string_view text, bool* too_long) {
  if (too_long != nullptr) *too_long = false;
  // std::regex recurses per character: never hand it an unbounded string.
  if (text.size() > 64) return std::nullopt;
  std::string s(text);
  static const std::regex iso(R"(^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d+))?S)?)?$)");
  static const std::regex py(R"(^(?:(\d+) days?, )?(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$)");
  static const std::regex dotnet(R"(^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})$)");
  std::smatch m;
  // Each part, and the sum, is checked against kMaxDuration: "P99999999999D" must not wrap.
  long long total = 0;
  bool overflow = false;
  auto add = [&](int group, long long unit_us) {
    if (!m[group].matched || overflow) return;
    const std::string digits = m[group].str();
    const auto first = digits.find_first_not_of('0');
    if (first == std::string::npos) return;  // zero
    long long part = 0;
    overflow = digits.size() - first > 18 || __builtin_mul_overflow(std::stoll(digits.substr(first)), unit_us, &part) ||
               __builtin_add_overflow(total, part, &total) || total > kMaxDuration.count();
  };
  // A fraction of a second ("1.5S", ".500000") in microseconds, rounded to the nearest.
  auto add_fraction = [&](int group) {
    if (!m[group].matched || overflow) return;
    std::string f = m[group].str();
    const bool round_up = f.size() > 6 && f[6] >= '5';
    f.resize(6, '0');
    total += std::stoll(f) + (round_up ? 1 : 0);
    overflow = total > kMaxDuration.count();
  };
  constexpr long long kSecond = 1000000, kMinute = 60 * kSecond, kHour = 60 * kMinute, kDay = 24 * kHour;
  const bool is_iso = std::regex_match(s, m, iso) && s != "P" && s.back() != 'T';
  if (!is_iso && !std::regex_match(s, m, py) && !std::regex_match(s, m, dotnet)) return std::nullopt;
  add(1, kDay);
  add(2, kHour);
  add(3, kMinute);
  add(4, kSecond);
  if (m.size() > 5) add_fraction(5);
  if (overflow) {
    if (too_long != nullptr) *too_long = true;
    return std::nullopt;
  }
  return Micros(total);
}

}  // namespace batchai
