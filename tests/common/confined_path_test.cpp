// ConfinedDir: '..', absolute paths, symlinks in and out, dangling links, listings, tree removal
// and the atomic replace, each through openat2 and through the O_NOFOLLOW walk.
#include "batchai/common/confined_path.hpp"

#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "batchai/common/errors.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace batchai {
namespace {

using test::read_file;
using test::write_file;

std::string read_fd(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// Param: true = force the component walk (the fallback for kernels without openat2).
class ConfinedPathTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    confined_detail::force_walk(GetParam());
    root_ = base_ / "root";
    write_file(root_ / "sub" / "in.txt", "inside");
    write_file(base_ / "secret.txt", "SECRET");
    fs::create_directories(base_ / "outdir");
    write_file(base_ / "outdir" / "keep.txt", "keep");
    fs::create_symlink("sub/in.txt", root_ / "link_in");                 // stays inside
    fs::create_symlink("../secret.txt", root_ / "link_rel_out");         // leaves by '..'
    fs::create_symlink(base_ / "secret.txt", root_ / "link_abs_out");    // absolute target
    fs::create_symlink("../outdir", root_ / "dir_out");                  // a folder outside
    fs::create_symlink("nowhere.txt", root_ / "dangling");
    fs::create_symlink("../sub/in.txt", root_ / "sub" / "up_and_in");    // '..' that stays inside
    dir_ = ConfinedDir::open(root_, "the share 'data'");
    ASSERT_TRUE(dir_);
  }
  void TearDown() override {
    confined_detail::force_walk(false);
  }
  test::TempDir tmp_{"batchai-confined"};
  fs::path base_ = tmp_.path(), root_;
  std::optional<ConfinedDir> dir_;
};

TEST_P(ConfinedPathTest, RefusesDotDotAndAbsolutePathsWithTheRule) {
  try {
    dir_->open_file("../secret.txt", "The file path");
    FAIL() << "no refusal";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "The file path '../secret.txt' must not contain '..': it would leave the share 'data'.");
  }
  EXPECT_THROW(dir_->open_file("sub/../../secret.txt", "The file path"), InvalidArgument);
  EXPECT_THROW(dir_->open_file("/etc/passwd", "The file path"), InvalidArgument);
  EXPECT_THROW(dir_->remove_tree("..", "The share"), InvalidArgument);
  EXPECT_THROW(dir_->open_file(std::string("a\0b", 3), "The file path"), InvalidArgument);
  EXPECT_EQ(dir_->check("./sub//x/", "p"), "sub/x");
  EXPECT_EQ(dir_->check("", "p"), ".");
}

TEST_P(ConfinedPathTest, FollowsSymlinksOnlyWhileTheyStayInside) {
  auto in = dir_->open_file("link_in", "The file path");
  ASSERT_TRUE(in);
  EXPECT_EQ(read_fd(in->get()), "inside");
  auto up = dir_->open_file("sub/up_and_in", "The file path");
  ASSERT_TRUE(up);
  EXPECT_EQ(read_fd(up->get()), "inside");
  EXPECT_THROW(dir_->open_file("link_rel_out", "The file path"), InvalidArgument);
  EXPECT_THROW(dir_->open_file("link_abs_out", "The file path"), InvalidArgument);
  EXPECT_THROW(dir_->open_dir("dir_out", "The path"), InvalidArgument);
  EXPECT_THROW(dir_->open_file("dir_out/keep.txt", "The file path"), InvalidArgument);
  EXPECT_FALSE(dir_->open_file("dangling", "The file path"));
  EXPECT_FALSE(dir_->open_file("missing.txt", "The file path"));
  EXPECT_FALSE(dir_->open_file("sub", "The file path"));  // a folder is not a file
}

TEST_P(ConfinedPathTest, ListsEntriesAsWhatTheyAreNeverWithAnOutsideSize) {
  auto entries = dir_->list();
  std::map<std::string, ConfinedEntry> by_name;
  for (auto& e : entries) by_name[e.name] = e;
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_TRUE(by_name["sub"].is_dir());
  EXPECT_TRUE(by_name["link_in"].is_symlink());
  EXPECT_TRUE(by_name["link_in"].is_file());
  EXPECT_EQ(by_name["link_in"].target->st_size, 6);
  for (const char* out : {"link_rel_out", "link_abs_out", "dir_out", "dangling"}) {
    EXPECT_TRUE(by_name[out].is_symlink()) << out;
    EXPECT_FALSE(by_name[out].target) << out << ": a link out (or dangling) has no target here";
  }
}

TEST_P(ConfinedPathTest, RemovesTreesWithoutFollowingLinks) {
  fs::create_symlink(base_ / "outdir", root_ / "sub" / "abs_dir_link");
  EXPECT_TRUE(dir_->remove_tree("sub", "The folder"));
  EXPECT_FALSE(fs::exists(root_ / "sub"));
  EXPECT_EQ(read_file(base_ / "outdir" / "keep.txt"), "keep");
  EXPECT_TRUE(dir_->remove_tree("dir_out", "The folder"));  // the link goes, its target stays
  EXPECT_TRUE(fs::exists(base_ / "outdir" / "keep.txt"));
  EXPECT_FALSE(dir_->remove_tree("sub", "The folder"));
  EXPECT_THROW(dir_->remove_tree(".", "The folder"), InvalidArgument);
  EXPECT_TRUE(dir_->remove_file("link_abs_out", "The file path"));
  EXPECT_EQ(read_file(base_ / "secret.txt"), "SECRET");
}

TEST_P(ConfinedPathTest, MakesFoldersOnlyInside) {
  dir_->make_dirs("a/b/c", "The folder");
  EXPECT_TRUE(fs::is_directory(root_ / "a" / "b" / "c"));
  EXPECT_FALSE(dir_->make_dir("a", "The folder"));
  EXPECT_THROW(dir_->make_dirs("dir_out/new", "The folder"), InvalidArgument);
  EXPECT_FALSE(fs::exists(base_ / "outdir" / "new"));
  EXPECT_THROW(dir_->make_dir("nope/x", "The folder"), NotFound);
}

TEST_P(ConfinedPathTest, ReplaceNeverWritesThroughPlantedLinks) {
  write_file(base_ / "src.txt", "NEW");
  UniqueFd src(::open((base_ / "src.txt").c_str(), O_RDONLY));
  // A link planted where a fixed temporary name would be, and the target itself a link out.
  fs::create_symlink(base_ / "secret.txt", root_ / "sub" / "in.txt.batchai-upload");
  fs::create_symlink(base_ / "secret.txt", root_ / "sub" / "target.txt");
  dir_->replace_file("sub/target.txt", "The file path", src.get());
  EXPECT_EQ(read_file(base_ / "secret.txt"), "SECRET");
  EXPECT_FALSE(fs::is_symlink(root_ / "sub" / "target.txt"));
  EXPECT_EQ(read_file(root_ / "sub" / "target.txt"), "NEW");
  EXPECT_THROW(dir_->replace_file("dir_out/x.txt", "The file path", src.get()), InvalidArgument);
  EXPECT_FALSE(fs::exists(base_ / "outdir" / "x.txt"));
  for (const auto& e : fs::directory_iterator(root_ / "sub"))
    EXPECT_FALSE(e.path().filename().string().find(".batchai-upload.") != std::string::npos) << e.path();
}

// A write that fails half way (here: the file size limit, as a full disk would) leaves the old
// file as it was and no temporary behind.
TEST_P(ConfinedPathTest, AFailedReplaceLeavesNoTemporary) {
  write_file(base_ / "big.bin", std::string(1 << 20, 'b'));
  write_file(root_ / "sub" / "kept.bin", "old");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 2;
    try {
      UniqueFd src(::open((base_ / "big.bin").c_str(), O_RDONLY));
      dir_->replace_file("sub/kept.bin", "The file path", src.get());
      code = 0;
    } catch (const SystemError& e) {
      code = std::string(e.what()).find("was not written") != std::string::npos ? 1 : 3;
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << "the failed write must be a SystemError that names the file";
  EXPECT_EQ(read_file(root_ / "sub" / "kept.bin"), "old");
  for (const auto& e : fs::directory_iterator(root_ / "sub")) EXPECT_FALSE(is_upload_temporary(e.path().filename().string()));
}

TEST_P(ConfinedPathTest, ConcurrentReplacesLeaveExactlyOneWholeSource) {
  constexpr int kWriters = 6;
  constexpr std::size_t kSize = 1 << 20;
  for (int i = 0; i < kWriters; ++i) write_file(base_ / ("src" + std::to_string(i)), std::string(kSize, static_cast<char>('a' + i)));
  for (int round = 0; round < 5; ++round) {
    std::vector<pid_t> kids;
    for (int i = 0; i < kWriters; ++i) {
      pid_t pid = ::fork();
      if (pid == 0) {
        int code = 0;
        try {
          auto d = ConfinedDir::open(root_, "the share 'data'");
          UniqueFd src(::open((base_ / ("src" + std::to_string(i))).c_str(), O_RDONLY));
          d->replace_file("sub/same.bin", "The file path", src.get());
        } catch (...) {
          code = 1;
        }
        ::_exit(code);
      }
      kids.push_back(pid);
    }
    for (pid_t pid : kids) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const std::string stored = read_file(root_ / "sub" / "same.bin");
    ASSERT_EQ(stored.size(), kSize);
    EXPECT_EQ(stored.find_first_not_of(stored[0]), std::string::npos) << "a mix of sources in round " << round;
  }
  for (const auto& e : fs::directory_iterator(root_ / "sub")) EXPECT_FALSE(is_upload_temporary(e.path().filename().string()));
}

INSTANTIATE_TEST_SUITE_P(Resolution, ConfinedPathTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? std::string("Walk") : std::string("Openat2"); });

}  // namespace
}  // namespace batchai
