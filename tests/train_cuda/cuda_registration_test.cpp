// What the trainer sees of the CUDA target without (and with) a device: make_backend(kAuto)
// falls back to the CPU only when no device exists, kCuda never silently does, and the option
// words parse. These run on machines without a GPU too.
#include <gtest/gtest.h>

#include <cstdlib>

#include "batchai/common/errors.hpp"
#include "batchai/train_cuda/cuda_backend.hpp"
#include "batchai/train_cuda/cuda_device.hpp"
#include "batchai/train_cuda/nccl_communicator.hpp"

namespace batchai::train_cuda {
namespace {

TEST(CudaRegistration, DeviceCountNeverThrows) {
  int count = -1;
  EXPECT_NO_THROW(count = device_count());
  EXPECT_GE(count, 0);
  EXPECT_EQ(device_unavailable_reason().empty(), count > 0);
}

TEST(CudaRegistration, MakeBackendFollowsDevicePresence) {
  register_cuda_backend();
  if (device_count() == 0) {
    EXPECT_EQ(train::make_backend(train::BackendKind::kAuto, 1)->name(), "cpu");
    try {
      train::make_backend(train::BackendKind::kCuda, 1);
      FAIL() << "kCuda without a device must throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    }
    EXPECT_THROW(make_cuda_backend(), Error);
    EXPECT_THROW(select_local_device(), Error);
  } else {
    EXPECT_EQ(train::make_backend(train::BackendKind::kCuda, 1)->name(), "cuda");
    EXPECT_EQ(train::make_backend(train::BackendKind::kAuto, 1)->name(), "cuda");
  }
  EXPECT_EQ(train::make_backend(train::BackendKind::kCpu, 1)->name(), "cpu");
}

TEST(CudaRegistration, LocalRankFromLauncherEnvironment) {
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(local_rank(), 3);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "x", 1);
  ::setenv("SLURM_LOCALID", "2", 1);
  EXPECT_EQ(local_rank(), 2);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("SLURM_LOCALID");
}

TEST(CudaRegistration, ParsesDeviceCollectives) {
  EXPECT_EQ(parse_device_collectives("auto"), DeviceCollectives::kAuto);
  EXPECT_EQ(parse_device_collectives("nccl"), DeviceCollectives::kNccl);
  EXPECT_EQ(parse_device_collectives("host-staged"), DeviceCollectives::kHostStaged);
  EXPECT_THROW(parse_device_collectives("gloo"), InvalidArgument);
}

TEST(CudaRegistration, HostPointersAreNotDevicePointers) {
  float x = 0.0f;
  EXPECT_FALSE(is_device_pointer(&x));
  EXPECT_FALSE(is_device_pointer(nullptr));
}

}  // namespace
}  // namespace batchai::train_cuda
