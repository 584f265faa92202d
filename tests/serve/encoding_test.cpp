// The server's encodings and bearer tokens (src/serve/encoding.hpp, token.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "http/encoding.hpp"
#include "arm/token.hpp"

namespace batchai::serve {
namespace {

Identity test_identity() { return {"00000000-0000-0000-0000-0000000000aa", "client", "secret-secret-secret", std::string(32, 'k')}; }

TEST(ServeEncoding, Base64UrlRoundTripsEveryLength) {
  std::string bytes;
  for (int i = 0; i < 70; ++i) {
    auto back = base64url_decode(base64url_encode(bytes));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, bytes);
    bytes.push_back(static_cast<char>(i * 37));
  }
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
  EXPECT_FALSE(base64url_decode("ab+c").has_value());
  EXPECT_FALSE(base64url_decode("ab=").has_value());
}

TEST(ServeEncoding, HexAndFormDecodingRefuseBadInput) {
  EXPECT_EQ(hex_encode("\x01\xab"), "01ab");
  EXPECT_EQ(*hex_decode("01AB"), "\x01\xab");
  EXPECT_FALSE(hex_decode("abc").has_value());
  EXPECT_FALSE(hex_decode("zz").has_value());
  EXPECT_EQ(*form_decode("a+b%2Fc"), "a b/c");
  EXPECT_FALSE(form_decode("%").has_value());
  EXPECT_FALSE(form_decode("%4").has_value());
  EXPECT_FALSE(form_decode("%zz").has_value());
}

TEST(ServeToken, ValidUntilExpiryAndOnlyWithItsSignature) {
  const Identity id = test_identity();
  const std::string token = issue_token(id, "https://localhost:8443/", 1000);
  const auto arm = arm_audiences("https://localhost:8443");
  EXPECT_EQ(std::count(token.begin(), token.end(), '.'), 2);
  EXPECT_EQ(check_token(id, token, 1000, arm), TokenCheck::kValid);
  EXPECT_EQ(check_token(id, token, 1000 + kTokenLifetimeSeconds, arm), TokenCheck::kExpired);
  Identity other = id;
  other.token_key = std::string(32, 'x');
  EXPECT_EQ(check_token(other, token, 1000, arm), TokenCheck::kBadSignature);
  std::string tampered = token;
  tampered[token.find('.') + 3] ^= 1;
  EXPECT_NE(check_token(id, tampered, 1000, arm), TokenCheck::kValid);
  EXPECT_EQ(check_token(id, "a.b", 1000, arm), TokenCheck::kMalformed);
  EXPECT_EQ(check_token(id, "", 1000, arm), TokenCheck::kMalformed);
  EXPECT_EQ(check_token(id, std::string(kMaxTokenBytes + 1, 'a'), 1000, arm), TokenCheck::kMalformed);
}

}  // namespace
}  // namespace batchai::serve
