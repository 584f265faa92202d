// How the ranks of one host signal each other through a shared segment: each rank owns one
// cache line with a monotonically increasing phase counter, which it alone advances; the others
// wait until it reaches a value. Waits spin briefly, then sleep on a futex; every wait is bounded:
// it ends with batchai::Error when the awaited rank's process is gone or the stall timeout passes.
#pragma once
#include <atomic>
#include <cstdint>
#include <sys/types.h>

namespace batchai::train::detail {

// One rank's line in the segment (shared between processes: lock-free atomics only).
struct alignas(64) PeerLine {
  std::atomic<std::uint32_t> phase;    // futex word; advanced only by its owner
  std::atomic<std::uint32_t> waiters;  // ranks asleep on `phase` (the owner wakes them if > 0)
  std::atomic<std::int32_t> pid;       // owner's process id, for the liveness check (0 = not yet)
  std::atomic<std::uint64_t> count;    // floats in the owner's current allreduce (length check)
};
static_assert(sizeof(PeerLine) == 64);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free);

// Phases compare modulo 2^32, so the counters may wrap in very long runs.
inline bool reached(std::uint32_t phase, std::uint32_t target) {
  return static_cast<std::int32_t>(phase - target) >= 0;
}

class PeerWaiter {
 public:
  // `rank`: this rank's local rank (for messages); `world_ranks[k]`: the world rank of local rank k
  // (nullptr: the same number). `spin_ns`: busy-wait before sleeping (0 when ranks outnumber cores).
  // `timeout_s` > 0: longest wait before a stall is reported; 0 = no limit (liveness still checked).
  PeerWaiter(int rank, const int* world_ranks, std::int64_t spin_ns, double timeout_s);

  // Returns once lines[peer].phase has reached `target`; throws batchai::Error if the peer's
  // process has exited, or the wait lasted longer than the timeout.
  void wait(PeerLine* lines, int peer, std::uint32_t target) const {
    if (reached(lines[peer].phase.load(std::memory_order_acquire), target)) return;
    wait_slow(lines, peer, target);
  }
  // Publishes this rank's phase (release: what it wrote before is visible to whoever sees it).
  static void post(PeerLine& mine, std::uint32_t phase);

 private:
  void wait_slow(PeerLine* lines, int peer, std::uint32_t target) const;
  int world_rank(int local) const { return world_ranks_ ? world_ranks_[local] : local; }

  int rank_;
  const int* world_ranks_;
  std::int64_t spin_ns_;
  double timeout_s_;
};

// Whether process `pid` still runs (a zombie, or a pid that is gone, does not).
bool process_alive(pid_t pid);

}  // namespace batchai::train::detail
