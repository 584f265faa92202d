// StallWatchdog: a helper thread that checks, a few times per timeout, whether the ring has
// been stuck in one wait for longer than the timeout. It makes no MPI calls (the trainer runs
// MPI_THREAD_FUNNELED); it reports on stderr and _Exit()s, which mpiexec turns into a job abort.
#include "stall_watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace batchai::train::detail {

StallWatchdog::StallWatchdog(double timeout_s, int rank)
    : enabled_(timeout_s > 0), timeout_s_(timeout_s), rank_(rank) {
  if (enabled_) thread_ = std::thread([this] { run(); });
}

StallWatchdog::~StallWatchdog() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::int64_t StallWatchdog::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void StallWatchdog::run() {
  const auto period = std::chrono::duration<double>(std::clamp(timeout_s_ / 4, 0.05, 1.0));
  // Past 9.2e9 s the bound in nanoseconds would overflow (and every wait would look stalled).
  constexpr double kMaxSeconds = 9e9;
  const auto limit_ns = static_cast<std::int64_t>(std::min(timeout_s_, kMaxSeconds) * 1e9);
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const std::int64_t since = since_ns_.load(std::memory_order_acquire);
    if (since == 0 || now_ns() - since < limit_ns) continue;
    std::fprintf(stderr,
                 "rank %d: error: ring allreduce stalled: rank %d has waited %g s %s rank %d "
                 "(its ring neighbour); that rank, or one before it in the ring, is stuck or has "
                 "not reached the same allreduce (different step counts or tensor sizes?). "
                 "Ending this rank so the job stops; raise BATCHAI_COMM_TIMEOUT_S if such waits "
                 "are expected (0 disables the check)\n",
                 rank_, rank_, timeout_s_, what_.load(), peer_.load());
    std::fflush(stderr);
    std::_Exit(kExitCode);
  }
}

}  // namespace batchai::train::detail
