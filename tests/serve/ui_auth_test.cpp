// The dashboard's login link and cookie (ui_auth.hpp, docs/serve.md "Dashboard"): a link works
// once and for 10 minutes, neither token passes for the other or for another port or key, the set
// of used links is bounded, and the Cookie header is read by exact name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "encoding.hpp"
#include "ui_auth.hpp"

namespace batchai::serve {
namespace {

constexpr std::int64_t kNow = 1'700'000'000;
constexpr int kPort = 8443;

Identity identity(char key = 'k') { return {"tenant", "client", "secret", std::string(32, key)}; }

TEST(UiLogin, ALinkWorksOnceAndUntilItExpires) {
  UsedUiLogins used;
  const std::string token = mint_ui_login_token(identity(), kNow);
  EXPECT_EQ(used.redeem(identity(), token, kNow + 1), UiLoginCheck::kValid);
  EXPECT_EQ(used.redeem(identity(), token, kNow + 2), UiLoginCheck::kUsed);
  const std::string late = mint_ui_login_token(identity(), kNow);
  EXPECT_EQ(used.redeem(identity(), late, kNow + kUiLoginLifetimeSeconds), UiLoginCheck::kExpired);
  EXPECT_EQ(used.redeem(identity(), late, kNow + kUiLoginLifetimeSeconds - 1), UiLoginCheck::kValid);
}

TEST(UiLogin, ForgedMalformedAndForeignLinksAreRefused) {
  UsedUiLogins used;
  const std::string token = mint_ui_login_token(identity(), kNow);
  std::string forged = token;
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(used.redeem(identity(), forged, kNow), UiLoginCheck::kBadSignature);
  // Another home's key (a new credentials.json) ends every link.
  EXPECT_EQ(used.redeem(identity('x'), token, kNow), UiLoginCheck::kBadSignature);
  // A later expiry written in by hand breaks the signature.
  std::string extended = token;
  extended[0] = extended[0] == '9' ? '8' : '9';
  EXPECT_NE(used.redeem(identity(), extended, kNow), UiLoginCheck::kValid);
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "1.2.3", "abc.0123456789abcdef0123456789abcdef.x",
                                std::string(300, 'a'), "1700000100.0123456789ABCDEF0123456789ABCDEF.sig"})
    EXPECT_EQ(used.redeem(identity(), bad, kNow), UiLoginCheck::kMalformed) << bad;
  // A cookie is no link.
  EXPECT_EQ(used.redeem(identity(), mint_ui_cookie(identity(), kPort, kNow), kNow), UiLoginCheck::kBadSignature);
}

TEST(UiLogin, TheSetOfUsedLinksIsBounded) {
  UsedUiLogins used;
  for (std::size_t i = 0; i < kMaxUsedUiLogins; ++i)
    ASSERT_EQ(used.redeem(identity(), mint_ui_login_token(identity(), kNow), kNow), UiLoginCheck::kValid);
  EXPECT_EQ(used.redeem(identity(), mint_ui_login_token(identity(), kNow), kNow), UiLoginCheck::kTooMany);
  // Once those expire they are forgotten, and logins work again.
  const std::int64_t later = kNow + kUiLoginLifetimeSeconds + 1;
  EXPECT_EQ(used.redeem(identity(), mint_ui_login_token(identity(), later), later), UiLoginCheck::kValid);
}

TEST(UiCookie, SignedForItsPortAndTwelveHours) {
  const std::string cookie = mint_ui_cookie(identity(), kPort, kNow);
  EXPECT_TRUE(check_ui_cookie(identity(), kPort, cookie, kNow + 1));
  EXPECT_TRUE(check_ui_cookie(identity(), kPort, cookie, kNow + kUiCookieLifetimeSeconds - 1));
  EXPECT_FALSE(check_ui_cookie(identity(), kPort, cookie, kNow + kUiCookieLifetimeSeconds));
  EXPECT_FALSE(check_ui_cookie(identity(), kPort + 1, cookie, kNow));
  EXPECT_FALSE(check_ui_cookie(identity('x'), kPort, cookie, kNow));
  EXPECT_FALSE(check_ui_cookie(identity(), kPort, mint_ui_login_token(identity(), kNow), kNow));
  EXPECT_FALSE(check_ui_cookie(identity(), kPort, "", kNow));
  EXPECT_EQ(ui_cookie_name(kPort), "__Host-batchai-ui-8443");
}

TEST(UiCookie, HeaderValueByExactName) {
  EXPECT_EQ(cookie_value("a=1; __Host-batchai-ui-8443=v.x.y; b=2", "__Host-batchai-ui-8443"), "v.x.y");
  EXPECT_EQ(cookie_value("__Host-batchai-ui-84430=z", "__Host-batchai-ui-8443"), "");
  EXPECT_EQ(cookie_value("x__Host-batchai-ui-8443=z", "__Host-batchai-ui-8443"), "");
  EXPECT_EQ(cookie_value("", "n"), "");
  EXPECT_EQ(cookie_value("n=first; n=second", "n"), "first");
}

}  // namespace
}  // namespace batchai::serve
