// Acceptance: every Microsoft recipe job file of ../shared/reference/batchai-recipes is submitted
// as a user would (storage placeholders patched through --storage-account-name) and must be
// accepted (queued) or refused with an ERROR line that says why. Skipped when the corpus is absent.
#include <cstdlib>
#include <fstream>

#include "job_harness.hpp"

namespace fs = std::filesystem;

namespace batchai::test {
namespace {

fs::path corpus() {
  if (const char* dir = std::getenv("BATCHAI_RECIPES_DIR")) return dir;
  return fs::path(BATCHAI_SOURCE_DIR) / ".." / "shared" / "reference" / "batchai-recipes";
}

// Job files: JSON whose "properties" hold a nodeCount or a *Settings object.
bool is_job_file(const fs::path& p) {
  if (p.extension() != ".json") return false;
  std::ifstream in(p);
  Json j = Json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("properties") || !j["properties"].is_object()) return false;
  for (const auto& [key, value] : j["properties"].items())
    if (key == "nodeCount" || key.ends_with("Settings")) return !j["properties"].contains("vmSize");
  return false;
}

using JobsRecipes = JobsFixture;

TEST_F(JobsRecipes, EveryRecipeJobIsAcceptedOrRefusedWithAReason) {
  if (!fs::is_directory(corpus())) GTEST_SKIP() << "no recipe corpus at " << corpus();
  make_cluster("c1", 0);  // nothing runs: jobs stay queued
  ASSERT_EQ(run("storage account create -g rg -n recipesacct").code, 0);
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(corpus()))
    if (e.is_regular_file() && is_job_file(e.path())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 10u);
  int accepted = 0;
  int refused = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string name = "recipe" + std::to_string(i);
    Result r = run("batchai job create " + scope_ + " -n " + name + " -c c1 --storage-account-name recipesacct -f '" +
                   files[i].string() + "'");
    if (r.code == 0) {
      ++accepted;
      Json job = Json::parse(r.out);
      EXPECT_EQ(job["executionState"], "queued") << files[i];
      EXPECT_EQ(job["name"], name);
      // Placeholders are gone from the stored document.
      EXPECT_EQ(r.out.find("<AZURE_BATCHAI_STORAGE_ACCOUNT>"), std::string::npos) << files[i];
    } else {
      ++refused;
      EXPECT_EQ(r.code, 1) << files[i] << "\n" << r.err;
      EXPECT_EQ(r.err.rfind("ERROR: ", 0), 0u) << files[i] << "\n" << r.err;
      EXPECT_GT(r.err.size(), 20u) << files[i];
    }
  }
  std::cout << files.size() << " recipe job files: " << accepted << " accepted, " << refused << " refused\n";
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace batchai::test
