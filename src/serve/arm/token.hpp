// Bearer tokens of `batchai serve` (docs/serve.md "Auth"): JWT-shaped (az decodes them without
// verifying and reads `tid`), signed HS256 with the home's token key, so the server can verify
// them without keeping state: a token is valid while its signature checks, `nbf` has come,
// `exp` is ahead and `aud` names the ARM endpoint it is used on.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "batchai/serve/server.hpp"

namespace batchai::serve {

constexpr std::int64_t kTokenLifetimeSeconds = 3600;
// A longer Authorization header is refused before any decoding.
constexpr std::size_t kMaxTokenBytes = 4096;
// How far ahead of this clock a token's `nbf` may be (another process's clock stepping back).
constexpr std::int64_t kTokenClockSkewSeconds = 60;

std::string issue_token(const Identity& identity, const std::string& audience, std::int64_t now_s);

enum class TokenCheck { kValid, kMalformed, kBadSignature, kExpired, kNotYetValid, kWrongAudience };

// The audiences a token may carry to be used on ARM at `base_url` ("https://localhost:PORT"):
// the one az asks for (the metadata's audience, base_url + "/"), base_url itself (a client
// scoped "<base_url>/.default"), and the public cloud's ARM audiences that the Azure SDK asks
// for by default. A token for any other resource (storage's, say) is refused on ARM.
std::vector<std::string> arm_audiences(std::string_view base_url);

// Verifies `token` for use where `audiences` are accepted (compared exactly).
TokenCheck check_token(const Identity& identity, std::string_view token, std::int64_t now_s,
                       const std::vector<std::string>& audiences);

}  // namespace batchai::serve
