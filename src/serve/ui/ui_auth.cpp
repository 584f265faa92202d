#include "ui/ui_auth.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "batchai/common/errors.hpp"
#include "http/encoding.hpp"
#include "http/private_file.hpp"

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

constexpr const char* kUsedFile = "ui-logins-used";  // "<expiry> <nonce>" lines
constexpr const char* kLockFile = "ui-logins.lock";
constexpr std::size_t kUsedLineBytes = 64;
constexpr std::chrono::milliseconds kLockWait{2000};

// An open file descriptor, closed (and its flock released) when it goes.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The exclusive lock every server of the home takes around the used set; false after kLockWait.
bool lock_used(const std::filesystem::path& folder, Fd& lock) {
  lock.fd = ::open((folder / kLockFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock.fd < 0) throw SystemError("Cannot open " + (folder / kLockFile).string() + ": " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + kLockWait;
  while (::flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The nonces of the file that have not expired (at most `max` lines are read).
std::map<std::string, std::int64_t> read_used(const std::filesystem::path& file, std::size_t max, std::int64_t now_s) {
  std::map<std::string, std::int64_t> used;
  Fd f;
  f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (f.fd < 0) return used;
  std::string text(max * kUsedLineBytes, '\0');
  std::size_t got = 0;
  for (ssize_t n; got < text.size() && (n = ::read(f.fd, text.data() + got, text.size() - got)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // a cut last line is no entry
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    const auto space = line.find(' ');
    std::int64_t expires = 0;
    if (space == std::string_view::npos) continue;
    auto [ptr, ec] = std::from_chars(line.data(), line.data() + space, expires);
    if (ec == std::errc() && ptr == line.data() + space && expires > now_s)
      used.emplace(std::string(line.substr(space + 1)), expires);
  }
  return used;
}

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

std::string ui_session_key(const Identity& identity, int port, std::string_view cookie) {
  return sign(identity, "ui-key\n" + std::to_string(port), cookie);
}

bool check_ui_session(const Identity& identity, int port, std::string_view cookie, std::string_view key,
                      std::int64_t now_s) {
  return check_ui_cookie(identity, port, cookie, now_s) &&
         constant_time_equal(key, ui_session_key(identity, port, cookie));
}

UiLoginCheck UsedUiLogins::redeem(const Identity& identity, std::string_view token, std::int64_t now_s) {
  Parts p;
  if (!split(token, p)) return UiLoginCheck::kMalformed;
  if (!constant_time_equal(p.signature, sign(identity, "ui-login", p.payload))) return UiLoginCheck::kBadSignature;
  if (p.expires <= now_s || p.expires > now_s + kUiLoginLifetimeSeconds) return UiLoginCheck::kExpired;
  // One redeem at a time in this process, and across the home's servers by the file's lock.
  std::lock_guard<std::mutex> guard(mutex_);
  make_private_dir(folder_);
  Fd lock;
  if (!lock_used(folder_, lock)) return UiLoginCheck::kTooMany;
  auto used = read_used(folder_ / kUsedFile, max_used_, now_s);
  const std::string nonce(p.nonce);
  if (used.count(nonce)) return UiLoginCheck::kUsed;
  if (used.size() >= max_used_) return UiLoginCheck::kTooMany;
  used.emplace(nonce, p.expires);
  std::string text;
  for (const auto& [n, expires] : used) text += std::to_string(expires) + " " + n + "\n";
  write_private_file(folder_ / kUsedFile, text);  // whole, then renamed: a crash keeps the old set
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
