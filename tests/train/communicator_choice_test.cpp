// The gradient communicator's chooser: which candidate wins for each kind of run, the refusal
// of device gradients without device collectives, and the buffer-kind check at the boundary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/train/local_communicator.hpp"
#include "comm/communicator_choice.hpp"

namespace batchai::train {
namespace {

constexpr auto kHost = BufferKind::kHost;
constexpr auto kDevice = BufferKind::kDevice;
constexpr auto kRing = AllreduceAlgorithm::kRing;
constexpr auto kMpi = AllreduceAlgorithm::kMpi;

std::string winner(BufferKind buffers, int ranks, AllreduceAlgorithm algorithm, bool device_collectives,
                   int ranks_per_host = 1, bool shared_memory = true) {
  return choose_communicator({buffers, ranks, algorithm, device_collectives, ranks_per_host, shared_memory}).name;
}

TEST(CommunicatorChoice, CandidatesAreOrderedLikeHorovod) {
  std::vector<std::string> names;
  for (const auto& c : collective_candidates()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"nccl", "shm", "mpi", "ring", "local"}));
  for (const auto& c : collective_candidates()) {
    if (c.kind == CollectiveKind::kShm || c.kind == CollectiveKind::kMpi || c.kind == CollectiveKind::kRing) {
      EXPECT_FALSE(c.accepts(kDevice)) << c.name << " is an MPI path";
    }
  }
}

TEST(CommunicatorChoice, CpuRuns) {
  EXPECT_EQ(winner(kHost, 1, kRing, false), "local");
  EXPECT_EQ(winner(kHost, 1, kMpi, true), "local");
  EXPECT_EQ(winner(kHost, 4, kRing, false), "ring");
  EXPECT_EQ(winner(kHost, 4, kMpi, false), "mpi");
  // Host gradients stay on MPI even where device collectives exist (CUDA plugin loaded).
  EXPECT_EQ(winner(kHost, 2, kRing, true), "ring");
  EXPECT_EQ(winner(kHost, 2, kMpi, true), "mpi");
}

TEST(CommunicatorChoice, SharedMemoryWhereRanksShareAHost) {
  EXPECT_EQ(winner(kHost, 4, kRing, false, 4), "shm");
  EXPECT_EQ(winner(kHost, 4, kRing, false, 2), "shm");  // 2 hosts x 2 ranks: hierarchical
  EXPECT_EQ(winner(kHost, 2, kRing, true, 2), "shm");
  EXPECT_EQ(winner(kHost, 4, kRing, false, 1), "ring");  // one rank per host: nothing to share
  EXPECT_EQ(winner(kHost, 4, kRing, false, 4, false), "ring");  // BATCHAI_SHM_ALLREDUCE=0
  EXPECT_EQ(winner(kHost, 4, kMpi, false, 4), "mpi");          // --allreduce mpi
  EXPECT_EQ(winner(kHost, 1, kRing, false, 1), "local");
  EXPECT_EQ(winner(kDevice, 2, kRing, true, 2), "nccl");  // device gradients never reach it
}

TEST(CommunicatorChoice, DescribingARunReadsTheSwitch) {
  // One rank asks MPI nothing; the switch is read and checked.
  EXPECT_EQ(describe_run(kHost, 1, kRing, false).ranks_per_host, 1);
  EXPECT_TRUE(describe_run(kHost, 1, kRing, false).shared_memory);
  ::setenv("BATCHAI_SHM_ALLREDUCE", "0", 1);
  EXPECT_FALSE(describe_run(kHost, 1, kRing, false).shared_memory);
  ::setenv("BATCHAI_SHM_ALLREDUCE", "off", 1);
  EXPECT_THROW(describe_run(kHost, 1, kRing, false), InvalidArgument);
  ::unsetenv("BATCHAI_SHM_ALLREDUCE");
}

TEST(CommunicatorChoice, CudaRuns) {
  EXPECT_EQ(winner(kDevice, 1, kRing, true), "local");
  EXPECT_EQ(winner(kDevice, 1, kRing, false), "local");
  EXPECT_EQ(winner(kDevice, 2, kRing, true), "nccl");
  EXPECT_EQ(winner(kDevice, 8, kMpi, true), "nccl");
}

TEST(CommunicatorChoice, DeviceGradientsWithoutDeviceCollectivesAreRefused) {
  for (const auto algorithm : {kRing, kMpi}) {
    try {
      winner(kDevice, 2, algorithm, false);
      FAIL() << "device gradients were given an MPI path";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("device memory on 2 ranks"), std::string::npos) << msg;
      EXPECT_NE(msg.find("--backend cpu"), std::string::npos) << msg;
    }
  }
}

TEST(CommunicatorChoice, OpensTheLocalCommunicatorForOneRank) {
  const auto comm = open_communicator(choose_communicator({kDevice, 1, kRing, false}), kRing);
  EXPECT_EQ(comm->name(), "local");
  EXPECT_EQ(comm->size(), 1);
}

TEST(CommunicatorChoice, ParsesTheAllreduceWordsOnce) {
  EXPECT_EQ(parse_allreduce_algorithm("ring"), kRing);
  EXPECT_EQ(parse_allreduce_algorithm("mpi"), kMpi);
  EXPECT_THROW(parse_allreduce_algorithm("nccl"), InvalidArgument);
}

// A host-only communicator that records what reaches it (stands in for the MPI ones, which
// comm_mpi_test checks under mpiexec).
class RecordingHostCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allreduce_sum(float* data, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) data[i] *= 2.0f;
    ++calls;
  }
  void broadcast(float* /*data*/, std::size_t /*count*/, int /*root*/) override {}
  void allreduce_sum(double* /*data*/, std::size_t /*count*/) override {}
  void barrier() override {}
  void check_agreement(long long /*value*/, const std::string& /*what*/) override {}
  std::string name() const override { return "recording"; }
  int calls = 0;
};

TEST(CommunicatorChoice, DeviceBufferIsRefusedAtAHostOnlyBoundary) {
  RecordingHostCommunicator comm;
  std::vector<float> data(8, 1.0f);
  Buffer device{data.data(), data.size(), kDevice};
  EXPECT_THROW(comm.allreduce_buffer(device), InvalidArgument);
  EXPECT_EQ(comm.calls, 0);
  Buffer host{data.data(), data.size(), kHost};
  comm.allreduce_buffer(host);
  EXPECT_EQ(comm.calls, 1);
  EXPECT_EQ(data[0], 2.0f);
}

TEST(CommunicatorChoice, LocalCommunicatorTakesEitherKind) {
  const auto comm = make_local_communicator();
  std::vector<float> data(4, 3.0f);
  Buffer device{data.data(), data.size(), kDevice};
  EXPECT_NO_THROW(comm->allreduce_buffer(device));
  EXPECT_EQ(data, std::vector<float>(4, 3.0f));
}

}  // namespace
}  // namespace batchai::train
