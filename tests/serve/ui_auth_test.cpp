// The dashboard's login link, cookie and session key (ui_auth.hpp, docs/dashboard.md): a
// link works once and for 10 minutes, also across restarts and the home's other servers; no token
// passes for another or for another port or key; the cookie alone (all another port of the host
// gets) is no session; the set of used links is bounded; the Cookie header is read by exact name.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "http/encoding.hpp"
#include "support/temp_dir.hpp"
#include "ui/ui_auth.hpp"

namespace batchai::serve {
namespace {

constexpr std::int64_t kNow = 1'700'000'000;
constexpr int kPort = 8443;

Identity identity(char key = 'k') { return {"tenant", "client", "secret", std::string(32, key)}; }

// A fresh serve folder for each test.
class UiLogin : public ::testing::Test {
 protected:
  test::TempDir tmp_{"batchai-ui-auth"};
  std::filesystem::path dir_ = tmp_ / "serve";
};

TEST_F(UiLogin, ALinkWorksOnceAndUntilItExpires) {
  UsedUiLogins used(dir_);
  const std::string token = mint_ui_login_token(identity(), kNow);
  EXPECT_EQ(used.redeem(identity(), token, kNow + 1), UiLoginCheck::kValid);
  EXPECT_EQ(used.redeem(identity(), token, kNow + 2), UiLoginCheck::kUsed);
  const std::string late = mint_ui_login_token(identity(), kNow);
  EXPECT_EQ(used.redeem(identity(), late, kNow + kUiLoginLifetimeSeconds), UiLoginCheck::kExpired);
  EXPECT_EQ(used.redeem(identity(), late, kNow + kUiLoginLifetimeSeconds - 1), UiLoginCheck::kValid);
}

TEST_F(UiLogin, ForgedMalformedAndForeignLinksAreRefused) {
  UsedUiLogins used(dir_);
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

// Issue 53 (F401): the used nonces lived in one process's memory, so a used link worked again
// after a restart or on a second server of the same home.
TEST_F(UiLogin, AUsedLinkStaysUsedAcrossRestartsAndTheHomesServers) {
  const std::string token = mint_ui_login_token(identity(), kNow);
  {
    UsedUiLogins first(dir_);
    ASSERT_EQ(first.redeem(identity(), token, kNow + 1), UiLoginCheck::kValid);
  }
  UsedUiLogins restarted(dir_), second_server(dir_);
  EXPECT_EQ(restarted.redeem(identity(), token, kNow + 2), UiLoginCheck::kUsed);
  EXPECT_EQ(second_server.redeem(identity(), token, kNow + 3), UiLoginCheck::kUsed);
  const std::string other = mint_ui_login_token(identity(), kNow);
  EXPECT_EQ(second_server.redeem(identity(), other, kNow + 4), UiLoginCheck::kValid);
  EXPECT_EQ(restarted.redeem(identity(), other, kNow + 5), UiLoginCheck::kUsed);
  // Only the owner may read or replace the record.
  const auto mode = std::filesystem::status(dir_ / "ui-logins-used").permissions();
  EXPECT_EQ(mode & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
}

TEST_F(UiLogin, TheSetOfUsedLinksIsBounded) {
  constexpr std::size_t kMax = 64;
  UsedUiLogins used(dir_, kMax);
  for (std::size_t i = 0; i < kMax; ++i)
    ASSERT_EQ(used.redeem(identity(), mint_ui_login_token(identity(), kNow), kNow), UiLoginCheck::kValid);
  EXPECT_EQ(used.redeem(identity(), mint_ui_login_token(identity(), kNow), kNow), UiLoginCheck::kTooMany);
  // Once those expire they are forgotten, and logins work again.
  const std::int64_t later = kNow + kUiLoginLifetimeSeconds + 1;
  EXPECT_EQ(used.redeem(identity(), mint_ui_login_token(identity(), later), later), UiLoginCheck::kValid);
  EXPECT_LE(std::filesystem::file_size(dir_ / "ui-logins-used"), kMax * 64);
}

// Issue 53 (F403): browsers send the cookie to every port of the host, so another port's page
// gets it; the API also needs the session key, which only the dashboard's origin holds.
TEST(UiSession, TheCookieAloneIsNoSession) {
  const std::string cookie = mint_ui_cookie(identity(), kPort, kNow);
  const std::string key = ui_session_key(identity(), kPort, cookie);
  EXPECT_TRUE(check_ui_session(identity(), kPort, cookie, key, kNow + 1));
  for (const std::string& bad : {std::string("1"), std::string(""), cookie, std::string("none")})
    EXPECT_FALSE(check_ui_session(identity(), kPort, cookie, bad, kNow + 1)) << bad;
  // Another login's key, the key for another port or home, an expired cookie.
  const std::string other = mint_ui_cookie(identity(), kPort, kNow);
  EXPECT_FALSE(check_ui_session(identity(), kPort, other, key, kNow + 1));
  EXPECT_FALSE(check_ui_session(identity(), kPort, cookie, ui_session_key(identity(), kPort + 1, cookie), kNow + 1));
  EXPECT_FALSE(check_ui_session(identity('x'), kPort, cookie, key, kNow + 1));
  EXPECT_FALSE(check_ui_session(identity(), kPort, cookie, key, kNow + kUiCookieLifetimeSeconds));
  // The key is no cookie and no link.
  EXPECT_FALSE(check_ui_cookie(identity(), kPort, key, kNow + 1));
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
