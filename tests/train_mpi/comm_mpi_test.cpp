// Communicator tests run under `mpiexec -n 1..4`: our ring allreduce against MPI_Allreduce
// (the oracle) for many lengths and chunk sizes, exact sums on integer-valued floats,
// broadcast, double sums, the agreement check failing on every rank, and the refusal of
// device buffers.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/train/communicator.hpp"
#include "batchai/train/mpi_communicator.hpp"
#include "batchai/train/mpi_session.hpp"

namespace batchai::train {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// Integer-valued, rank-dependent; every partial sum stays below 2^24, so float sums are exact
// whatever order the ranks add in.
float value(int rank, std::size_t i) { return static_cast<float>((rank + 1) * (static_cast<int>(i % 1013) - 500)); }
float expected_sum(int size, std::size_t i) {
  return static_cast<float>(size * (size + 1) / 2 * (static_cast<int>(i % 1013) - 500));
}

std::vector<std::size_t> lengths() {
  const auto p = static_cast<std::size_t>(world_size());
  return {0, 1, 2, 3, p - 1 == 0 ? 4 : p - 1, p, p + 1, 2 * p - 1, 5, 7, 13, 31, 97, 1009,
          65537, std::size_t{1} << 20, (std::size_t{1} << 20) + 3};
}

void check_allreduce(Communicator& comm, std::size_t n) {
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = value(comm.rank(), i);
  std::vector<float> oracle = data;
  comm.allreduce_sum(data.data(), n);
  if (n > 0) {
    ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, oracle.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                            MPI_COMM_WORLD),
              MPI_SUCCESS);
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (data[i] != expected_sum(comm.size(), i) || data[i] != oracle[i]) {
      if (++bad <= 3) {
        ADD_FAILURE() << comm.name() << " n=" << n << " i=" << i << ": got " << data[i]
                      << ", MPI_Allreduce " << oracle[i] << ", expected "
                      << expected_sum(comm.size(), i) << " (rank " << comm.rank() << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0u) << comm.name() << " n=" << n;
}

TEST(CommMpi, SessionMakesMpiErrorsReturn) {
  // MpiSession switched MPI_COMM_WORLD to MPI_ERRORS_RETURN, so failures become exceptions.
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  ASSERT_EQ(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler), MPI_SUCCESS);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
  EXPECT_EQ(MpiSession(nullptr, nullptr).size(), world_size());  // nested session is harmless
}

TEST(CommMpi, RingAndMpiMatchTheOracleForManyLengths) {
  for (auto algorithm : {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kMpi}) {
    auto comm = make_mpi_communicator(algorithm);
    EXPECT_EQ(comm->rank(), world_rank());
    EXPECT_EQ(comm->size(), world_size());
    EXPECT_EQ(comm->name(), algorithm == AllreduceAlgorithm::kRing ? "ring" : "mpi");
    for (std::size_t n : lengths()) check_allreduce(*comm, n);
  }
}

TEST(CommMpi, RingIsCorrectForEveryChunkSize) {
  // 0 = one message per step; 1 KiB forces the 64-chunks-per-step cap; 4 MiB > segment.
  for (const char* kb : {"0", "1", "3", "64", "4096"}) {
    ::setenv("BATCHAI_RING_CHUNK_KB", kb, 1);
    auto comm = make_mpi_communicator(AllreduceAlgorithm::kRing);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{65537},
                          std::size_t{1} << 20}) {
      check_allreduce(*comm, n);
    }
  }
  ::unsetenv("BATCHAI_RING_CHUNK_KB");
}

TEST(CommMpi, EnvironmentSettingsAreCheckedAndUsed) {
  ::setenv("BATCHAI_RING_CHUNK_KB", "lots", 1);
  EXPECT_THROW(make_mpi_communicator(AllreduceAlgorithm::kRing), InvalidArgument);
  ::unsetenv("BATCHAI_RING_CHUNK_KB");
  ::setenv("BATCHAI_COMM_TIMEOUT_S", "-1", 1);
  EXPECT_THROW(make_mpi_communicator(AllreduceAlgorithm::kRing), InvalidArgument);
  ::setenv("BATCHAI_COMM_TIMEOUT_S", "30", 1);  // with the watchdog thread running
  auto comm = make_mpi_communicator(AllreduceAlgorithm::kRing);
  for (std::size_t n : {std::size_t{7}, std::size_t{65537}}) check_allreduce(*comm, n);
  ::unsetenv("BATCHAI_COMM_TIMEOUT_S");
}

TEST(CommMpi, RepeatedCallsReuseTheArena) {
  auto comm = make_mpi_communicator(AllreduceAlgorithm::kRing);
  std::vector<float> arena(1250858);
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < arena.size(); ++i) arena[i] = value(comm->rank(), i + std::size_t(round));
    comm->allreduce_sum(arena.data(), arena.size());
    for (std::size_t i = 0; i < arena.size(); i += 4099) {
      ASSERT_EQ(arena[i], expected_sum(comm->size(), i + std::size_t(round))) << "round " << round;
    }
  }
}

TEST(CommMpi, BroadcastFromEveryRoot) {
  auto comm = make_mpi_communicator(AllreduceAlgorithm::kRing);
  for (int root = 0; root < comm->size(); ++root) {
    std::vector<float> data(1001, static_cast<float>(comm->rank()));
    comm->broadcast(data.data(), data.size(), root);
    for (float v : data) ASSERT_EQ(v, static_cast<float>(root));
  }
  std::vector<float> one(1);
  EXPECT_THROW(comm->broadcast(one.data(), 1, comm->size()), InvalidArgument);
}

TEST(CommMpi, DoubleSumsAndBarrier) {
  auto comm = make_mpi_communicator(AllreduceAlgorithm::kRing);
  std::vector<double> metrics = {0.5 * comm->rank(), 1.0};
  comm->allreduce_sum(metrics.data(), metrics.size());
  const int p = comm->size();
  EXPECT_DOUBLE_EQ(metrics[0], 0.5 * p * (p - 1) / 2);
  EXPECT_DOUBLE_EQ(metrics[1], p);
  comm->barrier();
}

TEST(CommMpi, AgreementPassesWhenAllRanksAgree) {
  auto comm = make_mpi_communicator(AllreduceAlgorithm::kMpi);
  EXPECT_NO_THROW(comm->check_agreement(1250858, "parameter count"));
}

TEST(CommMpi, DisagreementThrowsOnEveryRankNamingRanksAndValues) {
  auto comm = make_mpi_communicator(AllreduceAlgorithm::kRing);
  if (comm->size() < 2) GTEST_SKIP() << "needs at least two ranks";
  const int odd = comm->size() - 1;
  const long long mine = comm->rank() == odd ? 1250000 : 1250858;
  try {
    comm->check_agreement(mine, "parameter count");
    FAIL() << "rank " << comm->rank() << " did not throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("ranks disagree on parameter count"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 0 has 1250858"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank " + std::to_string(odd) + " has 1250000"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank(s) " + std::to_string(odd) + " differ"), std::string::npos) << msg;
  }
  // The communicator is still usable afterwards: nobody was left waiting.
  std::vector<float> data = {1.0f};
  comm->allreduce_sum(data.data(), 1);
  EXPECT_EQ(data[0], static_cast<float>(comm->size()));
}

TEST(CommMpi, DeviceBufferNeverReachesAnMpiPath) {
  // The kind tag alone is checked: these floats are host memory tagged as a device's, so a
  // missing check would sum them (size > 1) and the test would see it.
  for (const auto algorithm : {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kMpi}) {
    auto comm = make_mpi_communicator(algorithm);
    EXPECT_FALSE(comm->accepts(BufferKind::kDevice)) << comm->name();
    std::vector<float> data(64, 1.0f);
    Buffer device{data.data(), data.size(), BufferKind::kDevice};
    try {
      comm->allreduce_buffer(device);
      FAIL() << comm->name() << " reduced a device buffer";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("cannot reduce device memory"), std::string::npos) << e.what();
    }
    EXPECT_EQ(data, std::vector<float>(64, 1.0f));
    Buffer host{data.data(), data.size(), BufferKind::kHost};
    comm->allreduce_buffer(host);
    EXPECT_EQ(data, std::vector<float>(64, static_cast<float>(comm->size())));
  }
}

}  // namespace
}  // namespace batchai::train
