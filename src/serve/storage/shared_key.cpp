#include "storage/shared_key.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "batchai/common/ids.hpp"
#include "http/encoding.hpp"

namespace batchai::serve {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool starts_with_ci(const std::string& text, std::string_view prefix) {
  return text.size() >= prefix.size() && to_lower(text.substr(0, prefix.size())) == prefix;
}

std::string header(const HttpRequest& req, const char* name) {
  return req.has_header(name) ? req.get_header_value(name) : std::string();
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  unsigned v = 0;
  int bits = 0;
  std::size_t pad = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') {
      if (i + 2 < text.size()) return std::nullopt;  // padding only at the end
      ++pad;
      continue;
    }
    if (pad) return std::nullopt;
    const auto pos = kAlphabet.find(c);
    if (pos == std::string_view::npos) return std::nullopt;
    v = (v << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xFF);
    }
  }
  return out;
}

std::string rfc1123(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

std::optional<std::time_t> parse_rfc1123(const std::string& text) {
  if (text.size() > 64) return std::nullopt;
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  return timegm(&tm);
}

std::string shared_key_string_to_sign(const HttpRequest& req, const std::string& account, const std::string& path) {
  std::string out = req.method + "\n";
  for (const char* name : {"Content-Encoding", "Content-Language", "Content-Length", "Content-MD5", "Content-Type",
                           "Date", "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"}) {
    std::string value = header(req, name);
    if (std::string_view(name) == "Content-Length" && value == "0") value.clear();
    out += value + "\n";
  }
  std::vector<std::pair<std::string, std::string>> ms;
  for (const auto& [name, value] : req.headers)
    if (starts_with_ci(name, "x-ms-")) ms.emplace_back(to_lower(name), value);
  std::sort(ms.begin(), ms.end());
  for (const auto& [name, value] : ms) out += name + ":" + value + "\n";
  out += "/" + account + path;
  // Query parameters by lower-cased name, values of one name joined with ',' (decoded).
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [name, value] : req.params) query.emplace_back(to_lower(name), value);
  std::sort(query.begin(), query.end());
  for (std::size_t i = 0; i < query.size();) {
    std::string line = "\n" + query[i].first + ":" + query[i].second;
    std::size_t j = i + 1;
    for (; j < query.size() && query[j].first == query[i].first; ++j) line += "," + query[j].second;
    out += line;
    i = j;
  }
  return out;
}

std::optional<std::string> shared_key_signature(std::string_view key_base64, std::string_view text) {
  auto key = base64_decode(key_base64);
  if (!key || key->empty()) return std::nullopt;
  return base64_encode(hmac_sha256(*key, text));
}

std::string shared_key_refusal(const HttpRequest& req, const std::string& account,
                               const std::vector<std::string>& keys, std::time_t now) {
  const std::string auth = header(req, "Authorization");
  if (auth.empty()) return "The request carries no Authorization header (SharedKey).";
  if (auth.size() > 512 || auth.rfind("SharedKey ", 0) != 0)
    return "Only SharedKey authorization is served on the storage endpoints.";
  const std::string credential = auth.substr(10);
  const auto colon = credential.rfind(':');
  if (colon == std::string::npos || to_lower(credential.substr(0, colon)) != account)
    return "The SharedKey credential names another account.";
  const std::string date = req.has_header("x-ms-date") ? header(req, "x-ms-date") : header(req, "Date");
  const auto when = parse_rfc1123(date);
  if (!when) return "The request has no valid x-ms-date or Date header.";
  if (*when < now - kSharedKeyClockSkewSeconds || *when > now + kSharedKeyClockSkewSeconds)
    return "The request's date is more than 15 minutes away from the server's time.";
  const std::string path = req.target.empty() ? req.path : req.target.substr(0, req.target.find('?'));
  const std::string text = shared_key_string_to_sign(req, account, path);
  const std::string given = credential.substr(colon + 1);
  bool ok = false;
  for (const auto& key : keys)
    if (auto sig = shared_key_signature(key, text)) ok = constant_time_equal(*sig, given) || ok;
  return ok ? std::string() : "The MAC signature found in the HTTP request is not the same as any computed signature.";
}

}  // namespace batchai::serve
