// The trainer's files for the dashboard: a run with $AZ_BATCHAI_STDOUTERR_DIR leaves metrics.json
// (identical to --dir's) and batchai-manifest.json (the model relative to its mount root, the
// per-rank phase summary); without the variable nothing is written; rewrites are atomic; paths
// outside the roots (or escaping them with "..") get no mountPath; a folder that cannot be
// written warns once and never throws.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "batchai/train/local_communicator.hpp"
#include "io/dashboard_files.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"
#include "trainer.hpp"

namespace batchai::train {
namespace {

namespace fs = std::filesystem;

using test::read_file;
using test::ScopedEnv;
using test::TempDir;

TrainOptions tiny_run(const fs::path& dir) {
  TrainOptions o;
  o.dir = dir.string();
  o.synthetic = 256;
  o.epochs = 2;
  o.steps_per_epoch = 3;
  o.threads = 2;
  o.quiet = true;
  o.validation_images = 64;
  return o;
}

TEST(DashboardFiles, TrainingWritesMetricsAndManifestIntoTheStdoutErrFolder) {
  const TempDir tmp("batchai-dashboard-files-test");
  const fs::path& home = tmp.path();
  const fs::path job_root = home / "node" / "jobs" / "j1" / "mounts";
  const fs::path stdouterr = home / "stdouterr";
  fs::create_directories(job_root / "external");
  fs::create_directories(stdouterr);
  const ScopedEnv stdouterr_env("AZ_BATCHAI_STDOUTERR_DIR", stdouterr.string());
  const ScopedEnv job_root_env("AZ_BATCHAI_JOB_MOUNT_ROOT", job_root.string());
  const ScopedEnv mount_root_env("AZ_BATCHAI_MOUNT_ROOT", (home / "node" / "mounts").string());
  const fs::path dir = job_root / "external" / "out";
  auto comm = make_local_communicator();
  std::ostringstream out;
  run_training(tiny_run(dir), *comm, out);

  ASSERT_TRUE(fs::exists(stdouterr / "metrics.json"));
  EXPECT_EQ(read_file(stdouterr / "metrics.json"), read_file(dir / "metrics.json"));
  EXPECT_EQ(nlohmann::json::parse(read_file(stdouterr / "metrics.json")).at("epochs").size(), 2u);

  const auto m = nlohmann::json::parse(read_file(stdouterr / kManifestFile));
  EXPECT_EQ(m.at("version"), 1);
  EXPECT_EQ(m.at("mountRoot"), "job");
  ASSERT_EQ(m.at("files").size(), 1u);
  const auto& model = m.at("files")[0];
  EXPECT_EQ(model.at("name"), "keras_cifar10_trained_model.h5");
  EXPECT_EQ(model.at("kind"), "model");
  EXPECT_EQ(model.at("mountPath"), "external/out/saved_models/keras_cifar10_trained_model.h5");
  EXPECT_EQ(model.at("bytes").get<std::uintmax_t>(), fs::file_size(dir / kSavedModelRelPath));
  const auto& ranks = m.at("timelineSummary").at("ranks");
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].at("rank"), 0);
  EXPECT_EQ(ranks[0].at("steps"), 6);  // 2 epochs of 3 steps
  EXPECT_GT(ranks[0].at("meanMs").at("forward_backward").get<double>(), 0.0);
  EXPECT_GE(ranks[0].at("meanMs").at("data").get<double>(), 0.0);
  EXPECT_EQ(ranks[0].at("meanMs").at("allreduce").get<double>(), 0.0);  // one rank: no allreduce
  EXPECT_TRUE(ranks[0].at("meanMs").contains("update"));
  for (const auto& e : fs::directory_iterator(stdouterr)) {
    EXPECT_EQ(e.path().extension(), ".json") << "left behind: " << e.path();
  }
}

TEST(DashboardFiles, WithoutTheVariableNothingIsWritten) {
  const TempDir tmp("batchai-dashboard-files-test");
  const fs::path& home = tmp.path();
  const ScopedEnv stdouterr_env("AZ_BATCHAI_STDOUTERR_DIR", std::nullopt);
  const ScopedEnv job_root_env("AZ_BATCHAI_JOB_MOUNT_ROOT", home.string());
  std::ostringstream warn;
  EXPECT_FALSE(DashboardFiles::from_env(warn).enabled());
  auto comm = make_local_communicator();
  std::ostringstream out;
  run_training(tiny_run(home / "out"), *comm, out);
  for (const auto& e : fs::recursive_directory_iterator(home)) {
    EXPECT_NE(e.path().filename(), kManifestFile) << e.path();
  }
  EXPECT_TRUE(fs::exists(home / "out" / "metrics.json"));  // --dir's own copy is unchanged
  ::setenv("AZ_BATCHAI_STDOUTERR_DIR", "", 1);  // stdouterr_env puts it back
  EXPECT_FALSE(DashboardFiles::from_env(warn).enabled());
}

TEST(DashboardFiles, RewritesReplaceTheFileWhole) {
  const TempDir tmp("batchai-dashboard-files-test");
  const fs::path& dir = tmp.path();
  std::ostringstream warn;
  DashboardFiles files(dir.string(), {}, warn);
  files.write_metrics(std::string(100000, 'a'));
  files.write_metrics("{\"epochs\":[]}\n");
  EXPECT_EQ(read_file(dir / "metrics.json"), "{\"epochs\":[]}\n");
  files.write_manifest("", nullptr);
  const auto m = nlohmann::json::parse(read_file(dir / kManifestFile));
  EXPECT_TRUE(m.at("mountRoot").is_null());
  EXPECT_TRUE(m.at("files").empty());
  EXPECT_TRUE(m.at("timelineSummary").is_null());
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2) << "no temporary file may stay behind";
  EXPECT_TRUE(warn.str().empty());
}

TEST(DashboardFiles, AFolderThatCannotBeWrittenWarnsOnceAndNeverThrows) {
  const TempDir tmp("batchai-dashboard-files-test");
  const fs::path dir = tmp / "missing" / "deeper";
  std::ostringstream warn;
  DashboardFiles files(dir.string(), {}, warn);
  EXPECT_NO_THROW(files.write_metrics("{}"));
  EXPECT_NO_THROW(files.write_manifest("", nullptr));
  EXPECT_NO_THROW(files.write_metrics("{}"));
  const std::string text = warn.str();
  EXPECT_NE(text.find("warning"), std::string::npos);
  EXPECT_EQ(text.find("warning"), text.rfind("warning")) << "warned more than once: " << text;
}

TEST(DashboardFiles, MountPathsAreRelativeAndNeverEscapeTheRoot) {
  const TempDir tmp("batchai-dashboard-files-test");
  const fs::path& home = tmp.path();
  const MountRoots roots{(home / "node/jobs/j/mounts").string(), (home / "node/mounts").string()};
  auto place = [&](const fs::path& p) { return mount_place(p.string(), roots); };

  auto job = place(home / "node/jobs/j/mounts/afs/m.h5");
  EXPECT_EQ(job.root, "job");
  EXPECT_EQ(job.path, "afs/m.h5");
  auto cluster = place(home / "node/mounts/nfs/./x/../m.h5");
  EXPECT_EQ(cluster.root, "cluster");
  EXPECT_EQ(cluster.path, "nfs/m.h5");
  EXPECT_FALSE(place(home / "node/mounts/../secret.h5").root);       // escapes with ..
  EXPECT_FALSE(place(home / "node/mounts-other/m.h5").root);         // a sibling with the same prefix
  EXPECT_FALSE(place(home / "node/mounts").root);                    // the root itself is no file
  EXPECT_FALSE(place("/elsewhere/m.h5").path);
  EXPECT_FALSE(mount_place((home / "x.h5").string(), MountRoots{}).root);  // no roots set

  // A mount is a link: the file named through the link's target still maps to the root.
  fs::create_directories(home / "share");
  fs::create_directories(home / "node/jobs/j/mounts");
  fs::create_directory_symlink(home / "share", home / "node/jobs/j/mounts/afs");
  const MountRoots via_link{(home / "node/jobs/j/mounts/afs").string(), ""};
  auto resolved = mount_place((home / "share/m.h5").string(), via_link);
  EXPECT_EQ(resolved.root, "job");
  EXPECT_EQ(resolved.path, "m.h5");

  const std::string json = manifest_json({{"a\"<&.h5", "model", {}, 7}}, nullptr);
  const auto m = nlohmann::json::parse(json);
  EXPECT_TRUE(m.at("mountRoot").is_null());
  EXPECT_TRUE(m.at("files")[0].at("mountPath").is_null());
  EXPECT_EQ(m.at("files")[0].at("name"), "a\"<&.h5");
  EXPECT_NO_THROW(manifest_json({{std::string("bad\xff\xfe.h5"), "model", {}, 1}}, nullptr));
}

}  // namespace
}  // namespace batchai::train
