// Cached or streaming slot writes, and the chooser between them (shm_slot_writes.hpp).
#include "shm_slot_writes.hpp"

#include <atomic>
#include <bit>
#include <cstring>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace batchai::train::detail {

void stream_floats(float* dst, const float* src, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE__)
  for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = src[i];
  for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
#endif  // elsewhere: through the cache
  if (i < n) std::memcpy(dst + i, src + i, (n - i) * sizeof(float));
}

// Streaming stores are weakly ordered: without the fence a peer that sees the phase posted after
// them could still read the slot's old bytes.
void streaming_fence() {
#if defined(__SSE__)
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_release);
#endif
}

std::size_t SlotWriteChooser::class_of(std::size_t bytes) {
  return bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(bytes) - 1);
}

SlotWrites SlotWriteChooser::next(std::size_t bytes) {
  SizeClass& c = classes_[class_of(bytes)];
  ++c.calls;
  if (c.samples[0] < kWarmUp || c.samples[1] < kWarmUp) {
    return c.samples[1] < c.samples[0] ? SlotWrites::kStreaming : SlotWrites::kCached;
  }
  const bool streaming_faster = c.seconds_per_byte[1] < c.seconds_per_byte[0];
  const bool probe = c.calls % kProbeEvery == 0;
  return streaming_faster != probe ? SlotWrites::kStreaming : SlotWrites::kCached;
}

void SlotWriteChooser::record(std::size_t bytes, SlotWrites way, double seconds) {
  if (bytes == 0 || way == SlotWrites::kAuto) return;
  SizeClass& c = classes_[class_of(bytes)];
  const auto k = static_cast<std::size_t>(way);
  const double per_byte = seconds / static_cast<double>(bytes);
  // The slower way is measured only by probes, far apart: its average would be stale (the cores
  // may have moved since), so each probe's time replaces it.
  const bool probed = c.samples[0] >= kWarmUp && c.samples[1] >= kWarmUp &&
                      c.seconds_per_byte[k] > c.seconds_per_byte[1 - k];
  double& average = c.seconds_per_byte[k];
  average = c.samples[k] == 0 || probed ? per_byte : average + kWeight * (per_byte - average);
  ++c.samples[k];
}

}  // namespace batchai::train::detail
