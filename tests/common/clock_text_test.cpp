// The text forms of durations and timestamps (clock.hpp), accepted and refused near misses.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "batchai/common/clock.hpp"

namespace batchai {
namespace {

constexpr long long kS = 1000000, kM = 60 * kS, kH = 60 * kM, kD = 24 * kH;

TEST(DurationText, EachFormReadsAsItsParts) {
  const std::pair<const char*, long long> cases[] = {
      {"P7D", 7 * kD},          {"PT2H30M", 2 * kH + 30 * kM}, {"P1DT2H", kD + 2 * kH},
      {"PT5S", 5 * kS},         {"PT5M", 5 * kM},              {"PT1.5S", kS + 500000},
      {"PT0.0000005S", 1},      {"PT0.0000004S", 0},           {"P0D", 0},
      {"7 days, 0:00:00", 7 * kD}, {"1 day, 2:03:04", kD + 2 * kH + 3 * kM + 4 * kS},
      {"1:30:00", kH + 30 * kM},   {"123:00:00.5", 123 * kH + 500000},
      {"7.00:00:00", 7 * kD},      {"1.2:03:04", kD + 2 * kH + 3 * kM + 4 * kS},
  };
  for (const auto& [text, micros] : cases) EXPECT_EQ(parse_duration(text), Micros(micros)) << text;
}

TEST(DurationText, NearMissesAreRefused) {
  for (const char* text : {"", "P", "PT", "P1DT", "P5H", "PT5H5H", "PT5M5H", "PT1.5H", "PT.5S", "PT1.S", "P1D2H",
                           "5 days 0:00:00", "5 dayz, 0:00:00", "1:2:03", "1:02:3", "1:02:03.1234567", "1:02:03.",
                           "123.00:00:00:00", "1.123:00:00", "1.2:03:04.5", " P1D", "P1D "}) {
    bool too_long = true;
    EXPECT_EQ(parse_duration(text, &too_long), std::nullopt) << text;
    EXPECT_FALSE(too_long) << text;
  }
}

TEST(TimestampText, OffsetsAndFractionsMoveTheInstant) {
  const auto utc = parse_iso("2018-06-13T00:35:47Z");
  ASSERT_TRUE(utc);
  EXPECT_EQ(parse_iso("2018-06-13 00:35:47+00:00"), utc);
  EXPECT_EQ(parse_iso("2018-06-13T00:35:47"), utc);
  EXPECT_EQ(parse_iso("2018-06-13T02:05:47+0130"), utc);
  EXPECT_EQ(parse_iso("2018-06-12T23:05:47-01:30"), utc);
  EXPECT_EQ(parse_iso("2018-06-13T00:35:47.123456789Z"), *utc + Micros(123456));
  EXPECT_EQ(format_iso(*parse_iso("2018-06-13T00:35:47.5Z")), "2018-06-13T00:35:47.500000+00:00");
}

TEST(TimestampText, NearMissesAreRefused) {
  for (const char* text : {"", "2018-06-13", "2018-6-13T00:35:47Z", "2018-06-13X00:35:47", "2018-06-13T00:35:47.Z",
                           "2018-06-13T00:35:47.1234567890Z", "2018-06-13T00:35:47+1", "2018-06-13T00:35:47ZZ",
                           "2018-06-13T00:35:47 ", "12018-06-13T00:35:47Z"}) {
    EXPECT_EQ(parse_iso(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace batchai
