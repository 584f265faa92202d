// The shared-memory reducer in processes forked here (no MPI): sums and identical bits across
// ranks, and the bounded waits: a rank that exits mid-collective, or stalls, makes every other
// rank throw an error naming it within a bounded time, never hang.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "batchai/common/errors.hpp"
#include "comm/shm_reducer.hpp"

namespace batchai::train::detail {
namespace {

constexpr std::size_t kChunk = 1024;  // floats per rank and step: small, so calls take many steps

// Exit statuses of the forked ranks.
constexpr int kOk = 0, kWrongSum = 10, kNoError = 11, kWrongError = 12, kUncaught = 13;

struct Segment {
  explicit Segment(int ranks) : bytes(ShmReducer::segment_bytes(ranks, kChunk)) {
    data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) throw std::runtime_error("mmap");
    ShmReducer::format(data, ranks, kChunk);
  }
  ~Segment() { ::munmap(data, bytes); }
  std::size_t bytes;
  void* data;
};

// Forks `ranks` processes running body(reducer) (its result is the exit status) and returns
// their exit statuses (-signal when killed); a rank still running after `limit` is killed and
// reported as 124.
std::vector<int> run_ranks(int ranks, double timeout_s, const std::function<int(ShmReducer&)>& body,
                           std::chrono::seconds limit = std::chrono::seconds(20),
                           SlotWrites writes = SlotWrites::kAuto) {
  Segment segment(ranks);
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int status = kUncaught;
      try {
        ShmReducer reducer(segment.data, r, ranks, kChunk, timeout_s, {}, writes);
        status = body(reducer);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: uncaught: %s\n", r, e.what());
      }
      std::fflush(stderr);
      ::_exit(status);
    }
    pids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<int> statuses(static_cast<std::size_t>(ranks), 124);
  for (int r = 0; r < ranks; ++r) {
    int status = 0;
    while (::waitpid(pids[std::size_t(r)], &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids) ::kill(p, SIGKILL);
        ::waitpid(pids[std::size_t(r)], &status, 0);
        status = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (status == -1) continue;  // killed at the deadline: stays 124
    statuses[std::size_t(r)] = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  return statuses;
}

float value(int rank, std::size_t i) { return static_cast<float>((rank + 1) * (static_cast<int>(i % 1013) - 500)); }

const SlotWrites kEveryWay[] = {SlotWrites::kCached, SlotWrites::kStreaming, SlotWrites::kAuto};

TEST(ShmReducer, SumsForManyLengthsAtOneToFourRanks) {
  for (SlotWrites way : kEveryWay) {
    for (int ranks = 1; ranks <= 4; ++ranks) {
      const auto statuses = run_ranks(ranks, 10, [ranks](ShmReducer& reducer) {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, kChunk - 1, kChunk, kChunk + 1,
                              5 * kChunk + 3, std::size_t{100003}}) {
          std::vector<float> data(n);
          for (std::size_t i = 0; i < n; ++i) data[i] = value(reducer.rank(), i);
          reducer.allreduce(data.data(), n);
          for (std::size_t i = 0; i < n; ++i) {
            if (data[i] != static_cast<float>(ranks * (ranks + 1) / 2) * (static_cast<float>(i % 1013) - 500)) {
              std::fprintf(stderr, "ranks %d n %zu i %zu: %g\n", ranks, n, i, double(data[i]));
              return kWrongSum;
            }
          }
          std::vector<float> root(n, static_cast<float>(reducer.rank()));
          reducer.broadcast(root.data(), n);
          for (float v : root) {
            if (v != 0.0f) return kWrongSum;
          }
        }
        return kOk;
      }, std::chrono::seconds(20), way);
      EXPECT_EQ(statuses, std::vector<int>(std::size_t(ranks), kOk)) << ranks << " ranks, way " << int(way);
    }
  }
}

TEST(ShmReducer, EveryRankGetsTheSameBitsAsLocalRankOrderGives) {
  // Sums that round: each rank compares with ((x0 + x1) + x2) computed here, bit for bit, in
  // enough calls that the chooser (kAuto) writes both ways, probes included.
  const int ranks = 3;
  const std::size_t n = 3 * kChunk + 5;
  const int calls = 2 * static_cast<int>(SlotWriteChooser::kProbeEvery) + 1;
  auto x = [](int r, std::size_t i) { return 0.1f * static_cast<float>(r + 1) + 1e-3f * static_cast<float>(i); };
  for (SlotWrites way : kEveryWay) {
    const auto statuses = run_ranks(ranks, 10, [&](ShmReducer& reducer) {
      std::vector<float> data(n);
      for (int call = 0; call < calls; ++call) {
        for (std::size_t i = 0; i < n; ++i) data[i] = x(reducer.rank(), i);
        reducer.allreduce(data.data(), n);
        for (std::size_t i = 0; i < n; ++i) {
          const float expected = (x(0, i) + x(1, i)) + x(2, i);
          if (std::memcmp(&data[i], &expected, sizeof expected) != 0) return kWrongSum;
        }
      }
      return kOk;
    }, std::chrono::seconds(20), way);
    EXPECT_EQ(statuses, std::vector<int>(ranks, kOk)) << "way " << int(way);
  }
}

// Ranks 0, 1 (and 3) loop on allreduce; rank 2 does `fail` after a few calls. The others must
// throw an error whose text contains `expected`.
std::vector<int> run_with_failing_rank(int ranks, double timeout_s, const std::function<void()>& fail,
                                       const std::string& expected) {
  return run_ranks(ranks, timeout_s, [&](ShmReducer& reducer) {
    std::vector<float> data(10 * kChunk + 7, 1.0f);
    try {
      for (int call = 0; call < 1000; ++call) {
        if (reducer.rank() == 2 && call == 5) fail();
        reducer.allreduce(data.data(), data.size());
      }
    } catch (const Error& e) {
      const std::string msg = e.what();
      std::fprintf(stderr, "rank %d: %s\n", reducer.rank(), msg.c_str());
      return msg.find(expected) != std::string::npos ? kOk : kWrongError;
    }
    return kNoError;
  });
}

TEST(ShmReducer, EveryRankWritesACallTheWayRankZeroChoseForIt) {
  // Rank 0 comes late to every call, so the others start first: they must still write each call
  // the way rank 0 published for it (its times measure that way, not a mix of the two).
  const int ranks = 3;
  const int calls = static_cast<int>(SlotWriteChooser::kProbeEvery) + 8;  // warm-up, choice, a probe
  const std::size_t n = 2 * kChunk + 7;
  auto* ways = static_cast<std::uint32_t*>(::mmap(nullptr, sizeof(std::uint32_t) * ranks * calls,
                                                  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(ways, MAP_FAILED);
  const auto statuses = run_ranks(ranks, 10, [&](ShmReducer& reducer) {
    std::vector<float> data(n, 1.0f);
    for (int call = 0; call < calls; ++call) {
      if (reducer.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      reducer.allreduce(data.data(), n);
      ways[reducer.rank() * calls + call] = static_cast<std::uint32_t>(reducer.last_way());
    }
    return kOk;
  });
  ASSERT_EQ(statuses, std::vector<int>(ranks, kOk));
  std::set<std::uint32_t> seen;
  for (int call = 0; call < calls; ++call) {
    seen.insert(ways[call]);
    for (int r = 1; r < ranks; ++r) EXPECT_EQ(ways[r * calls + call], ways[call]) << "rank " << r << ", call " << call;
  }
  EXPECT_EQ(seen.size(), 2u) << "the calls did not use both ways";
  ::munmap(ways, sizeof(std::uint32_t) * ranks * calls);
}

TEST(ShmReducer, ARankThatExitsMidCollectiveEndsTheOthersWithAnError) {
  for (int ranks : {3, 4}) {
    const auto start = std::chrono::steady_clock::now();
    // The stall timeout (600 s) is not what ends them: the liveness check is.
    const auto statuses = run_with_failing_rank(ranks, 600, [] { ::_exit(42); }, "rank 2 (pid ");
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<int> expected;
    for (int r = 0; r < ranks; ++r) expected.push_back(r == 2 ? 42 : kOk);
    EXPECT_EQ(statuses, expected) << ranks << " ranks";
    EXPECT_LT(took, 5.0) << "the dead rank was noticed only after " << took << " s";
  }
}

TEST(ShmReducer, ARankKilledBySignalMidCollectiveIsNoticedToo) {
  const auto statuses = run_with_failing_rank(3, 600, [] { ::raise(SIGKILL); }, "exited in the middle of a collective");
  EXPECT_EQ(statuses, (std::vector<int>{kOk, kOk, -SIGKILL}));
}

TEST(ShmReducer, AStalledRankEndsTheOthersAfterTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto statuses = run_with_failing_rank(
      3, 0.5, [] { std::this_thread::sleep_for(std::chrono::seconds(2)); ::_exit(0); },
      "has waited 0.5 s for rank 2 on this host");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(statuses, (std::vector<int>{kOk, kOk, 0}));
  EXPECT_LT(took, 10.0);
}

TEST(ShmReducer, DifferentLengthsThrowOnEveryRank) {
  const auto statuses = run_ranks(3, 10, [](ShmReducer& reducer) {
    std::vector<float> data(reducer.rank() == 1 ? 2000 : 1999, 1.0f);
    try {
      reducer.allreduce(data.data(), data.size());
    } catch (const Error& e) {
      return std::string(e.what()).find("buffers of different lengths") != std::string::npos ? kOk : kWrongError;
    }
    return kNoError;
  });
  EXPECT_EQ(statuses, std::vector<int>(3, kOk));
}

}  // namespace
}  // namespace batchai::train::detail
