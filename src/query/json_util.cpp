// JSON helpers with JMESPath semantics (see json_util.hpp).
#include "json_util.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace batchai::query::detail {
namespace {

bool is_integer(const Json& v) { return v.is_number_integer(); }  // signed or unsigned

// Decodes one UTF-8 sequence at text[i]; invalid bytes decode as themselves (Latin-1).
char32_t decode_utf8(std::string_view text, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  auto continuation = [&](std::size_t k) -> int {
    if (i + k >= text.size()) return -1;
    const auto b = static_cast<unsigned char>(text[i + k]);
    return (b & 0xC0U) == 0x80U ? static_cast<int>(b & 0x3FU) : -1;
  };
  if (b0 < 0x80U) {
    ++i;
    return b0;
  }
  int extra = 0;
  char32_t cp = 0;
  if ((b0 & 0xE0U) == 0xC0U) {
    extra = 1;
    cp = b0 & 0x1FU;
  } else if ((b0 & 0xF0U) == 0xE0U) {
    extra = 2;
    cp = b0 & 0x0FU;
  } else if ((b0 & 0xF8U) == 0xF0U) {
    extra = 3;
    cp = b0 & 0x07U;
  } else {
    ++i;
    return b0;
  }
  for (int k = 1; k <= extra; ++k) {
    const int c = continuation(static_cast<std::size_t>(k));
    if (c < 0) {
      ++i;
      return b0;
    }
    cp = (cp << 6U) | static_cast<char32_t>(c);
  }
  i += static_cast<std::size_t>(extra) + 1;
  return cp;
}

void append_u_escape(std::string& out, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", value);
  out += buf;
}

void dump_string(const std::string& s, std::string& out) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const char32_t cp = decode_utf8(s, i);
    switch (cp) {
      case U'"': out += "\\\""; break;
      case U'\\': out += "\\\\"; break;
      case U'\n': out += "\\n"; break;
      case U'\r': out += "\\r"; break;
      case U'\t': out += "\\t"; break;
      case U'\b': out += "\\b"; break;
      case U'\f': out += "\\f"; break;
      default:
        if (cp >= 0x20 && cp < 0x7F) {
          out += static_cast<char>(cp);
        } else if (cp > 0xFFFF) {  // Python escapes astral code points as surrogate pairs
          const unsigned v = static_cast<unsigned>(cp) - 0x10000U;
          append_u_escape(out, 0xD800U + (v >> 10U));
          append_u_escape(out, 0xDC00U + (v & 0x3FFU));
        } else {
          append_u_escape(out, static_cast<unsigned>(cp));
        }
    }
  }
  out += '"';
}

// Python's float repr: shortest round-trip digits, exponent form outside 1e-4 <= |x| < 1e16.
void dump_double(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-Infinity" : "Infinity";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // e.g. "-1.2345e+03"
  const auto epos = sci.find('e');
  const int exponent = std::stoi(sci.substr(epos + 1));
  std::string mantissa = sci.substr(0, epos);
  const bool negative = !mantissa.empty() && mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  if (negative) out += '-';
  if (exponent >= -4 && exponent < 16) {
    const int point = exponent + 1;  // digits before the decimal point
    if (point <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-point), '0');
      out += digits;
    } else if (static_cast<std::size_t>(point) >= digits.size()) {
      out += digits;
      out.append(static_cast<std::size_t>(point) - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<std::size_t>(point));
      out += '.';
      out += digits.substr(static_cast<std::size_t>(point));
    }
    return;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += ebuf;
}

void dump(const Json& v, std::string& out) {
  switch (v.type()) {
    case Json::value_t::null: out += "null"; break;
    case Json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; break;
    case Json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); break;
    case Json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); break;
    case Json::value_t::number_float: dump_double(v.get<double>(), out); break;
    case Json::value_t::string: dump_string(v.get_ref<const std::string&>(), out); break;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        dump(e, out);
      }
      out += ']';
      break;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, e] : v.items()) {
        if (!first) out += ',';
        first = false;
        dump_string(key, out);
        out += ':';
        dump(e, out);
      }
      out += '}';
      break;
    }
    default: out += "null"; break;  // binary and discarded values never come from JSON text
  }
}

std::string_view strip(std::string_view s) {
  const auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

bool is_truthy(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return false;
    case Json::value_t::boolean: return value.get<bool>();
    case Json::value_t::string: return !value.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object: return !value.empty();
    default: return true;
  }
}

const char* type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "number";
    default: return "null";
  }
}

int compare_numbers(const Json& a, const Json& b) {
  if (is_integer(a) && is_integer(b)) {
    const bool a_neg = a.is_number_unsigned() ? false : a.get<std::int64_t>() < 0;
    const bool b_neg = b.is_number_unsigned() ? false : b.get<std::int64_t>() < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    if (a_neg) {
      const auto x = a.get<std::int64_t>();
      const auto y = b.get<std::int64_t>();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const auto x = a.get<std::uint64_t>();
    const auto y = b.get<std::uint64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  const double x = a.get<double>();
  const double y = b.get<double>();
  return x < y ? -1 : (x > y ? 1 : 0);
}

bool json_equal(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == 0;
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!json_equal(a[i], b[i])) return false;
      }
      return true;
    }
    case Json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (const auto& [key, value] : a.items()) {
        const auto it = b.find(key);
        if (it == b.end() || !json_equal(value, *it)) return false;
      }
      return true;
    }
    default: return a == b;
  }
}

std::string python_dumps(const Json& value) {
  std::string out;
  dump(value, out);
  return out;
}

std::size_t utf8_length(std::string_view text) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size();) {
    decode_utf8(text, i);
    ++n;
  }
  return n;
}

std::string utf8_reverse(std::string_view text) {
  std::string out(text.size(), '\0');
  std::size_t end = text.size();
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t start = i;
    decode_utf8(text, i);
    const std::size_t len = i - start;
    end -= len;
    out.replace(end, len, text.substr(start, len));
  }
  return out;
}

std::optional<Json> parse_number_like_python(std::string_view text) {
  std::string_view s = strip(text);
  if (s.empty()) return std::nullopt;
  // int(): optional sign then digits (underscores between digits are rare; not accepted here).
  std::string_view digits = s;
  if (digits.front() == '+' || digits.front() == '-') digits.remove_prefix(1);
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::int64_t value = 0;
    const char* first = s.data() + (s.front() == '+' ? 1 : 0);
    const auto res = std::from_chars(first, s.data() + s.size(), value);
    if (res.ec == std::errc() && res.ptr == s.data() + s.size()) return Json(value);
  }
  // float(): decimal or exponent notation; inf/nan are not JSON, so they give null.
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  });
  if (!plain) return std::nullopt;
  double d = 0;
  const char* first = s.data() + (s.front() == '+' ? 1 : 0);
  const auto res = std::from_chars(first, s.data() + s.size(), d);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
  return Json(d);
}


}  // namespace batchai::query::detail
