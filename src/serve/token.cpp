#include "token.hpp"

#include "batchai/common/json_util.hpp"
#include "encoding.hpp"

namespace batchai::serve {

std::string issue_token(const Identity& identity, const std::string& audience, std::int64_t now_s) {
  const Json header = {{"alg", "HS256"}, {"typ", "JWT"}};
  const Json claims = {{"aud", audience},
                       {"iss", "https://localhost/adfs"},
                       {"iat", now_s},
                       {"nbf", now_s},
                       {"exp", now_s + kTokenLifetimeSeconds},
                       {"tid", identity.tenant_id},
                       {"oid", identity.client_id},
                       {"sub", identity.client_id},
                       {"appid", identity.client_id}};
  const std::string signed_part = base64url_encode(header.dump()) + "." + base64url_encode(claims.dump());
  return signed_part + "." + base64url_encode(hmac_sha256(identity.token_key, signed_part));
}

TokenCheck check_token(const Identity& identity, std::string_view token, std::int64_t now_s) {
  if (token.empty() || token.size() > kMaxTokenBytes) return TokenCheck::kMalformed;
  const auto first = token.find('.');
  const auto last = token.rfind('.');
  if (first == std::string_view::npos || first == last) return TokenCheck::kMalformed;
  const std::string_view signed_part = token.substr(0, last);
  auto signature = base64url_decode(token.substr(last + 1));
  if (!signature) return TokenCheck::kMalformed;
  if (!constant_time_equal(*signature, hmac_sha256(identity.token_key, signed_part))) return TokenCheck::kBadSignature;
  // Signed by us: the claims are ours, but parse defensively all the same.
  auto claims_text = base64url_decode(token.substr(first + 1, last - first - 1));
  if (!claims_text) return TokenCheck::kMalformed;
  Json claims = Json::parse(*claims_text, nullptr, false);
  if (!claims.is_object() || !claims.contains("exp") || !claims["exp"].is_number_integer() ||
      !claims.contains("tid") || claims["tid"] != identity.tenant_id)
    return TokenCheck::kMalformed;
  if (claims["exp"].get<std::int64_t>() <= now_s) return TokenCheck::kExpired;
  return TokenCheck::kValid;
}

}  // namespace batchai::serve
