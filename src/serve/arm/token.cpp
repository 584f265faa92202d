#include "arm/token.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include "batchai/common/json_util.hpp"
#include "http/encoding.hpp"

namespace batchai::serve {
namespace {

using AudienceRule = std::function<bool(const std::string&)>;

// The public cloud's ARM audiences (azure-mgmt clients scope "https://management.azure.com/.default").
constexpr std::string_view kPublicArmAudiences[] = {"https://management.azure.com", "https://management.azure.com/",
                                                    "https://management.core.windows.net",
                                                    "https://management.core.windows.net/"};

bool integer_claim(const Json& claims, const char* key) {
  auto it = claims.find(key);
  return it != claims.end() && it->is_number_integer();
}

TokenCheck check(const Identity& identity, std::string_view token, std::int64_t now_s, const AudienceRule& accepted) {
  if (token.empty() || token.size() > kMaxTokenBytes) return TokenCheck::kMalformed;
  const auto first = token.find('.');
  const auto last = token.rfind('.');
  if (first == std::string_view::npos || first == last) return TokenCheck::kMalformed;
  const std::string_view signed_part = token.substr(0, last);
  auto signature = base64url_decode(token.substr(last + 1));  // canonical text only (encoding.hpp)
  if (!signature) return TokenCheck::kMalformed;
  if (!constant_time_equal(*signature, hmac_sha256(identity.token_key, signed_part))) return TokenCheck::kBadSignature;
  // Signed by us: the claims are ours, but parse defensively all the same.
  auto claims_text = base64url_decode(token.substr(first + 1, last - first - 1));
  if (!claims_text) return TokenCheck::kMalformed;
  Json claims = Json::parse(*claims_text, nullptr, false);
  if (!claims.is_object() || !integer_claim(claims, "exp") || !integer_claim(claims, "nbf") ||
      !claims.contains("aud") || !claims["aud"].is_string() || !claims.contains("tid") ||
      claims["tid"] != identity.tenant_id)
    return TokenCheck::kMalformed;
  if (claims["exp"].get<std::int64_t>() <= now_s) return TokenCheck::kExpired;
  if (claims["nbf"].get<std::int64_t>() > now_s + kTokenClockSkewSeconds) return TokenCheck::kNotYetValid;
  if (!accepted(claims["aud"].get<std::string>())) return TokenCheck::kWrongAudience;
  return TokenCheck::kValid;
}

}  // namespace

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

std::vector<std::string> arm_audiences(std::string_view base_url) {
  std::string base(base_url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::vector<std::string> out = {base + "/", base};
  out.insert(out.end(), std::begin(kPublicArmAudiences), std::end(kPublicArmAudiences));
  return out;
}

TokenCheck check_token(const Identity& identity, std::string_view token, std::int64_t now_s,
                       const std::vector<std::string>& audiences) {
  return check(identity, token, now_s, [&](const std::string& aud) {
    return std::find(audiences.begin(), audiences.end(), aud) != audiences.end();
  });
}

}  // namespace batchai::serve
