// Byte encodings and randomness the server's credentials and tokens are made of (OpenSSL's RNG).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace batchai::serve {

// `n` bytes from OpenSSL's CSPRNG; throws SystemError when it has none to give.
std::string random_bytes(std::size_t n);
// RFC 4648 §5 without padding, and back. Decoding takes the canonical text only: nullopt for any
// character outside the alphabet ('=' padding included), an impossible length, or a last
// character whose unused bits are not zero, so each byte string has exactly one encoding.
std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);
std::string hex_encode(std::string_view bytes);
std::optional<std::string> hex_decode(std::string_view text);
// HMAC-SHA256 of `data` under `key` (32 raw bytes).
std::string hmac_sha256(std::string_view key, std::string_view data);
// Compares in time independent of where the texts differ.
bool constant_time_equal(std::string_view a, std::string_view b);
// Percent-decoding of a URL path (`plus_is_space` false) or of a query or form value ('+' is a
// space); nullopt on a bad escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);
// application/x-www-form-urlencoded value decoding ('+' is a space); nullopt on a bad escape.
inline std::optional<std::string> form_decode(std::string_view text) { return percent_decode(text, true); }

}  // namespace batchai::serve
