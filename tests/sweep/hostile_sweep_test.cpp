// The hostile-input sweep (issue 13): every command that takes a name, path, count or file, fed a
// corpus of hostile values inside a sandbox. After every case: nothing in the decoy tree beside
// the home changed, no answer or download holds the decoy's secret, the answer is a clean error
// (one ERROR: line, exit 1/3, or an argparse usage error, exit 2) or a result, never a signal, an
// abort, a C++ exception text or a hang. After every class: no process of the sandbox is left.
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "corpus.hpp"
#include "sandbox.hpp"
#include "support/files.hpp"

namespace batchai::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Texts that only a crash or an unhandled exception prints.
constexpr const char* kCrashTexts[] = {"terminate called", "filesystem error", "json.exception", "what():",
                                       "std::",            "Segmentation",     "Aborted",        "bad_alloc",
                                       "basic_string"};

class HostileSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ok({"group", "create", "-n", "rg", "-l", "eastus"}), 0);
    ASSERT_EQ(ok({"workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"}), 0);
    ASSERT_EQ(ok({"experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"}), 0);
    ASSERT_EQ(ok({"storage", "account", "create", "-n", "acct", "-g", "rg"}), 0);
    Outcome keys = sb_.run({"storage", "account", "keys", "list", "-n", "acct", "-g", "rg", "--query", "[0].value", "-o", "tsv"});
    ASSERT_EQ(keys.code, 0) << keys.err;
    key_ = keys.out.substr(0, keys.out.find('\n'));
    source_ = sb_.write_input("src.txt", "uploaded by the sweep\n");
    sb_.write_input("batch/one.txt", "one\n");
    ASSERT_EQ(ok(auth({"storage", "share", "create", "-n", "myshare"})), 0);
    ASSERT_EQ(ok(auth({"storage", "directory", "create", "-s", "myshare", "-n", "d"})), 0);
    ASSERT_EQ(ok(auth({"storage", "file", "upload", "-s", "myshare", "--source", source_.string(), "-p", "d/a.txt"})), 0);
    ASSERT_EQ(ok(auth({"storage", "container", "create", "-n", "cont"})), 0);
    ASSERT_EQ(ok(auth({"storage", "blob", "upload", "-c", "cont", "-f", source_.string(), "-n", "a/b.txt"})), 0);
    // Links a user (or a job writing into a mounted share) could plant inside a share or container.
    for (const auto& root : {find_dir("myshare"), find_dir("cont")}) {
      ASSERT_FALSE(root.empty());
      fs::create_directory_symlink(sb_.decoy(), root / "out");
      fs::create_symlink(sb_.root() / "nowhere", root / "dangling");
      fs::create_directory_symlink("d", root / "in");
    }
    share_root_ = find_dir("myshare");
    digest_ = sb_.decoy_digest();
  }

  void TearDown() override {
    sb_.run({"workspace", "delete", "-g", "rg", "-n", "ws", "-y"}, std::chrono::seconds(60));
    std::vector<int> left;
    for (int i = 0; i < 100 && !(left = sb_.leftover_processes()).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(left.empty()) << left.size() << " process(es) of the sandbox outlived the sweep, e.g. pid " << left[0];
    std::cout << "[sweep] " << ::testing::UnitTest::GetInstance()->current_test_info()->name() << ": ";
    int total = 0;
    for (const auto& [key, n] : counts_) total += n;
    std::cout << total << " cases, " << failures_ << " failed\n";
    for (const auto& [key, n] : counts_) std::cout << "[sweep]   " << key << ": " << n << "\n";
  }

  int ok(const std::vector<std::string>& args) {
    Outcome o = sb_.run(args, std::chrono::seconds(60));
    if (o.code != 0) ADD_FAILURE() << join(args) << "\n" << o.err;
    return o.code;
  }

  std::vector<std::string> auth(std::vector<std::string> args) const {
    args.insert(args.end(), {"--account-name", "acct", "--account-key", key_});
    return args;
  }

  fs::path find_dir(const std::string& name) const {
    for (const auto& e : fs::recursive_directory_iterator(sb_.home()))
      if (e.is_directory() && !e.is_symlink() && e.path().filename() == name) return e.path();
    return {};
  }

  static std::string join(const std::vector<std::string>& args) {
    std::string s = "batchai";
    for (const auto& a : args) s += " '" + a + "'";
    return s;
  }

  // Runs one case and judges it; `download` is a file the command may have written.
  void judge(const std::string& command, const std::string& cls, std::vector<std::string> args,
             const fs::path& download = {}) {
    ++counts_[command + " / " + cls];
    std::error_code ec;
    if (!download.empty()) fs::remove(download, ec);
    Outcome o = sb_.run(args);
    std::vector<std::string> why;
    if (o.timed_out) why.push_back("did not finish within the time limit");
    if (o.code < 0 || o.code > 3) why.push_back("exit code " + std::to_string(o.code));
    for (const char* text : kCrashTexts)
      if (o.err.find(text) != std::string::npos || o.out.find(text) != std::string::npos)
        why.push_back(std::string("printed '") + text + "'");
    if (o.code != 0 && !o.timed_out && o.err.find("ERROR:") == std::string::npos &&
        o.err.find(": error: ") == std::string::npos)
      why.push_back("failed without an ERROR: line");
    if (o.out.find(Sandbox::kSecret) != std::string::npos || o.err.find(Sandbox::kSecret) != std::string::npos)
      why.push_back("the decoy's secret reached the answer");
    if (o.out.find("\"contentLength\": 4242") != std::string::npos) why.push_back("listed the decoy file's size");
    if (!download.empty() && fs::is_regular_file(download)) {
      if (test::read_file(download).find(Sandbox::kSecret) != std::string::npos) why.push_back("downloaded the decoy's secret");
    }
    const std::uint64_t now = sb_.decoy_digest();
    if (now != digest_) {
      why.push_back("changed the decoy tree");
      digest_ = now;  // judge the next case on its own
    }
    if (!fs::is_directory(sb_.home() / "storage")) why.push_back("removed the home's storage folder");
    if (why.empty()) return;
    ++failures_;
    std::string text;
    for (const auto& w : why) text += (text.empty() ? "" : "; ") + w;
    ADD_FAILURE() << "[" << command << " / " << cls << "] " << join(args) << "\n  -> " << text << " (exit "
                  << o.code << ")\n  stderr: " << o.err.substr(0, 400);
  }

  // Each template's "{}" is replaced by every value of the corpus.
  void sweep(const std::string& command, const std::vector<std::string>& tmpl, const Corpus& corpus,
             const fs::path& download = {}) {
    for (const auto& [cls, value] : corpus) {
      std::vector<std::string> args;
      for (const auto& a : tmpl) args.push_back(a == "{}" ? value : a);
      judge(command, cls, args, download);
    }
  }

  // Waits until no job of the sandbox is queued or running (terminating the stragglers).
  void settle_jobs() {
    const std::vector<std::string> list = {"job", "list", "-g", "rg", "-w", "ws", "-e", "exp", "--query",
                                           "[?executionState!='succeeded' && executionState!='failed'].name",
                                           "-o", "tsv"};
    for (int round = 0; round < 300; ++round) {
      Outcome o = sb_.run(list, std::chrono::seconds(60));
      if (o.code != 0 || o.out.empty()) return;
      if (round == 100) {
        std::istringstream names(o.out);
        for (std::string n; std::getline(names, n);)
          sb_.run({"job", "terminate", "-g", "rg", "-w", "ws", "-e", "exp", "-n", n, "-y"});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "jobs of the sweep did not end";
  }

  void make_cluster(const std::string& name) {
    ASSERT_EQ(ok({"cluster", "create", "-g", "rg", "-w", "ws", "-n", name, "-s", "Standard_D1", "-t", "1", "-u",
                  "tester", "-p", "Secret.123"}),
              0);
  }

  json base_job() const {
    return {{"properties",
             {{"nodeCount", 1},
              {"customToolkitSettings", {{"commandLine", "echo hi"}}},
              {"stdOutErrPathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs"},
              {"mountVolumes",
               {{"azureFileShares",
                 json::array({{{"accountName", "acct"},
                               {"azureFileUrl", "https://acct.file.core.windows.net/myshare"},
                               {"credentials", {{"accountKey", key_}}},
                               {"relativeMountPath", "afs"}}})}}}}}};
  }

  fs::path write_job(const std::string& name, const json& doc) const { return sb_.write_input(name + ".json", doc.dump()); }

  Sandbox sb_;
  std::string key_;
  fs::path source_;
  fs::path share_root_;
  std::uint64_t digest_ = 0;
  std::map<std::string, int> counts_;
  int failures_ = 0;
};

TEST_F(HostileSweep, StorageNamesAndPaths) {
  const fs::path dl = sb_.inputs() / "dl.out";
  const Corpus read = path_corpus(sb_.decoy(), true);
  const Corpus write = path_corpus(sb_.decoy(), false);
  const std::string src = source_.string(), batch = (sb_.inputs() / "batch").string(), out = dl.string();
  // Reads first, then writes, then deletes, so the fixtures stay for as long as possible.
  sweep("share exists", auth({"storage", "share", "exists", "-n", "{}"}), read);
  sweep("directory list", auth({"storage", "directory", "list", "-s", "myshare", "-n", "{}"}), read);
  sweep("directory list -s", auth({"storage", "directory", "list", "-s", "{}"}), read);
  sweep("file list", auth({"storage", "file", "list", "-s", "myshare", "-p", "{}"}), read);
  sweep("file list -s", auth({"storage", "file", "list", "-s", "{}"}), read);
  sweep("file download", auth({"storage", "file", "download", "-s", "myshare", "-p", "{}", "--dest", out}), read, dl);
  sweep("file download -s", auth({"storage", "file", "download", "-s", "{}", "-p", "d/a.txt", "--dest", out}), read, dl);
  sweep("blob list", auth({"storage", "blob", "list", "-c", "{}"}), read);
  sweep("blob list --prefix", auth({"storage", "blob", "list", "-c", "cont", "--prefix", "{}"}), read);
  sweep("blob download", auth({"storage", "blob", "download", "-c", "cont", "-n", "{}", "-f", out}), read, dl);
  sweep("blob download -c", auth({"storage", "blob", "download", "-c", "{}", "-n", "a/b.txt", "-f", out}), read, dl);
  sweep("account keys list", {"storage", "account", "keys", "list", "-g", "rg", "-n", "{}"}, read);
  sweep("share list --account-name", {"storage", "share", "list", "--account-name", "{}"}, read);
  sweep("share create", auth({"storage", "share", "create", "-n", "{}"}), write);
  sweep("directory create", auth({"storage", "directory", "create", "-s", "myshare", "-n", "{}"}), write);
  sweep("directory create -s", auth({"storage", "directory", "create", "-s", "{}", "-n", "newdir"}), write);
  sweep("file upload", auth({"storage", "file", "upload", "-s", "myshare", "--source", src, "-p", "{}"}), write);
  sweep("file upload -s", auth({"storage", "file", "upload", "-s", "{}", "--source", src}), write);
  sweep("container create", auth({"storage", "container", "create", "-n", "{}"}), write);
  sweep("blob upload", auth({"storage", "blob", "upload", "-c", "cont", "-f", src, "-n", "{}"}), write);
  sweep("blob upload -c", auth({"storage", "blob", "upload", "-c", "{}", "-f", src, "-n", "x.txt"}), write);
  sweep("blob upload-batch", auth({"storage", "blob", "upload-batch", "-d", "{}", "-s", batch}), write);
  sweep("account create", {"storage", "account", "create", "-g", "rg", "-n", "{}"}, write);
  sweep("file delete", auth({"storage", "file", "delete", "-s", "myshare", "-p", "{}"}), write);
  sweep("file delete -s", auth({"storage", "file", "delete", "-s", "{}", "-p", "d/a.txt"}), write);
  sweep("blob delete", auth({"storage", "blob", "delete", "-c", "cont", "-n", "{}"}), write);
  sweep("blob delete -c", auth({"storage", "blob", "delete", "-c", "{}", "-n", "a/b.txt"}), write);
  sweep("directory delete", auth({"storage", "directory", "delete", "-s", "myshare", "-n", "{}"}), write);
  sweep("directory delete -s", auth({"storage", "directory", "delete", "-s", "{}", "-n", "d"}), write);
  sweep("container delete", auth({"storage", "container", "delete", "-n", "{}"}), write);
  sweep("share delete", auth({"storage", "share", "delete", "-n", "{}"}), write);
  sweep("account delete", {"storage", "account", "delete", "-g", "rg", "-n", "{}", "-y"}, write);
  EXPECT_TRUE(fs::is_directory(share_root_)) << "a hostile name removed the share 'myshare'";
}

TEST_F(HostileSweep, JobAndClusterFiles) {
  make_cluster("c1");
  json job = base_job();
  const std::string d = sb_.decoy().string();
  job["properties"]["customToolkitSettings"]["commandLine"] =
      "ln -s " + d + "/secret.txt $AZ_BATCHAI_STDOUTERR_DIR/leak.txt; ln -s " + d +
      " $AZ_BATCHAI_STDOUTERR_DIR/leakdir; ln -s " + d + "/secret.txt $AZ_BATCHAI_OUTPUT_OUT/leak.txt; echo hi";
  job["properties"]["outputDirectories"] = json::array({{{"id", "OUT"}, {"pathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs"}}});
  ASSERT_EQ(ok({"job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "j0", "-c", "c1", "-f",
                write_job("j0", job).string()}),
            0);
  settle_jobs();
  const std::vector<std::string> scope = {"-g", "rg", "-w", "ws", "-e", "exp", "-j", "j0"};
  auto with = [&](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), scope.begin(), scope.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  Corpus read = path_corpus(sb_.decoy(), true);
  for (const char* leak : {"leak.txt", "leakdir", "leakdir/secret.txt", "leakdir/sub"}) read.push_back({"planted-link", leak});
  sweep("job file list -d", with({"job", "file", "list"}, {"-d", "{}"}), read);
  sweep("job file list -p", with({"job", "file", "list"}, {"-d", "stdouterr", "-p", "{}"}), read);
  sweep("job file list -p OUT", with({"job", "file", "list"}, {"-d", "OUT", "-p", "{}"}), read);
  sweep("job file stream -f", with({"job", "file", "stream"}, {"-f", "{}"}), read);
  sweep("job file stream -p", with({"job", "file", "stream"}, {"-p", "{}", "-f", "secret.txt"}), read);
  sweep("job file stream OUT", with({"job", "file", "stream"}, {"-d", "OUT", "-f", "{}"}), read);
  sweep("cluster file list -p", {"cluster", "file", "list", "-g", "rg", "-w", "ws", "-c", "c1", "-p", "{}"}, read);
  // Cluster mounts and setup-task output: each accepted value makes a cluster; they are small.
  int n = 0;
  for (const auto& [cls, value] : path_corpus(sb_.decoy(), false)) {
    const std::string name = "m" + std::to_string(n++);
    judge("cluster create --afs-name", cls,
          {"cluster", "create", "-g", "rg", "-w", "ws", "-n", name + "a", "-s", "Standard_D1", "-t", "1", "-u", "tester",
           "-p", "Secret.123", "--storage-account-name", "acct", "--storage-account-key", key_, "--afs-name", value});
    judge("cluster create --bfs-name", cls,
          {"cluster", "create", "-g", "rg", "-w", "ws", "-n", name + "b", "-s", "Standard_D1", "-t", "1", "-u", "tester",
           "-p", "Secret.123", "--storage-account-name", "acct", "--storage-account-key", key_, "--bfs-name", value});
    judge("cluster create --afs-mount-path", cls,
          {"cluster", "create", "-g", "rg", "-w", "ws", "-n", name + "c", "-s", "Standard_D1", "-t", "1", "-u", "tester",
           "-p", "Secret.123", "--storage-account-name", "acct", "--storage-account-key", key_, "--afs-name", "myshare",
           "--afs-mount-path", value});
    judge("cluster create --setup-task-output", cls,
          {"cluster", "create", "-g", "rg", "-w", "ws", "-n", name + "d", "-s", "Standard_D1", "-t", "1", "-u", "tester",
           "-p", "Secret.123", "--setup-task", "echo setup", "--setup-task-output", value});
    for (const char* c : {"a", "b", "c", "d"})
      sb_.run({"cluster", "delete", "-g", "rg", "-w", "ws", "-n", name + c, "-y"});
  }
}

TEST_F(HostileSweep, CountsAndNumbers) {
  make_cluster("c1");
  int n = 0;
  const std::vector<std::string> node = {"-s", "Standard_D1", "-u", "tester", "-p", "Secret.123"};
  for (const auto& [cls, value] : number_corpus()) {
    const std::string name = "n" + std::to_string(n++);
    auto create = [&](std::vector<std::string> extra) {
      std::vector<std::string> a = {"cluster", "create", "-g", "rg", "-w", "ws", "-n", name};
      a.insert(a.end(), node.begin(), node.end());
      a.insert(a.end(), extra.begin(), extra.end());
      return a;
    };
    judge("cluster create -t", cls, create({"-t", value}));
    sb_.run({"cluster", "delete", "-g", "rg", "-w", "ws", "-n", name, "-y"});
    judge("cluster create --min", cls, create({"--min", value, "--max", "1"}));
    sb_.run({"cluster", "delete", "-g", "rg", "-w", "ws", "-n", name, "-y"});
    judge("cluster create --max", cls, create({"--min", "0", "--max", value}));
    sb_.run({"cluster", "delete", "-g", "rg", "-w", "ws", "-n", name, "-y"});
    judge("cluster resize -t", cls, {"cluster", "resize", "-g", "rg", "-w", "ws", "-n", "c1", "-t", value});
    judge("cluster auto-scale --min", cls,
          {"cluster", "auto-scale", "-g", "rg", "-w", "ws", "-n", "c1", "--min", value, "--max", "1"});
    judge("cluster auto-scale --max", cls,
          {"cluster", "auto-scale", "-g", "rg", "-w", "ws", "-n", "c1", "--min", "0", "--max", value});
    sb_.run({"cluster", "resize", "-g", "rg", "-w", "ws", "-n", "c1", "-t", "1"});
    judge("file-server create --disk-count", cls,
          {"file-server", "create", "-g", "rg", "-w", "ws", "-n", "f" + name, "-s", "Standard_D1", "--disk-count", value,
           "--disk-size", "10", "-u", "tester", "-p", "Secret.123"});
    judge("file-server create --disk-size", cls,
          {"file-server", "create", "-g", "rg", "-w", "ws", "-n", "g" + name, "-s", "Standard_D1", "--disk-count", "1",
           "--disk-size", value, "-u", "tester", "-p", "Secret.123"});
    judge("job file list --expiry", cls,
          {"job", "file", "list", "-g", "rg", "-w", "ws", "-e", "exp", "-j", "nosuch", "--expiry", value});
    judge("cluster file list --expiry", cls,
          {"cluster", "file", "list", "-g", "rg", "-w", "ws", "-c", "c1", "--expiry", value});
  }
  Outcome check = sb_.run({"cluster", "list", "-g", "rg", "-w", "ws", "-o", "json"});
  EXPECT_EQ(check.code, 0) << "reconciling after the count sweep failed: " << check.err;
}

TEST_F(HostileSweep, ConfigFilesAndQueries) {
  make_cluster("c1");
  const fs::path fifo = sb_.inputs() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path link = sb_.inputs() / "link.json";
  fs::create_symlink(sb_.decoy() / "secret.txt", link);
  const std::string deep_array = std::string(10000, '[') + std::string(10000, ']');
  std::string deep_object;
  for (int i = 0; i < 10000; ++i) deep_object += "{\"a\":";
  deep_object += "1" + std::string(10000, '}');
  const Corpus files = {
      {"special-file", "/dev/zero"},
      {"special-file", "/dev/null"},
      {"special-file", fifo.string()},
      {"special-file", sb_.inputs().string()},
      {"special-file", (sb_.inputs() / "missing.json").string()},
      {"symlink-out", link.string()},
      {"deep-json", sb_.write_input("deep_array.json", deep_array).string()},
      {"deep-json", sb_.write_input("deep_object.json", deep_object).string()},
      {"big-file", sb_.write_input("big.json", "{\"properties\": {\"x\": \"" + std::string(16 << 20, 'a') + "\"}}").string()},
      {"bad-json", sb_.write_input("bad.json", "{\"properties\": {").string()},
      {"bad-json", sb_.write_input("empty.json", "").string()},
      {"bad-json", sb_.write_input("array.json", "[]").string()},
      {"bad-json", sb_.write_input("binary.json", std::string("\x00\xff\xfe{", 4)).string()},
      {"bad-json", sb_.write_input("types.json", R"({"properties": {"nodeCount": "x", "scaleSettings": 3}})").string()}};
  int n = 0;
  for (const auto& [cls, path] : files) {
    const std::string name = "cf" + std::to_string(n++);
    judge("job create -f", cls, {"job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "-c", "c1", "-f", path});
    judge("cluster create -f", cls, {"cluster", "create", "-g", "rg", "-w", "ws", "-n", name, "-f", path});
    judge("file-server create -f", cls, {"file-server", "create", "-g", "rg", "-w", "ws", "-n", name, "-f", path});
  }
  for (const auto& [cls, doc] : job_document_corpus(base_job(), sb_.decoy())) {
    const std::string name = "jd" + std::to_string(n++);
    judge("job create (document)", cls,
          {"job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "-c", "c1", "-f",
           sb_.write_input(name + ".json", doc).string()});
  }
  settle_jobs();
  EXPECT_EQ(sb_.decoy_digest(), digest_) << "a job of the sweep changed the decoy tree";
  std::string doubling;
  for (int i = 0; i < 24; ++i) doubling += "[@,@][]";
  const Corpus queries = {{"query-bomb", "[@,@][]" + doubling},
                          {"query-bomb", std::string(50000, '(') + "@" + std::string(50000, ')')},
                          {"query-bomb", std::string(50000, '[') + std::string(50000, ']')},
                          {"query-bomb", "join('', [@,@,@,@,@,@,@,@][][][].name)"},
                          {"query-bad", "[?"},
                          {"query-bad", "length(`1`, `2`)"}};
  sweep("--query", {"group", "list", "--query", "{}"}, queries);
}

}  // namespace
}  // namespace batchai::sweep
