// `batchai storage ...` never reaches outside its share or container: hostile share/container
// names in every entry point, '..' and absolute paths, links planted in a share, and concurrent
// uploads to one path (atomic, last writer wins, no temporary left). A decoy tree beside the
// home is checked byte for byte after every refusal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.hpp"
#include "support/files.hpp"

namespace fs = std::filesystem;

namespace batchai::cli::testing {
namespace {

using ::testing::HasSubstr;

using test::read_file;

// Every path under `root` with its type and content: what must not change.
std::string snapshot(const fs::path& root) {
  std::string out;
  if (!fs::exists(root)) return out;
  std::vector<fs::path> paths;
  for (const auto& e : fs::recursive_directory_iterator(root)) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    out += p.string() + (fs::is_symlink(p) ? " -> " + fs::read_symlink(p).string()
                         : fs::is_directory(p) ? "/" : " " + read_file(p)) + "\n";
  }
  return out;
}

class StorageConfinement : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cli_.run({"group", "create", "-n", "rg", "-l", "eastus"}).exit_code, 0);
    ASSERT_EQ(cli_.run({"storage", "account", "create", "-n", "acct", "-g", "rg"}).exit_code, 0);
    ASSERT_EQ(data({"storage", "share", "create", "-n", "myshare"}).exit_code, 0);
    ASSERT_EQ(data({"storage", "container", "create", "-n", "cont"}).exit_code, 0);
    decoy_ = cli_.dir() / "decoy";
    fs::create_directories(decoy_ / "sub");
    std::ofstream(decoy_ / "passwd") << "root:x:0:0\n";
    std::ofstream(decoy_ / "sub" / "shadow") << "secret\n";
    source_ = cli_.write_file("src/upload.txt", "uploaded\n");
  }
  CliResult data(std::vector<std::string> args) {
    args.insert(args.end(), {"--account-name", "acct"});
    return cli_.run(args);
  }
  fs::path share() const { return cli_.home() / "storage" / "acct" / "shares" / "myshare"; }
  fs::path container() const { return cli_.home() / "storage" / "acct" / "blobs" / "cont"; }
  // A refusal: exit 1, one ERROR line naming the rule, nothing outside the home changed.
  void expect_refused(const std::vector<std::string>& args, const std::string& message) {
    const std::string before = snapshot(decoy_);
    CliResult r = data(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 1) << joined << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("ERROR: " + message, 0), 0u) << joined << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(snapshot(decoy_), before) << joined;
    EXPECT_TRUE(fs::exists(cli_.home() / "state.db")) << joined;
    EXPECT_TRUE(fs::is_directory(share())) << joined;
    EXPECT_TRUE(fs::is_directory(container())) << joined;
  }
  CliHarness cli_;
  fs::path decoy_, source_;
};

TEST_F(StorageConfinement, HostileShareAndContainerNamesAreRefusedEverywhere) {
  const std::string decoy = decoy_.string();
  const std::string dst = (cli_.dir() / "dst").string();
  for (const std::string& name : std::vector<std::string>{"../../..", decoy, "myshare/", "..", "a/../myshare", "MyShare"}) {
    const std::string share_rule = "The share name '" + name + "' is not valid";
    const std::string container_rule = "The container name '" + name + "' is not valid";
    expect_refused({"storage", "share", "delete", "-n", name}, share_rule);
    expect_refused({"storage", "share", "exists", "-n", name}, share_rule);
    expect_refused({"storage", "share", "create", "-n", name}, share_rule);
    expect_refused({"storage", "directory", "create", "-s", name, "-n", "d"}, share_rule);
    expect_refused({"storage", "directory", "delete", "-s", name, "-n", "sub"}, share_rule);
    expect_refused({"storage", "directory", "list", "-s", name}, share_rule);
    expect_refused({"storage", "file", "upload", "-s", name, "--source", source_.string(), "-p", "x.txt"}, share_rule);
    expect_refused({"storage", "file", "download", "-s", name, "-p", "passwd", "--dest", dst}, share_rule);
    expect_refused({"storage", "file", "list", "-s", name}, share_rule);
    expect_refused({"storage", "file", "delete", "-s", name, "-p", "passwd"}, share_rule);
    expect_refused({"storage", "container", "delete", "-n", name}, container_rule);
    expect_refused({"storage", "container", "create", "-n", name}, container_rule);
    expect_refused({"storage", "blob", "upload", "-c", name, "-f", source_.string(), "-n", "x"}, container_rule);
    expect_refused({"storage", "blob", "upload-batch", "-d", name, "-s", source_.parent_path().string()}, container_rule);
    expect_refused({"storage", "blob", "download", "-c", name, "-n", "sub/shadow", "-f", dst}, container_rule);
    expect_refused({"storage", "blob", "list", "-c", name}, container_rule);
    expect_refused({"storage", "blob", "delete", "-c", name, "-n", "sub/shadow"}, container_rule);
  }
  EXPECT_FALSE(fs::exists(dst));
}

TEST_F(StorageConfinement, PathsThatLeaveAreRefusedWithTheRule) {
  const std::string dst = (cli_.dir() / "dst").string();
  const std::string dotdot = "The file path '../../../state.db' must not contain '..': it would leave the share 'myshare'.";
  expect_refused({"storage", "file", "download", "-s", "myshare", "-p", "../../../state.db", "--dest", dst}, dotdot);
  expect_refused({"storage", "file", "download", "-s", "myshare", "-p", "/etc/passwd", "--dest", dst},
                 "The file path '/etc/passwd' must be relative to the share 'myshare'; remove the leading '/'.");
  expect_refused({"storage", "file", "upload", "-s", "myshare", "--source", source_.string(), "-p", "../../x.txt"},
                 "The file path '../../x.txt' must not contain '..'");
  expect_refused({"storage", "file", "delete", "-s", "myshare", "-p", "../../../state.db"}, "The file path");
  expect_refused({"storage", "directory", "create", "-s", "myshare", "-n", "../escape"}, "The directory path");
  expect_refused({"storage", "directory", "delete", "-s", "myshare", "-n", ".."}, "The directory path '..'");
  expect_refused({"storage", "file", "list", "-s", "myshare", "-p", "../.."}, "The directory path '../..'");
  expect_refused({"storage", "blob", "download", "-c", "cont", "-n", "../../../state.db", "-f", dst},
                 "The blob name '../../../state.db' must not contain '..': it would leave the container 'cont'.");
  expect_refused({"storage", "blob", "delete", "-c", "cont", "-n", "/etc/hostname"}, "The blob name '/etc/hostname'");
  expect_refused({"storage", "blob", "upload", "-c", "cont", "-f", source_.string(), "-n", "a/../../b"},
                 "The blob name 'a/../../b'");
  EXPECT_FALSE(fs::exists(dst));
  EXPECT_FALSE(fs::exists(cli_.home() / "storage" / "acct" / "escape"));
}

TEST_F(StorageConfinement, LinksPlantedInAShareAreNeverFollowedOut) {
  fs::create_symlink(decoy_ / "passwd", share() / "leak.txt");
  fs::create_symlink(decoy_, share() / "outdir");
  fs::create_symlink("nowhere", share() / "dangling");
  fs::create_symlink(decoy_ / "sub" / "shadow", container() / "blob-leak");
  // The fixed temporary name of old, and a target that is itself a link out.
  fs::create_symlink(decoy_ / "passwd", share() / "upload.txt.batchai-upload");
  fs::create_symlink(decoy_ / "passwd", share() / "target.txt");
  const std::string dst = (cli_.dir() / "dst").string();
  expect_refused({"storage", "file", "download", "-s", "myshare", "-p", "leak.txt", "--dest", dst},
                 "The file path 'leak.txt' leads out of the share 'myshare' through a symbolic link");
  expect_refused({"storage", "file", "download", "-s", "myshare", "-p", "outdir/passwd", "--dest", dst},
                 "The file path 'outdir/passwd' leads out of the share 'myshare'");
  expect_refused({"storage", "file", "list", "-s", "myshare", "-p", "outdir"}, "The directory path 'outdir' leads out");
  expect_refused({"storage", "file", "upload", "-s", "myshare", "--source", source_.string(), "-p", "outdir/x.txt"},
                 "The file path 'outdir' leads out of the share 'myshare'");
  expect_refused({"storage", "blob", "download", "-c", "cont", "-n", "blob-leak", "-f", dst}, "The blob name 'blob-leak'");
  EXPECT_FALSE(fs::exists(dst));
  // A listing shows every entry as what it is; a link out has no size, a dangling one breaks nothing.
  CliResult list = data({"storage", "file", "list", "-s", "myshare", "--query", "[].[name, properties.contentLength]",
                         "-o", "tsv"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "dangling\t0\nleak.txt\t0\noutdir\t0\ntarget.txt\t0\n");
  EXPECT_EQ(data({"storage", "blob", "list", "-c", "cont", "-o", "tsv", "--query", "[].name"}).out, "");
  // Uploads replace the name itself, atomically; the file the links name is untouched.
  const std::string before = snapshot(decoy_);
  ASSERT_EQ(data({"storage", "file", "upload", "-s", "myshare", "--source", source_.string()}).exit_code, 0);
  ASSERT_EQ(data({"storage", "file", "upload", "-s", "myshare", "--source", source_.string(), "-p", "target.txt"}).exit_code, 0);
  EXPECT_EQ(read_file(share() / "upload.txt"), "uploaded\n");
  EXPECT_FALSE(fs::is_symlink(share() / "target.txt"));
  EXPECT_EQ(read_file(share() / "target.txt"), "uploaded\n");
  EXPECT_EQ(snapshot(decoy_), before);
  // Deleting a link removes the link, never what it names; a share delete never follows one.
  ASSERT_EQ(data({"storage", "file", "delete", "-s", "myshare", "-p", "leak.txt"}).exit_code, 0);
  ASSERT_EQ(data({"storage", "share", "delete", "-n", "myshare"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(share()));
  EXPECT_EQ(snapshot(decoy_), before);
}

TEST_F(StorageConfinement, BlobDeletePrunesEmptyFoldersButNeverTheContainer) {
  ASSERT_EQ(data({"storage", "blob", "upload", "-c", "cont", "-f", source_.string(), "-n", "a/b.txt"}).exit_code, 0);
  expect_refused({"storage", "blob", "delete", "-c", "cont/", "-n", "a/b.txt"}, "The container name 'cont/' is not valid");
  EXPECT_TRUE(fs::exists(container() / "a" / "b.txt"));
  ASSERT_EQ(data({"storage", "blob", "delete", "-c", "cont", "-n", "a/b.txt/"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(container() / "a"));
  EXPECT_TRUE(fs::is_directory(container()));
}

// Six processes upload six different 4 MiB sources to one path, ten rounds: every upload
// succeeds and the stored file is exactly one of the sources, with no temporary left.
TEST_F(StorageConfinement, ConcurrentUploadsToOnePathLastWriterWins) {
  constexpr int kWriters = 6, kRounds = 10;
  constexpr std::size_t kSize = 4u << 20;
  std::vector<std::string> sources;
  for (int i = 0; i < kWriters; ++i)
    sources.push_back(cli_.write_file("src" + std::to_string(i) + "/data.bin", std::string(kSize, static_cast<char>('A' + i))).string());
  std::string stored_by_round;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<pid_t> pids;
    for (const auto& src : sources)
      pids.push_back(cli_.spawn({"storage", "file", "upload", "-s", "myshare", "--source", src, "-p", "data.bin",
                                 "--account-name", "acct"}));
    for (pid_t pid : pids) EXPECT_EQ(CliHarness::wait(pid), 0) << "round " << round;
    const std::string stored = read_file(share() / "data.bin");
    ASSERT_EQ(stored.size(), kSize) << "round " << round;
    EXPECT_EQ(stored.find_first_not_of(stored[0]), std::string::npos) << "a mix of sources in round " << round;
    EXPECT_TRUE(stored[0] >= 'A' && stored[0] < 'A' + kWriters);
    stored_by_round += stored[0];
    for (const auto& e : fs::directory_iterator(share()))
      EXPECT_EQ(e.path().filename(), "data.bin") << "left behind in round " << round;
  }
  std::cout << kRounds << " rounds x " << kWriters << " concurrent uploads of " << (kSize >> 20)
            << " MiB to one path; stored source per round: " << stored_by_round << "\n";
}

}  // namespace
}  // namespace batchai::cli::testing
