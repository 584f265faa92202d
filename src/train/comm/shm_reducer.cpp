// The shared-memory reduce (see shm_reducer.hpp). Chunk s moves each rank's phase counter
// through 3s+1 (its data is in its slot), 3s+2 (its slice's sum is in its slot) and 3s+3 (it has
// read everything it needs from chunk s). Slot set s%2 is written again at chunk s+2, only once
// every rank has reached 3s+3.
#include "shm_reducer.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <string>

#include "batchai/common/errors.hpp"

namespace batchai::train::detail {
namespace {

constexpr std::size_t kLine = 64;
// Slices start on cache lines so that two ranks never write the same line.
constexpr std::size_t kSliceAlign = kLine / sizeof(float);
// The sum of one slice is built in tiles that stay in L1 while each rank's values are added.
constexpr std::size_t kTile = 2048;
// Spin this long before sleeping on a futex when every rank of the host has a core of its own.
constexpr std::int64_t kSpinNs = 50'000;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// The ranks' lines, then the shared choice of slot writes, one word per size class.
constexpr std::size_t kWaysBytes = sizeof(std::atomic<std::uint32_t>) * SlotWriteChooser::kClasses;
std::size_t header_bytes(int ranks) {
  return round_up(sizeof(PeerLine) * static_cast<std::size_t>(ranks) + kWaysBytes, 4096);
}
std::atomic<std::uint32_t>* shared_ways(void* segment, int ranks) {
  return reinterpret_cast<std::atomic<std::uint32_t>*>(static_cast<char*>(segment) +
                                                       sizeof(PeerLine) * static_cast<std::size_t>(ranks));
}

void write_slot(float* dst, const float* src, std::size_t n, bool streaming) {
  if (streaming) stream_floats(dst, src, n);
  else std::memcpy(dst, src, n * sizeof(float));
}

// Cores this process may run on.
int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// dst = a + b and dst += a, memory-bound. Fixed 16-wide blocks let -O2 (GCC's very-cheap cost
// model, which refuses loops needing an epilogue) emit SIMD adds; the tail is scalar.
void add_pair(float* __restrict dst, const float* __restrict a, const float* __restrict b, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (std::size_t k = 0; k < 16; ++k) dst[i + k] = a[i + k] + b[i + k];
  }
  for (; i < n; ++i) dst[i] = a[i] + b[i];
}
void add_into(float* __restrict dst, const float* __restrict a, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (std::size_t k = 0; k < 16; ++k) dst[i + k] += a[i + k];
  }
  for (; i < n; ++i) dst[i] += a[i];
}

// out = ((src[0] + src[1]) + src[2]) + ..., also copied to the slot `copy`. `out` may be one of
// the sources (this rank's own data), so each tile is summed in an L1-sized buffer first.
void sum_sources(float* out, float* copy, const float* const* src, int n, std::size_t len, bool streaming) {
  alignas(64) float tile[kTile];
  for (std::size_t t = 0; t < len; t += kTile) {
    const std::size_t m = std::min(kTile, len - t);
    add_pair(tile, src[0] + t, src[1] + t, m);
    for (int k = 2; k < n; ++k) add_into(tile, src[k] + t, m);
    std::memcpy(out + t, tile, m * sizeof(float));
    write_slot(copy + t, tile, m, streaming);
  }
}

}  // namespace

std::size_t ShmReducer::segment_bytes(int ranks, std::size_t chunk_floats) {
  return header_bytes(ranks) + 2 * static_cast<std::size_t>(ranks) * round_up(chunk_floats * sizeof(float), 4096);
}

void ShmReducer::format(void* segment, int ranks, std::size_t /*chunk_floats*/) {
  auto* lines = static_cast<PeerLine*>(segment);
  for (int k = 0; k < ranks; ++k) {
    new (&lines[k]) PeerLine{};
    lines[k].phase.store(0);
    lines[k].waiters.store(0);
    lines[k].pid.store(0);
    lines[k].count.store(0);
  }
  std::atomic<std::uint32_t>* ways = shared_ways(segment, ranks);
  for (std::size_t c = 0; c < SlotWriteChooser::kClasses; ++c)
    new (&ways[c]) std::atomic<std::uint32_t>(static_cast<std::uint32_t>(SlotWrites::kCached));
}

ShmReducer::ShmReducer(void* segment, int rank, int ranks, std::size_t chunk_floats, double timeout_s,
                       std::vector<int> world_ranks, SlotWrites writes)
    : base_(static_cast<char*>(segment)),
      lines_(static_cast<PeerLine*>(segment)),
      rank_(rank),
      ranks_(ranks),
      chunk_(std::max(round_up(chunk_floats, kSliceAlign), kSliceAlign)),
      world_ranks_(std::move(world_ranks)),
      // Spinning while the awaited rank has no core only delays it: sleep at once then.
      waiter_(rank, world_ranks_.empty() ? nullptr : world_ranks_.data(), ranks > usable_cpus() ? 0 : kSpinNs,
              timeout_s),
      writes_(writes),
      shared_ways_(shared_ways(segment, ranks)),
      sources_(static_cast<std::size_t>(ranks)) {
  if (chunk_ != chunk_floats) throw InvalidArgument("shared-memory chunk must be a multiple of 16 floats");
  lines_[rank_].pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_release);
}

float* ShmReducer::slot(int k, unsigned set) const {
  const std::size_t slot_bytes = round_up(chunk_ * sizeof(float), 4096);
  return reinterpret_cast<float*>(base_ + header_bytes(ranks_) +
                                  (static_cast<std::size_t>(set) * static_cast<std::size_t>(ranks_) +
                                   static_cast<std::size_t>(k)) * slot_bytes);
}

void ShmReducer::wait_all(std::uint32_t target) const {
  for (int k = 0; k < ranks_; ++k) {
    if (k != rank_) waiter_.wait(lines_, k, target);
  }
}

SlotWrites ShmReducer::way_for(std::size_t count) {
  if (writes_ != SlotWrites::kAuto) return writes_;
  // Rank 0 published this call's way before it posted the end of the last chunk (3 * seq_), so
  // every rank writes this call the same way and rank 0's time measures that way, not a mix.
  if (rank_ != 0) waiter_.wait(lines_, 0, 3 * seq_);
  const std::size_t c = SlotWriteChooser::class_of(count * sizeof(float));
  return static_cast<SlotWrites>(shared_ways_[c].load(std::memory_order_acquire));
}

void ShmReducer::choose_next(std::size_t count, SlotWrites way, std::chrono::steady_clock::time_point start) {
  const std::size_t bytes = count * sizeof(float);
  chooser_.record(bytes, way, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  shared_ways_[SlotWriteChooser::class_of(bytes)].store(static_cast<std::uint32_t>(chooser_.next(bytes)),
                                                        std::memory_order_release);
}

std::size_t ShmReducer::slice_begin(std::size_t len, int k) const {
  const std::size_t per = round_up((len + static_cast<std::size_t>(ranks_) - 1) / static_cast<std::size_t>(ranks_),
                                   kSliceAlign);
  return std::min(len, per * static_cast<std::size_t>(k));
}

void ShmReducer::allreduce(float* data, std::size_t count, bool gather) {
  if (ranks_ == 1 || count == 0) return;
  const bool first_reads = gather || rank_ == 0;
  const SlotWrites way = way_for(count);
  last_way_ = way;
  const bool streaming = way == SlotWrites::kStreaming;
  const bool timed = writes_ == SlotWrites::kAuto && rank_ == 0;
  const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  for (std::size_t off = 0; off < count; off += chunk_) {
    const std::size_t len = std::min(chunk_, count - off);
    const std::uint32_t s = seq_++;
    const std::uint32_t base = 3 * s;
    const unsigned set = s & 1;
    float* chunk = data + off;
    const std::size_t my_begin = slice_begin(len, rank_);
    const std::size_t my_end = slice_begin(len, rank_ + 1);
    wait_all(base - 3);  // everyone is done with chunk s-2, which used this set
    // Everything but this rank's own slice, which only this rank reads (from `data`).
    float* mine = slot(rank_, set);
    write_slot(mine, chunk, my_begin, streaming);
    write_slot(mine + my_end, chunk + my_end, len - my_end, streaming);
    if (streaming) streaming_fence();
    if (off == 0) lines_[rank_].count.store(count, std::memory_order_relaxed);
    post(base + 1);
    wait_all(base + 1);
    if (off == 0) {
      for (int k = 0; k < ranks_; ++k) {
        const std::uint64_t theirs = lines_[k].count.load(std::memory_order_relaxed);
        if (theirs != count) {
          const auto name = [&](int r) { return std::to_string(world_ranks_.empty() ? r : world_ranks_[std::size_t(r)]); };
          throw Error("shared-memory allreduce: rank " + name(rank_) + " reduces " + std::to_string(count) +
                      " floats but rank " + name(k) + " reduces " + std::to_string(theirs) +
                      ": the ranks are reducing buffers of different lengths (different models or options?); "
                      "call check_agreement on the length first");
        }
      }
    }
    if (my_end > my_begin) {
      for (int k = 0; k < ranks_; ++k) sources_[std::size_t(k)] = (k == rank_ ? chunk : slot(k, set)) + my_begin;
      sum_sources(chunk + my_begin, mine + my_begin, sources_.data(), ranks_, my_end - my_begin, streaming);
      if (streaming) streaming_fence();
    }
    post(base + 2);
    if (first_reads) {
      for (int k = 0; k < ranks_; ++k) {
        if (k == rank_) continue;
        waiter_.wait(lines_, k, base + 2);
        const std::size_t b = slice_begin(len, k), e = slice_begin(len, k + 1);
        std::memcpy(chunk + b, slot(k, set) + b, (e - b) * sizeof(float));
      }
    }
    if (timed && off + len == count) choose_next(count, way, start);
    post(base + 3);
  }
}

void ShmReducer::broadcast(float* data, std::size_t count) {
  if (ranks_ == 1 || count == 0) return;
  for (std::size_t off = 0; off < count; off += chunk_) {
    const std::size_t len = std::min(chunk_, count - off);
    const std::uint32_t s = seq_++;
    const std::uint32_t base = 3 * s;
    float* root_slot = slot(0, s & 1);
    if (rank_ == 0) {
      wait_all(base - 3);
      std::memcpy(root_slot, data + off, len * sizeof(float));
    } else {
      waiter_.wait(lines_, 0, base + 1);
      std::memcpy(data + off, root_slot, len * sizeof(float));
    }
    post(base + 3);
  }
}

}  // namespace batchai::train::detail
