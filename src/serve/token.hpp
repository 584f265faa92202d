// Bearer tokens of `batchai serve` (docs/serve.md "Auth"): JWT-shaped (az decodes them without
// verifying and reads `tid`), signed HS256 with the home's token key, so the server can verify
// them without keeping state: a token is valid while its signature checks and `exp` is ahead.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "batchai/serve/server.hpp"

namespace batchai::serve {

constexpr std::int64_t kTokenLifetimeSeconds = 3600;
// A longer Authorization header is refused before any decoding.
constexpr std::size_t kMaxTokenBytes = 4096;

std::string issue_token(const Identity& identity, const std::string& audience, std::int64_t now_s);

enum class TokenCheck { kValid, kMalformed, kBadSignature, kExpired };
TokenCheck check_token(const Identity& identity, std::string_view token, std::int64_t now_s);

}  // namespace batchai::serve
