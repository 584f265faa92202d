// BATCHAI_COMM_TIMEOUT_S: a huge timeout is clamped (its nanosecond bound overflowed, so a healthy
// wait looked stalled at once and the rank was ended), inf, nan and negatives are refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "batchai/common/errors.hpp"
#include "comm/comm_env.hpp"
#include "comm/stall_watchdog.hpp"

namespace batchai::train::detail {
namespace {

class CommTimeout : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("BATCHAI_COMM_TIMEOUT_S"); }
  static double with(const char* value) {
    ::setenv("BATCHAI_COMM_TIMEOUT_S", value, 1);
    return comm_timeout_seconds();
  }
};

TEST_F(CommTimeout, HugeValuesAreClampedToAWeek) {
  EXPECT_EQ(with("1e10"), 7 * 24 * 3600.0);
  EXPECT_EQ(with("1e300"), 7 * 24 * 3600.0);
  EXPECT_EQ(with("604800"), 604800.0);
  EXPECT_EQ(with("2.5"), 2.5);
  EXPECT_EQ(with("0"), 0.0);
  ::unsetenv("BATCHAI_COMM_TIMEOUT_S");
  EXPECT_EQ(comm_timeout_seconds(), 600.0);
}

TEST_F(CommTimeout, InfNanAndNegativesAreRefused) {
  for (const char* bad : {"inf", "-inf", "infinity", "nan", "NAN", "-1", "1e10x", ""}) {
    try {
      with(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("BATCHAI_COMM_TIMEOUT_S"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("finite"), std::string::npos) << e.what();
    }
  }
}

// The watchdog itself, given a timeout past the nanosecond range, lets a healthy wait of a second
// pass (before: it ended the process at its first check, exit code 75, "stalled").
TEST(CommTimeoutDeathTest, AHugeTimeoutDoesNotEndAHealthyWait) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StallWatchdog watchdog(1e10, 0);
        watchdog.begin(1, "for data from");
        std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // past its first check (1 s)
        watchdog.end();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace batchai::train::detail
