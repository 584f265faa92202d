// percent_encode_path / _segment: unreserved bytes (and '/' in a path) stay, the rest becomes %XX.
#include "batchai/common/percent_encoding.hpp"

#include <gtest/gtest.h>

#include <string>

namespace batchai {
namespace {

TEST(PercentEncodePath, KeepsUnreservedBytesAndSlashes) {
  EXPECT_EQ(percent_encode_path("/home/a-b_c.d~e/Z9"), "/home/a-b_c.d~e/Z9");
}

TEST(PercentEncodePath, EncodesWhatAUriWouldReadAsSyntax) {
  EXPECT_EQ(percent_encode_path("a?b#c%d e&f=g"), "a%3Fb%23c%25d%20e%26f%3Dg");
}

TEST(PercentEncodePath, EncodesControlAndNonAsciiBytesInUpperCaseHex) {
  EXPECT_EQ(percent_encode_path(std::string("\x01\n\x7F", 3) + "\xC3\xA9"), "%01%0A%7F%C3%A9");
  EXPECT_EQ(percent_encode_path(std::string(1, '\0')), "%00");
}

TEST(PercentEncodeSegment, EncodesSlashesToo) {
  EXPECT_EQ(percent_encode_segment("a/b c~"), "a%2Fb%20c~");
}

}  // namespace
}  // namespace batchai
