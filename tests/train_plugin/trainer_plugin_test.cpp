// `batchai train` through libbatchai_trainer.so: the executable parses the options, loads the
// plugin from its own folder only, and reports a missing or broken plugin, or an error the
// training raised, as one `ERROR:` line with exit 1. Other commands run without the plugin.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/shell.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;
  std::string err;  // stderr (stdout is discarded)
};

std::string quoted(const fs::path& p) { return batchai::test::shell_quote(p.string()); }

class TrainerPlugin : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_ / "home"); }

  // Runs `<env> <exe> <args>` with BATCHAI_HOME inside the temporary folder.
  Outcome run(const fs::path& exe, const std::string& args, const std::string& env = "") const {
    const std::string command = "BATCHAI_HOME=" + quoted(dir_ / "home") + " BATCHAI_SIM_DELAY_S=0 " + env + " " +
                                quoted(exe) + " " + args + " 2>&1 >/dev/null";
    const batchai::test::ShellResult r = batchai::test::run_shell(command);
    return {r.code, r.out};
  }

  // A copy of the executable alone in its own folder (no plugin beside it).
  fs::path lone_executable(const std::string& folder) const {
    const fs::path exe = dir_ / folder / "batchai";
    fs::create_directories(exe.parent_path());
    fs::copy_file(BATCHAI_EXE, exe);
    return exe;
  }

  std::string small_run() const {
    return "train --synthetic 64 --epochs 1 --steps-per-epoch 2 --validation-images 32 --batch-size 16 "
           "--backend cpu --threads 1 --dir " + quoted(dir_ / "out");
  }

  batchai::test::TempDir tmp_{"batchai-trainer-plugin"};
  fs::path dir_ = tmp_.path();
};

// One line, "ERROR: ..." naming `what`.
void expect_one_error_line(const Outcome& r, const std::string& what) {
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("ERROR: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
}

TEST_F(TrainerPlugin, TrainsThroughThePluginBesideTheExecutable) {
  const Outcome r = run(BATCHAI_EXE, small_run());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "saved_models" / "keras_cifar10_trained_model.h5"));
}

TEST_F(TrainerPlugin, FindsThePluginThroughASymlinkToTheExecutable) {
  // /proc/self/exe is the real file: a link elsewhere still finds the plugin beside the target.
  const fs::path link = dir_ / "bin" / "batchai";
  fs::create_directories(link.parent_path());
  fs::create_symlink(BATCHAI_EXE, link);
  const Outcome r = run(link, small_run());
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(TrainerPlugin, OtherCommandsRunWithoutThePlugin) {
  const fs::path exe = lone_executable("lone");
  EXPECT_EQ(run(exe, "--help").code, 0);
  EXPECT_EQ(run(exe, "train --help").code, 0);  // parsing is the executable's
  const Outcome list = run(exe, "group list");
  EXPECT_EQ(list.code, 0) << list.err;
}

TEST_F(TrainerPlugin, MissingPluginIsOneErrorLine) {
  const fs::path exe = lone_executable("lone");
  expect_one_error_line(run(exe, small_run()), "libbatchai_trainer.so is missing");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(TrainerPlugin, BrokenPluginIsOneErrorLine) {
  const fs::path exe = lone_executable("broken");
  std::ofstream(exe.parent_path() / "libbatchai_trainer.so") << "not a shared object\n";
  expect_one_error_line(run(exe, small_run()), "could not be loaded");
}

TEST_F(TrainerPlugin, PluginWithoutTheEntryIsOneErrorLine) {
  const fs::path exe = lone_executable("other");
  fs::copy_file(BATCHAI_NO_ENTRY_PLUGIN, exe.parent_path() / "libbatchai_trainer.so");
  expect_one_error_line(run(exe, small_run()), "has no entry point batchai_trainer_main");
}

TEST_F(TrainerPlugin, TrainingErrorsCrossAsOneErrorLine) {
  // Raised inside the plugin (no CIFAR-10 files there), reported by the executable's main.
  const Outcome r = run(BATCHAI_EXE, "train --backend cpu --epochs 1 --data-dir " + quoted(dir_ / "no-data") +
                                         " --dir " + quoted(dir_ / "out"));
  expect_one_error_line(r, (dir_ / "no-data").string());
}

TEST_F(TrainerPlugin, MixedPrecisionWithoutBfloat16KernelsIsOneErrorLine) {
  // oneDNN held to AVX2 has no bfloat16 kernels, whatever this CPU has.
  const Outcome r = run(BATCHAI_EXE, small_run() + " --precision mixed_bfloat16", "ONEDNN_MAX_CPU_ISA=AVX2");
  expect_one_error_line(r, "--precision mixed_bfloat16 needs a CPU on which oneDNN runs its bfloat16 kernels");
  EXPECT_NE(r.err.find("here it runs avx2"), std::string::npos) << r.err;
}

TEST_F(TrainerPlugin, UnknownPrecisionIsAUsageError) {
  const Outcome r = run(BATCHAI_EXE, small_run() + " --precision float16");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--precision"), std::string::npos) << r.err;
}

}  // namespace
