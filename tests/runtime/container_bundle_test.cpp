// The library list that puts batchai in a container (container_bundle.hpp): computed with ldd once,
// then read from its cache while the files are unchanged; a cache someone else wrote with a name
// that is a path, or a file that is not there, is never used.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "batchai/common/json_util.hpp"
#include "batchai/runtime/container_bundle.hpp"

namespace batchai::runtime {
namespace {

namespace fs = std::filesystem;

class ContainerBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = (fs::temp_directory_path() / "batchai-bundle-XXXXXX").string();
    ASSERT_NE(::mkdtemp(base.data()), nullptr);
    dir_ = base;
    cache_ = dir_ / "libraries.json";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The cache as written, with its libraries replaced by `libraries`.
  void plant(const Json& libraries) {
    Json doc = Json::parse(std::ifstream(cache_));
    doc["libraries"] = libraries;
    std::ofstream(cache_) << doc.dump();
  }

  fs::path dir_, cache_;
  std::unique_ptr<ProcessLauncher> launcher_ = make_posix_process_launcher();
};

bool has(const std::vector<std::pair<std::string, fs::path>>& libs, const std::string& name) {
  return std::any_of(libs.begin(), libs.end(), [&](const auto& l) { return l.first == name; });
}

TEST_F(ContainerBundle, TheListIsComputedOnceThenReadFromItsPrivateCache) {
  const auto first = needed_libraries(*launcher_, {"/bin/bash"}, cache_);
  ASSERT_TRUE(std::any_of(first.begin(), first.end(), [](const auto& l) { return l.first.rfind("libc.so", 0) == 0; }));
  struct stat st {};
  ASSERT_EQ(::stat(cache_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A list that only the cache holds comes back: ldd did not run again.
  plant(Json::array({{"libmarker.so.1", "/bin/bash"}}));
  const auto cached = needed_libraries(*launcher_, {"/bin/bash"}, cache_);
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_EQ(cached[0].first, "libmarker.so.1");
  // Another file set is another key: computed again.
  EXPECT_FALSE(has(needed_libraries(*launcher_, {"/bin/bash", "/bin/ls"}, cache_), "libmarker.so.1"));
}

TEST_F(ContainerBundle, ACacheWithAPathForANameOrAMissingFileIsNotUsed) {
  needed_libraries(*launcher_, {"/bin/bash"}, cache_);
  for (const Json& bad : {Json::array({{"../../etc/evil", "/bin/bash"}}), Json::array({{"libx.so", "relative/lib"}}),
                          Json::array({{"libx.so", (dir_ / "absent.so").string()}})}) {
    plant(bad);
    const auto libs = needed_libraries(*launcher_, {"/bin/bash"}, cache_);
    EXPECT_FALSE(has(libs, bad[0][0].get<std::string>())) << bad.dump();
    EXPECT_TRUE(std::any_of(libs.begin(), libs.end(), [](const auto& l) { return l.first.rfind("libc.so", 0) == 0; }));
  }
}

}  // namespace
}  // namespace batchai::runtime
