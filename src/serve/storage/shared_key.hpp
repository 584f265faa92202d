// Storage's SharedKey authentication (the scheme az and the storage SDKs sign data-plane requests
// with): "Authorization: SharedKey ACCOUNT:SIG", SIG the base64 HMAC-SHA256, under the account's
// base64 key, of the canonical string of the request (verb, standard headers, x-ms-* headers,
// then /ACCOUNT/PATH and the sorted query).
#pragma once
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_message.hpp"

namespace batchai::serve {

// Requests signed longer ago (or further ahead) than this are refused, as Azure does (15 min).
inline constexpr std::time_t kSharedKeyClockSkewSeconds = 15 * 60;

// The string the signature covers, for `account` (version 2015-02-21 on: a Content-Length of 0
// is signed as empty). `path` is the request path as sent (percent-encoded).
std::string shared_key_string_to_sign(const HttpRequest& req, const std::string& account, const std::string& path);
// base64(HMAC-SHA256(base64-decoded key, text)); nullopt when the key is not base64.
std::optional<std::string> shared_key_signature(std::string_view key_base64, std::string_view text);
// The reason the request is refused (empty when accepted): no or malformed Authorization, another
// account, no date or one outside kSharedKeyClockSkewSeconds of `now`, or a signature that
// matches none of `keys`.
std::string shared_key_refusal(const HttpRequest& req, const std::string& account,
                               const std::vector<std::string>& keys, std::time_t now);
// "Tue, 25 Nov 2026 10:00:00 GMT" (RFC 1123, the form of Date, x-ms-date and Last-Modified).
std::string rfc1123(std::time_t t);
std::optional<std::time_t> parse_rfc1123(const std::string& text);
// Standard base64 (RFC 4648 §4, with padding), and back (nullopt on anything else).
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace batchai::serve
