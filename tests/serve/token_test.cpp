// Bearer tokens that must not pass (issue 24 row 11): a signature re-encoded with its last
// character's unused bits set (same bytes, other text), a token whose `nbf` has not come, and a
// token issued for another resource (storage's) used on ARM. Also the canonical base64url rule.
#include <gtest/gtest.h>

#include "batchai/common/json_util.hpp"
#include "http/encoding.hpp"
#include "arm/token.hpp"

namespace batchai::serve {
namespace {

constexpr const char* kBase = "https://localhost:8443";
constexpr std::int64_t kNow = 1'700'000'000;

Identity test_identity() {
  return {"00000000-0000-0000-0000-0000000000aa", "client", "secret-secret-secret", std::string(32, 'k')};
}

// A token signed with the identity's key over claims of the test's choosing.
std::string signed_token(const Identity& id, const Json& claims) {
  const std::string part = base64url_encode(R"({"alg":"HS256","typ":"JWT"})") + "." + base64url_encode(claims.dump());
  return part + "." + base64url_encode(hmac_sha256(id.token_key, part));
}

Json claims_at(const Identity& id, std::int64_t nbf, const std::string& aud) {
  return {{"aud", aud}, {"nbf", nbf}, {"iat", nbf}, {"exp", nbf + kTokenLifetimeSeconds}, {"tid", id.tenant_id}};
}

TEST(ServeBase64Url, OnlyTheCanonicalTextDecodes) {
  EXPECT_EQ(*base64url_decode("QQ"), "A");
  EXPECT_EQ(*base64url_decode("QUI"), "AB");
  EXPECT_EQ(*base64url_decode(""), "");
  // The same bytes with the unused low bits of the last character set.
  EXPECT_FALSE(base64url_decode("QR").has_value());
  EXPECT_FALSE(base64url_decode("QUJ").has_value());
  // Padding, and a length no encoder writes.
  EXPECT_FALSE(base64url_decode("QQ==").has_value());
  EXPECT_FALSE(base64url_decode("QUJDR").has_value());
  for (std::size_t n = 0; n < 40; ++n) {
    const std::string bytes(n, '\xA5');
    EXPECT_EQ(base64url_decode(base64url_encode(bytes)), bytes) << n;
  }
}

TEST(ServeToken, ASignatureWithFlippedUnusedBitsIsRefused) {
  const Identity id = test_identity();
  const std::string token = issue_token(id, std::string(kBase) + "/", kNow);
  ASSERT_EQ(check_token(id, token, kNow, arm_audiences(kBase)), TokenCheck::kValid);
  // 32 signature bytes take 43 characters: the last one carries 4 bits and 2 unused ones.
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (unsigned flip = 1; flip < 4; ++flip) {
    std::string forged = token;
    forged.back() = alphabet[alphabet.find(token.back()) ^ flip];
    EXPECT_EQ(check_token(id, forged, kNow, arm_audiences(kBase)), TokenCheck::kMalformed) << forged;
  }
}

TEST(ServeToken, NotBeforeIsChecked) {
  const Identity id = test_identity();
  const std::string aud = std::string(kBase) + "/";
  const std::string tomorrow = signed_token(id, claims_at(id, kNow + 86400, aud));
  EXPECT_EQ(check_token(id, tomorrow, kNow, arm_audiences(kBase)), TokenCheck::kNotYetValid);
  EXPECT_EQ(check_token(id, tomorrow, kNow + 86400, arm_audiences(kBase)), TokenCheck::kValid);
  // Within the allowed clock skew it passes; a token without nbf is not one this server made.
  EXPECT_EQ(check_token(id, signed_token(id, claims_at(id, kNow + kTokenClockSkewSeconds, aud)), kNow,
                        arm_audiences(kBase)),
            TokenCheck::kValid);
  Json no_nbf = claims_at(id, kNow, aud);
  no_nbf.erase("nbf");
  EXPECT_EQ(check_token(id, signed_token(id, no_nbf), kNow, arm_audiences(kBase)), TokenCheck::kMalformed);
}

TEST(ServeToken, OnlyArmAudiencesPassOnArm) {
  const Identity id = test_identity();
  const auto arm = arm_audiences(kBase);
  // What az asks for (the metadata's audience), a "<base>/.default" scope, the SDK's default.
  for (const std::string& aud : {std::string(kBase) + "/", std::string(kBase), std::string("https://management.azure.com"),
                                std::string("https://management.core.windows.net/")}) {
    EXPECT_EQ(check_token(id, issue_token(id, aud, kNow), kNow, arm), TokenCheck::kValid) << aud;
  }
  for (const std::string aud : {"https://storage.azure.com", "https://storage.azure.com/",
                                "https://store1.blob.core.localhost:8443", "https://localhost:8443.evil/", "x", ""}) {
    EXPECT_EQ(check_token(id, issue_token(id, aud, kNow), kNow, arm), TokenCheck::kWrongAudience) << aud;
  }
  // Another server's port is another audience once the base is known.
  EXPECT_EQ(check_token(id, issue_token(id, "https://localhost:9999/", kNow), kNow, arm), TokenCheck::kWrongAudience);
  Json array_aud = claims_at(id, kNow, std::string(kBase) + "/");
  array_aud["aud"] = Json::array({std::string(kBase) + "/"});
  EXPECT_EQ(check_token(id, signed_token(id, array_aud), kNow, arm), TokenCheck::kMalformed);
}

}  // namespace
}  // namespace batchai::serve
