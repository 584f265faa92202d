// The communicators' environment settings (see comm_env.hpp).
#include "comm_env.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::train::detail {
namespace {

// 1 MiB: at 2 ranks 256 KiB chunks took 2-5% longer at 1-16 MB (each message pays a rendezvous);
// at 4 ranks the two made no difference beyond noise (tests/bench/comm sweeps).
constexpr std::size_t kDefaultRingChunkBytes = std::size_t{1} << 20;
// 1 MiB per rank and step: 64 KiB took 1.5-4x as long at 1-64 MB and 256 KiB up to 2x as long,
// 4 MiB was no faster (2 and 4 ranks, tests/bench/comm sweeps on the loaded 2-core machine: each
// step's synchronisation costs a futex wake-up when ranks share cores).
constexpr std::size_t kDefaultShmChunkBytes = std::size_t{1} << 20;
constexpr std::size_t kShmSegmentBudget = std::size_t{16} << 20;
constexpr std::size_t kMinShmChunkBytes = std::size_t{64} << 10;
// Horovod users' most common complaint is a job that hangs without saying why.
constexpr double kDefaultTimeoutSeconds = 600;
// Larger timeouts are clamped to this (a week): a wait's bound in nanoseconds overflows past 9.2e9 s.
constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;

// A whole number from the environment, or `fallback` when unset.
unsigned long long env_count(const char* name, unsigned long long fallback, const char* example) {
  const char* env = std::getenv(name);
  if (env == nullptr) return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (end == env || *end != '\0' || env[0] == '-') {
    throw InvalidArgument(std::string(name) + "='" + env + "' is not a whole number; unset it or give e.g. " +
                          example);
  }
  return v;
}

}  // namespace

std::size_t ring_chunk_bytes() {
  if (std::getenv("BATCHAI_RING_CHUNK_KB") == nullptr) return kDefaultRingChunkBytes;
  return static_cast<std::size_t>(env_count("BATCHAI_RING_CHUNK_KB", 0, "256")) << 10;
}

double comm_timeout_seconds() {
  const char* env = std::getenv("BATCHAI_COMM_TIMEOUT_S");
  if (env == nullptr) return kDefaultTimeoutSeconds;
  char* end = nullptr;
  const double s = std::strtod(env, &end);
  // inf and nan parse as numbers; either would overflow the waits' nanosecond bounds.
  if (end == env || *end != '\0' || !std::isfinite(s) || s < 0) {
    throw InvalidArgument("BATCHAI_COMM_TIMEOUT_S='" + std::string(env) +
                          "' is not a finite number of seconds >= 0 (0 disables the stall check; at most " +
                          std::to_string(static_cast<long long>(kMaxTimeoutSeconds)) + " counts)");
  }
  return std::min(s, kMaxTimeoutSeconds);
}

std::size_t shm_chunk_bytes(int ranks) {
  if (std::getenv("BATCHAI_SHM_CHUNK_KB") == nullptr) {
    const std::size_t fit = kShmSegmentBudget / (2 * static_cast<std::size_t>(std::max(ranks, 1)));
    return std::clamp(fit, kMinShmChunkBytes, kDefaultShmChunkBytes) / 4096 * 4096;
  }
  const auto kb = env_count("BATCHAI_SHM_CHUNK_KB", 0, "1024");
  if (kb == 0 || kb > (std::size_t{1} << 20)) {
    throw InvalidArgument("BATCHAI_SHM_CHUNK_KB=" + std::to_string(kb) + " is out of range (1 .. 1048576 KiB)");
  }
  return static_cast<std::size_t>(kb) << 10;
}

SlotWrites shm_slot_writes() {
  const char* env = std::getenv("BATCHAI_SHM_WRITES");
  if (env == nullptr) return SlotWrites::kAuto;
  const std::string v = env;
  if (v == "auto") return SlotWrites::kAuto;
  if (v == "cached") return SlotWrites::kCached;
  if (v == "streaming") return SlotWrites::kStreaming;
  throw InvalidArgument("BATCHAI_SHM_WRITES='" + v + "': use auto (default), cached or streaming");
}

bool shm_allreduce_allowed() {
  const char* env = std::getenv("BATCHAI_SHM_ALLREDUCE");
  if (env == nullptr) return true;
  const std::string v = env;
  if (v == "0") return false;
  if (v == "1") return true;
  throw InvalidArgument("BATCHAI_SHM_ALLREDUCE='" + v + "': use 0 (MPI ring only) or 1 (default)");
}

int test_ranks_per_host() {
  return static_cast<int>(env_count("BATCHAI_TEST_RANKS_PER_HOST", 0, "2"));
}

}  // namespace batchai::train::detail
