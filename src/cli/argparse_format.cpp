// The texts of argparse's refusals: HelpFormatter's usage line and its wrapping, repr() of the
// values it quotes, int() as its `type=int` reads numbers, and difflib.get_close_matches for az's
// "The most similar choice" (CPython 3.11 Lib/argparse.py, Lib/difflib.py, Objects/unicodeobject.c).
#include "argparse_format.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <regex>

namespace batchai::cli::argparse {
namespace {

// UTF-8 → code points; a byte that is not valid UTF-8 becomes U+DC80+byte, as Python's
// surrogateescape decodes argv.
std::vector<std::uint32_t> code_points(const std::string& text) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < text.size();) {
    auto b = static_cast<unsigned char>(text[i]);
    std::size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    std::uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1fu) : len == 3 ? (b & 0x0fu) : (b & 0x07u);
    bool ok = len != 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      ok = (c & 0xc0) == 0x80;
      cp = (cp << 6) | (c & 0x3fu);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    out.push_back(ok ? cp : 0xdc00u + b);
    i += ok ? len : 1;
  }
  return out;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// str.isprintable() beyond ASCII: the control, format, separator, surrogate and private-use
// ranges that occur in practice (unassigned code points are not tracked).
bool printable(std::uint32_t cp) {
  if (cp <= 0xa0 || cp == 0xad || cp == 0x61c || cp == 0x1680 || cp == 0x180e || cp == 0x3000 || cp == 0xfeff) {
    return false;
  }
  if ((cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x206f)) return false;
  if ((cp >= 0xd800 && cp <= 0xf8ff) || (cp >= 0xfff9 && cp <= 0xfffb) || cp >= 0xf0000) return false;
  return true;
}

std::string hex(std::uint32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*x", digits, value);
  return buf;
}

std::string default_metavar(const ArgAction& a) {
  std::string name = a.long_name();
  name.erase(0, name.find_first_not_of('-'));
  for (auto& c : name) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

// _format_actions_usage for optionals (no mutually exclusive groups).
std::string actions_usage(const std::vector<ArgAction>& actions) {
  std::string text;
  for (const auto& a : actions) {
    std::string part = a.option_strings.front();
    if (a.takes_value()) {
      std::string metavar = a.metavar;
      if (metavar.empty() && !a.choices.empty()) {
        for (const auto& c : a.choices) metavar += (metavar.empty() ? "{" : ",") + c;
        metavar += "}";
      }
      if (metavar.empty()) metavar = default_metavar(a);
      bool many = a.kind == ArgKind::kStoreMany || a.kind == ArgKind::kExtend;
      part += " " + (many ? metavar + " [" + metavar + " ...]" : metavar);
    }
    text += (text.empty() ? "" : " ") + (a.required ? part : "[" + part + "]");
  }
  // argparse's clean-up of group separators (a no-op unless a metavar holds brackets).
  text = std::regex_replace(text, std::regex(R"(([\[(]) )"), "$1");
  text = std::regex_replace(text, std::regex(R"( ([\])]))"), "$1");
  text = std::regex_replace(text, std::regex(R"([\[(] *[\])])"), "");
  text = std::regex_replace(text, std::regex(R"(\(([^|]*)\))"), "$1");
  auto first = text.find_first_not_of(" \t\n\r\f\v");
  auto last = text.find_last_not_of(" \t\n\r\f\v");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

std::vector<std::string> wrappable_parts(const std::string& usage) {
  static const std::regex part(R"(\(.*?\)+(?=\s|$)|\[.*?\]+(?=\s|$)|\S+)");
  std::vector<std::string> out;
  for (std::sregex_iterator it(usage.begin(), usage.end(), part), end; it != end; ++it) out.push_back(it->str());
  return out;
}

// difflib.SequenceMatcher(None, a, b).ratio() (no junk; autojunk needs 200+ elements).
double ratio(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  std::size_t matches = 0;
  std::vector<std::array<std::size_t, 4>> queue{{0, a.size(), 0, b.size()}};
  while (!queue.empty()) {
    auto [alo, ahi, blo, bhi] = queue.back();
    queue.pop_back();
    // find_longest_match: the longest block, earliest in a, then earliest in b.
    std::size_t besti = alo, bestj = blo, best = 0;
    std::vector<std::size_t> run(b.size() + 1, 0), next(b.size() + 1, 0);
    for (std::size_t i = alo; i < ahi; ++i) {
      std::fill(next.begin(), next.end(), 0);
      for (std::size_t j = blo; j < bhi; ++j) {
        if (a[i] != b[j]) continue;
        std::size_t k = next[j + 1] = run[j] + 1;
        if (k > best) besti = i - k + 1, bestj = j - k + 1, best = k;
      }
      std::swap(run, next);
    }
    if (best == 0) continue;
    matches += best;
    if (alo < besti && blo < bestj) queue.push_back({alo, besti, blo, bestj});
    if (besti + best < ahi && bestj + best < bhi) queue.push_back({besti + best, ahi, bestj + best, bhi});
  }
  std::size_t length = a.size() + b.size();
  return length == 0 ? 1.0 : 2.0 * static_cast<double>(matches) / static_cast<double>(length);
}

}  // namespace

std::string format_usage(const std::string& prog, const std::vector<ArgAction>& actions,
                         const std::string& positional, int width) {
  const std::string prefix = "usage: ";
  std::string opt_usage = actions_usage(actions);
  std::string action_usage = opt_usage + (!opt_usage.empty() && !positional.empty() ? " " : "") + positional;
  std::string usage = prog + (action_usage.empty() ? "" : " " + action_usage);
  const auto text_width = static_cast<std::size_t>(std::max(width, 0));
  if (prefix.size() + usage.size() <= text_width) return prefix + usage;

  std::vector<std::string> opt_parts = wrappable_parts(opt_usage), pos_parts = wrappable_parts(positional);
  auto get_lines = [text_width](const std::vector<std::string>& parts, const std::string& indent,
                                const std::string* first_prefix) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t line_len = (first_prefix ? first_prefix->size() : indent.size()) - 1;
    for (const auto& p : parts) {
      if (line_len + 1 + p.size() > text_width && !line.empty()) {
        lines.push_back(indent + line);
        line.clear();
        line_len = indent.size() - 1;
      }
      line += (line.empty() ? "" : " ") + p;
      line_len += p.size() + 1;
    }
    if (!line.empty()) lines.push_back(indent + line);
    if (first_prefix != nullptr && !lines.empty()) lines[0] = lines[0].substr(indent.size());
    return lines;
  };
  std::vector<std::string> lines;
  if (static_cast<double>(prefix.size() + prog.size()) <= 0.75 * static_cast<double>(text_width)) {
    std::string indent(prefix.size() + prog.size() + 1, ' ');
    std::vector<std::string> first{prog};
    const auto& rest = opt_parts.empty() ? pos_parts : opt_parts;
    first.insert(first.end(), rest.begin(), rest.end());
    lines = get_lines(first, indent, &prefix);
    if (!opt_parts.empty()) {
      auto more = get_lines(pos_parts, indent, nullptr);
      lines.insert(lines.end(), more.begin(), more.end());
    }
  } else {
    std::string indent(prefix.size(), ' ');
    std::vector<std::string> parts = opt_parts;
    parts.insert(parts.end(), pos_parts.begin(), pos_parts.end());
    lines = get_lines(parts, indent, nullptr);
    if (lines.size() > 1) {
      lines = get_lines(opt_parts, indent, nullptr);
      auto more = get_lines(pos_parts, indent, nullptr);
      lines.insert(lines.end(), more.begin(), more.end());
    }
    lines.insert(lines.begin(), prog);
  }
  std::string out = prefix;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "\n") + lines[i];
  return out;
}

int usage_width() {
  int columns = 0;
  if (const char* env = std::getenv("COLUMNS"); env != nullptr) {
    if (auto value = py_int(env); value && (*value)[0] != '-') {
      columns = value->size() < 10 ? std::atoi(value->c_str()) : 1'000'000'000;
    }
  }
  if (columns <= 0) {
    winsize ws{};
    columns = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
  }
  return columns - 2;
}

std::string py_repr(const std::string& text) {
  std::vector<std::uint32_t> cps = code_points(text);
  bool single = std::find(cps.begin(), cps.end(), '\'') != cps.end();
  bool dbl = std::find(cps.begin(), cps.end(), '"') != cps.end();
  const char quote = single && !dbl ? '"' : '\'';
  std::string out(1, quote);
  for (std::uint32_t cp : cps) {
    if (cp == static_cast<std::uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7f) {
      out += "\\x" + hex(cp, 2);
    } else if (cp < 0x7f || printable(cp)) {
      append_utf8(out, cp);
    } else {
      out += cp <= 0xff ? "\\x" + hex(cp, 2) : cp <= 0xffff ? "\\u" + hex(cp, 4) : "\\U" + hex(cp, 8);
    }
  }
  return out + quote;
}

std::optional<std::string> py_int(const std::string& text) {
  const std::string space = " \t\n\v\f\r\x1c\x1d\x1e\x1f";
  auto first = text.find_first_not_of(space);
  if (first == std::string::npos) return std::nullopt;
  std::string s = text.substr(first, text.find_last_not_of(space) - first + 1);
  bool negative = s[0] == '-';
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  std::string digits;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c != '_' || digits.empty() || i + 1 >= s.size() || s[i + 1] < '0' || s[i + 1] > '9') {
      return std::nullopt;  // a sign alone, a stray character, or '_' not between two digits
    }
  }
  if (digits.empty() || digits.size() > 4300) return std::nullopt;  // int()'s 4300-digit limit
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  return (negative && digits != "0" ? "-" : "") + digits;
}

std::vector<std::string> close_matches(const std::string& word, const std::vector<std::string>& possibilities,
                                       std::size_t n, double cutoff) {
  std::vector<std::pair<double, std::string>> scored;
  std::vector<std::uint32_t> b = code_points(word);
  for (const auto& x : possibilities) {
    double r = ratio(code_points(x), b);
    if (r >= cutoff) scored.emplace_back(r, x);
  }
  // heapq.nlargest on (score, word) tuples: ties go to the larger word.
  std::sort(scored.begin(), scored.end(), [](const auto& l, const auto& r) { return l > r; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace batchai::cli::argparse
