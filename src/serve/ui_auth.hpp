// The dashboard's login (docs/serve.md "Dashboard"): a one-time link that `serve` prints and
// `serve ui-url` mints, exchanged once for a signed cookie. Both are HMAC-SHA256 under the home's
// token key, each with its own label, so neither passes for the other, for a bearer token or for
// a /batchai-files/ link. Nothing is stored but the nonces of links already used (in memory,
// until they expire): a new identity (credentials.json deleted) ends every link and every login.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "batchai/serve/server.hpp"

namespace batchai::serve {

constexpr std::int64_t kUiLoginLifetimeSeconds = 600;       // a link: 10 minutes
constexpr std::int64_t kUiCookieLifetimeSeconds = 43200;    // a login: 12 hours
// Links used and not yet expired that are remembered; past it, new logins wait (refused) until
// some expire, rather than the set growing without bound.
constexpr std::size_t kMaxUsedUiLogins = 4096;

// "<expiry>.<nonce>.<signature>" (URL-safe text).
std::string mint_ui_login_token(const Identity& identity, std::int64_t now_s);
// The link printed on stderr: https://localhost:PORT/ui/login?token=...
std::string ui_login_url(const Identity& identity, int port, std::int64_t now_s);
// The cookie's name for a server on `port` (the port keeps two homes' servers apart).
std::string ui_cookie_name(int port);
// A fresh login cookie's value, valid kUiCookieLifetimeSeconds.
std::string mint_ui_cookie(const Identity& identity, int port, std::int64_t now_s);
bool check_ui_cookie(const Identity& identity, int port, std::string_view value, std::int64_t now_s);

enum class UiLoginCheck { kValid, kMalformed, kBadSignature, kExpired, kUsed, kTooMany };

// The links already exchanged (each works once).
class UsedUiLogins {
 public:
  // Checks `token` and, when it is valid and new, remembers its nonce (until its expiry).
  UiLoginCheck redeem(const Identity& identity, std::string_view token, std::int64_t now_s);

 private:
  std::mutex mutex_;
  std::map<std::string, std::int64_t> used_;  // nonce -> expiry
};

// The value of cookie `name` in a request's Cookie headers; "" when absent.
std::string cookie_value(std::string_view cookie_header, std::string_view name);

}  // namespace batchai::serve
