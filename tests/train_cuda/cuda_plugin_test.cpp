// The executable's way to the CUDA backend: `batchai train --backend cuda` loads
// libbatchai_cuda.so from beside it (every symbol resolved) and either trains on the device or,
// without one, says so and exits 1. Runs on machines without a GPU too.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "batchai/train_cuda/cuda_backend.hpp"
#include "batchai/train_cuda/cuda_device.hpp"
#include "support/shell.hpp"
#include "support/temp_dir.hpp"

namespace batchai::train_cuda {
namespace {

using Outcome = test::ShellResult;

Outcome run(const std::string& command) { return test::run_shell(command + " 2>&1"); }

TEST(CudaPlugin, ExecutableLoadsThePluginForBackendCuda) {
  const test::TempDir tmp("batchai-cuda-plugin");
  const auto dir = tmp / "run";
  const std::string train = std::string(BATCHAI_EXE) + " train --synthetic 64 --epochs 1 --steps-per-epoch 2 "
                            "--validation-images 32 --batch-size 16 --dir " + dir.string();
  const Outcome cuda = run(train + " --backend cuda");
  if (device_count() == 0) {
    EXPECT_EQ(cuda.code, 1) << cuda.out;
    EXPECT_NE(cuda.out.find("no CUDA device"), std::string::npos) << cuda.out;  // loaded, asked the driver
  } else {
    EXPECT_EQ(cuda.code, 0) << cuda.out;
    EXPECT_NE(cuda.out.find("Test accuracy:"), std::string::npos) << cuda.out;
  }
  const Outcome broken = run("BATCHAI_CUDA_PLUGIN=" + (dir / "none.so").string() + " " + train + " --backend cuda");
  EXPECT_EQ(broken.code, 1);
  EXPECT_NE(broken.out.find("BATCHAI_CUDA_PLUGIN names no file"), std::string::npos) << broken.out;
}

}  // namespace
}  // namespace batchai::train_cuda
