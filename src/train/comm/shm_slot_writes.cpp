// Cached or streaming slot writes, and the chooser between them (shm_slot_writes.hpp).
#include "shm_slot_writes.hpp"

#include <algorithm>
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

double SlotWriteChooser::Way::least() const {
  const std::uint32_t n = std::min(samples, kWindow);
  return *std::min_element(seconds_per_byte.begin(), seconds_per_byte.begin() + n);
}

SlotWrites SlotWriteChooser::next(std::size_t bytes) {
  SizeClass& c = classes_[class_of(bytes)];
  ++c.calls;
  const Way& cached = c.ways[0];
  const Way& streaming = c.ways[1];
  if (cached.samples < kWarmUp || streaming.samples < kWarmUp) {
    return streaming.samples < cached.samples ? SlotWrites::kStreaming : SlotWrites::kCached;
  }
  const bool streaming_faster = streaming.least() < cached.least();
  const bool probe = c.calls % kProbeEvery == 0;
  return streaming_faster != probe ? SlotWrites::kStreaming : SlotWrites::kCached;
}

void SlotWriteChooser::record(std::size_t bytes, SlotWrites way, double seconds) {
  if (bytes == 0 || way == SlotWrites::kAuto) return;
  Way& w = classes_[class_of(bytes)].ways[static_cast<std::size_t>(way)];
  w.seconds_per_byte[w.samples % kWindow] = seconds / static_cast<double>(bytes);
  ++w.samples;
}

}  // namespace batchai::train::detail
