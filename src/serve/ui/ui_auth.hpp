// The dashboard's login (docs/serve.md "Dashboard"): a one-time link that `serve` prints and
// `serve ui-url` mints, exchanged once for a signed cookie and a session key bound to it. All are
// HMAC-SHA256 under the home's token key, each with its own label, so none passes for another, for
// a bearer token or for a /batchai-files/ link. Browsers send the cookie to every port of the host;
// the key lives only in this origin's storage and is sent as a header, so the cookie alone is
// worth nothing. Nothing is stored but the nonces of links already used (in the home's serve
// folder, shared by its servers and kept across restarts, until they expire): a new identity
// (credentials.json deleted) ends every link and every login.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
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
// The session key of a login cookie: the page keeps it in its origin's storage and sends it as
// the X-Batchai-UI header, which no other origin (another port included) can read or send.
std::string ui_session_key(const Identity& identity, int port, std::string_view cookie);
// A valid cookie together with its own session key.
bool check_ui_session(const Identity& identity, int port, std::string_view cookie, std::string_view key,
                      std::int64_t now_s);

enum class UiLoginCheck { kValid, kMalformed, kBadSignature, kExpired, kUsed, kTooMany };

// The links already exchanged (each works once), kept in `folder` (the home's serve folder):
// every server of the home, and the next one after a restart, sees them.
class UsedUiLogins {
 public:
  explicit UsedUiLogins(std::filesystem::path folder, std::size_t max_used = kMaxUsedUiLogins)
      : folder_(std::move(folder)), max_used_(max_used) {}
  // Checks `token` and, when it is valid and new, remembers its nonce (until its expiry).
  // kTooMany also when the file's lock is not had within 2 s.
  UiLoginCheck redeem(const Identity& identity, std::string_view token, std::int64_t now_s);

 private:
  std::mutex mutex_;
  std::filesystem::path folder_;
  std::size_t max_used_;
};

// The value of cookie `name` in a request's Cookie headers; "" when absent.
std::string cookie_value(std::string_view cookie_header, std::string_view name);

}  // namespace batchai::serve
