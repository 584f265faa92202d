// The backward line reader under Slurm's completion record: every line once, last first, whatever
// the block size; overlong lines passed over; an early stop reads no further.
#include "lines_backwards.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace batchai::slurm {
namespace {
namespace fs = std::filesystem;

class LinesBackwards : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lines-backwards-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& text) {
    const fs::path p = dir_ / "log.txt";
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  static std::vector<std::string> read(const fs::path& p, std::size_t max_line, std::size_t block,
                                       std::size_t stop_after = 1000) {
    std::vector<std::string> lines;
    EXPECT_TRUE(for_each_line_backwards(
        p, max_line,
        [&](std::string_view l) {
          lines.emplace_back(l);
          return lines.size() < stop_after;
        },
        block));
    return lines;
  }
  fs::path dir_;
};

TEST_F(LinesBackwards, EveryLineLastFirstWhateverTheBlock) {
  const fs::path p = write("JobId=1 a\nJobId=2 bb\n\nJobId=3 " + std::string(100, 'c') + "\nJobId=4 d");
  const std::vector<std::string> want = {"JobId=4 d", "JobId=3 " + std::string(100, 'c'), "JobId=2 bb", "JobId=1 a"};
  for (std::size_t block : {1, 2, 3, 7, 8, 9, 64, 65536}) EXPECT_EQ(read(p, 1000, block), want) << block;
  EXPECT_EQ(read(write("x\n"), 10, 1), std::vector<std::string>{"x"});
  EXPECT_TRUE(read(write(""), 10, 4).empty());
  EXPECT_TRUE(read(write("\n\n"), 10, 4).empty());
}

TEST_F(LinesBackwards, OverlongLinesArePassedOver) {
  const fs::path p = write("first\n" + std::string(50, 'x') + "\nlast\n" + std::string(11, 'y'));
  for (std::size_t block : {1, 4, 16, 1024}) EXPECT_EQ(read(p, 10, block), (std::vector<std::string>{"last", "first"})) << block;
  EXPECT_EQ(read(p, 11, 4), (std::vector<std::string>{std::string(11, 'y'), "last", "first"}));
}

TEST_F(LinesBackwards, StopsWhenAsked) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + "\n";
  const fs::path p = write(text);
  EXPECT_EQ(read(p, 100, 64, 3), (std::vector<std::string>{"line 999", "line 998", "line 997"}));
  EXPECT_FALSE(for_each_line_backwards(dir_ / "missing.txt", 100, [](std::string_view) { return true; }));
}

}  // namespace
}  // namespace batchai::slurm
