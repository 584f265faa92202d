// UTF-8 validation and repair (batchai/common/utf8.hpp): what counts as valid is exactly RFC
// 3629, and repaired or printable text is always valid, so JSON writing can never fail on it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "batchai/common/utf8.hpp"

namespace batchai {
namespace {

TEST(Utf8, ValidIsExactlyRfc3629) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x8A"));  // é € 😊
  EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBF\xF4\x8F\xBF\xBF"));          // U+FFFF, U+10FFFF
  for (const char* bad : {"\xFF", "\xC0\xAF", "\xE0\x80\xAF", "\xF0\x80\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                          "\xC3", "\xE2\x82", "\x80", "a\xF5\x80\x80\x80"})
    EXPECT_FALSE(is_valid_utf8(bad)) << bad;
}

TEST(Utf8, RepairReplacesEachMaximalSubpart) {
  EXPECT_EQ(to_valid_utf8("ok"), "ok");
  EXPECT_EQ(to_valid_utf8("bad\xFF"), "bad\xEF\xBF\xBD");
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");   // C0 is never a lead byte
  EXPECT_EQ(to_valid_utf8("\xE2\x82x"), "\xEF\xBF\xBDx");              // a truncated sequence is one
  for (const std::string& text :
       {std::string("\xFF\xFE"), std::string("a\xED\xA0\x80z"), std::string("\xF0\x9F\x98"), std::string("\0\xC3", 2)}) {
    const std::string fixed = to_valid_utf8(text);
    EXPECT_TRUE(is_valid_utf8(fixed));
    EXPECT_NO_THROW((void)nlohmann::json(fixed).dump());
  }
}

TEST(Utf8, LengthsCountUtf16UnitsAsAzureDoes) {
  EXPECT_EQ(utf16_length("abc"), 3u);
  EXPECT_EQ(utf16_length("\xC3\xA9"), 1u);
  EXPECT_EQ(utf16_length("\xE9\x98\xBF"), 1u);
  EXPECT_EQ(utf16_length("\xF0\x9F\x98\x8A"), 2u);
  EXPECT_EQ(utf16_length("\xFF\xFF"), 2u);
}

TEST(Utf8, PrintableShowsControlsAndCannotForgeLines) {
  EXPECT_EQ(printable("east\nus\tforged"), "east\\nus\\tforged");
  EXPECT_EQ(printable(std::string("a\0b\x1b[31m", 8)), "a\\x00b\\x1b[31m");
  EXPECT_EQ(printable("\xC2\x85x"), "\\x85x");  // C1 NEL
  EXPECT_EQ(printable("caf\xC3\xA9 \xFF"), "caf\xC3\xA9 \xEF\xBF\xBD");
}

}  // namespace
}  // namespace batchai
