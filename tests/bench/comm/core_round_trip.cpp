// How far apart two cores are: a cache line handed back and forth between a thread on each,
// nanoseconds per round trip (best of several rounds). On the project's VM this reads 55-80 ns
// while the host keeps its two virtual CPUs on cores that share a cache and 340-380 ns while it
// puts them on different dies, and the shared-memory allreduce's best way of writing differs
// between the two (docs/measurements/2026-11-allreduce.md). Usage: core_round_trip [CPU_A CPU_B] (default 0 1).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

constexpr int kTrips = 200000;
constexpr int kRounds = 5;

alignas(64) std::atomic<int> line{0};

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

double round_ns(int cpu_a, int cpu_b) {
  line.store(0);
  std::thread peer([cpu_b] {
    pin(cpu_b);
    for (int i = 0; i < kTrips; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  pin(cpu_a);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kTrips; ++i) {
    line.store(2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const auto end = std::chrono::steady_clock::now();
  peer.join();
  return std::chrono::duration<double, std::nano>(end - start).count() / kTrips;
}

}  // namespace

int main(int argc, char** argv) {
  const int a = argc > 2 ? std::atoi(argv[1]) : 0;
  const int b = argc > 2 ? std::atoi(argv[2]) : 1;
  if (static_cast<int>(std::thread::hardware_concurrency()) < 2 || a == b) {
    std::fprintf(stderr, "core_round_trip: needs two different CPUs\n");
    return 2;
  }
  // Unpinned, both threads could share one CPU and each spin would last a time slice: refuse.
  if (!pin(b) || !pin(a)) {
    std::fprintf(stderr, "core_round_trip: cannot run on CPUs %d and %d (affinity)\n", a, b);
    return 2;
  }
  double best = 1e300;
  for (int r = 0; r < kRounds; ++r) best = std::min(best, round_ns(a, b));
  std::printf("cpu %d <-> cpu %d: %.0f ns per round trip\n", a, b, best);
  return 0;
}
