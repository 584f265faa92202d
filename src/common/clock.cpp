// Clock implementations and the Python-compatible time/duration text forms.
#include "batchai/common/clock.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

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

// The value of a run of at most 18 decimal digits (it cannot overflow).
long long decimal(std::string_view digits) {
  long long value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  return value;
}

// The microseconds of a fraction of a second given by its digits: the first six, padded with zeros.
long long fraction_micros(std::string_view digits) {
  const std::string_view six = digits.substr(0, 6);
  long long micros = decimal(six);
  for (std::size_t k = six.size(); k < 6; ++k) micros *= 10;
  return micros;
}

// A cursor over the fixed text forms parsed here (hand-written: compiling a std::regex costs more
// than a supervisor's other work for a trivial job).
struct Scan {
  std::string_view text;
  std::size_t at = 0;

  bool done() const { return at == text.size(); }
  bool eat(char c) {
    if (at < text.size() && text[at] == c) return ++at, true;
    return false;
  }
  bool eat_word(std::string_view word) {
    if (text.substr(at, word.size()) != word) return false;
    at += word.size();
    return true;
  }
  // A run of at least `least` and at most `most` digits (taking no more than `most`).
  std::optional<std::string_view> digits(std::size_t least, std::size_t most = std::string_view::npos) {
    std::size_t end = at;
    while (end < text.size() && end - at < most && text[end] >= '0' && text[end] <= '9') ++end;
    if (end - at < least) return std::nullopt;
    const std::string_view run = text.substr(at, end - at);
    at = end;
    return run;
  }
  // The same, as a number (runs of at most 18 digits).
  std::optional<long long> number(std::size_t least, std::size_t most) {
    const auto run = digits(least, most);
    return run ? std::optional<long long>(decimal(*run)) : std::nullopt;
  }
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
  // YYYY-MM-DD[T ]hh:mm:ss[.f{1,9}][Z|(+|-)hh[:]mm]
  Scan in{text};
  const auto year = in.number(4, 4), mon = in.eat('-') ? in.number(2, 2) : std::nullopt,
             day = in.eat('-') ? in.number(2, 2) : std::nullopt;
  if (!year || !mon || !day || !(in.eat('T') || in.eat(' '))) return std::nullopt;
  const auto hour = in.number(2, 2), min = in.eat(':') ? in.number(2, 2) : std::nullopt,
             sec = in.eat(':') ? in.number(2, 2) : std::nullopt;
  if (!hour || !min || !sec) return std::nullopt;
  long long micros = 0;
  if (in.eat('.')) {
    const auto frac = in.digits(1, 9);
    if (!frac) return std::nullopt;
    micros = fraction_micros(*frac);
  }
  long long offset_s = 0;
  if (!in.eat('Z') && !in.done()) {
    const int sign = in.eat('-') ? -1 : in.eat('+') ? 1 : 0;
    const auto oh = sign != 0 ? in.number(2, 2) : std::nullopt;
    in.eat(':');
    const auto om = oh ? in.number(2, 2) : std::nullopt;
    if (!om) return std::nullopt;
    offset_s = sign * (*oh * 3600 + *om * 60);
  }
  if (!in.done()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = static_cast<int>(*year) - 1900;
  tm.tm_mon = static_cast<int>(*mon) - 1;
  tm.tm_mday = static_cast<int>(*day);
  tm.tm_hour = static_cast<int>(*hour);
  tm.tm_min = static_cast<int>(*min);
  tm.tm_sec = static_cast<int>(*sec);
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

namespace {

// The parts of a duration as text: digit runs (empty when absent) and the fraction of a second.
struct DurationParts {
  std::string_view days, hours, minutes, seconds, fraction;
};

// ISO 8601: P[nD][T[nH][nM][n[.f]S]], not "P" alone and not ending in "T".
std::optional<DurationParts> iso_duration(std::string_view text) {
  Scan in{text};
  DurationParts p;
  if (!in.eat('P') || text.size() == 1 || text.back() == 'T') return std::nullopt;
  if (auto d = in.digits(1)) {
    if (!in.eat('D')) return std::nullopt;
    p.days = *d;
  }
  if (in.eat('T')) {
    auto d = in.digits(1);
    if (d && in.eat('H')) {
      p.hours = *d;
      d = in.digits(1);
    }
    if (d && in.eat('M')) {
      p.minutes = *d;
      d = in.digits(1);
    }
    if (d) {
      if (in.eat('.')) {
        const auto f = in.digits(1);
        if (!f) return std::nullopt;
        p.fraction = *f;
      }
      if (!in.eat('S')) return std::nullopt;
      p.seconds = *d;
    }
  }
  if (!in.done()) return std::nullopt;
  return p;
}

// ":mm:ss" after the hours `hours` of a clock-style duration, into `p`.
bool clock_time(Scan& in, std::string_view hours, DurationParts& p) {
  if (!in.eat(':')) return false;
  const auto minutes = in.digits(2, 2);
  const auto seconds = minutes && in.eat(':') ? in.digits(2, 2) : std::nullopt;
  if (!seconds) return false;
  p.hours = hours;
  p.minutes = *minutes;
  p.seconds = *seconds;
  return true;
}

// Python's timedelta: [n day[s], ]h:mm:ss[.f{1,6}]
std::optional<DurationParts> python_duration(std::string_view text) {
  Scan in{text};
  DurationParts p;
  auto d = in.digits(1);
  if (d && in.eat(' ')) {
    if (!in.eat_word("day")) return std::nullopt;
    in.eat('s');
    if (!in.eat_word(", ")) return std::nullopt;
    p.days = *d;
    d = in.digits(1);
  }
  if (!d || !clock_time(in, *d, p)) return std::nullopt;
  if (in.eat('.')) {
    const auto f = in.digits(1, 6);
    if (!f) return std::nullopt;
    p.fraction = *f;
  }
  if (!in.done()) return std::nullopt;
  return p;
}

// .NET TimeSpan: [d.]h[h]:mm:ss
std::optional<DurationParts> dotnet_duration(std::string_view text) {
  Scan in{text};
  DurationParts p;
  auto d = in.digits(1);
  if (d && in.eat('.')) {
    p.days = *d;
    d = in.digits(1, 2);
  }
  if (!d || d->size() > 2 || !clock_time(in, *d, p) || !in.done()) return std::nullopt;
  return p;
}

}  // namespace

std::optional<Micros> parse_duration(std::string_view text, bool* too_long) {
  if (too_long != nullptr) *too_long = false;
  if (text.size() > 64) return std::nullopt;  // no duration form is longer
  auto parts = iso_duration(text);
  if (!parts) parts = python_duration(text);
  if (!parts) parts = dotnet_duration(text);
  if (!parts) return std::nullopt;
  // Each part, and the sum, is checked against kMaxDuration: "P99999999999D" must not wrap.
  long long total = 0;
  bool overflow = false;
  auto add = [&](std::string_view digits, long long unit_us) {
    const auto first = digits.find_first_not_of('0');
    if (digits.empty() || first == std::string_view::npos || overflow) return;  // absent or zero
    long long part = 0;
    overflow = digits.size() - first > 18 || __builtin_mul_overflow(decimal(digits.substr(first)), unit_us, &part) ||
               __builtin_add_overflow(total, part, &total) || total > kMaxDuration.count();
  };
  constexpr long long kSecond = 1000000, kMinute = 60 * kSecond, kHour = 60 * kMinute, kDay = 24 * kHour;
  add(parts->days, kDay);
  add(parts->hours, kHour);
  add(parts->minutes, kMinute);
  add(parts->seconds, kSecond);
  if (!parts->fraction.empty() && !overflow) {
    // A fraction of a second ("1.5S", ".500000") in microseconds, rounded to the nearest.
    total += fraction_micros(parts->fraction) + (parts->fraction.size() > 6 && parts->fraction[6] >= '5' ? 1 : 0);
    overflow = total > kMaxDuration.count();
  }
  if (overflow) {
    if (too_long != nullptr) *too_long = true;
    return std::nullopt;
  }
  return Micros(total);
}

}  // namespace batchai
