// The mode of $BATCHAI_HOME (issue 53, F402): a home others can write is refused (they could
// replace state.db, whose job documents the supervisors run) with the mode and the fix named; one
// others can read is used with a warning, as ssh does with keys; a new home is made 0700.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cli_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

TEST(HomeMode, ANewHomeIsPrivate) {
  CliHarness cli;
  const fs::path fresh = cli.dir() / "fresh-home";
  const CliResult r = cli.run({"group", "list"}, {{"BATCHAI_HOME", fresh.string()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(fresh), 0700u);
  EXPECT_EQ(r.err, "");
}

TEST(HomeMode, AHomeOthersCanWriteIsRefused) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  for (unsigned mode : {0777u, 0775u, 0770u, 0702u, 01777u}) {
    ASSERT_EQ(::chmod(cli.home().c_str(), mode), 0);
    const CliResult r = cli.run({"group", "list"});
    EXPECT_NE(r.exit_code, 0) << std::oct << mode;
    EXPECT_EQ(r.out, "");
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", mode);
    EXPECT_THAT(r.err, HasSubstr(std::string("has mode ") + octal)) << r.err;
    EXPECT_THAT(r.err, HasSubstr("chmod 700")) << r.err;
  }
  ASSERT_EQ(::chmod(cli.home().c_str(), 0700), 0);
  const CliResult after = cli.run({"group", "list"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.err, "");
}

TEST(HomeMode, AHomeOthersCanReadIsWarnedAbout) {
  CliHarness cli;
  ASSERT_EQ(cli.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
  ASSERT_EQ(::chmod(cli.home().c_str(), 0755), 0);
  const CliResult r = cli.run({"group", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rg"));
  EXPECT_THAT(r.err, HasSubstr("has mode 0755"));
  EXPECT_THAT(r.err, HasSubstr("chmod 700"));
  EXPECT_EQ(mode_of(cli.home()), 0755u) << "a warning only: the mode is the user's to change";
}

}  // namespace
}  // namespace batchai::cli::testing
