// The shared-memory hierarchical communicator under `mpiexec -n 1..4`, on one host and on fake
// hosts (BATCHAI_TEST_RANKS_PER_HOST): chosen by the chooser where ranks share a host, sums equal
// to MPI_Allreduce's for lengths around the chunk and slice edges, the same bits on every rank for
// values whose sums round, the segment reused across many calls, and a length mismatch failing
// on every rank.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "batchai/train/communicator.hpp"
#include "batchai/train/mpi_session.hpp"
#include "comm/communicator_choice.hpp"
#include "comm/host_layout.hpp"
#include "comm/shm_segment.hpp"

namespace batchai::train {
namespace {

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

std::unique_ptr<Communicator> open_chosen() {
  return open_communicator(choose_communicator(describe_run(BufferKind::kHost, world_size(), AllreduceAlgorithm::kRing,
                                                            false)),
                           AllreduceAlgorithm::kRing);
}

// Integer-valued and rank-dependent; partial sums stay below 2^24, so float sums are exact in
// any order and must equal MPI_Allreduce's.
float value(int rank, std::size_t i) { return static_cast<float>((rank + 1) * (static_cast<int>(i % 1013) - 500)); }

void check_exact(Communicator& comm, std::size_t n, std::size_t salt = 0) {
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = value(comm.rank(), i + salt);
  std::vector<float> oracle = data;
  comm.allreduce_sum(data.data(), n);
  if (n > 0) {
    ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, oracle.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              MPI_SUCCESS);
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (data[i] != oracle[i] && ++bad <= 3) {
      ADD_FAILURE() << comm.name() << " n=" << n << " i=" << i << ": got " << data[i] << ", MPI_Allreduce "
                    << oracle[i] << " (rank " << comm.rank() << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << comm.name() << " n=" << n;
}

// Lengths around the 16-float slice alignment and the chunk (`chunk` floats per rank and step).
std::vector<std::size_t> lengths(std::size_t chunk) {
  const auto p = static_cast<std::size_t>(world_size());
  return {0, 1, 2, 3, p, p + 1, 15, 16, 17, 16 * p - 1, 16 * p + 1, 1009, chunk - 1, chunk, chunk + 1,
          2 * chunk - 1, 2 * chunk + 1, 3 * chunk + 7};
}

TEST(ShmMpi, ChooserPicksSharedMemoryWhereRanksShareAHost) {
  const int p = world_size();
  const CollectiveRun run = describe_run(BufferKind::kHost, p, AllreduceAlgorithm::kRing, false);
  EXPECT_EQ(run.ranks_per_host, detail::most_ranks_per_host());
  const std::string expected = p == 1 ? "local" : run.ranks_per_host > 1 ? "shm" : "ring";
  EXPECT_EQ(choose_communicator(run).name, expected);
  EXPECT_EQ(open_chosen()->name(), expected);
  // --allreduce mpi stays MPI_Allreduce; BATCHAI_SHM_ALLREDUCE=0 keeps the MPI ring.
  if (p > 1) {
    EXPECT_STREQ(choose_communicator(describe_run(BufferKind::kHost, p, AllreduceAlgorithm::kMpi, false)).name, "mpi");
    ::setenv("BATCHAI_SHM_ALLREDUCE", "0", 1);
    EXPECT_STREQ(choose_communicator(describe_run(BufferKind::kHost, p, AllreduceAlgorithm::kRing, false)).name, "ring");
    EXPECT_EQ(open_chosen()->name(), "ring");
    ::setenv("BATCHAI_SHM_ALLREDUCE", "yes", 1);
    EXPECT_THROW(describe_run(BufferKind::kHost, p, AllreduceAlgorithm::kRing, false), InvalidArgument);
    ::unsetenv("BATCHAI_SHM_ALLREDUCE");
  }
}

TEST(ShmMpi, SumsEqualMpiAllreduceForManyLengthsAndChunks) {
  // 1 KiB = 256 floats per rank and step: many chunks, partial last chunks, empty slices.
  for (const char* kb : {"1", "3", "256"}) {
    ::setenv("BATCHAI_SHM_CHUNK_KB", kb, 1);
    auto comm = open_chosen();
    const std::size_t chunk = std::strtoul(kb, nullptr, 10) * 256;
    for (std::size_t n : lengths(chunk)) check_exact(*comm, n);
  }
  check_exact(*open_chosen(), (std::size_t{3} << 20) + 5);  // several MB, default chunks
  ::unsetenv("BATCHAI_SHM_CHUNK_KB");
  if (open_chosen()->name() == "shm") {  // the setting is read where the segment is made
    ::setenv("BATCHAI_SHM_CHUNK_KB", "0", 1);
    EXPECT_THROW(open_chosen(), InvalidArgument);
    ::unsetenv("BATCHAI_SHM_CHUNK_KB");
  }
}

TEST(ShmMpi, EveryRankReceivesTheSameBits) {
  // Values whose sums round: the order of the additions shows in the last bits, and every rank
  // must still hold exactly the same buffer (the trainer's replicas must not drift apart).
  auto comm = open_chosen();
  std::mt19937 gen(1234u + static_cast<unsigned>(comm->rank()));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::size_t n : {std::size_t{1}, std::size_t{4099}, std::size_t{1250858}}) {
    std::vector<float> data(n);
    for (float& v : data) v = dist(gen);
    const std::vector<float> input = data;
    std::vector<float> copy = data;
    comm->allreduce_sum(data.data(), n);
    std::vector<float> root = data;
    ASSERT_EQ(MPI_Bcast(root.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(std::memcmp(root.data(), data.data(), n * sizeof(float)), 0) << "n=" << n << " rank " << comm->rank();
    // Run to run too: the same inputs give the same bits.
    comm->allreduce_sum(copy.data(), n);
    EXPECT_EQ(std::memcmp(copy.data(), data.data(), n * sizeof(float)), 0) << "n=" << n;
    // And close to MPI_Allreduce's sum (another order of the same additions).
    copy = input;
    ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, copy.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              MPI_SUCCESS);
    for (std::size_t i = 0; i < n; i += 97) ASSERT_NEAR(data[i], copy[i], 1e-5f * comm->size()) << "i=" << i;
  }
}

TEST(ShmMpi, RepeatedCallsReuseTheSegment) {
  ::setenv("BATCHAI_SHM_CHUNK_KB", "4", 1);
  auto comm = open_chosen();
  ::unsetenv("BATCHAI_SHM_CHUNK_KB");
  // Odd and even chunk counts in turn, so calls start on either slot set; broadcasts between.
  for (int round = 0; round < 60; ++round) {
    const std::size_t n = static_cast<std::size_t>(round % 3 == 0 ? 1 : round % 3 == 1 ? 1024 : 3000 + round);
    check_exact(*comm, n, static_cast<std::size_t>(round));
    if (round % 10 == 0) {
      std::vector<float> w(777, static_cast<float>(comm->rank()));
      comm->broadcast(w.data(), w.size(), comm->size() - 1);
      ASSERT_EQ(w[776], static_cast<float>(comm->size() - 1));
    }
  }
  std::vector<double> metrics = {1.0};
  comm->allreduce_sum(metrics.data(), 1);
  EXPECT_EQ(metrics[0], comm->size());
  comm->barrier();
}

TEST(ShmMpi, DifferentLengthsFailOnEveryRank) {
  auto comm = open_chosen();
  if (comm->name() != "shm" || world_size() != detail::most_ranks_per_host()) {
    GTEST_SKIP() << "needs every rank on one host";
  }
  std::vector<float> data(comm->rank() == 1 ? 1001 : 1000, 1.0f);
  try {
    comm->allreduce_sum(data.data(), data.size());
    FAIL() << "rank " << comm->rank() << " did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("buffers of different lengths"), std::string::npos) << e.what();
  }
}

// A segment named as local rank 0 names it ("/batchai-allreduce-<pid>-<24 hex>"), made here.
std::string plant_segment(pid_t creator) {
  std::random_device rd;
  char name[64];
  std::snprintf(name, sizeof name, "/batchai-allreduce-%d-%08x%08x%08x", static_cast<int>(creator), rd(), rd(), rd());
  const int fd = ::shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  EXPECT_GE(fd, 0) << name;
  if (fd >= 0) ::close(fd);
  return name;
}

bool in_dev_shm(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

// F408: a local rank 0 killed during the set-up (after it made the segment, before every rank
// mapped it) left the segment in /dev/shm until reboot. The next set-up on the host removes the
// segments whose creator is dead, and leaves those of live processes alone. Only rank 0 plants and
// sweeps: another rank's sweep would remove its orphan before it looks. Every rank meets the
// closing barrier even when a check fails, so a failure never leaves its peers waiting.
TEST(ShmMpi, TheNextSetUpRemovesSegmentsOfDeadCreators) {
  MPI_Barrier(MPI_COMM_WORLD);
  struct MeetAtTheEnd {
    ~MeetAtTheEnd() { MPI_Barrier(MPI_COMM_WORLD); }
  } meet;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // reaped: its pid names nobody now
  const std::string orphan = plant_segment(child);
  const std::string live = plant_segment(::getpid());
  ASSERT_TRUE(in_dev_shm(orphan));
  std::string why;
  auto segment = detail::ShmSegment::open(MPI_COMM_SELF, 4096, [](void*) {}, &why);
  const bool live_kept = in_dev_shm(live);
  ::shm_unlink(live.c_str());
  ASSERT_TRUE(segment) << why;
  EXPECT_FALSE(in_dev_shm(orphan)) << orphan << " of dead pid " << child << " is still there";
  EXPECT_TRUE(live_kept) << "a live creator's segment was removed";
}

}  // namespace
}  // namespace batchai::train
