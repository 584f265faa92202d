#include "ui_auth.hpp"

#include <charconv>
#include <vector>

#include "encoding.hpp"

namespace batchai::serve {
namespace {

constexpr std::size_t kNonceBytes = 16;
constexpr std::size_t kMaxTokenBytes = 256;  // a link's token or a cookie is about 90 bytes

std::string sign(const Identity& identity, std::string_view label, std::string_view payload) {
  return base64url_encode(hmac_sha256(identity.token_key, std::string(label) + "\n" + std::string(payload)));
}

struct Parts {
  std::int64_t expires = 0;
  std::string_view nonce;
  std::string_view payload;  // "<expiry>.<nonce>"
  std::string_view signature;
};

// "<expiry>.<nonce>.<signature>": decimal, 32 hex digits, base64url.
bool split(std::string_view token, Parts& out) {
  if (token.empty() || token.size() > kMaxTokenBytes) return false;
  const auto first = token.find('.');
  const auto last = token.rfind('.');
  if (first == std::string_view::npos || first == last) return false;
  const std::string_view expiry = token.substr(0, first);
  out.nonce = token.substr(first + 1, last - first - 1);
  out.payload = token.substr(0, last);
  out.signature = token.substr(last + 1);
  if (expiry.empty() || expiry.size() > 12 || out.nonce.size() != 2 * kNonceBytes ||
      out.nonce.find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return false;
  auto [end, ec] = std::from_chars(expiry.data(), expiry.data() + expiry.size(), out.expires);
  return ec == std::errc() && end == expiry.data() + expiry.size();
}

std::string mint(const Identity& identity, std::string_view label, std::int64_t expires) {
  const std::string payload = std::to_string(expires) + "." + hex_encode(random_bytes(kNonceBytes));
  return payload + "." + sign(identity, label, payload);
}

std::string cookie_label(int port) { return "ui-cookie\n" + std::to_string(port); }

}  // namespace

std::string mint_ui_login_token(const Identity& identity, std::int64_t now_s) {
  return mint(identity, "ui-login", now_s + kUiLoginLifetimeSeconds);
}

std::string ui_login_url(const Identity& identity, int port, std::int64_t now_s) {
  return "https://localhost:" + std::to_string(port) + "/ui/login?token=" + mint_ui_login_token(identity, now_s);
}

std::string ui_cookie_name(int port) { return "__Host-batchai-ui-" + std::to_string(port); }

std::string mint_ui_cookie(const Identity& identity, int port, std::int64_t now_s) {
  return mint(identity, cookie_label(port), now_s + kUiCookieLifetimeSeconds);
}

bool check_ui_cookie(const Identity& identity, int port, std::string_view value, std::int64_t now_s) {
  Parts p;
  if (!split(value, p)) return false;
  if (!constant_time_equal(p.signature, sign(identity, cookie_label(port), p.payload))) return false;
  // Never longer than a login lasts, whatever a (signed) expiry says.
  return p.expires > now_s && p.expires <= now_s + kUiCookieLifetimeSeconds;
}

UiLoginCheck UsedUiLogins::redeem(const Identity& identity, std::string_view token, std::int64_t now_s) {
  Parts p;
  if (!split(token, p)) return UiLoginCheck::kMalformed;
  if (!constant_time_equal(p.signature, sign(identity, "ui-login", p.payload))) return UiLoginCheck::kBadSignature;
  if (p.expires <= now_s || p.expires > now_s + kUiLoginLifetimeSeconds) return UiLoginCheck::kExpired;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = used_.begin(); it != used_.end();) it = it->second <= now_s ? used_.erase(it) : std::next(it);
  const std::string nonce(p.nonce);
  if (used_.count(nonce)) return UiLoginCheck::kUsed;
  if (used_.size() >= kMaxUsedUiLogins) return UiLoginCheck::kTooMany;
  used_.emplace(nonce, p.expires);
  return UiLoginCheck::kValid;
}

std::string cookie_value(std::string_view header, std::string_view name) {
  // "a=1; b=2" (RFC 6265 §4.2.1); the first pair with that exact name counts.
  std::size_t start = 0;
  while (start < header.size()) {
    std::size_t end = header.find(';', start);
    if (end == std::string_view::npos) end = header.size();
    std::string_view pair = header.substr(start, end - start);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      std::string_view value = pair.substr(eq + 1);
      while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
      return std::string(value);
    }
    start = end + 1;
  }
  return "";
}

}  // namespace batchai::serve
