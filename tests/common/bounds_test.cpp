// Bounds on what the user hands in (issue 13): JSON files must be small regular files with
// limited nesting, integers are checked as 64-bit before narrowing, durations never wrap.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "batchai/common/clock.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/json_util.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai {
namespace {

namespace fs = std::filesystem;

class JsonFileBounds : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& text) { return test::write_file(dir_ / name, text); }
  // The InvalidArgument message of loading `path`, or "" when it loads.
  static std::string error_of(const fs::path& path) {
    try {
      load_json_file(path);
      return "";
    } catch (const InvalidArgument& e) {
      return e.what();
    }
  }
  test::TempDir tmp_{"batchai-bounds"};
  fs::path dir_ = tmp_.path();
};

TEST_F(JsonFileBounds, FifoIsRefusedWithoutBlocking) {
  const fs::path fifo = dir_ / "job.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever opens the FIFO: a blocking open or read would never return.
  auto loading = std::async(std::launch::async, [&] { return error_of(fifo); });
  if (loading.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open(fifo.c_str(), O_WRONLY));  // a writer that leaves at once unblocks the reader
    loading.wait();
    FAIL() << "load_json_file blocked on a FIFO";
  }
  EXPECT_EQ(loading.get(), "'" + fifo.string() + "' is a FIFO (named pipe); give the path of a JSON file.");
}

TEST_F(JsonFileBounds, DevicesAndDirectoriesAreRefused) {
  EXPECT_EQ(error_of("/dev/zero"), "'/dev/zero' is a character device; give the path of a JSON file.");
  EXPECT_EQ(error_of(dir_), "[Errno 21] Is a directory: '" + dir_.string() + "'");
  EXPECT_EQ(error_of(dir_ / "missing.json"), "[Errno 2] No such file or directory: '" + (dir_ / "missing.json").string() + "'");
}

TEST_F(JsonFileBounds, SizeLimitIsFourMiB) {
  // A JSON string filling exactly the limit loads; one byte more is refused before parsing.
  const std::string largest = "\"" + std::string(kMaxJsonFileBytes - 2, 'a') + "\"";
  EXPECT_EQ(error_of(write("largest.json", largest)), "");
  const fs::path bigger = write("bigger.json", largest + " ");
  EXPECT_EQ(error_of(bigger), "'" + bigger.string() + "' is larger than 4194304 bytes (4 MiB), the limit for JSON files; "
                                                      "give a smaller file.");
}

TEST_F(JsonFileBounds, NestingLimitIsSixtyFourLevels) {
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_EQ(parse_json_text(nested(kMaxJsonDepth), "'x'").dump().size(), 2 * kMaxJsonDepth);
  EXPECT_EQ(error_of(write("deep.json", nested(kMaxJsonDepth + 1))),
            "JSON nests deeper than 64 levels: line 1 column 65 (char 64) in '" + (dir_ / "deep.json").string() + "'");
  // 10,000 levels (the stack overflow) end the same way; brackets inside strings do not count.
  EXPECT_NE(error_of(write("deeper.json", nested(10000))).find("JSON nests deeper than 64 levels"), std::string::npos);
  EXPECT_EQ(error_of(write("text.json", "{\"a\": \"" + std::string(1000, '[') + "\"}")), "");
}

TEST(CheckedInteger, Int32BoundsAndNonIntegers) {
  EXPECT_EQ(checked_integer(Json(2147483647), "nodeCount", 1), 2147483647);
  EXPECT_EQ(checked_integer(Json(1), "nodeCount", 1), 1);
  auto message = [](const Json& v) {
    try {
      checked_integer(v, "nodeCount", 1);
      return std::string();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(message(Json(2147483648LL)), "nodeCount must be at least 1 and at most 2147483647, got 2147483648.");
  EXPECT_EQ(message(Json(4294967297ULL)), "nodeCount must be at least 1 and at most 2147483647, got 4294967297.");
  EXPECT_EQ(message(Json(18446744073709551615ULL)),
            "nodeCount must be at least 1 and at most 2147483647, got 18446744073709551615.");
  EXPECT_EQ(message(Json(0)), "nodeCount must be at least 1 and at most 2147483647, got 0.");
  EXPECT_EQ(message(Json(-2)), "nodeCount must be at least 1 and at most 2147483647, got -2.");
  EXPECT_EQ(message(Json(2.5)), "nodeCount must be an integer (at least 1 and at most 2147483647), got 2.5.");
  EXPECT_EQ(message(Json::parse("99999999999999999999999")),
            "nodeCount must be at least 1 and at most 2147483647, got a number beyond the 64-bit integer range.");
  EXPECT_EQ(message(Json("3")), "nodeCount must be an integer (at least 1 and at most 2147483647), got \"3\".");
}

TEST(JsonErrorText, DropsNlohmannsPrefix) {
  try {
    (void)Json(5).get<std::string>();
    FAIL() << "expected a type error";
  } catch (const Json::exception& e) {
    EXPECT_EQ(json_error_text(e), "type must be string, but is number");
  }
}

TEST(DurationBounds, LongestAcceptedAndBeyond) {
  EXPECT_EQ(parse_duration("P36500D"), kMaxDuration);
  EXPECT_EQ(parse_duration("36500.00:00:00"), kMaxDuration);
  EXPECT_EQ(parse_duration("36500 days, 0:00:00"), kMaxDuration);
  EXPECT_EQ(parse_duration("PT1.5S"), Micros(1500000));
  EXPECT_EQ(parse_duration("P1DT2H3M4.0000005S"), Micros(((26LL * 60 + 3) * 60 + 4) * 1000000 + 1));
  for (const char* text : {"P36500DT1S", "P36501D", "P99999999999D", "P99999999999999999999999D", "PT9999999999999999999H",
                           "9999999999.00:00:00", "99999999999 days, 0:00:00"}) {
    bool too_long = false;
    EXPECT_EQ(parse_duration(text, &too_long), std::nullopt) << text;
    EXPECT_TRUE(too_long) << text;
  }
  bool too_long = true;
  EXPECT_EQ(parse_duration("soon", &too_long), std::nullopt);
  EXPECT_FALSE(too_long);
  EXPECT_EQ(parse_duration(std::string(100000, '1')), std::nullopt);  // never handed to std::regex
}

}  // namespace
}  // namespace batchai
