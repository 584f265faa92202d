// Waiting on a peer's phase counter: spin, then futex sleeps of a few milliseconds, checking
// between sleeps whether the peer still lives and whether the stall timeout has passed.
#include "shm_peers.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::train::detail {
namespace {

// Each sleep is short so that a dead peer is noticed within tens of milliseconds.
constexpr long kSleepNs = 5'000'000;
// Liveness is checked every few sleeps (it reads /proc).
constexpr int kSleepsPerLivenessCheck = 4;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Not FUTEX_PRIVATE: the word is shared between processes.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, long ns) {
  timespec ts{0, ns};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

bool process_alive(pid_t pid) {
  if (pid <= 0) return true;  // not registered yet: nothing to judge by
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  // A child its parent has not reaped yet still answers kill(); its state is Z (or X).
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return errno != ENOENT;
  char buf[256] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string stat(buf, n);
  const std::size_t paren = stat.rfind(')');  // the command name may hold spaces or parentheses
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

PeerWaiter::PeerWaiter(int rank, const int* world_ranks, std::int64_t spin_ns, double timeout_s)
    : rank_(rank), world_ranks_(world_ranks), spin_ns_(spin_ns), timeout_s_(timeout_s) {}

void PeerWaiter::post(PeerLine& mine, std::uint32_t phase) {
  // seq_cst on both sides (here, and the waiter's waiters++ then phase load): either the waiter
  // sees the new phase, or this load sees the waiter and wakes it.
  mine.phase.store(phase, std::memory_order_seq_cst);
  if (mine.waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(&mine.phase);
}

void PeerWaiter::wait_slow(PeerLine* lines, int peer, std::uint32_t target) const {
  PeerLine& line = lines[peer];
  const std::int64_t start = now_ns();
  if (spin_ns_ > 0) {
    for (unsigned i = 1;; ++i) {
      if (reached(line.phase.load(std::memory_order_acquire), target)) return;
      cpu_relax();
      if (i % 64 == 0 && now_ns() - start > spin_ns_) break;
    }
  }
  for (int sleeps = 1;; ++sleeps) {
    line.waiters.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = line.phase.load(std::memory_order_seq_cst);
    if (!reached(seen, target)) futex_wait(&line.phase, seen, kSleepNs);
    line.waiters.fetch_sub(1, std::memory_order_seq_cst);
    if (reached(line.phase.load(std::memory_order_acquire), target)) return;
    if (sleeps % kSleepsPerLivenessCheck != 0) continue;
    const pid_t pid = line.pid.load(std::memory_order_relaxed);
    if (!process_alive(pid)) {
      throw Error("shared-memory allreduce: rank " + std::to_string(world_rank(peer)) + " (pid " +
                  std::to_string(pid) + ") on this host exited in the middle of a collective; rank " +
                  std::to_string(world_rank(rank_)) + " stops instead of waiting for it. Check that rank's output "
                  "for the first error.");
    }
    const double waited = static_cast<double>(now_ns() - start) / 1e9;
    if (timeout_s_ > 0 && waited > timeout_s_) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", timeout_s_);
      throw Error("shared-memory allreduce stalled: rank " + std::to_string(world_rank(rank_)) + " has waited " +
                  limit + " s for rank " + std::to_string(world_rank(peer)) +
                  " on this host, which is alive but has not reached the same allreduce (different step counts, "
                  "or stuck?); raise BATCHAI_COMM_TIMEOUT_S if such waits are expected (0 disables the check)");
    }
  }
}

}  // namespace batchai::train::detail
